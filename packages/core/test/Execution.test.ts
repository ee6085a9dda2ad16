import { DispatchEvent, Execution, Hooks, Messages, Permissions, Results, Tool, ToolUseContext } from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import { call, environment, RunLog, scriptedTool } from "./fixtures.js"

const collect = (block: Messages.ToolUseBlock, tools: ReadonlyArray<Tool.Any>) =>
  Effect.gen(function*() {
    const env = yield* environment(tools)
    return Chunk.toArray(yield* Stream.runCollect(Execution.runToolUse(block, env)))
  })

const onlyResult = (events: ReadonlyArray<DispatchEvent.DispatchEvent>) => {
  const results = events.filter(DispatchEvent.isResult)
  expect(results).toHaveLength(1)
  return results[0]!
}

describe("Execution (SPEC §4.6)", () => {
  it.effect("one call is a stream: Started, progress, then one Result with start/end times", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const tool = scriptedTool("Slow", log)
      const seen: Array<DispatchEvent.DispatchEvent> = []
      const fiber = yield* collect(call("a", "Slow", { ms: 1000, progress: 3 }), [tool]).pipe(Effect.fork)
      // The real consumer: observe events as they arrive.
      const env = yield* environment([tool])
      const live = yield* Execution.runToolUse(call("b", "Slow", { ms: 1000, progress: 3 }), env).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.fork
      )
      yield* TestClock.adjust(300)
      expect(seen.map((e) => e._tag)).toEqual(["Started", "Progress", "Progress"])
      expect(seen.some(DispatchEvent.isResult)).toBe(false)
      yield* TestClock.adjust(1000)
      yield* Fiber.join(live)
      const events = yield* Fiber.join(fiber)
      expect(events.map((e) => e._tag)).toEqual(["Started", "Progress", "Progress", "Progress", "Result"])
      const result = onlyResult(events)
      expect(result.status).toBe("success")
      expect(result.startedAt).toBe(0)
      expect(result.endedAt).toBe(1000)
      expect(result.block).toEqual({ type: "tool_result", tool_use_id: "a", content: "Slow done" })
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a failing call is an error result with the tool's message", () =>
    Effect.gen(function*() {
      const result = onlyResult(yield* collect(call("a", "T", { fail: true, label: "disk" }), [scriptedTool("T", new RunLog())]))
      expect(result.status).toBe("error")
      expect(result.block.is_error).toBe(true)
      expect(result.block.content).toBe("disk failed")
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a call that dies or throws is an error result; the engine does not crash", () =>
    Effect.gen(function*() {
      const died = onlyResult(yield* collect(call("a", "T", { die: true }), [scriptedTool("T", new RunLog())]))
      expect(died.status).toBe("error")
      expect(Messages.contentText(died.block.content)).toContain("T failed unexpectedly (Error: T exploded)")
      const thrower = Tool.make("Thrower", {
        description: "throws synchronously",
        input: Schema.Struct({}),
        call: () => {
          throw new TypeError("cannot read properties of undefined")
        }
      })
      const thrown = onlyResult(yield* collect(call("b", "Thrower"), [thrower]))
      expect(thrown.status).toBe("error")
      expect(Messages.contentText(thrown.block.content)).toContain("TypeError: cannot read properties of undefined")
      const badPredicate = Tool.make("BadValidate", {
        description: "validateInput throws",
        input: Schema.Struct({}),
        validateInput: () => Effect.die("boom"),
        call: () => Effect.succeed("never")
      })
      const validateDied = onlyResult(yield* collect(call("c", "BadValidate"), [badPredicate]))
      expect(validateDied.status).toBe("error")
      expect(Messages.contentText(validateDied.block.content)).toContain("boom")
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a streaming call: progress items become events, the Output item the result", () =>
    Effect.gen(function*() {
      const streamer = Tool.make("Streamer", {
        description: "streams",
        input: Schema.Struct({}),
        call: () =>
          Stream.make<Array<Tool.StreamItem<string, string>>>(
            Tool.progress("one"),
            Tool.progress("two"),
            Tool.output("final")
          )
      })
      const events = yield* collect(call("a", "Streamer"), [streamer])
      expect(events.filter(DispatchEvent.isProgress).map((e) => e.data)).toEqual(["one", "two"])
      expect(onlyResult(events).block.content).toBe("final")
      const silent = Tool.make<{}, string>("Silent", { description: "", input: Schema.Struct({}), call: () => Stream.empty })
      expect(onlyResult(yield* collect(call("b", "Silent"), [silent])).block.content).toContain("ended without output")
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a denial is a 'denied' result with the message, and PermissionDecided is published", () =>
    Effect.gen(function*() {
      const events = yield* collect(call("a", "T"), [scriptedTool("T", new RunLog())]).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: () => Effect.succeed({ behavior: "deny" as const, source: "rule", message: "Denied by rule T" })
        }))
      )
      const decided = events.find(DispatchEvent.$is("PermissionDecided"))
      expect(decided?.behavior).toBe("deny")
      const result = onlyResult(events)
      expect(result.status).toBe("denied")
      expect(result.block).toEqual({ type: "tool_result", tool_use_id: "a", content: "Denied by rule T", is_error: true })
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a user's 'no' asks the runner to abort the turn", () =>
    Effect.gen(function*() {
      const env = yield* environment([scriptedTool("T", new RunLog())])
      const outcome = yield* Execution.execute(call("a", "T"), env, () => Effect.void).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: () =>
            Effect.succeed({ behavior: "deny" as const, source: "user", message: "no", rejectedByUser: true })
        }))
      )
      expect(outcome.abort).toBe("permission_rejected")
      expect(outcome.result.block.content).toBe(Results.REJECTED_BY_USER)
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("hook messages, additional context and updatedToolOutput flow through the result", () =>
    Effect.gen(function*() {
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: () => true,
        preToolUse: () =>
          Effect.succeed({ ...Hooks.emptyPreToolUse, messages: [{ content: "checked", level: "info" as const }] }),
        postToolUse: ({ response }) =>
          Effect.succeed({
            ...Hooks.emptyPostToolUse,
            updatedToolOutput: `redacted(${Messages.contentText(response)})`,
            additionalContext: ["remember the style guide"],
            stop: "budget exhausted"
          })
      }
      const env = yield* environment([scriptedTool("T", new RunLog())])
      const events: Array<DispatchEvent.DispatchEvent> = []
      const outcome = yield* Execution.execute(call("a", "T"), env, (e) => Effect.sync(() => void events.push(e))).pipe(
        Effect.provide(Layer.succeed(Hooks.Hooks, hooks))
      )
      expect(events.find(DispatchEvent.$is("HookAttachment"))?.content).toBe("checked")
      expect(outcome.result.block.content).toBe("redacted(T done)\n\nremember the style guide")
      expect(outcome.stop).toBe("budget exhausted")
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("every call runs in a span named after the tool, with its id and outcome", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const base = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (...args) => {
          const span = base.span(...args)
          spans.push(span)
          return span
        },
        context: base.context
      })
      yield* collect(call("a", "T", { fail: true }), [scriptedTool("T", new RunLog())]).pipe(Effect.withTracer(tracer))
      const span = spans.find((s) => s.name === "T")!
      expect(span.attributes.get("switchyard.tool_use_id")).toBe("a")
      expect(span.attributes.get("switchyard.status")).toBe("error")
    }).pipe(Effect.provide(Results.layerMemory)))
})

