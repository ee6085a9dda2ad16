/**
 * Durability (SPEC §4.14, §5): the CLI killed with SIGKILL at random points of
 * scripted sessions — during a model stream, during parallel tool calls,
 * between the calls' completion and the next request, during a journal write,
 * at a random moment — and resumed until the session ends. Judged by the
 * effects server's log (the side-effect counter) and the model server's
 * requests, not by the journal:
 * - every `tool_use` ends with exactly one `tool_result`, in call order;
 * - no call ran again once the model had seen its result, and no write ran
 *   twice;
 * - a read that was cut off ran again and its real result was sent;
 * - a write that was cut off was answered "effect unknown", and not run again;
 * - an idempotent call that was cut off ran again with the same idempotency key;
 * - the journal and the transcript hold the same conversation.
 *
 * `npm test` runs SWITCHYARD_CRASH_TRIALS kills (default 50); `npm run soak`
 * runs many more. The trials are drawn with fast-check from a seed that is
 * printed when one fails (SWITCHYARD_CRASH_SEED replays it).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Messages } from "@switchyard/core"
import * as Sessions from "@switchyard/cli/Sessions"
import { JournalDatabase } from "@switchyard/durable"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Crash from "./support/crash.ts"
import * as EffectsServer from "./support/effectsServer.ts"

const EFFECT_UNKNOWN = "The process stopped while this ran; its effect is unknown."

const trials = Number(process.env["SWITCHYARD_CRASH_TRIALS"] ?? 50)
const seed = Number(process.env["SWITCHYARD_CRASH_SEED"] ?? Date.now() % 2 ** 31)
const KILLS_PER_CHAIN = 10
const chains = Math.max(1, Math.ceil(trials / KILLS_PER_CHAIN))

const call: fc.Arbitrary<Crash.PlannedCall> = fc.record({
  kind: fc.constantFrom<Crash.CallKind>("probe", "probe", "mutate", "put"),
  ms: fc.integer({ min: 20, max: 220 })
})
const plan: fc.Arbitrary<Crash.Plan> = fc.array(fc.array(call, { minLength: 1, maxLength: 4 }), {
  minLength: KILLS_PER_CHAIN + 2,
  maxLength: KILLS_PER_CHAIN + 6
})
// Every kind of kill point in turn, with drawn delays.
const killAt = (i: number): fc.Arbitrary<Crash.KillPoint> => {
  switch (i % 5) {
    case 0:
      return fc.integer({ min: 0, max: 200 }).map((afterMs) => ({ _tag: "stream", afterMs }))
    case 1:
      // While a read or a write runs (in turn), some way through it.
      return fc.record({ starts: fc.integer({ min: 1, max: 2 }), fraction: fc.double({ min: 0.1, max: 0.9, noNaN: true }) })
        .map((p) => ({ _tag: "tools", kind: i % 10 === 1 ? "mutate" : "probe", ...p }))
    case 2:
      return fc.constant({ _tag: "between" })
    case 3:
      return fc.integer({ min: 1, max: 6 }).map((writes) => ({ _tag: "write", writes }))
    default:
      return fc.integer({ min: 200, max: 2_500 }).map((afterMs) => ({ _tag: "random", afterMs }))
  }
}
const chain = fc.record({
  plan,
  kills: fc.tuple(...Array.from({ length: KILLS_PER_CHAIN }, (_, i) => killAt(i)))
})

interface Stats {
  kills: number
  rerunReads: number
  unknownWrites: number
  rerunPuts: number
}

const resultText = (block: Messages.ContentBlock | undefined) =>
  block?.type === "tool_result" ? Messages.contentText(block.content) : undefined

/** The invariants of one chain; adds what it saw to `stats`. */
const judge = (run: Crash.Chain, stats: Stats) =>
  Effect.gen(function*() {
    const last = run.runs[run.runs.length - 1]!
    expect(last.code, `the last run failed:\n${last.stderr}`).toBe(0)
    expect(JSON.parse(last.stdout).result).toBe("done")
    stats.kills += run.runs.filter((r) => r.killed).length

    // The conversation, from the journal and from the transcript.
    const journaled = yield* Effect.scoped(Effect.gen(function*() {
      const journal = yield* JournalDatabase.open({ _tag: "File", path: path.join(run.home, "journal.db") })
      return Option.getOrThrow(yield* journal.messages(run.sessionId))
    })).pipe(Effect.provide(NodeContext.layer))
    const transcript = yield* Sessions.load(run.cwd, run.sessionId).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SWITCHYARD_HOME", run.home], ["HOME", run.dir]])))
    )
    expect(transcript.messages).toEqual(journaled)

    // Pairing: every tool_use answered once, in call order, in the next message.
    const results = new Map<string, Messages.ContentBlock>()
    journaled.forEach((message, i) => {
      if (message.role !== "assistant") return
      const uses = Messages.toolUses(message)
      if (uses.length === 0) return
      const next = journaled[i + 1]!
      const answered = Messages.blocks(next).filter((b) => b.type === "tool_result")
      expect(answered.map((b) => (b.type === "tool_result" ? b.tool_use_id : ""))).toEqual(uses.map((u) => u.id))
      for (const b of answered) if (b.type === "tool_result") results.set(b.tool_use_id, b)
    })
    const allResults = journaled.flatMap((m) => Messages.blocks(m)).filter((b) => b.type === "tool_result")
    expect(allResults).toHaveLength(results.size)

    // The side-effect counter.
    const log = EffectsServer.readLog(run.log)
    const calls = journaled.flatMap((m) => m.role === "assistant" ? Messages.toolUses(m) : [])
    for (const use of calls) {
      const key = (use.input as { readonly key: string }).key
      const kind = use.name.replace("mcp__fx__", "") as Crash.CallKind
      const lines = log.filter((l) => l.key === key)
      const starts = lines.filter((l) => l.event === "start")
      const text = resultText(results.get(use.id))
      // Once the model had seen its result, the call never started again.
      const seen = run.requests.find((r) =>
        Crash.requestMessages(r).some((m) =>
          m.role === "user" && Messages.blocks(m).some((b) => b.type === "tool_result" && b.tool_use_id === use.id)
        )
      )
      if (seen !== undefined) expect(starts.filter((s) => s.at > seen.arrivedAt), `${key} ran after its result was sent`).toHaveLength(0)
      const cutOff = lines.some((l) => l.event === "aborted")
      switch (kind) {
        case "probe":
          // A read is never answered "unknown": cut off, it ran again.
          expect(text, key).toBe(`probe ${key} ok`)
          // Cut off before its result was sent, it must have run again; ran again, it was in flight.
          if (cutOff) expect(starts.length, key).toBeGreaterThan(1)
          if (starts.length > 1) stats.rerunReads++
          break
        case "mutate":
          // A write ran once at most, and a cut-off one is answered "effect unknown".
          expect(starts.length, `${key} ran ${starts.length} times`).toBeLessThanOrEqual(1)
          if (cutOff) expect(text, key).toContain(EFFECT_UNKNOWN)
          if (text?.includes(EFFECT_UNKNOWN)) {
            // "Unknown" only for a write that started and has no result the model saw.
            expect(starts.length, key).toBe(1)
            stats.unknownWrites++
          } else {
            expect(text).toBe(`mutate ${key} ok`)
            expect(lines.some((l) => l.event === "end")).toBe(true)
          }
          break
        case "put": {
          expect(text, key).toBe(`put ${key} ok`)
          const keys = new Set(starts.map((s) => s.idempotencyKey))
          expect(keys.size, `${key}: one idempotency key`).toBe(1)
          expect([...keys][0]).toBeDefined()
          if (cutOff) stats.rerunPuts++
          break
        }
      }
    }
  })

