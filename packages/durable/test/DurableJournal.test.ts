/**
 * The journal's guarantee per kind of call (SPEC §4.14), in process: a
 * session is stopped in the middle of a turn (its fiber interrupted, which
 * leaves the journal as a crash would: markers without results), the journal
 * is opened again on the same file, and the next prompt finishes the turn.
 * Judged by what the tools did (their own counters), the model requests the
 * scripted model received, and the conversation.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import {
  DispatchEvent,
  Journal,
  Messages,
  Model,
  Permissions,
  QueryLoop,
  Registry,
  ReplayModel,
  Results,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import type { DurableJournal } from "@switchyard/durable"
import { JournalDatabase } from "@switchyard/durable"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const Input = Schema.Struct({ key: Schema.String })

/** What the tools did, by key: each run, with the idempotency key it got. */
class Effects {
  readonly runs: Array<{ readonly tool: string; readonly key: string; readonly idempotencyKey: string | undefined }> =
    []
  readonly started = new Map<string, Deferred.Deferred<void>>()
  /** Keys whose calls hang (until the test lets them go). */
  readonly hanging = new Set<string>()
  count(key: string) {
    return this.runs.filter((r) => r.key === key).length
  }
}

const makeTool = (
  name: string,
  effects: Effects,
  kind: { readonly readOnly?: boolean; readonly idempotent?: boolean }
) =>
  Tool.make(name, {
    description: name,
    input: Input,
    isConcurrencySafe: () => true,
    isReadOnly: () => kind.readOnly ?? false,
    isIdempotent: () => kind.idempotent ?? false,
    call: ({ key }) =>
      Effect.gen(function*() {
        const idempotencyKey = Option.getOrUndefined(yield* Journal.currentIdempotencyKey)
        effects.runs.push({ tool: name, key, idempotencyKey })
        const started = effects.started.get(key)
        if (started !== undefined) yield* Deferred.succeed(started, undefined)
        if (effects.hanging.has(key)) return yield* Effect.never
        return `${name} ${key} done`
      })
  })

const use = (id: string, name: string, key: string) => Messages.toolUse(id, name, { key })

/** A model that answers by what it is sent: the first prompt gets `calls`; anything later, "done". */
const scriptedModel = (calls: ReadonlyArray<Messages.ToolUseBlock>, requests: Array<Model.ModelRequest>) =>
  Layer.succeed(Model.LanguageModel, {
    stream: (request) =>
      Stream.suspend(() => {
        requests.push(request)
        const first = request.messages.length === 1
        const turn: ReplayModel.Turn = first
          ? { blocks: calls.map((block) => ({ block })) }
          : { blocks: [{ block: Messages.text("done") }] }
        return Stream.fromIterable(
          ReplayModel.turnEvents(turn, { messageId: `msg_${requests.length}` }).map((e) => e.event)
        )
      })
  })

/** Results in memory, and every call allowed (the tests' tools mutate; with no policy only read-only calls run). */
const Tools = Layer.merge(Results.layerMemory, Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll))

const environment = (
  tools: ReadonlyArray<Tool.Any>,
  requests: Array<Model.ModelRequest>,
  calls: ReadonlyArray<Messages.ToolUseBlock>
) => Layer.mergeAll(Registry.layerTools(tools), Tools, scriptedModel(calls, requests))

const journalAt = (file: string) =>
  JournalDatabase.open({ _tag: "File", path: file }).pipe(Effect.provide(NodeContext.layer))

const runPrompt = (
  journal: DurableJournal.DurableJournal,
  sessionId: string,
  messages: ReadonlyArray<Messages.Message>,
  prompt: string
) =>
  Effect.gen(function*() {
    const context = yield* Ref.make(ToolUseContext.make({ cwd: "/tmp", sessionId, messages }))
    const session = yield* QueryLoop.makeSession(context, { journal })
    const events = yield* QueryLoop.collect(session.run(prompt))
    return { events, messages: yield* session.messages }
  })

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "durable-journal-")), "journal.db")

