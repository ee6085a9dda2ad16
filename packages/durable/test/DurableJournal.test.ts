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
import { Journal, Messages, Model, QueryLoop, Registry, ReplayModel, Results, Tool, ToolUseContext } from "@switchyard/core"
import { DurableJournal, JournalDatabase } from "@switchyard/durable"
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
  readonly runs: Array<{ readonly tool: string; readonly key: string; readonly idempotencyKey: string | undefined }> = []
  readonly started = new Map<string, Deferred.Deferred<void>>()
  /** Keys whose calls hang (until the test lets them go). */
  readonly hanging = new Set<string>()
  count(key: string) {
    return this.runs.filter((r) => r.key === key).length
  }
}

const makeTool = (name: string, effects: Effects, kind: { readonly readOnly?: boolean; readonly idempotent?: boolean }) =>
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
        return Stream.fromIterable(ReplayModel.turnEvents(turn, { messageId: `msg_${requests.length}` }).map((e) => e.event))
      })
  })

const environment = (tools: ReadonlyArray<Tool.Any>, requests: Array<Model.ModelRequest>, calls: ReadonlyArray<Messages.ToolUseBlock>) =>
  Layer.mergeAll(Registry.layerTools(tools), Results.layerMemory, scriptedModel(calls, requests))

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
  it.live("a turn the process stopped in is finished from the journal: completed calls replayed, read-only and idempotent ones run again, a mutating one answered \"effect unknown\", an unstarted one started; one model request follows", () =>
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
      expect(effects.runs.map((r) => r.key).sort()).toEqual(["done-read", "done-write", "flight-put", "flight-read", "flight-write"])
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
    }), 30_000)
})
