/**
 * SPEC §5 invariants, property-tested with fast-check over random mixes of
 * safe and unsafe tools, failures, delays, streaming arrival and interrupts.
 */
import {
  Batches,
  DispatchEvent,
  Footprint,
  Messages,
  Model,
  QueryLoop,
  Registry,
  Results,
  StreamingExecutor,
  Tool,
  ToolCall,
  ToolUseContext
} from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import { call, environment, RunLog, ScriptInput, scriptedTool, MemoryAllowAll } from "./fixtures.js"

// Properties are CPU-bound: on a loaded machine a run takes longer, but never waits on a clock
// (TestClock). The timeout only catches a hang, so it is generous.
const PROPERTY_TIMEOUT = 180_000

const Kind = FastCheck.constantFrom("Read", "Grep", "Edit", "BashSafe", "BashUnsafe", "Unknown")
type Kind = typeof Kind extends FastCheck.Arbitrary<infer K> ? K : never

const CallSpec = FastCheck.record({
  kind: Kind,
  ms: FastCheck.integer({ min: 0, max: 200 }),
  fail: FastCheck.boolean(),
  die: FastCheck.constantFrom(false, false, false, false, true),
  progress: FastCheck.integer({ min: 0, max: 3 }),
  arrivesAfter: FastCheck.integer({ min: 0, max: 120 })
})

const Scenario = FastCheck.record({
  calls: FastCheck.array(CallSpec, { minLength: 1, maxLength: 10 }),
  interrupt: FastCheck.option(
    FastCheck.record({
      at: FastCheck.integer({ min: 0, max: 600 }),
      reason: FastCheck.constantFrom("user_interrupt" as const, "new_message" as const)
    }),
    { nil: undefined }
  ),
  cap: FastCheck.integer({ min: 1, max: 10 })
})

const isSafe = (kind: Kind) => kind === "Read" || kind === "Grep" || kind === "BashSafe"

const toolsFor = (log: RunLog) => [
  scriptedTool("Read", log, { safe: true }),
  scriptedTool("Grep", log, { safe: true, interruptBehavior: "cancel" }),
  scriptedTool("Edit", log),
  scriptedTool("Bash", log, { safe: (input: ScriptInput) => input.label !== "mkdir" })
]

const blockFor = (spec: typeof CallSpec extends FastCheck.Arbitrary<infer T> ? T : never, index: number) => {
  const name = spec.kind === "BashSafe" || spec.kind === "BashUnsafe" ? "Bash" : spec.kind
  return call(`t${index}`, name, {
    ms: spec.ms,
    // Keep failures to a minority so long runs happen too.
    fail: spec.fail && spec.ms % 3 === 0,
    die: spec.die,
    progress: spec.progress,
    label: spec.kind === "BashUnsafe" ? "mkdir" : "ls"
  })
}

const checkSchedule = (
  log: RunLog,
  safety: ReadonlyArray<boolean>,
  results: ReadonlyArray<DispatchEvent.Result>
) => {
  // No unsafe overlap; nothing starts before an earlier unsafe tool finished.
  for (const span of log.spans) {
    const i = Number(span.id.slice(1))
    expect(span.end).toBeDefined()
    if (safety[i]) continue
    for (const other of log.spans) {
      if (other === span) continue
      expect(other.start < span.end! && span.start < other.end!).toBe(false)
      if (Number(other.id.slice(1)) > i) expect(other.start).toBeGreaterThanOrEqual(span.end!)
    }
  }
  // Yielding: an unsafe tool's result comes before every later tool's result.
  const position = new Map(results.map((r, k) => [r.toolUseId, k]))
  safety.forEach((safe, i) => {
    if (safe) return
    for (let j = i + 1; j < safety.length; j++) {
      expect(position.get(`t${i}`)!).toBeLessThan(position.get(`t${j}`)!)
    }
  })
}

