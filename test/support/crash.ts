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
import * as NodeContext from "@effect/platform-node/NodeContext"
import { expect } from "@effect/vitest"
import type { ReplayModel } from "@switchyard/core"
import { Messages } from "@switchyard/core"
import * as Sessions from "@switchyard/cli/Sessions"
import { JournalDatabase } from "@switchyard/durable"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { bin } from "./cli.js"
import * as EffectsServer from "./effectsServer.js"
import * as MessagesServer from "./messagesServer.js"

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

/**
 * The model's response to a request: by how many turns the conversation has.
 * A first prompt `start NAME` names the session's calls `NAME-t0c0`, … (for
 * several sessions against one effects log).
 */
const respond = (plan: Plan) => (body: unknown): MessagesServer.ScriptedResponse => {
  const messages = (body as { readonly messages: ReadonlyArray<Messages.Message> }).messages
  const turn = messages.filter((m) => m.role === "assistant").length
  const first = messages[0] === undefined ? "" : JSON.stringify(messages[0].content)
  const named = /start ([A-Za-z0-9]+)/.exec(first)
  const prefix = named === null ? "" : `${named[1]}-`
  const calls = plan[turn]
  const blocks: ReadonlyArray<ReplayModel.Turn["blocks"][number]> = calls === undefined
    ? [{ block: Messages.text("done"), delayMs: 20 }]
    : [
      { block: Messages.text(`Turn ${turn}.`), delayMs: 30 },
      ...calls.map((call, i) => ({
        block: Messages.toolUse(`toolu_${prefix}${keyOf(turn, i)}`, `mcp__fx__${call.kind}`, {
          key: `${prefix}${keyOf(turn, i)}`,
          ms: call.ms
        }),
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

/** Where a run happens: its state directory and working directory (two of them are two machines). */
export interface Machine {
  readonly home: string
  readonly cwd: string
}

/** The servers of a scripted session, and how to run the CLI against them. */
export interface Harness {
  readonly log: string
  readonly requests: ReadonlyArray<MessagesServer.RecordedRequest>
  readonly machine: (name: string) => Machine
  /** Run the CLI on a machine, killing it at `point` (never, when undefined or when it does not come). */
  readonly run: (
    machine: Machine,
    args: ReadonlyArray<string>,
    point: KillPoint | undefined
  ) => Effect.Effect<RunRecord>
  /** The arguments every run takes (output, the effects server, permissions, cwd). */
  readonly common: (machine: Machine) => ReadonlyArray<string>
  /** The effects server's MCP endpoint and the environment of the runs. */
  readonly effectsUrl: string
  readonly env: Readonly<Record<string, string>>
}

/** Start the model and effects servers for `plan`; runs journal to `journalUrl` (default: journal.db). */
export const harness = (
  dir: string,
  plan: Plan,
  options: { readonly journalUrl?: string | undefined } = {}
): Effect.Effect<Harness, never, Scope.Scope> =>
  Effect.gen(function*() {
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
    const mcp = JSON.stringify({ mcpServers: { fx: { type: "http", url: effects.url } } })
    const baseEnv: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) baseEnv[k] = v
    Object.assign(baseEnv, {
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "test-key",
      ENABLE_TOOL_SEARCH: "false"
    })
    delete baseEnv["SWITCHYARD_JOURNAL_URL"]
    delete baseEnv["FORCE_COLOR"]
    if (options.journalUrl !== undefined) baseEnv["SWITCHYARD_JOURNAL_URL"] = options.journalUrl
    const common = (
      machine: Machine
    ) => ["--output-format", "json", "--mcp-config", mcp, "--allowed-tools", "mcp__fx", "--cwd", machine.cwd]
    const msOf = (key: string) => {
      const [, turn, index] = /t(\d+)c(\d+)$/.exec(key) ?? []
      return plan[Number(turn)]?.[Number(index)]?.ms ?? 0
    }
    const machine = (name: string): Machine => {
      const m = { home: path.join(dir, name, "home"), cwd: path.join(dir, name, "project") }
      fs.mkdirSync(m.cwd, { recursive: true })
      return m
    }

    const run = (machine: Machine, args: ReadonlyArray<string>, point: KillPoint | undefined) =>
      Effect.async<RunRecord>((resume) => {
        const env = { ...baseEnv, SWITCHYARD_HOME: machine.home }
        const wal = path.join(machine.home, "journal.db-wal")
        const child = spawn(bin, args, {
          cwd: machine.cwd,
          env,
          stdio: ["ignore", "pipe", "pipe"]
        })
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
    return { log, requests: model.requests, machine, run, common, effectsUrl: effects.url, env: baseEnv }
  })

/** Whether a run ended the session (the model's last answer). */
export const finished = (run: RunRecord) =>
  !run.killed && run.code === 0 && JSON.parse(run.stdout || "{}").result === "done"

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
    const h = yield* harness(dir, plan)
    const machine = h.machine("machine")
    const sessionId = `crash-${path.basename(dir)}`
    const newArgs = ["-p", "start", "--session-id", sessionId, ...h.common(machine)]
    const resumeArgs = ["-p", "continue", "--resume", sessionId, ...h.common(machine)]
    const runs: Array<RunRecord> = []
    const result = (): Chain => ({ dir, ...machine, sessionId, log: h.log, runs, requests: h.requests })
    let started = false
    /** A run: a resume once the session exists (a kill before it existed leaves nothing to resume). */
    const step = (point: KillPoint | undefined) =>
      Effect.gen(function*() {
        if (started) {
          const run = yield* h.run(machine, resumeArgs, point)
          if (run.code !== 2 || !run.stderr.includes("no such session")) return run
        }
        started = true
        return yield* h.run(machine, newArgs, point)
      })
    for (const point of kills) {
      const run = yield* step(point)
      runs.push(run)
      if (finished(run) || (!run.killed && run.code !== 0)) return result()
    }
    // The last resumes: nothing kills them.
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = yield* step(undefined)
      runs.push(run)
      if (finished(run) || run.code !== 0) break
    }
    return result()
  })

/** The messages of a request, as the model saw them. */
export const requestMessages = (request: MessagesServer.RecordedRequest): ReadonlyArray<Messages.Message> =>
  (request.body as { readonly messages: ReadonlyArray<Messages.Message> }).messages

/** The first words of the answer to a write the process stopped in. */
export const EFFECT_UNKNOWN = "The process stopped while this ran; its effect is unknown."

export interface Stats {
  kills: number
  rerunReads: number
  unknownWrites: number
  rerunPuts: number
}

const resultText = (block: Messages.ContentBlock | undefined) =>
  block?.type === "tool_result" ? Messages.contentText(block.content) : undefined

/** What a finished session left, for `judge`. */
export interface Finished {
  readonly runs: ReadonlyArray<RunRecord>
  readonly log: string
  readonly requests: ReadonlyArray<MessagesServer.RecordedRequest>
  readonly journaled: ReadonlyArray<Messages.Message>
  readonly transcript: ReadonlyArray<Messages.Message>
}

/** The conversation the journal at a `journal.db` holds. */
export const journaledFile = (home: string, sessionId: string) =>
  journaledAt({ _tag: "File", path: path.join(home, "journal.db") }, sessionId)

/** The conversation a journal holds. */
export const journaledAt = (location: JournalDatabase.Location, sessionId: string) =>
  Effect.scoped(Effect.gen(function*() {
    const journal = yield* JournalDatabase.open(location)
    return Option.getOrThrow(yield* journal.messages(sessionId))
  })).pipe(Effect.provide(NodeContext.layer), Effect.orDie)

/** The conversation a machine's transcript holds. */
export const transcript = (home: string, cwd: string, sessionId: string) =>
  Sessions.load(cwd, sessionId).pipe(
    Effect.map((loaded) => loaded.messages),
    Effect.provide(NodeContext.layer),
    Effect.withConfigProvider(
      ConfigProvider.fromMap(new Map([["SWITCHYARD_HOME", home], ["HOME", path.dirname(home)]]))
    ),
    Effect.orDie
  )

/** The invariants of a finished session; adds what it saw to `stats`. */
export const judge = (run: Finished, stats: Stats) =>
  Effect.gen(function*() {
    const last = run.runs[run.runs.length - 1]!
    expect(last.code, `the last run failed:\n${last.stderr}`).toBe(0)
    expect(JSON.parse(last.stdout).result).toBe("done")
    stats.kills += run.runs.filter((r) => r.killed).length

    // The journal and the transcript hold the same conversation.
    const journaled = run.journaled
    expect(run.transcript).toEqual(journaled)

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
      const kind = use.name.replace("mcp__fx__", "") as CallKind
      const lines = log.filter((l) => l.key === key)
      const starts = lines.filter((l) => l.event === "start")
      const text = resultText(results.get(use.id))
      // Once the model had seen its result, the call never started again.
      const seen = run.requests.find((r) =>
        requestMessages(r).some((m) =>
          m.role === "user" && Messages.blocks(m).some((b) => b.type === "tool_result" && b.tool_use_id === use.id)
        )
      )
      if (seen !== undefined) {
        expect(starts.filter((s) => s.at > seen.arrivedAt), `${key} ran after its result was sent`).toHaveLength(0)
      }
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
            // "Unknown" only for a write that may have started and has no result the model saw: journaled as
            // started, it may have reached the server (1 start) or been killed before its request left (0).
            expect(starts.length, key).toBeLessThanOrEqual(1)
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
