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
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Crash from "./support/crash.js"

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
      return fc.record({
        starts: fc.integer({ min: 1, max: 2 }),
        fraction: fc.double({ min: 0.1, max: 0.9, noNaN: true })
      })
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

describe("durable sessions survive SIGKILL (SPEC §4.14)", () => {
  it.live(
    `${trials} kills at random points: paired results, no call run twice, reads rerun, writes "effect unknown"`,
    () =>
      Effect.gen(function*() {
        const drawn = fc.sample(chain, { seed, numRuns: chains })
        const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-crash-")))
        const stats: Crash.Stats = { kills: 0, rerunReads: 0, unknownWrites: 0, rerunPuts: 0 }
        yield* Effect.forEach(
          drawn,
          (params, i) =>
            Effect.scoped(Effect.gen(function*() {
              const dir = path.join(root, `chain${i}`)
              fs.mkdirSync(dir)
              const run = yield* Crash.runChain(dir, params.plan, params.kills)
              if (process.env["SWITCHYARD_CRASH_VERBOSE"] !== undefined) {
                console.log(
                  run.runs.map((r) => `${r.point?._tag ?? "-"}${r.killed ? "†" : ` exit ${r.code}`}`).join(" ")
                )
              }
              yield* Crash.judge({
                ...run,
                journaled: yield* Crash.journaledFile(run.home, run.sessionId),
                transcript: yield* Crash.transcript(run.home, run.cwd, run.sessionId)
              }, stats)
            })).pipe(
              Effect.tapDefect(() =>
                Effect.sync(() => console.error(`crash trials: seed ${seed}, chain ${i} (${root})`))
              )
            ),
          { concurrency: 2, discard: true }
        )
        if (process.env["SWITCHYARD_CRASH_VERBOSE"] !== undefined) {
          console.log(stats)
        }
        // The trials exercised what they claim.
        expect(stats.kills).toBeGreaterThanOrEqual(Math.floor(trials * 0.8))
        expect(stats.rerunReads).toBeGreaterThan(0)
        expect(stats.unknownWrites).toBeGreaterThan(0)
        fs.rmSync(root, { recursive: true, force: true })
      }),
    600_000
  )
})
