import {
  DispatchEvent,
  Hooks,
  Interruption,
  Messages,
  Model,
  QueryLoop,
  Registry,
  ReplayModel,
  Results,
  ToolUseContext
} from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { RunLog, scriptedTool, type ScriptInput, MemoryAllowAll } from "./fixtures.js"

type Step = Model.ModelStreamEvent | { readonly sleep: number } | { readonly fail: Model.ModelError }

/** A model that plays raw event scripts, one per request, and records the requests. */
const scriptedModel = (scripts: ReadonlyArray<ReadonlyArray<Step>>, requests: Array<Model.ModelRequest>) =>
  Layer.sync(Model.LanguageModel, () => {
    let next = 0
    return {
      stream: (request) =>
        Stream.suspend(() => {
          requests.push(request)
          const script = scripts[next++] ?? []
          return Stream.fromIterable(script).pipe(
            Stream.mapEffect((step) =>
              "sleep" in step
                ? Effect.as(Effect.sleep(step.sleep), undefined)
                : "fail" in step
                ? Effect.fail(step.fail)
                : Effect.succeed(step)
            ),
            Stream.filter((e): e is Model.ModelStreamEvent => e !== undefined)
          )
        })
    }
  })

const start: Model.ModelStreamEvent = { type: "message_start", message: { id: "msg_1" } }
const stop: Model.ModelStreamEvent = { type: "message_stop" }
const toolStart = (index: number, id: string, name: string): Model.ModelStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name, input: {} }
})
const json = (index: number, partial_json: string): Model.ModelStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "input_json_delta", partial_json }
})
const blockStop = (index: number): Model.ModelStreamEvent => ({ type: "content_block_stop", index })
const stopReason = (reason: Model.StopReason): Model.ModelStreamEvent => ({
  type: "message_delta",
  delta: { stop_reason: reason }
})

const toolsLayer = (log: RunLog) =>
  Registry.layerTools([
    scriptedTool("Read", log, { safe: true }),
    scriptedTool("Edit", log),
    scriptedTool("Bash", log, { safe: (input: ScriptInput) => input.label !== "mkdir" })
  ])

const useBlock = (id: string, name: string, input: ScriptInput, delayMs = 0, chunks = 4) => ({
  block: { type: "tool_use" as const, id, name, input },
  delayMs,
  chunks
})
const textBlock = (text: string, delayMs = 0) => ({ block: { type: "text" as const, text }, delayMs })

const runLoop = (
  prompt: string,
  layer: Layer.Layer<Model.LanguageModel>,
  log: RunLog,
  options: QueryLoop.Options = {},
  extra: Layer.Layer<never> = Layer.empty
) =>
  Effect.gen(function*() {
    const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/tmp", sessionId: "loop" }), options)
    const fiber = yield* QueryLoop.collect(session.run(prompt)).pipe(Effect.fork)
    yield* TestClock.adjust(60_000)
    const events = yield* Fiber.join(fiber)
    return { events, messages: yield* session.messages, session }
  }).pipe(Effect.provide(Layer.mergeAll(layer, toolsLayer(log), MemoryAllowAll, extra)))

const stoppedOf = (events: ReadonlyArray<QueryLoop.LoopEvent>) => {
  const last = events[events.length - 1]
  expect(last?._tag).toBe("Stopped")
  return last as Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }>
}

/** Every tool_use in the transcript has exactly one tool_result, in the next message, in call order. */
const expectPaired = (messages: ReadonlyArray<Messages.Message>) => {
  messages.forEach((message, i) => {
    const uses = Messages.toolUses(message)
    if (message.role !== "assistant" || uses.length === 0) return
    const next = messages[i + 1]
    expect(next?.role).toBe("user")
    const results = Messages.blocks(next!).filter((b): b is Messages.ToolResultBlock => b.type === "tool_result")
    expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id))
  })
}