describe("Results (SPEC §4.10)", () => {
  it.scoped("output over maxResultSizeChars is persisted in full; the model gets a preview and the path", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped()
      const big = Array.from({ length: 4000 }, (_, i) => `line ${i}`).join("\n")
      const tool = scriptedTool("Big", new RunLog(), { maxResultSizeChars: 5_000 })
      const result = onlyResult(
        yield* collect(call("toolu_big", "Big", { output: big }), [tool]).pipe(
          Effect.provide(Results.layerDirectory(home))
        )
      )
      const text = Messages.contentText(result.block.content)
      const file = `${home}/sessions/test-session/tool-results/toolu_big.txt`
      expect(text).toContain(file)
      expect(text).toContain(`${big.length} characters`)
      expect(text).toContain(big.slice(0, 2_000))
      expect(text).toContain(big.slice(-1_000))
      expect(text.length).toBeLessThan(3_500)
      expect(yield* fs.readFileString(file)).toBe(big)
      expect(result.status).toBe("success")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("output within the limit is untouched", () =>
    Effect.gen(function*() {
      const result = onlyResult(yield* collect(call("a", "T", { output: "x".repeat(50_000) }), [scriptedTool("T", new RunLog())]))
      expect(result.block.content).toBe("x".repeat(50_000))
    }).pipe(Effect.provide(Results.layerMemory)))

  it("toUserMessage lists results in call order and pairs a missing one", () => {
    const calls = [Messages.toolUse("a", "T", {}), Messages.toolUse("b", "T", {}), Messages.toolUse("c", "T", {})]
    const results = new Map([
      ["c", Messages.toolResult("c", "C")],
      ["a", Messages.toolResult("a", "A")]
    ])
    const message = Results.toUserMessage(calls, results)
    expect(Messages.blocks(message).map((b) => (b.type === "tool_result" ? [b.tool_use_id, b.is_error ?? false] : []))).toEqual([
      ["a", false],
      ["b", true],
      ["c", false]
    ])
  })

  it("the state directory defaults to ~/.switchyard", () => {
    expect(Option.isSome(Option.some(Results.stateDirectory))).toBe(true)
    expect(ToolUseContext.make({ cwd: "/" }).sessionId).toMatch(/^[0-9a-f-]{36}$/)
  })
})
