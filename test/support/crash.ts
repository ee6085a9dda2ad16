/**
 * Crash trials for durable sessions (SPEC §4.14, §5 "Durability"): a scripted
 * session of many turns, each a few MCP calls of the effects server (reads,
 * writes, idempotent puts), is run by the real CLI, which is killed with
 * SIGKILL at a chosen point — during a model stream, during parallel calls,
 * between the calls' completion and the next request, during a journal write,
 * or at a random moment — then resumed with `--resume ID`, and killed again,
 * until a last resume finishes the session. What it judges comes from outside
 * the journal: the effects server's log (which calls ran, how many times,
 * which were cut off) and the requests the model server received.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Messages, ReplayModel } from "@switchyard/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { bin } from "./cli.ts"
import * as EffectsServer from "./effectsServer.ts"
import * as MessagesServer from "./messagesServer.ts"

/** Where a process is killed. */
export type KillPoint =
  | { readonly _tag: "stream"; readonly afterMs: number }
  /** When the `starts`-th call of `kind` has started, after `fraction` of its duration: while it runs. */
  | { readonly _tag: "tools"; readonly kind: CallKind; readonly starts: number; readonly fraction: number }
  | { readonly _tag: "between" }
  | { readonly _tag: "write"; readonly writes: number }
  | { readonly _tag: "random"; readonly afterMs: number }

export type CallKind = "probe" | "mutate" | "put"

export interface PlannedCall {
  readonly kind: CallKind
  readonly ms: number
}

/** The session: each turn's calls (the model says "done" after the last). */
export type Plan = ReadonlyArray<ReadonlyArray<PlannedCall>>

export const keyOf = (turn: number, index: number) => `t${turn}c${index}`
export const idOf = (turn: number, index: number) => `toolu_${keyOf(turn, index)}`

/** The model's response to a request: by how many turns the conversation has. */
const respond = (plan: Plan) => (body: unknown): MessagesServer.ScriptedResponse => {
  const messages = (body as { readonly messages: ReadonlyArray<{ readonly role: string }> }).messages
  const turn = messages.filter((m) => m.role === "assistant").length
  const calls = plan[turn]
  const blocks: ReadonlyArray<ReplayModel.Turn["blocks"][number]> = calls === undefined
    ? [{ block: Messages.text("done"), delayMs: 20 }]
    : [
      { block: Messages.text(`Turn ${turn}.`), delayMs: 30 },
      ...calls.map((call, i) => ({
        block: Messages.toolUse(idOf(turn, i), `mcp__fx__${call.kind}`, { key: keyOf(turn, i), ms: call.ms }),
        delayMs: 40
      }))
    ]
  return MessagesServer.message({ blocks })
}