describe("durable sessions survive SIGKILL (SPEC §4.14)", () => {
  it.live(`${trials} kills at random points: paired results, no call run twice, reads rerun, writes "effect unknown"`, () =>
    Effect.gen(function*() {
      const drawn = fc.sample(chain, { seed, numRuns: chains })
      const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-crash-")))
      const stats: Stats = { kills: 0, rerunReads: 0, unknownWrites: 0, rerunPuts: 0 }
      yield* Effect.forEach(
        drawn,
        (params, i) =>
          Effect.scoped(Effect.gen(function*() {
            const dir = path.join(root, `chain${i}`)
            fs.mkdirSync(dir)
            const run = yield* Crash.runChain(dir, params.plan, params.kills)
            if (process.env["SWITCHYARD_CRASH_VERBOSE"] !== undefined) {
              console.log(run.runs.map((r) => `${r.point?._tag ?? "-"}${r.killed ? "†" : ` exit ${r.code}`}`).join(" "))
            }
            yield* judge(run, stats)
          })).pipe(Effect.tapDefect(() => Effect.sync(() => console.error(`crash trials: seed ${seed}, chain ${i} (${root})`)))),
        { concurrency: 2, discard: true }
      )
      if (process.env["SWITCHYARD_CRASH_VERBOSE"] !== undefined) console.log(stats)
      // The trials exercised what they claim.
      expect(stats.kills).toBeGreaterThanOrEqual(Math.floor(trials * 0.8))
      expect(stats.rerunReads).toBeGreaterThan(0)
      expect(stats.unknownWrites).toBeGreaterThan(0)
      fs.rmSync(root, { recursive: true, force: true })
    }), 600_000)
})
