/**
 * SPEC §5 invariants, property-tested with fast-check over random mixes of
 * safe and unsafe tools, failures, delays, streaming arrival and interrupts.
 */
import { Batches, DispatchEvent, Footprint, Messages, Results, StreamingExecutor } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import { call, environment, RunLog, scriptedTool, type ScriptInput } from "./fixtures.js"

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
  for (const block of Messages.blocks(message)) expect(block).toBe(byId.get((block as Messages.ToolResultBlock).tool_use_id))
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
      }).pipe(Effect.provide(Results.layerMemory)),
    { fastCheck: { numRuns: 150 }, timeout: 180_000 }
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
      }).pipe(Effect.provide(Results.layerMemory)),
    { fastCheck: { numRuns: 80 }, timeout: 180_000 }
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
      }).pipe(Effect.provide(Results.layerMemory)),
    { fastCheck: { numRuns: 100 } }
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
      }).pipe(Effect.provide(Results.layerMemory)),
    { fastCheck: { numRuns: 100 } }
  )
})
