/**
 * Issue 2: per-call overhead of the dispatcher on no-op tools, and wall time
 * against the ideal for a concurrent batch.
 */
import { Batches, Execution, Messages, Results, StreamingExecutor, Tool, ToolUseContext } from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { fmt, record, timeEffect } from "./harness.js"

const SUITE = "dispatch"

const noop = Tool.make("Noop", {
  description: "does nothing",
  input: Schema.Struct({ n: Schema.Number }),
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  call: (input) => Effect.succeed(input.n)
})

const sleeper = Tool.make("Sleep", {
  description: "sleeps",
  input: Schema.Struct({ ms: Schema.Number }),
  isConcurrencySafe: () => true,
  call: (input) => Effect.as(Effect.sleep(input.ms), "ok")
})

const env = Effect.map(
  Ref.make(ToolUseContext.make({ cwd: process.cwd(), sessionId: "bench" })),
  (context): Execution.Environment => ({ tools: [noop, sleeper], pool: [noop, sleeper], context })
)

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const N = 20_000
  const calls = Array.from({ length: N }, (_, i) => Messages.toolUse(`t${i}`, "Noop", { n: i }))
  const ctx: Tool.CallContext<unknown> = {
    toolUseId: "x",
    context: ToolUseContext.make({ cwd: "/", sessionId: "bench" }),
    progress: () => Effect.void,
    modifyContext: () => Effect.void
  }
  const direct = Effect.forEach(calls, (call) => noop.call(call.input as { n: number }, ctx) as Effect.Effect<number>, {
    discard: true
  })
  const viaRunTools = Effect.flatMap(env, (e) => Stream.runDrain(Batches.runTools(calls, e, { concurrency: 10 }))).pipe(
    Effect.provide(Results.layerMemory)
  )
  const viaExecutor = Effect.flatMap(env, (e) => Stream.runDrain(StreamingExecutor.runAll(calls, e, { concurrency: 10 })))
    .pipe(Effect.provide(Results.layerMemory))
  const tracingOff = <A, E>(effect: Effect.Effect<A, E>) => Effect.withTracerEnabled(effect, false)

  const directMs = await timeEffect(direct)
  const offMs = await timeEffect(tracingOff(viaRunTools))
  const onMs = await timeEffect(viaRunTools)
  const execOffMs = await timeEffect(tracingOff(viaExecutor), { samples: 3 })
  const perCall = (ms: number) => (ms * 1000) / N
  record(SUITE, "handler called directly (µs/call)", fmt(perCall(directMs)))
  record(SUITE, "runTools, tracing off (µs/call)", fmt(perCall(offMs)), `overhead ${fmt(perCall(offMs - directMs))} µs, ${fmt(offMs / directMs, 1)}× direct`)
  record(SUITE, "runTools, tracing on (µs/call)", fmt(perCall(onMs)), `overhead ${fmt(perCall(onMs - directMs))} µs, ${fmt(onMs / directMs, 1)}× direct`)
  record(SUITE, "streaming executor (all at once), tracing off (µs/call)", fmt(perCall(execOffMs)), `overhead ${fmt(perCall(execOffMs - directMs))} µs`)

  const sleepers = Array.from({ length: 100 }, (_, i) => Messages.toolUse(`s${i}`, "Sleep", { ms: 20 }))
  const ideal = (100 / 10) * 20
  // The same schedule with bare fibers: what timers alone cost over the ideal.
  const bare = await timeEffect(
    Effect.forEach(sleepers, () => Effect.sleep(20), { concurrency: 10, discard: true }),
    { samples: 5, warmup: 1 }
  )
  const wall = await timeEffect(
    Effect.flatMap(env, (e) => Stream.runDrain(Batches.runTools(sleepers, e, { concurrency: 10 }))).pipe(
      Effect.provide(Results.layerMemory)
    ),
    { samples: 5, warmup: 1 }
  )
  record(SUITE, "100 × sleep 20 ms, bare Effect.forEach concurrency 10 (ms)", fmt(bare, 1), `ideal ${ideal} ms, +${fmt(((bare - ideal) / ideal) * 100, 1)}% (timer granularity)`)
  record(SUITE, "100 safe tools × 20 ms, cap 10: runTools wall time (ms)", fmt(wall, 1), `ideal ${ideal} ms, +${fmt(((wall - ideal) / ideal) * 100, 1)}%; ${fmt(((wall - bare) / bare) * 100, 1)}% over bare fibers`)
}
