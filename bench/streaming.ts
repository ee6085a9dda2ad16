/**
 * Issue 5: one replayed turn emitting 6 tool calls 150 ms apart (safe and
 * unsafe, 200–400 ms each), run with the streaming executor (tools start at
 * their content_block_stop) and with a wait-for-the-whole-message executor,
 * side by side, against the ideal schedule for each.
 */
import { Permissions, QueryLoop, Registry, ReplayModel, Results, Tool, ToolUseContext } from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { fmt, record } from "./harness.js"

const SUITE = "streaming turn"

const calls = [
  { name: "Read", ms: 300, safe: true },
  { name: "Read", ms: 200, safe: true },
  { name: "Edit", ms: 250, safe: false },
  { name: "Read", ms: 400, safe: true },
  { name: "Bash", ms: 200, safe: false },
  { name: "Read", ms: 300, safe: true }
]
const GAP = 150

const sleeper = (name: string, safe: boolean) =>
  Tool.make(name, {
    description: name,
    input: Schema.Struct({ ms: Schema.Number }),
    isConcurrencySafe: () => safe,
    call: (input) => Effect.as(Effect.sleep(input.ms), "done")
  })

/**
 * The ideal: each call starts as early as the rules allow (SPEC §4.8: after it
 * arrived, alone if unsafe, never before an earlier unsafe call ended, in call
 * order) given when it becomes available.
 */
const idealEnd = (available: (i: number) => number, duration: (i: number) => number = (i) => calls[i]!.ms) => {
  const spans: Array<{ start: number; end: number; safe: boolean }> = []
  for (const [i, call] of calls.entries()) {
    let start = Math.max(available(i), spans.length > 0 ? spans[spans.length - 1]!.start : 0)
    for (const s of spans) if (!s.safe || !call.safe) start = Math.max(start, s.end)
    spans.push({ start, end: start + duration(i), safe: call.safe })
  }
  return Math.max(...spans.map((s) => s.end))
}

const runTurn = (streaming: boolean) =>
  Effect.gen(function*() {
    const events = yield* QueryLoop.collect(
      QueryLoop.run("go", ToolUseContext.make({ cwd: "/", sessionId: "bench" }), { streaming, maxTurns: 1 })
    )
    const started = events.find((e) => e._tag === "TurnStarted")
    const arrivals = events.flatMap((e) => (e._tag === "ToolUse" ? [e.at] : []))
    const durations = events.flatMap((e) =>
      e._tag === "Tool" && e.event._tag === "Result"
        ? [[e.event.toolUseId, e.event.endedAt - e.event.startedAt] as const]
        : []
    )
    const ended = events.find((e) => e._tag === "TurnEnded")
    const response = events.find((e) => e._tag === "ResponseEnded")
    if (started?._tag !== "TurnStarted" || ended?._tag !== "TurnEnded" || response?._tag !== "ResponseEnded") {
      throw new Error("the turn did not complete")
    }
    return {
      turnMs: ended.at - started.at,
      responseMs: response.at - started.at,
      arrivals: arrivals.map((at) => at - started.at),
      durations: new Map(durations)
    }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        ReplayModel.layer({
          turns: [{
            blocks: calls.map((c, i) => ({
              block: { type: "tool_use" as const, id: `t${i}`, name: c.name, input: { ms: c.ms } },
              delayMs: GAP,
              chunks: 3
            }))
          }]
        }),
        Registry.layerTools([sleeper("Read", true), sleeper("Edit", false), sleeper("Bash", false)]),
        Results.layerMemory,
        // The engine's default policy runs only read-only calls; the bench measures dispatch, not permissions.
        Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)
      )
    )
  )

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const samples = 3
  const median = async (streaming: boolean) => {
    const results: Array<Effect.Effect.Success<ReturnType<typeof runTurn>>> = []
    for (let i = 0; i < samples; i++) results.push(await Effect.runPromise(runTurn(streaming)))
    results.sort((a, b) => a.turnMs - b.turnMs)
    return results[Math.floor(samples / 2)]!
  }
  const streamingRun = await median(true)
  const wholeRun = await median(false)
  // Ideal schedules from when each block really arrived (the replayed stream is timed with
  // real timers) and when the whole response ended.
  const measured = (run: typeof streamingRun) => (i: number) => run.durations.get(`t${i}`) ?? calls[i]!.ms
  const idealStreaming = idealEnd((i) => streamingRun.arrivals[i] ?? (i + 1) * GAP, measured(streamingRun))
  const idealWhole = idealEnd(() => wholeRun.responseMs, measured(wholeRun))
  record(
    SUITE,
    "nominal ideal (blocks exactly 150 ms apart, exact sleeps) (ms)",
    fmt(idealEnd((i) => (i + 1) * GAP), 0)
  )
  record(
    SUITE,
    "streaming executor: turn time (ms)",
    fmt(streamingRun.turnMs, 0),
    `ideal ${fmt(idealStreaming, 0)} ms, +${fmt(((streamingRun.turnMs - idealStreaming) / idealStreaming) * 100, 1)}%`
  )
  record(
    SUITE,
    "wait-for-the-whole-message executor: turn time (ms)",
    fmt(wholeRun.turnMs, 0),
    `ideal ${fmt(idealWhole, 0)} ms, +${fmt(((wholeRun.turnMs - idealWhole) / idealWhole) * 100, 1)}%`
  )
  record(
    SUITE,
    "streaming vs whole-message",
    `${fmt(wholeRun.turnMs / streamingRun.turnMs, 2)}×`,
    `${fmt(wholeRun.turnMs - streamingRun.turnMs, 0)} ms saved per turn`
  )
  void Stream
}