const checkPairing = (calls: ReadonlyArray<Messages.ToolUseBlock>, results: ReadonlyArray<DispatchEvent.Result>) => {
  // Exactly one result per tool_use.
  expect(results.map((r) => r.toolUseId).sort()).toEqual(calls.map((c) => c.id).sort())
  const byId = new Map(results.map((r) => [r.toolUseId, r.block]))
  const message = Results.toUserMessage(calls, byId)
  expect(Messages.blocks(message).map((b) => (b.type === "tool_result" ? b.tool_use_id : ""))).toEqual(
    calls.map((c) => c.id)
  )
  // No synthetic filler was needed: every block is the runner's own.
  for (const block of Messages.blocks(message)) {
    expect(block).toBe(byId.get((block as Messages.ToolResultBlock).tool_use_id))
  }
}

describe("Invariants (SPEC §5)", () => {
  it.effect.prop(
    "streaming executor: pairing, ordering and no leaks under arrivals, failures and interrupts",
    [Scenario],
    ([scenario]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const supervisor = yield* Supervisor.track
        const blocks = scenario.calls.map(blockFor)
        const safety = scenario.calls.map((c) => isSafe(c.kind))
        const run = Effect.scoped(Effect.gen(function*() {
          const env = yield* environment(toolsFor(log))
          // The greedy schedule's rules (checkSchedule); the footprint schedule has its own property.
          const executor = yield* StreamingExecutor.make(env, { concurrency: scenario.cap, scheduling: "greedy" })
          if (scenario.interrupt !== undefined) {
            const { at, reason } = scenario.interrupt
            yield* Effect.forkScoped(Effect.zipRight(Effect.sleep(at), executor.interrupt(reason)))
          }
          // The model streams: each block arrives some time after the previous one.
          for (let i = 0; i < blocks.length; i++) {
            yield* Effect.sleep(scenario.calls[i]!.arrivesAfter)
            yield* executor.addTool(blocks[i]!)
          }
          const early = yield* executor.getCompletedResults
          const rest = yield* Stream.runCollect(executor.getRemainingResults)
          return [...early, ...Chunk.toArray(rest)]
        }))
        const fiber = yield* Effect.fork(Effect.supervised(run, supervisor))
        yield* TestClock.adjust(10_000)
        const events = yield* Fiber.join(fiber)
        const results = events.filter(DispatchEvent.isResult)
        checkPairing(blocks, results)
        checkSchedule(log, safety, results)
        // No leaks: no tool still running, no dispatcher fiber alive.
        expect(log.liveCount).toBe(0)
        const alive = (yield* supervisor.value).filter((f) => f.unsafePoll() === null)
        expect(alive).toEqual([])
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { timeout: PROPERTY_TIMEOUT, fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "footprint schedule: conflicting calls never overlap, never start before an earlier conflicting call ended, yield in order",
    [
      FastCheck.array(
        FastCheck.record({
          kind: FastCheck.constantFrom("Read", "Edit", "Bash", "Plain"),
          path: FastCheck.constantFrom("/r/a", "/r/b", "/r/d", "/r/d/x", "/r/**", "*", "net"),
          ms: FastCheck.integer({ min: 0, max: 100 }),
          fail: FastCheck.boolean()
        }),
        { minLength: 1, maxLength: 10 }
      ),
      FastCheck.integer({ min: 1, max: 10 })
    ],
    ([specs, cap]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const footprintOf = (kind: string, path: string): Footprint.Footprint =>
          kind === "Read" ? { reads: [path] } : kind === "Plain" ? Footprint.writesEverything : { writes: [path] }
        const tools = ["Read", "Edit", "Bash"].map((name) =>
          scriptedTool(name, log, {
            safe: name === "Read",
            footprint: (input) => footprintOf(name, input.label ?? "*")
          })
        )
        const env = yield* environment([...tools, scriptedTool("Plain", log)])
        const blocks = specs.map((spec, i) =>
          call(`t${i}`, spec.kind, { ms: spec.ms, fail: spec.fail && spec.ms % 3 === 0, label: spec.path })
        )
        const fiber = yield* StreamingExecutor.runAll(blocks, env, { concurrency: cap }).pipe(
          Stream.runCollect,
          Effect.fork
        )
        yield* TestClock.adjust(10_000)
        const results = Chunk.toArray(yield* Fiber.join(fiber)).filter(DispatchEvent.isResult)
        checkPairing(blocks, results)
        expect(log.maxConcurrent.value).toBeLessThanOrEqual(cap)
        const footprints = specs.map((spec) => footprintOf(spec.kind, spec.path))
        const position = new Map(results.map((r, k) => [r.toolUseId, k]))
        for (let j = 0; j < specs.length; j++) {
          for (let i = j + 1; i < specs.length; i++) {
            if (Footprint.conflict(footprints[j]!, footprints[i]!) === undefined) continue
            expect(position.get(`t${j}`)!).toBeLessThan(position.get(`t${i}`)!)
            const earlier = log.get(`t${j}`)
            const later = log.get(`t${i}`)
            if (earlier !== undefined && later !== undefined) expect(later.start).toBeGreaterThanOrEqual(earlier.end!)
          }
        }
        // A failed Bash call cancels only the later calls that conflict with it (transitively).
        for (const r of results) {
          if (r.status !== "cancelled") continue
          const i = Number(r.toolUseId.slice(1))
          const failed = results.find((f) => Messages.contentText(r.block.content).includes(` ${f.toolUseId} (Bash)`))
          expect(failed?.status).toBe("error")
          expect(Number(failed!.toolUseId.slice(1))).toBeLessThan(i)
        }
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { fastCheck: { numRuns: 80 }, timeout: PROPERTY_TIMEOUT }
  )

  it.effect.prop(
    "runTools: pairing and the greedy schedule",
    [FastCheck.array(CallSpec, { minLength: 1, maxLength: 10 }), FastCheck.integer({ min: 1, max: 10 })],
    ([specs, cap]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const blocks = specs.map(blockFor)
        const env = yield* environment(toolsFor(log))
        const fiber = yield* Batches.runTools(blocks, env, { concurrency: cap }).pipe(Stream.runCollect, Effect.fork)
        yield* TestClock.adjust(10_000)
        const results = Chunk.toArray(yield* Fiber.join(fiber)).filter(DispatchEvent.isResult)
        checkPairing(blocks, results)
        checkSchedule(log, specs.map((s) => isSafe(s.kind)), results)
        expect(log.maxConcurrent.value).toBeLessThanOrEqual(cap)
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { timeout: PROPERTY_TIMEOUT, fastCheck: { numRuns: 100 } }
  )

  it.effect.prop(
    "interrupting the consumer of runToolUse/runTools leaves nothing running",
    [FastCheck.array(CallSpec, { minLength: 1, maxLength: 8 }), FastCheck.integer({ min: 0, max: 300 })],
    ([specs, at]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const supervisor = yield* Supervisor.track
        const env = yield* environment(toolsFor(log))
        const fiber = yield* Batches.runTools(specs.map(blockFor), env).pipe(
          Stream.runDrain,
          Effect.supervised(supervisor),
          Effect.fork
        )
        yield* TestClock.adjust(at)
        yield* Fiber.interrupt(fiber)
        expect(log.liveCount).toBe(0)
        expect((yield* supervisor.value).filter((f) => f.unsafePoll() === null)).toEqual([])
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { timeout: PROPERTY_TIMEOUT, fastCheck: { numRuns: 100 } }
  )
})

// --- bad input and bad settings (issue 10) ---------------------------------------------------------------------

/** How one block of a generated model response arrives. */
const BlockShape = FastCheck.constantFrom("valid", "valid", "valid", "malformed", "guarded")
const MalformedJson = FastCheck.constantFrom("{\"ms\": 1,,}", "{", "[1, 2]", "\"text\"", "null", "{\"ms\": }", "nope")
/** A concurrency setting: unset, valid, or one of the invalid forms. */
const Setting = FastCheck.constantFrom(undefined, "3", "0", "-1", "abc", "2.5", " ", "1e3")
/** How the response ends: normally, by max_tokens inside a last open block, or by a break inside it. */
const Ending = FastCheck.constantFrom("stop", "stop", "max_tokens", "broken")

const TurnScenario = FastCheck.record({
  blocks: FastCheck.array(FastCheck.record({ shape: BlockShape, spec: CallSpec, json: MalformedJson }), {
    minLength: 1,
    maxLength: 8
  }),
  ending: Ending,
  setting: Setting,
  option: FastCheck.constantFrom(undefined, undefined, 2, 0, -1, 1.5)
})

const invalidJson = "InputValidationError: the input is not valid JSON: "

/** A model that plays one event script per request. */
const scriptModel = (scripts: ReadonlyArray<ReadonlyArray<Model.ModelStreamEvent | Model.ModelError>>) =>
  Layer.sync(Model.LanguageModel, () => {
    let next = 0
    return {
      stream: () =>
        Stream.suspend(() =>
          Stream.fromIterable(scripts[next++] ?? []).pipe(
            Stream.mapEffect((step) => (step instanceof Model.ModelError ? Effect.fail(step) : Effect.succeed(step)))
          )
        )
    }
  })

describe("Invariants under bad input and bad settings (SPEC §5, §6)", () => {
  it.effect.prop(
    "query loop: every tool_use is paired, malformed and cut-off inputs are errors, denied tools never run, the loop goes on",
    [TurnScenario],
    ([scenario]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const guarded = Tool.make("Guarded", {
          description: "denies itself",
          input: ScriptInput,
          checkPermissions: () => Effect.succeed({ behavior: "deny" as const, message: "Guarded never runs" }),
          call: (_, ctx) =>
            Effect.sync(() => log.exit(log.enter(ctx.toolUseId, "Guarded", 0), 0, false)).pipe(Effect.as("ran"))
        })
        const events: Array<Model.ModelStreamEvent | Model.ModelError> = [{
          type: "message_start",
          message: { id: "m" }
        }]
        const kinds = new Map<string, string>()
        scenario.blocks.forEach(({ json, shape, spec }, index) => {
          const id = `t${index}`
          const cut = index === scenario.blocks.length - 1 && scenario.ending !== "stop"
          const block = blockFor(spec, index)
          const name = shape === "guarded" ? "Guarded" : block.name
          kinds.set(id, cut ? "cut" : shape)
          events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } })
          const text = shape === "malformed" ? json : JSON.stringify(block.input)
          // Cut-off blocks stop half way through their JSON.
          const sent = cut ? text.slice(0, Math.floor(text.length / 2)) : text
          events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: sent } })
          if (!cut) events.push({ type: "content_block_stop", index })
        })
        if (scenario.ending === "broken") {
          events.push(new Model.ModelError({ reason: "network", message: "connection reset", retryable: false }))
        } else {
          events.push({
            type: "message_delta",
            delta: { stop_reason: scenario.ending === "stop" ? "tool_use" : "max_tokens" }
          })
          events.push({ type: "message_stop" })
        }
        const done: ReadonlyArray<Model.ModelStreamEvent> = [
          { type: "message_start", message: { id: "m2" } },
          { type: "message_delta", delta: { stop_reason: "end_turn" } },
          { type: "message_stop" }
        ]
        const provider = ConfigProvider.fromMap(
          new Map(scenario.setting === undefined ? [] : [["SWITCHYARD_MAX_TOOL_USE_CONCURRENCY", scenario.setting]])
        )
        const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/tmp", sessionId: "prop" }), {
          concurrency: scenario.option
        }).pipe(
          Effect.provide(Layer.mergeAll(scriptModel([events, done]), Registry.layerTools([...toolsFor(log), guarded])))
        )
        const fiber = yield* Effect.fork(QueryLoop.collect(session.run("go")))
        yield* TestClock.adjust(10_000)
        const loopEvents = yield* Fiber.join(fiber).pipe(Effect.withConfigProvider(provider))
        const messages = yield* session.messages
        // The loop went on to the second response and ended normally.
        expect(loopEvents[loopEvents.length - 1]).toMatchObject({ _tag: "Stopped", reason: "end_turn", turns: 2 })
        const uses = Messages.toolUses(messages[1]!)
        expect(uses.map((u) => u.id)).toEqual(scenario.blocks.map((_, i) => `t${i}`))
        const results = Messages.blocks(messages[2]!).filter((b): b is Messages.ToolResultBlock =>
          b.type === "tool_result"
        )
        expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id))
        for (const result of results) {
          const kind = kinds.get(result.tool_use_id)
          const content = Messages.contentText(result.content)
          // (An unknown tool is named as such first; a failed Bash sibling may cancel any call.)
          const answeredOtherwise = content.startsWith("No such tool available") || content.startsWith("Cancelled")
          if ((kind === "malformed" || kind === "cut") && !answeredOtherwise) {
            expect(content.startsWith(invalidJson)).toBe(true)
          } else {
            expect(content.startsWith(invalidJson)).toBe(false)
          }
          // Denied by its own check, unless a failed Bash sibling cancelled it first.
          if (kind === "guarded") expect(content === "Guarded never runs" || content.startsWith("Cancelled")).toBe(true)
        }
        // Only well-formed calls ran; a tool whose own check denies never did.
        const ran = new Set(log.spans.map((s) => s.id))
        for (const [id, kind] of kinds) if (kind !== "valid") expect(ran.has(id)).toBe(false)
        expect(log.liveCount).toBe(0)
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { timeout: PROPERTY_TIMEOUT, fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "runTools and the streaming executor: pairing holds with unparsed calls and any concurrency setting",
    [
      FastCheck.array(FastCheck.record({ spec: CallSpec, unparsed: FastCheck.boolean() }), {
        minLength: 1,
        maxLength: 10
      }),
      Setting,
      FastCheck.boolean()
    ],
    ([specs, setting, streaming]) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const blocks = specs.map(({ spec, unparsed }, i) =>
          unparsed
            ? ToolCall.unparsed(`t${i}`, blockFor(spec, i).name, "Unexpected end of JSON input")
            : blockFor(spec, i)
        )
        const env = yield* environment(toolsFor(log))
        const provider = ConfigProvider.fromMap(
          new Map(setting === undefined ? [] : [["SWITCHYARD_MAX_TOOL_USE_CONCURRENCY", setting]])
        )
        const run = streaming ? StreamingExecutor.runAll : Batches.runTools
        const fiber = yield* run(blocks, env).pipe(Stream.runCollect, Effect.withConfigProvider(provider), Effect.fork)
        yield* TestClock.adjust(10_000)
        const results = Chunk.toArray(yield* Fiber.join(fiber)).filter(DispatchEvent.isResult)
        checkPairing(blocks.map(ToolCall.blockOf), results)
        specs.forEach(({ spec, unparsed }, i) => {
          const result = results.find((r) => r.toolUseId === `t${i}`)!
          const content = Messages.contentText(result.block.content)
          // An unknown tool is named as such first, whatever its input; a failed Bash sibling may cancel any call.
          if (!content.startsWith("Cancelled")) {
            expect(content.startsWith(invalidJson)).toBe(unparsed && spec.kind !== "Unknown")
          }
          if (unparsed) expect(log.get(`t${i}`)).toBeUndefined()
        })
        const cap = setting === "3" ? 3 : Batches.DEFAULT_MAX_CONCURRENCY
        expect(log.maxConcurrent.value).toBeLessThanOrEqual(cap)
        return true
      }).pipe(Effect.provide(MemoryAllowAll)),
    { timeout: PROPERTY_TIMEOUT, fastCheck: { numRuns: 100 } }
  )
})
