/**
 * Durable sessions on PostgreSQL (SPEC §4.14): a throw-away server (initdb
 * into a temporary directory, a Unix socket, stopped at the end) holds the
 * journal of two "machines" — two state directories and working directories
 * that share nothing but the server. A session killed on the first is listed
 * on the second as interrupted and resumed there by id; a server that cannot
 * be reached is a clear error before anything runs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Crash from "./support/crash.js"
import * as EffectsServer from "./support/effectsServer.js"
import * as Postgres from "./support/postgres.js"

const bin = Postgres.find()
if (bin === undefined) console.warn(`durable-postgres: ${Postgres.missing}`)

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-pgtest-")))

const sessions = (h: Crash.Harness, machine: Crash.Machine) =>
  Effect.map(
    h.run(machine, ["sessions", "--all", "--json", "--cwd", machine.cwd], undefined),
    (run) => JSON.parse(run.stdout) as ReadonlyArray<{ readonly id: string; readonly state: string; readonly cwd: string }>
  )

describe.skipIf(bin === undefined)("durable sessions on PostgreSQL (SPEC §4.14)", () => {
  it.scopedLive("a session killed on one machine is listed and resumed on another: its turn finished from the journal", () =>
    Effect.gen(function*() {
      const server = yield* Postgres.start(bin!)
      const dir = tempDir()
      // One turn: a read and a write that run long enough to be cut off, then "done".
      const plan: Crash.Plan = [[{ kind: "probe", ms: 150 }, { kind: "mutate", ms: 2_000 }]]
      const h = yield* Crash.harness(dir, plan, { journalUrl: server.url })
      const a = h.machine("a")
      const b = h.machine("b")
      const sessionId = "moved-session"

      const first = yield* h.run(a, ["-p", "start", "--session-id", sessionId, ...h.common(a)], {
        _tag: "tools",
        kind: "mutate",
        starts: 1,
        fraction: 0.5
      })
      expect(first.killed).toBe(true)
      // Machine b has no transcript of it, but the journal lists it, interrupted.
      expect(fs.existsSync(path.join(b.home, "projects"))).toBe(false)
      const listed = (yield* sessions(h, b)).find((s) => s.id === sessionId)
      expect(listed).toMatchObject({ state: "interrupted", cwd: a.cwd })

      const resumed = yield* h.run(b, ["-p", "continue", "--resume", sessionId, ...h.common(b)], undefined)
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(JSON.parse(resumed.stdout).result).toBe("done")
      expect((yield* sessions(h, b)).find((s) => s.id === sessionId)?.state).toBe("done")

      // The write was cut off: "effect unknown", not run again; the read ran again.
      const log = EffectsServer.readLog(h.log)
      expect(log.filter((l) => l.key === Crash.keyOf(0, 1) && l.event === "start")).toHaveLength(1)
      const stats: Crash.Stats = { kills: 0, rerunReads: 0, unknownWrites: 0, rerunPuts: 0 }
      yield* Crash.judge({
        runs: [first, resumed],
        log: h.log,
        requests: h.requests,
        journaled: yield* Crash.journaledAt({ _tag: "Postgres", url: server.url }, sessionId),
        transcript: yield* Crash.transcript(b.home, b.cwd, sessionId)
      }, stats)
      expect(stats.unknownWrites).toBe(1)
      // The model was asked once after the kill: the finished turn's results and the prompt together.
      const after = h.requests.filter((r) => r.arrivedAt > log.find((l) => l.event === "aborted")!.at)
      expect(after).toHaveLength(1)
      const last = Crash.requestMessages(after[0]!)
      expect(JSON.stringify(last.slice(-2))).toContain(Crash.EFFECT_UNKNOWN.slice(0, 40))
      expect(JSON.stringify(last[last.length - 1])).toContain("continue")
      fs.rmSync(dir, { recursive: true, force: true })
    }), 120_000)

  it.scopedLive("an unreachable server is a clear error before anything runs", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const h = yield* Crash.harness(dir, [], { journalUrl: "postgresql://postgres@127.0.0.1:9/none" })
      const m = h.machine("m")
      const run = yield* h.run(m, ["-p", "start", ...h.common(m)], undefined)
      expect(run.code).toBe(1)
      expect(run.stderr).toContain("Cannot reach the journal at postgresql://postgres@127.0.0.1:9/none")
      expect(run.stderr).toContain("nothing was changed")
      // Nothing ran: no model request, no transcript.
      expect(h.requests).toHaveLength(0)
      expect(fs.existsSync(path.join(m.home, "projects"))).toBe(false)
      fs.rmSync(dir, { recursive: true, force: true })
    }), 60_000)
})