export interface RunRecord {
  readonly killed: boolean
  readonly point: KillPoint | undefined
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface Chain {
  readonly dir: string
  readonly cwd: string
  readonly home: string
  readonly sessionId: string
  readonly log: string
  readonly runs: ReadonlyArray<RunRecord>
  readonly requests: ReadonlyArray<MessagesServer.RecordedRequest>
}

/**
 * Run a session under `plan`, killing one process at each of `kills` (a
 * point that never comes lets that process finish), then resume until the
 * session ends.
 */
export const runChain = (
  dir: string,
  plan: Plan,
  kills: ReadonlyArray<KillPoint>
): Effect.Effect<Chain, never, Scope.Scope> =>
  Effect.gen(function*() {
    const cwd = path.join(dir, "project")
    const home = path.join(dir, "home")
    fs.mkdirSync(cwd, { recursive: true })
    const log = path.join(dir, "effects.log")
    const listeners = new Set<(what: "request" | "start", started?: EffectsServer.EffectLine) => void>()
    const effects = yield* Effect.acquireRelease(
      Effect.promise(() => EffectsServer.start(log, (line) => listeners.forEach((l) => l("start", line)))),
      (server) => Effect.promise(() => server.close())
    )
    const model = yield* MessagesServer.start({
      respond: (body) => {
        listeners.forEach((l) => l("request"))
        return respond(plan)(body)
      }
    })
    const sessionId = `crash-${path.basename(dir)}`
    const mcp = JSON.stringify({ mcpServers: { fx: { type: "http", url: effects.url } } })
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
    Object.assign(env, {
      SWITCHYARD_HOME: home,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "test-key",
      ENABLE_TOOL_SEARCH: "false"
    })
    delete env["SWITCHYARD_JOURNAL_URL"]
    delete env["FORCE_COLOR"]
    const common = ["--output-format", "json", "--mcp-config", mcp, "--allowed-tools", "mcp__fx", "--cwd", cwd]
    const wal = path.join(home, "journal.db-wal")
    const msOf = (key: string) => {
      const [, turn, index] = /^t(\d+)c(\d+)$/.exec(key) ?? []
      return plan[Number(turn)]?.[Number(index)]?.ms ?? 0
    }
    const runs: Array<RunRecord> = []

    const once = (args: ReadonlyArray<string>, point: KillPoint | undefined) =>
      Effect.async<RunRecord>((resume) => {
        const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
        let killed = false
        const timers: Array<NodeJS.Timeout> = []
        const kill = (afterMs = 0) => {
          const go = () => {
            if (!killed && child.exitCode === null) {
              killed = true
              child.kill("SIGKILL")
            }
          }
          if (afterMs <= 0) go()
          else timers.push(setTimeout(go, afterMs))
        }
        let starts = 0
        let startsOfKind = 0
        let watcher: fs.FSWatcher | undefined
        let writes = 0
        const armWrites = () => {
          if (watcher !== undefined || point?._tag !== "write") return
          try {
            watcher = fs.watch(wal, () => {
              if (++writes >= point.writes) kill()
            })
          } catch {
            // No WAL yet: armed again at the next start.
          }
        }
        const listener = (what: "request" | "start", started?: EffectsServer.EffectLine) => {
          if (point === undefined) return
          if (what === "request") {
            if (point._tag === "stream") kill(point.afterMs)
            // A request after this process started calls carries the results of calls that completed.
            if (point._tag === "between" && starts > 0) kill()
            return
          }
          starts++
          armWrites()
          if (point._tag !== "tools" || started?.tool !== point.kind) return
          if (++startsOfKind === point.starts) kill(Math.floor(point.fraction * msOf(started.key)))
        }
        listeners.add(listener)
        if (point?._tag === "random") kill(point.afterMs)
        child.on("close", (code) => {
          listeners.delete(listener)
          timers.forEach(clearTimeout)
          watcher?.close()
          resume(Effect.succeed({ killed, point, code, stdout, stderr }))
        })
      })

    const newArgs = ["-p", "start", "--session-id", sessionId, ...common]
    const resumeArgs = ["-p", "continue", "--resume", sessionId, ...common]
    let started = false
    /** A run: a resume once the session exists (a kill before it existed leaves nothing to resume). */
    const step = (point: KillPoint | undefined) =>
      Effect.gen(function*() {
        if (started) {
          const run = yield* once(resumeArgs, point)
          if (run.code !== 2 || !run.stderr.includes("no such session")) return run
        }
        started = true
        return yield* once(newArgs, point)
      })
    const done = (run: RunRecord) => !run.killed && run.code === 0 && JSON.parse(run.stdout || "{}").result === "done"
    for (const point of kills) {
      const run = yield* step(point)
      runs.push(run)
      if (done(run) || (!run.killed && run.code !== 0)) return { dir, cwd, home, sessionId, log, runs, requests: model.requests }
    }
    // The last resumes: nothing kills them.
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = yield* step(undefined)
      runs.push(run)
      if (done(run) || run.code !== 0) break
    }
    return { dir, cwd, home, sessionId, log, runs, requests: model.requests }
  })

/** The messages of a request, as the model saw them. */
export const requestMessages = (request: MessagesServer.RecordedRequest): ReadonlyArray<Messages.Message> =>
  (request.body as { readonly messages: ReadonlyArray<Messages.Message> }).messages