describe("QueryLoop (SPEC §4.11)", () => {
  it.effect("runs until a turn has no tool use; results go back in call order with is_error", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const model = ReplayModel.layer({
        turns: [
          {
            blocks: [
              textBlock("Reading."),
              useBlock("t1", "Read", { ms: 100 }),
              useBlock("t2", "Bash", { ms: 10, label: "ls", fail: true }),
              useBlock("t3", "Edit", { ms: 10 })
            ]
          },
          {
            expect: {
              tool_results: [{ tool_use_id: "t1" }, { tool_use_id: "t2", is_error: true }, { tool_use_id: "t3" }]
            },
            blocks: [textBlock("All done.")]
          }
        ]
      })
      const { events, messages } = yield* runLoop("fix it", model, log, { scheduling: "greedy" })
      expect(stoppedOf(events)).toMatchObject({ reason: "end_turn", turns: 2 })
      expect(QueryLoop.finalText(events)).toBe("All done.")
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      expectPaired(messages)
      const results = Messages.blocks(messages[2]!) as ReadonlyArray<Messages.ToolResultBlock>
      expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([["t1", true], ["t2", true], [
        "t3",
        true
      ]])
      // t2 (a Bash error) cancelled its running sibling t1 and the queued t3.
      expect(Messages.contentText(results[0]!.content)).toBe("Cancelled: a parallel Bash call failed")
    }))

  it.effect("tools start while the model is still streaming", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const model = ReplayModel.layer({
        turns: [
          {
            blocks: [
              useBlock("t1", "Read", { ms: 200 }, 150),
              useBlock("t2", "Read", { ms: 200 }, 150),
              useBlock("t3", "Edit", { ms: 200 }, 150),
              textBlock("…", 300)
            ]
          },
          { blocks: [textBlock("ok")] }
        ]
      })
      const { events } = yield* runLoop("go", model, log)
      const ended = events.find(QueryLoop.LoopEvent.$is("TurnEnded"))!
      expect(log.get("t1")!.start).toBe(150)
      expect(log.get("t2")!.start).toBe(300)
      // The Edit waits for both Reads (t2 ends at 500), though the message is still streaming until 750.
      expect(log.get("t3")!.start).toBe(500)
      const messageEnd = 750
      expect(log.get("t1")!.start).toBeLessThan(messageEnd)
      // The turn ends with the message (750): every tool had finished by 700.
      expect(ended.at).toBe(750)
    }))

  it.effect("the non-streaming baseline starts tools only after the message", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const model = ReplayModel.layer({
        turns: [
          { blocks: [useBlock("t1", "Read", { ms: 200 }, 150), textBlock("…", 300)] },
          { blocks: [textBlock("ok")] }
        ]
      })
      yield* runLoop("go", model, log, { streaming: false })
      expect(log.get("t1")!.start).toBe(450)
    }))

  it.effect("input_json_delta fragments are assembled and validated", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const requests: Array<Model.ModelRequest> = []
      const model = scriptedModel([
        [
          start,
          toolStart(0, "t1", "Read"),
          json(0, "{\"la"),
          json(0, "bel\": \"x"),
          json(0, "\", \"ms\": 5}"),
          blockStop(0),
          stopReason("tool_use"),
          stop
        ],
        [start, toolStart(0, "t2", "Read"), json(0, "{\"ms\": \"soon\"}"), blockStop(0), stopReason("tool_use"), stop],
        [start, stopReason("end_turn"), stop]
      ], requests)
      const { events, messages } = yield* runLoop("go", model, log)
      expect(stoppedOf(events).reason).toBe("end_turn")
      expect(Messages.toolUses(messages[1]!)[0]!.input).toEqual({ label: "x", ms: 5 })
      const second = Messages.blocks(messages[4]!)[0] as Messages.ToolResultBlock
      expect(second.is_error).toBe(true)
      expect(Messages.contentText(second.content)).toContain("`ms`")
      expect(requests[2]!.messages).toHaveLength(5)
    }))

  describe("a broken response without tool calls ends the run with an error, never a hang", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<Step>, string]> = [
      [
        "an error event",
        [start, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
        "Overloaded"
      ],
      ["a stream that ends without message_stop", [start, {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "hi" }
      }], "message_stop"]
    ]
    for (const [label, script, fragment] of cases) {
      it.effect(label, () =>
        Effect.gen(function*() {
          const log = new RunLog()
          const { events, messages } = yield* runLoop("go", scriptedModel([script], []), log)
          const error = events.find(QueryLoop.LoopEvent.$is("Error"))
          expect(error?.message).toContain(fragment)
          expect(stoppedOf(events).reason).toBe("error")
          expect(log.spans).toHaveLength(0)
          expectPaired(messages)
        }))
    }
  })

  describe("a tool call whose input is not valid JSON gets an error result; the rest runs and the loop goes on (SPEC §6)", () => {
    const resultsOf = (message: Messages.Message) =>
      Messages.blocks(message).filter((b): b is Messages.ToolResultBlock => b.type === "tool_result")
    const invalidJson = "InputValidationError: the input is not valid JSON: "

    it.effect("malformed JSON in the middle of a message", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const requests: Array<Model.ModelRequest> = []
        const model = scriptedModel([
          [
            start,
            toolStart(0, "t1", "Read"),
            json(0, "{\"label\": \"first\"}"),
            blockStop(0),
            toolStart(1, "t2", "Read"),
            json(1, "{\"ms\": 1,,}"),
            blockStop(1),
            toolStart(2, "t3", "Read"),
            json(2, "{\"label\": \"third\"}"),
            blockStop(2),
            stopReason("tool_use"),
            stop
          ],
          [start, stopReason("end_turn"), stop]
        ], requests)
        const { events, messages } = yield* runLoop("go", model, log)
        expect(stoppedOf(events).reason).toBe("end_turn")
        expect(log.spans.map((span) => span.id)).toEqual(["t1", "t3"])
        expectPaired(messages)
        expect(Messages.toolUses(messages[1]!).map((u) => [u.id, u.input])).toEqual([
          ["t1", { label: "first" }],
          ["t2", {}],
          ["t3", { label: "third" }]
        ])
        const [first, second, third] = resultsOf(messages[2]!)
        expect(first!.content).toBe("first done")
        expect(second!.is_error).toBe(true)
        expect(Messages.contentText(second!.content).startsWith(invalidJson)).toBe(true)
        expect(Messages.contentText(second!.content)).toContain("{\"ms\": 1,,}")
        expect(third!.content).toBe("third done")
        // The loop went on: the model saw the error.
        expect(requests).toHaveLength(2)
        expect(requests[1]!.messages).toHaveLength(3)
      }))

    const cutOff: ReadonlyArray<readonly [string, ReadonlyArray<Step>, string]> = [
      [
        "a stream that breaks inside the block",
        [start, toolStart(0, "t1", "Read"), json(0, "{\"ms\""), {
          fail: new Model.ModelError({ reason: "network", message: "socket hang up", retryable: true })
        }],
        "socket hang up"
      ],
      [
        "max_tokens inside the block",
        [start, toolStart(0, "t1", "Read"), json(0, "{\"ms\": 1"), stopReason("max_tokens"), stop],
        "max_tokens"
      ]
    ]
    for (const [label, script, fragment] of cutOff) {
      it.effect(label, () =>
        Effect.gen(function*() {
          const log = new RunLog()
          const requests: Array<Model.ModelRequest> = []
          const { events, messages } = yield* runLoop(
            "go",
            scriptedModel([script, [start, stopReason("end_turn"), stop]], requests),
            log
          )
          expect(events.find(QueryLoop.LoopEvent.$is("Error"))?.message).toContain(fragment)
          expect(log.spans).toHaveLength(0)
          expectPaired(messages)
          const [result] = resultsOf(messages[2]!)
          expect(result!.is_error).toBe(true)
          expect(Messages.contentText(result!.content).startsWith(invalidJson)).toBe(true)
          expect(Messages.contentText(result!.content)).toContain(fragment)
          expect(requests).toHaveLength(2)
          expect(stoppedOf(events).reason).toBe("end_turn")
        }))
    }

    it.effect("a tool that already started keeps its result when the stream later breaks", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const model = scriptedModel([
          [
            start,
            toolStart(0, "t1", "Read"),
            json(0, "{\"ms\": 50}"),
            blockStop(0),
            { sleep: 10 },
            toolStart(1, "t2", "Read"),
            { fail: new Model.ModelError({ reason: "network", message: "reset", retryable: true }) }
          ],
          [start, stopReason("end_turn"), stop]
        ], [])
        const { events, messages } = yield* runLoop("go", model, log)
        expect(stoppedOf(events).reason).toBe("end_turn")
        expectPaired(messages)
        expect(Messages.toolUses(messages[1]!).map((u) => u.id)).toEqual(["t1", "t2"])
        const [first, second] = resultsOf(messages[2]!)
        expect(first!.content).toBe("Read done")
        expect(Messages.contentText(second!.content)).toContain("reset")
        expect(log.spans.map((span) => span.id)).toEqual(["t1"])
      }))
  })

  it.effect("every finished turn leaves the interruption tree: 50 turns, the root has no children", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const turns = Array.from({ length: 50 }, (_, i): ReadonlyArray<Step> => [
        start,
        toolStart(0, `t${i}`, "Read"),
        json(0, "{}"),
        blockStop(0),
        stopReason("tool_use"),
        stop
      ])
      const root = yield* Interruption.makeRoot
      const { events } = yield* runLoop(
        "go",
        scriptedModel([...turns, [start, stopReason("end_turn"), stop]], []),
        log,
        { interruption: root }
      )
      expect(stoppedOf(events)).toMatchObject({ reason: "end_turn", turns: 51 })
      expect(log.spans).toHaveLength(50)
      expect(root.childCount()).toBe(0)
    }))

  describe("interrupts keep the pairing invariant", () => {
    it.effect("a user interrupt while tools run: synthetic results, then the run stops", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const model = ReplayModel.layer({
          turns: [{
            blocks: [
              useBlock("t1", "Read", { ms: 1_000 }),
              useBlock("t2", "Edit", { ms: 10 }),
              textBlock("waiting", 100)
            ]
          }]
        })
        const { events, messages } = yield* Effect.gen(function*() {
          const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
          const fiber = yield* QueryLoop.collect(session.run("go")).pipe(Effect.fork)
          yield* TestClock.adjust(50)
          yield* session.interrupt("user_interrupt")
          yield* TestClock.adjust(5_000)
          return { events: yield* Fiber.join(fiber), messages: yield* session.messages }
        }).pipe(Effect.provide(Layer.mergeAll(model, toolsLayer(log), MemoryAllowAll)))
        expect(stoppedOf(events).reason).toBe("interrupted")
        expectPaired(messages)
        const blocks = Messages.blocks(messages[2]!)
        const results = blocks.filter((b): b is Messages.ToolResultBlock => b.type === "tool_result")
        expect(results.map((r) => Messages.contentText(r.content))).toEqual([
          "Interrupted by user",
          "Interrupted by user"
        ])
        // Recorded as Claude Code records it, in the results message.
        expect(blocks.at(-1)).toEqual(Messages.text(QueryLoop.INTERRUPTED_FOR_TOOL_USE))
        expect(log.get("t1")!.interrupted).toBe(true)
        expect(log.get("t2")).toBeUndefined()
      }))

    it.effect("a user interrupt while text streams keeps the text and records the interruption; the next request joins it with the prompt", () =>
      Effect.gen(function*() {
        const requests: Array<Model.ModelRequest> = []
        const replay = ReplayModel.layer({
          turns: [
            { blocks: [{ block: { type: "text", text: "one two three four" }, chunks: 4, chunkDelayMs: 100 }] },
            { blocks: [textBlock("Sure.")] }
          ]
        })
        const recording = Layer.effect(
          Model.LanguageModel,
          Effect.map(Model.LanguageModel, (model) => ({
            stream: (request: Model.ModelRequest) =>
              Stream.suspend(() => (requests.push(request), model.stream(request)))
          }))
        ).pipe(Layer.provide(replay))
        const messages = yield* Effect.gen(function*() {
          const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
          const fiber = yield* QueryLoop.collect(session.run("count")).pipe(Effect.fork)
          yield* TestClock.adjust(150)
          yield* session.interrupt("user_interrupt")
          yield* TestClock.adjust(1_000)
          const events = yield* Fiber.join(fiber)
          expect(stoppedOf(events).reason).toBe("interrupted")
          const afterInterrupt = yield* session.messages
          yield* QueryLoop.collect(session.run("go on"))
          return afterInterrupt
        }).pipe(Effect.provide(Layer.mergeAll(recording, toolsLayer(new RunLog()), Results.layerMemory)))
        // The streamed text is kept; the interruption is a user message of its own.
        expect(messages).toHaveLength(3)
        expect(messages[1]!.role).toBe("assistant")
        const kept = Messages.blocks(messages[1]!)[0]
        expect(kept?.type === "text" && "one two three four".startsWith(kept.text) && kept.text.length > 0).toBe(true)
        expect(messages[2]).toEqual({ role: "user", content: [Messages.text(QueryLoop.INTERRUPTED)] })
        // The next request joins the interruption and the new prompt: roles alternate.
        const sent = requests[1]!.messages
        expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user"])
        expect(Messages.blocks(sent[2]!)).toEqual([Messages.text(QueryLoop.INTERRUPTED), Messages.text("go on")])
      }))

    it.effect("session.interrupt is lazy: built before the run, it acts when it runs (sleep, then interrupt)", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const model = ReplayModel.layer({ turns: [{ blocks: [useBlock("t1", "Read", { ms: 1_000 })] }] })
        const events = yield* Effect.gen(function*() {
          const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
          // Built while no run exists yet; the idiom is to sequence it after a delay.
          const stop = Effect.sleep(50).pipe(Effect.zipRight(session.interrupt("user_interrupt")))
          const fiber = yield* QueryLoop.collect(session.run("go")).pipe(Effect.fork)
          yield* Effect.fork(stop)
          yield* TestClock.adjust(5_000)
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(Layer.mergeAll(model, toolsLayer(log), Results.layerMemory)))
        expect(stoppedOf(events).reason).toBe("interrupted")
        // Judged by the tool: it was interrupted at 50 ms, not run to its end.
        expect(log.get("t1")).toMatchObject({ interrupted: true, end: 50 })
      }))

    it.effect("the consumer going away mid-turn still leaves a paired transcript", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const model = ReplayModel.layer({
          turns: [{ blocks: [useBlock("t1", "Read", { ms: 10 }), useBlock("t2", "Read", { ms: 1_000 })] }]
        })
        const messages = yield* Effect.gen(function*() {
          const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
          const fiber = yield* Stream.runDrain(session.run("go")).pipe(Effect.fork)
          yield* TestClock.adjust(100)
          yield* Fiber.interrupt(fiber)
          return yield* session.messages
        }).pipe(Effect.provide(Layer.mergeAll(model, toolsLayer(log), MemoryAllowAll)))
        expectPaired(messages)
        const results = Messages.blocks(messages[2]!) as ReadonlyArray<Messages.ToolResultBlock>
        expect(results.map((r) => Messages.contentText(r.content))).toEqual(["Read done", "Interrupted by user"])
        expect(log.liveCount).toBe(0)
      }))

    it.effect("a new message lets block tools finish and ends the run", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const model = ReplayModel.layer({
          turns: [{ blocks: [useBlock("t1", "Edit", { ms: 300 }), textBlock("x", 10)] }]
        })
        const { events, messages } = yield* Effect.gen(function*() {
          const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
          const fiber = yield* QueryLoop.collect(session.run("go")).pipe(Effect.fork)
          yield* TestClock.adjust(50)
          yield* session.interrupt("new_message")
          yield* TestClock.adjust(1_000)
          return { events: yield* Fiber.join(fiber), messages: yield* session.messages }
        }).pipe(Effect.provide(Layer.mergeAll(model, toolsLayer(log), MemoryAllowAll)))
        expect(stoppedOf(events).reason).toBe("new_message")
        expect((Messages.blocks(messages[2]!)[0] as Messages.ToolResultBlock).content).toBe("Edit done")
      }))
  })

  it.effect("maxTurns stops the loop", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const turn = (id: string) => ({ blocks: [useBlock(id, "Read", { ms: 1 })] })
      const model = ReplayModel.layer({ turns: [turn("a"), turn("b"), turn("c")] })
      const { events, messages } = yield* runLoop("go", model, log, { maxTurns: 2 })
      expect(stoppedOf(events)).toMatchObject({ reason: "max_turns", turns: 2 })
      expectPaired(messages)
    }))

  describe("hooks at their points", () => {
    const hooksLayer = (hooks: Partial<Hooks.Service>) =>
      Layer.succeed(Hooks.Hooks, { ...Hooks.none, has: () => true, ...hooks })

    it.effect("UserPromptSubmit can block the prompt", () =>
      Effect.gen(function*() {
        const requests: Array<Model.ModelRequest> = []
        const { events } = yield* runLoop(
          "rm -rf /",
          scriptedModel([], requests),
          new RunLog(),
          {},
          hooksLayer({
            userPromptSubmit: () => Effect.succeed({ ...Hooks.emptyLoopHook, blockReason: "dangerous prompt" })
          })
        )
        expect(stoppedOf(events)).toMatchObject({ reason: "prompt_blocked", detail: "dangerous prompt" })
        expect(requests).toHaveLength(0)
      }))

    it.effect("UserPromptSubmit context joins the prompt; a Stop hook that blocks keeps the model going once", () =>
      Effect.gen(function*() {
        const requests: Array<Model.ModelRequest> = []
        const calls = yield* Ref.make(0)
        const model = scriptedModel([
          [start, stopReason("end_turn"), stop],
          [start, stopReason("end_turn"), stop]
        ], requests)
        const { events } = yield* runLoop(
          "hello",
          model,
          new RunLog(),
          {},
          hooksLayer({
            userPromptSubmit: () => Effect.succeed({ ...Hooks.emptyLoopHook, additionalContext: ["branch: main"] }),
            stop: ({ stopHookActive }) =>
              Effect.zipRight(
                Ref.update(calls, (n) => n + 1),
                Effect.succeed(
                  stopHookActive ? Hooks.emptyLoopHook : { ...Hooks.emptyLoopHook, blockReason: "run the tests first" }
                )
              )
          })
        )
        expect(stoppedOf(events)).toMatchObject({ reason: "end_turn", turns: 2 })
        expect(Messages.blocks(requests[0]!.messages[0]!).map((b) => (b.type === "text" ? b.text : ""))).toEqual([
          "hello",
          "branch: main"
        ])
        // The first response was empty: the Stop hook's reason follows the prompt, and the request joins them.
        expect(Messages.blocks(requests[1]!.messages.at(-1)!).at(-1)).toEqual(Messages.text("run the tests first"))
        expect(yield* Ref.get(calls)).toBe(2)
      }))

    it.effect("continue:false from a tool hook stops the loop after the batch", () =>
      Effect.gen(function*() {
        const model = ReplayModel.layer({
          turns: [{ blocks: [useBlock("t1", "Read", { ms: 1 })] }, { blocks: [textBlock("never")] }]
        })
        const { events, messages } = yield* runLoop(
          "go",
          model,
          new RunLog(),
          {},
          hooksLayer({
            postToolUse: () => Effect.succeed({ ...Hooks.emptyPostToolUse, stop: "budget exhausted" })
          })
        )
        expect(stoppedOf(events)).toMatchObject({ reason: "hook_stop", detail: "budget exhausted" })
        expectPaired(messages)
      }))
  })

  it.effect("tool events flow through the loop's stream", () =>
    Effect.gen(function*() {
      const model = ReplayModel.layer({
        turns: [{ blocks: [useBlock("t1", "Read", { ms: 30, progress: 2 })] }, { blocks: [textBlock("ok")] }]
      })
      const { events } = yield* runLoop("go", model, new RunLog())
      const toolEvents = events.filter(QueryLoop.LoopEvent.$is("Tool")).map((e) => e.event._tag)
      expect(toolEvents).toEqual(["Started", "Progress", "Progress", "Result"])
      const result = events.filter(QueryLoop.LoopEvent.$is("Tool")).map((e) => e.event).find(DispatchEvent.isResult)
      expect(result?.status).toBe("success")
    }))
})