describe("DurableJournal (SPEC §4.14)", () => {
  it.live(
    "a turn the process stopped in is finished from the journal: completed calls replayed, read-only and idempotent ones run again, a mutating one answered \"effect unknown\", an unstarted one started; one model request follows",
    () =>
      Effect.gen(function*() {
        const file = tempFile()
        const effects = new Effects()
        const tools = [
          makeTool("Probe", effects, { readOnly: true }),
          makeTool("Mutate", effects, {}),
          makeTool("Put", effects, { idempotent: true })
        ]
        const calls = [
          use("toolu_done_read", "Probe", "done-read"),
          use("toolu_done_write", "Mutate", "done-write"),
          use("toolu_flight_read", "Probe", "flight-read"),
          use("toolu_flight_write", "Mutate", "flight-write"),
          use("toolu_flight_put", "Put", "flight-put")
        ]
        const requests: Array<Model.ModelRequest> = []
        const env = environment(tools, requests, calls)
        for (const key of ["flight-read", "flight-write", "flight-put"]) {
          effects.started.set(key, yield* Deferred.make<void>())
          effects.hanging.add(key)
        }

        // First process: the three hanging calls are in flight when it stops.
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          const fiber = yield* Effect.fork(runPrompt(journal, "s1", [], "start"))
          for (const d of effects.started.values()) yield* Deferred.await(d)
          yield* Fiber.interrupt(fiber)
        })).pipe(Effect.provide(env))
        expect(effects.runs.map((r) => r.key).sort()).toEqual([
          "done-read",
          "done-write",
          "flight-put",
          "flight-read",
          "flight-write"
        ])
        expect(requests).toHaveLength(1)

        // Second process: the conversation comes from the journal; the next prompt finishes the turn.
        effects.started.clear()
        effects.hanging.clear()
        const second = yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          const recorded = yield* journal.messages("s1")
          expect(Option.isSome(recorded)).toBe(true)
          return yield* runPrompt(journal, "s1", Option.getOrThrow(recorded), "go on")
        })).pipe(Effect.provide(environment(
          [
            makeTool("Probe", effects, { readOnly: true }),
            makeTool("Mutate", effects, {}),
            makeTool("Put", effects, { idempotent: true })
          ],
          requests,
          calls
        )))

        // Completed calls did not run again; the read-only and the idempotent in-flight ones did
        // (the idempotent one with the same key); the mutating one did not.
        expect(effects.count("done-read")).toBe(1)
        expect(effects.count("done-write")).toBe(1)
        expect(effects.count("flight-read")).toBe(2)
        expect(effects.count("flight-write")).toBe(1)
        const puts = effects.runs.filter((r) => r.key === "flight-put")
        expect(puts).toHaveLength(2)
        expect(puts[0]!.idempotencyKey).toBeDefined()
        expect(puts[1]!.idempotencyKey).toBe(puts[0]!.idempotencyKey)

        // One more model request: the recorded messages, the turn's results in call order, the prompt.
        expect(requests).toHaveLength(2)
        const sent = requests[1]!.messages
        const results = sent.flatMap((m) => Messages.blocks(m)).filter((b) => b.type === "tool_result")
        expect(results.map((b) => b.type === "tool_result" ? b.tool_use_id : "")).toEqual(calls.map((c) => c.id))
        const byId = new Map(results.map((b) => [b.type === "tool_result" ? b.tool_use_id : "", b]))
        const text = (id: string) => {
          const block = byId.get(id)
          return block?.type === "tool_result" ? Messages.contentText(block.content) : ""
        }
        expect(text("toolu_done_read")).toBe("Probe done-read done")
        expect(text("toolu_done_write")).toBe("Mutate done-write done")
        expect(text("toolu_flight_write")).toContain("The process stopped while this ran; its effect is unknown.")
        expect(text("toolu_flight_write")).toContain("flight-write")
        const last = sent[sent.length - 1]!
        expect(Messages.blocks(last).some((b) => b.type === "text" && b.text === "go on")).toBe(true)
        expect(QueryLoop.finalText(second.events)).toBe("done")
      }),
    30_000
  )

  it.live(
    "a response cut off mid-stream is finished with the calls it had started; the model is not asked for that turn again",
    () =>
      Effect.gen(function*() {
        const file = tempFile()
        const effects = new Effects()
        const tools = () => [makeTool("Probe", effects, { readOnly: true }), makeTool("Mutate", effects, {})]
        const requests: Array<Model.ModelRequest> = []
        // The first response sends two calls, then hangs before the third block and message_stop.
        const cut = Layer.succeed(Model.LanguageModel, {
          stream: (request) =>
            Stream.suspend(() => {
              requests.push(request)
              if (request.messages.length > 1) {
                return Stream.fromIterable(
                  ReplayModel.turnEvents({ blocks: [{ block: Messages.text("done") }] }, { messageId: "m2" }).map((e) =>
                    e.event
                  )
                )
              }
              const events = ReplayModel.turnEvents({
                blocks: [
                  { block: use("toolu_r", "Probe", "cut-read") },
                  { block: use("toolu_w", "Mutate", "cut-write") },
                  { block: use("toolu_never", "Mutate", "never") }
                ]
              }, { messageId: "m1" }).map((e) => e.event)
              const third = events.findIndex((e) => e.type === "content_block_start" && e.index === 2)
              return Stream.concat(Stream.fromIterable(events.slice(0, third)), Stream.never)
            })
        })
        effects.hanging.add("cut-write")
        effects.started.set("cut-write", yield* Deferred.make<void>())
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          const fiber = yield* Effect.fork(runPrompt(journal, "s-cut", [], "start"))
          yield* Deferred.await(effects.started.get("cut-write")!)
          yield* Fiber.interrupt(fiber)
        })).pipe(Effect.provide(Layer.mergeAll(Registry.layerTools(tools()), Tools, cut)))
        effects.hanging.clear()
        effects.started.clear()

        const second = yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          expect(yield* journal.unfinished(yield* Ref.make(ToolUseContext.make({ cwd: "/tmp", sessionId: "s-cut" }))))
            .toBe(true)
          return yield* runPrompt(journal, "s-cut", Option.getOrThrow(yield* journal.messages("s-cut")), "go on")
        })).pipe(Effect.provide(Layer.mergeAll(Registry.layerTools(tools()), Tools, cut)))
        // Two model requests in all: the cut one, and the one after the turn was finished.
        expect(requests).toHaveLength(2)
        const assistant = second.messages.find((m) => m.role === "assistant")!
        expect(Messages.toolUses(assistant).map((u) => u.id)).toEqual(["toolu_r", "toolu_w"])
        expect(effects.count("cut-read")).toBe(1)
        expect(effects.count("cut-write")).toBe(1)
        expect(effects.count("never")).toBe(0)
        const results = second.messages.flatMap((m) => Messages.blocks(m)).filter((b) => b.type === "tool_result")
        expect(results.map((b) => b.type === "tool_result" ? b.tool_use_id : "")).toEqual(["toolu_r", "toolu_w"])
        const write = results[1]!
        expect(write.type === "tool_result" && Messages.contentText(write.content)).toContain("its effect is unknown")
        expect(QueryLoop.finalText(second.events)).toBe("done")
      }),
    30_000
  )

  it.live(
    "a call that was waiting for a permission answer had not started: it is asked again, not answered \"unknown\"",
    () =>
      Effect.gen(function*() {
        const file = tempFile()
        const effects = new Effects()
        const tools = () => [makeTool("Mutate", effects, {})]
        const requests: Array<Model.ModelRequest> = []
        const asked = yield* Deferred.make<void>()
        let answer: "hang" | "allow" = "hang"
        const policy = Permissions.PermissionPolicy.context({
          decide: (request) =>
            Effect.gen(function*() {
              yield* request.emit(DispatchEvent.PermissionRequested({
                toolUseId: request.toolUseId,
                name: request.tool.name,
                input: request.input,
                message: "Allow?",
                at: 0
              }))
              if (answer === "hang") {
                yield* Deferred.succeed(asked, undefined)
                return yield* Effect.never
              }
              return { behavior: "allow", source: "user" } as const
            })
        })
        const env = () =>
          Layer.mergeAll(
            Registry.layerTools(tools()),
            Results.layerMemory,
            scriptedModel([use("toolu_ask", "Mutate", "asked")], requests),
            Layer.succeedContext(policy)
          )
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          const fiber = yield* Effect.fork(runPrompt(journal, "s-ask", [], "start"))
          yield* Deferred.await(asked)
          yield* Fiber.interrupt(fiber)
        })).pipe(Effect.provide(env()))
        expect(effects.count("asked")).toBe(0)
        answer = "allow"
        const second = yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          return yield* runPrompt(journal, "s-ask", Option.getOrThrow(yield* journal.messages("s-ask")), "go on")
        })).pipe(Effect.provide(env()))
        expect(effects.count("asked")).toBe(1)
        const result = second.messages.flatMap((m) => Messages.blocks(m)).find((b) => b.type === "tool_result")
        expect(result?.type === "tool_result" && Messages.contentText(result.content)).toBe("Mutate asked done")
      }),
    30_000
  )

  it.live(
    "a result over the inline limit is journaled by reference: the preview the model got, naming the file",
    () =>
      Effect.gen(function*() {
        const file = tempFile()
        const resultsDir = path.dirname(file)
        const Big = Tool.make("Big", {
          description: "A long output",
          input: Schema.Struct({}),
          isReadOnly: () => true,
          maxResultSizeChars: 1_000,
          call: () => Effect.succeed("x".repeat(5_000))
        })
        const requests: Array<Model.ModelRequest> = []
        const env = Layer.mergeAll(
          Registry.layerTools([Big]),
          Results.layerDirectory(resultsDir),
          scriptedModel([Messages.toolUse("toolu_big", "Big", {})], requests)
        )
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          yield* runPrompt(journal, "s-big", [], "start")
          const messages = Option.getOrThrow(yield* journal.messages("s-big"))
          const block = messages.flatMap((m) => Messages.blocks(m)).find((b) => b.type === "tool_result")
          const text = block?.type === "tool_result" ? Messages.contentText(block.content) : ""
          expect(text.length).toBeLessThan(5_000)
          const persisted = path.join(resultsDir, "sessions", "s-big", "tool-results", "toolu_big.txt")
          expect(text).toContain(persisted)
          expect(fs.readFileSync(persisted, "utf8")).toBe("x".repeat(5_000))
        })).pipe(Effect.provide(env))
      }),
    30_000
  )

  it.live(
    "the session index: running while a process holds it, interrupted after it stopped in a turn, done once finished",
    () =>
      Effect.gen(function*() {
        const file = tempFile()
        const effects = new Effects()
        const requests: Array<Model.ModelRequest> = []
        const env = Layer.mergeAll(
          Registry.layerTools([makeTool("Mutate", effects, {})]),
          Tools,
          scriptedModel([use("toolu_x", "Mutate", "x")], requests)
        )
        effects.hanging.add("x")
        effects.started.set("x", yield* Deferred.make<void>())
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          const fiber = yield* Effect.fork(runPrompt(journal, "s-index", [], "start here"))
          yield* Deferred.await(effects.started.get("x")!)
          const running = (yield* journal.sessions(undefined)).find((e) => e.id === "s-index")
          expect(running).toMatchObject({ state: "running", title: "start here", turns: 0, cwd: "/tmp" })
          expect(running?.runningIn).toContain(`process ${process.pid}`)
          yield* Fiber.interrupt(fiber)
        })).pipe(Effect.provide(env))
        effects.hanging.clear()
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          expect((yield* journal.sessions("/tmp")).find((e) => e.id === "s-index")?.state).toBe("interrupted")
          expect(yield* journal.sessions("/elsewhere")).toEqual([])
          yield* runPrompt(journal, "s-index", Option.getOrThrow(yield* journal.messages("s-index")), "go on")
        })).pipe(Effect.provide(env))
        yield* Effect.scoped(Effect.gen(function*() {
          const journal = yield* journalAt(file)
          expect((yield* journal.sessions(undefined)).find((e) => e.id === "s-index")).toMatchObject({
            state: "done",
            turns: 2
          })
        })).pipe(Effect.provide(env))
      }),
    30_000
  )
})
