/**
 * Durable sessions on PostgreSQL (SPEC §4.14): a throw-away server (initdb
 * into a temporary directory, a Unix socket, stopped at the end) holds the
 * journal of two "machines" — two state directories and working directories
 * that share nothing but the server. A session killed on the first is listed
 * on the second as interrupted and resumed there by id; a server that cannot
 * be reached is a clear error before anything runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Messages } from "@switchyard/core"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as net from "node:net"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin as cli } from "./support/cli.js"
import * as Crash from "./support/crash.js"
import * as EffectsServer from "./support/effectsServer.js"
import * as Postgres from "./support/postgres.js"

const bin = Postgres.find()
if (bin === undefined) console.warn(`durable-postgres: ${Postgres.missing}`)

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-pgtest-")))

const sessions = (h: Crash.Harness, machine: Crash.Machine) =>
  Effect.map(
    h.run(machine, ["sessions", "--all", "--json", "--cwd", machine.cwd], undefined),
    (run) =>
      JSON.parse(run.stdout) as ReadonlyArray<{ readonly id: string; readonly state: string; readonly cwd: string }>
  )

describe.skipIf(bin === undefined)("durable sessions on PostgreSQL (SPEC §4.14)", () => {
  it.scopedLive(
    "a session killed on one machine is listed and resumed on another: its turn finished from the journal",
    () =>
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
      }),
    120_000
  )

  it.scopedLive(
    "two runners: one is killed while its prompts run, the other takes them over and finishes every session",
    () =>
      Effect.gen(function*() {
        const server = yield* Postgres.start(bin!)
        const dir = tempDir()
        // Each session: one turn of a read and a write long enough to be cut off, then "done".
        const plan: Crash.Plan = [[{ kind: "probe", ms: 2_500 }, { kind: "mutate", ms: 2_500 }]]
        const h = yield* Crash.harness(dir, plan, { journalUrl: server.url })
        const m = h.machine("client")
        // The runner a call came from, in the effects log (each runner expands ${SWITCHYARD_TEST_RUNNER}).
        const mcp = JSON.stringify({
          mcpServers: { fx: { type: "http", url: h.effectsUrl, headers: { "x-runner": "${SWITCHYARD_TEST_RUNNER}" } } }
        })
        const started = (name: string, port: number) =>
          Effect.acquireRelease(
            Effect.async<{ readonly kill: () => void; readonly exited: Promise<void> }>((resume) => {
              const child = spawn(cli, ["runner", "--port", String(port), "--cwd", m.cwd], {
                env: {
                  ...h.env,
                  SWITCHYARD_HOME: path.join(dir, name),
                  SWITCHYARD_TEST_RUNNER: name,
                  SWITCHYARD_RUNNER_HEALTH_CHECK_MS: "1000"
                },
                stdio: ["ignore", "pipe", "pipe"]
              })
              const exited = new Promise<void>((done) => child.on("close", () => done()))
              let out = ""
              child.stdout.setEncoding("utf8").on("data", (d: string) => {
                out += d
                if (out.includes("serving on")) resume(Effect.succeed({ kill: () => child.kill("SIGKILL"), exited }))
              })
              child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d))
              child.on("close", () => resume(Effect.die(new Error(`runner ${name} ended:\n${out}`))))
            }),
            (runner) => Effect.promise(() => (runner.kill(), runner.exited))
          )
        const freePort = () =>
          Effect.promise(() =>
            new Promise<number>((resolve) => {
              const probe = net.createServer().listen(0, "127.0.0.1", () => {
                const port = (probe.address() as net.AddressInfo).port
                probe.close(() => resolve(port))
              })
            })
          )
        const runners = { a: yield* started("a", yield* freePort()), b: yield* started("b", yield* freePort()) }

        // Three sessions, each submitted by a client that waits for its outcome.
        const ids = ["s1", "s2", "s3"]
        const clients = ids.map((id) =>
          new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
            const child = spawn(cli, [
              "submit",
              `start ${id}`,
              "--session-id",
              id,
              "--wait",
              "--output-format",
              "json",
              "--mcp-config",
              mcp,
              "--allowed-tools",
              "mcp__fx",
              "--cwd",
              m.cwd
            ], { env: { ...h.env, SWITCHYARD_HOME: m.home }, stdio: ["ignore", "pipe", "pipe"] })
            let stdout = ""
            let stderr = ""
            child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
            child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
            child.on("close", (code) => resolve({ code, stdout, stderr }))
          })
        )
        // The runner that starts the first call is killed while that call runs.
        const killed = yield* Effect.promise(() =>
          new Promise<"a" | "b">((resolve) => {
            const watcher = fs.watch(path.dirname(h.log), () => {
              const first = EffectsServer.readLog(h.log).find((l) => l.event === "start")
              if (first?.via === "a" || first?.via === "b") {
                watcher.close()
                runners[first.via].kill()
                resolve(first.via)
              }
            })
          })
        )
        const outcomes = yield* Effect.promise(() => Promise.all(clients))
        for (const outcome of outcomes) {
          expect(outcome.code, outcome.stderr).toBe(0)
          expect(JSON.parse(outcome.stdout)).toMatchObject({ stop_reason: "end_turn", result: "done" })
        }
        const log = EffectsServer.readLog(h.log)
        // The other runner finished what the killed one had started.
        const cutOff = log.filter((l) =>
          l.via === killed && l.event === "start" &&
          !log.some((e) => e.key === l.key && e.via === killed && e.event === "end")
        )
        expect(cutOff.length).toBeGreaterThan(0)
        const survivor = killed === "a" ? "b" : "a"
        for (const line of cutOff) {
          // A read it was running ran again on the other runner; a write did not (its answer: "effect unknown").
          const again = log.some((l) => l.key === line.key && l.via === survivor && l.event === "end")
          expect(again, line.key).toBe(line.tool === "probe")
        }
        for (const id of ids) {
          const journaled = yield* Crash.journaledAt({ _tag: "Postgres", url: server.url }, id)
          const uses = journaled.flatMap((msg) => msg.role === "assistant" ? Messages.toolUses(msg) : [])
          const results = journaled.flatMap((msg) => Messages.blocks(msg)).filter((b) => b.type === "tool_result")
          expect(results.map((b) => b.type === "tool_result" ? b.tool_use_id : "")).toEqual(uses.map((u) => u.id))
        }
        // No write ran twice (a cut-off one is answered "effect unknown"); every session is done.
        // A write whose runner died after journaling its start but before the request arrived never ran at all:
        // it is answered "effect unknown" too. So each write ran at most once, never twice.
        const writes = log.filter((l) => l.tool === "mutate" && l.event === "start").map((l) => l.key)
        expect(new Set(writes).size).toBe(writes.length)
        for (const key of writes) expect(ids.map((id) => `${id}-${Crash.keyOf(0, 1)}`)).toContain(key)
        const listed = (yield* sessions(h, m)).filter((s) => ids.includes(s.id))
        expect(listed.map((s) => s.state)).toEqual(ids.map(() => "done"))
        fs.rmSync(dir, { recursive: true, force: true })
      }),
    180_000
  )

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
