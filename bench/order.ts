/**
 * Parallelism and order: 30 calls of 50 ms, 20 reads and 10 writes in a fixed
 * interleaved order (read, read, write, …), through Switchyard, `@effect/ai`
 * (default and concurrency 10) and the AI SDK. Wall time against the
 * order-preserving ideal (consecutive reads together, each write alone: the
 * sum over batches of the slowest call), and write-order violations: for
 * each write, every other call that overlapped it in time or ran on the
 * wrong side of it.
 */
import {
  Batches,
  type Execution,
  Messages,
  Permissions,
  Results,
  StreamingExecutor,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { compare, note, ratio, record, recordStats } from "./harness.js"
import { aiSdk, effectAi } from "./peers.js"

const SUITE = "order"
const MS = 50
const kinds = Array.from({ length: 30 }, (_, i) => (i % 3 === 2 ? "Write" : "Read"))

interface Span {
  readonly index: number
  readonly start: number
  end: number
}

let spans: Array<Span> = []
const begin = (index: number) => {
  const span: Span = { index, start: performance.now(), end: Number.NaN }
  spans.push(span)
  return span
}

const sleep = (index: number) =>
  new Promise<number>((resolve) => {
    const span = begin(index)
    setTimeout(() => {
      span.end = performance.now()
      resolve(index)
    }, MS)
  })

const switchyardTool = (name: string, safe: boolean) =>
  Tool.make(name, {
    description: name,
    input: Schema.Struct({ n: Schema.Number }),
    isConcurrencySafe: () => safe,
    isReadOnly: () => safe,
    call: (input) => Effect.promise(() => sleep(input.n))
  })

const tools = [switchyardTool("Read", true), switchyardTool("Write", false)]
const calls = kinds.map((name, i) => Messages.toolUse(`c${i}`, name, { n: i }))
const peerCalls = calls.map((call) => ({ id: call.id, name: call.name, input: call.input as { n: number } }))
const handlers = { Read: sleep, Write: sleep }

const dispatch = (runner: (env: Execution.Environment) => Stream.Stream<unknown, never, Results.ResultStore>) =>
  Effect.gen(function*() {
    const context = yield* Ref.make(ToolUseContext.make({ cwd: "/", sessionId: "bench" }))
    const env: Execution.Environment = { tools, pool: tools, context }
    yield* Stream.runDrain(runner(env))
  }).pipe(
    Effect.provide(Results.layerMemory),
    Effect.provideService(Permissions.PermissionPolicy, Permissions.allowAll),
    Effect.withTracerEnabled(false)
  )

const switchyard = dispatch((env) => Batches.runTools(calls, env, { concurrency: 10 }))
// The streaming executor under footprint scheduling (the default of `run` and `dispatch`): these tools
// declare no footprint, so a read reads `*` and a write writes `*`.
const executor = dispatch((env) => StreamingExecutor.runAll(calls, env, { concurrency: 10 }))

/** Consecutive reads run together, each write alone. */
const ideal = (() => {
  let total = 0
  let inReads = false
  for (const kind of kinds) {
    if (kind === "Write") {
      total += MS
      inReads = false
    } else if (!inReads) {
      total += MS
      inReads = true
    }
  }
  return total
})()

const violations = (list: ReadonlyArray<Span>) => {
  let count = 0
  for (const write of list) {
    if (kinds[write.index] !== "Write") continue
    for (const other of list) {
      if (other === write) continue
      const overlap = other.start < write.end && write.start < other.end
      const wrongSide = other.index < write.index ? other.start > write.start : other.start < write.start
      if (overlap || wrongSide) count++
    }
  }
  return count
}

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const candidates = {
    switchyard: () => Effect.runPromise(switchyard),
    executor: () => Effect.runPromise(executor),
    effectAi: () => Effect.runPromise(effectAi(["Read", "Write"], handlers)(peerCalls)),
    effectAi10: () => Effect.runPromise(effectAi(["Read", "Write"], handlers, { concurrency: 10 })(peerCalls)),
    aiSdk: () => aiSdk(["Read", "Write"], handlers)(peerCalls)
  }
  // Violations from one instrumented run of each (the schedule does not change between runs).
  const counted: Record<string, number> = {}
  for (const [name, go] of Object.entries(candidates)) {
    spans = []
    await go()
    counted[name] = violations(spans)
  }
  const t = await compare(candidates, { rounds: 5, warmup: 0 })
  const labels: Record<keyof typeof candidates, string> = {
    switchyard: "Switchyard runTools (cap 10)",
    executor: "Switchyard streaming executor, footprint scheduling (cap 10)",
    effectAi: "@effect/ai generateText + Toolkit (default)",
    effectAi10: "@effect/ai, concurrency 10",
    aiSdk: "AI SDK generateText + tools with execute"
  }
  record(SUITE, "order-preserving ideal (ms)", String(ideal), "10 read batches and 10 writes of 50 ms")
  for (const key of Object.keys(candidates) as Array<keyof typeof candidates>) {
    recordStats(
      SUITE,
      `${labels[key]}: wall time`,
      t[key],
      "ms",
      `${(t[key].median / ideal).toFixed(2)}× the ideal; ${counted[key]} write-order violations`
    )
  }
  record(
    SUITE,
    "Switchyard vs @effect/ai default",
    ratio(t.effectAi, t.switchyard),
    "how much longer the ordered, sequential peer takes"
  )
  note(
    SUITE,
    "Violations: for each write, every other call that overlapped it or ran on the wrong side of it (30 calls: at most 290). " +
      "The AI SDK is the fastest here because it runs all 30 at once, ignoring that writes must not overlap anything; " +
      "`@effect/ai` keeps the order only by running one call at a time, and with concurrency it overlaps writes too."
  )
}
