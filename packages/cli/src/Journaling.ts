/**
 * Durable sessions in the CLI (SPEC §4.14): `run` journals every session, by
 * default into `journal.db` in the state directory; `SWITCHYARD_JOURNAL_URL`
 * (or the `journalUrl` setting) names a PostgreSQL journal instead, or `off`.
 * `--continue` and `--resume` read the conversation back from the journal
 * (on any machine that reaches it), and the next prompt first finishes a turn
 * the process stopped in. `switchyard sessions` lists the sessions.
 *
 * `@switchyard/durable` is loaded only by the commands that journal.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as Messages from "@switchyard/core/Messages"
import * as Settings from "@switchyard/core/Settings"
import type * as DurableJournal from "@switchyard/durable/DurableJournal"
import type * as JournalDatabase from "@switchyard/durable/JournalDatabase"
import type * as SessionIndex from "@switchyard/durable/SessionIndex"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as CliError from "./CliError.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as Sessions from "./Sessions.js"

/**
 * The journal of this `run`, when it journals.
 *
 * @since 0.1.0
 * @category services
 */
export class Current extends Context.Tag("@switchyard/cli/Journaling/Current")<
  Current,
  DurableJournal.DurableJournal
>() {}

const durable = Effect.promise(() => import("@switchyard/durable/JournalDatabase"))

/**
 * Where the journal is: `$SWITCHYARD_JOURNAL_URL`, else the `journalUrl`
 * setting, else `journal.db` in the state directory; none when `off`.
 *
 * @since 0.1.0
 * @category config
 */
export const location = (
  prepared: Runtime.Prepared
): Effect.Effect<Option.Option<JournalDatabase.Location>, CliError.CliError, Path.Path> =>
  Effect.gen(function*() {
    const JournalDatabase = yield* durable
    const fromEnv = process.env[JournalDatabase.URL_VARIABLE]
    const setting = prepared.settings.values["journalUrl"]
    if (fromEnv === undefined && setting !== undefined && typeof setting !== "string") {
      yield* Output.warn(
        `settings: "journalUrl" must be a string (got ${JSON.stringify(setting)}); using the default journal`
      )
    }
    const url = fromEnv ?? (typeof setting === "string" ? setting : undefined)
    const stateDirectory = yield* Settings.stateDirectory(yield* Settings.homeDirectory)
    const resolved = JournalDatabase.resolve({ url, stateDirectory })
    if (Either.isLeft(resolved)) return yield* Effect.fail(CliError.badInput(resolved.left.message))
    return resolved.right
  })

/**
 * Open the journal for this process's sessions; none when it is off. A
 * journal that cannot be used is an error that says why (and nothing in it
 * is changed).
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  prepared: Runtime.Prepared
): Effect.Effect<
  Option.Option<DurableJournal.DurableJournal>,
  CliError.CliError,
  FileSystem.FileSystem | Path.Path | Scope.Scope
> =>
  Effect.gen(function*() {
    const where = yield* location(prepared)
    if (Option.isNone(where)) return Option.none()
    const JournalDatabase = yield* durable
    return yield* JournalDatabase.open(where.value).pipe(
      Effect.mapError((error) => CliError.failure(error.message)),
      Effect.asSome
    )
  })

/**
 * The journal, when this run has one, as a layer for the conversation code.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (journal: Option.Option<DurableJournal.DurableJournal>): Layer.Layer<never> =>
  Option.match(journal, {
    onNone: () => Layer.empty as Layer.Layer<never>,
    onSome: (j) => Layer.succeed(Current, j) as unknown as Layer.Layer<never>
  })

/**
 * A session the journal holds, read back: as `Conversation.Start` has it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly id: string
  readonly messages: ReadonlyArray<Messages.Message>
  readonly repaired: boolean
}

/**
 * A conversation the journal holds, read back: its messages, and whether
 * the transcript must be rewritten to match (always, so the transcript says
 * what the journal says).
 *
 * @since 0.1.0
 * @category sessions
 */
export const load = (
  id: string
): Effect.Effect<Option.Option<Loaded>, CliError.CliError> =>
  Effect.gen(function*() {
    const journal = yield* Effect.serviceOption(Current)
    if (Option.isNone(journal)) return Option.none()
    const messages = yield* journal.value.messages(id).pipe(Effect.mapError((error) => CliError.failure(error.message)))
    return Option.map(messages, (m) => ({ id, messages: m, repaired: true }))
  })

/**
 * The most recent session of a working directory, from the journal and the
 * transcripts together.
 *
 * @since 0.1.0
 * @category sessions
 */
export const mostRecent = (
  cwd: string
): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fromTranscripts = (yield* Sessions.list(cwd))[0]
    const journal = yield* Effect.serviceOption(Current)
    const fromJournal = Option.isNone(journal)
      ? undefined
      : (yield* Effect.orElseSucceed(indexOf(journal.value, cwd), () => []))[0]
    if (fromJournal === undefined) return Option.fromNullable(fromTranscripts?.id)
    if (fromTranscripts === undefined) return Option.some(fromJournal.id)
    return Option.some(fromJournal.lastActivity >= fromTranscripts.modifiedAt ? fromJournal.id : fromTranscripts.id)
  })

const indexOf = (journal: DurableJournal.DurableJournal, cwd: string | undefined) => journal.sessions(cwd)

/**
 * Take the session for this process before it runs (a clear error when
 * another process runs it).
 *
 * @since 0.1.0
 * @category sessions
 */
export const attach = (
  id: string,
  cwd: string
): Effect.Effect<Option.Option<DurableJournal.DurableJournal>, CliError.CliError> =>
  Effect.gen(function*() {
    const journal = yield* Effect.serviceOption(Current)
    if (Option.isNone(journal)) return Option.none()
    yield* journal.value.claim(id, cwd).pipe(Effect.mapError((error) => CliError.failure(error.message)))
    return journal
  })

/**
 * The options of `switchyard sessions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions extends Runtime.CommonOptions {
  readonly all: boolean
  readonly json: boolean
}

interface Listed {
  readonly id: string
  readonly cwd: string
  readonly title: string
  readonly state: SessionIndex.State
  readonly turns: number
  readonly lastActivity: number
  readonly runningIn?: string | undefined
}

const age = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s ago`
  if (s < 3600) return `${Math.round(s / 60)}m ago`
  if (s < 86_400) return `${Math.round(s / 3600)}h ago`
  return `${Math.round(s / 86_400)}d ago`
}

/**
 * `switchyard sessions [--all] [--json]`: the sessions of this directory (or
 * all), the most recent first, with state, turn count and last activity;
 * sessions recorded only as transcripts are listed too.
 *
 * @since 0.1.0
 * @category commands
 */
export const list = (options: ListOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const where = yield* location(prepared)
    const entries = new Map<string, Listed>()
    if (Option.isSome(where)) {
      const JournalDatabase = yield* durable
      const Index = yield* Effect.promise(() => import("@switchyard/durable/SessionIndex"))
      const fs = yield* Effect.promise(() => import("node:fs"))
      // Listing does not make a journal that is not there.
      if (where.value._tag === "Postgres" || fs.existsSync(where.value.path)) {
        const rows = yield* Index.list(options.all ? undefined : cwd).pipe(
          Effect.provide(JournalDatabase.layerClient(where.value)),
          Effect.mapError((error) => CliError.failure(error.message))
        )
        for (const row of rows) entries.set(row.id, row)
      }
    }
    for (const summary of yield* Sessions.list(cwd)) {
      if (entries.has(summary.id)) continue
      const loaded = yield* Effect.either(Sessions.load(cwd, summary.id))
      const interrupted = Either.isRight(loaded) && loaded.right.repaired
      entries.set(summary.id, {
        id: summary.id,
        cwd,
        title: summary.firstPrompt,
        state: interrupted ? "interrupted" : "done",
        turns: Either.isRight(loaded) ? loaded.right.messages.filter((m) => m.role === "assistant").length : 0,
        lastActivity: summary.modifiedAt
      })
    }
    const sorted = [...entries.values()].sort((a, b) => b.lastActivity - a.lastActivity)
    if (options.json) {
      return yield* Output.line(JSON.stringify(sorted.map((s) => ({
        id: s.id,
        cwd: s.cwd,
        state: s.state,
        turns: s.turns,
        last_activity: new Date(s.lastActivity).toISOString(),
        title: s.title,
        ...(s.runningIn === undefined ? {} : { running_in: s.runningIn })
      }))))
    }
    if (sorted.length === 0) {
      return yield* Output.line(options.all ? "No sessions." : `No sessions in ${cwd} (--all lists every directory's).`)
    }
    const now = Date.now()
    const rows = sorted.map((s) => [
      s.id,
      s.runningIn === undefined ? s.state : `${s.state} (${s.runningIn})`,
      String(s.turns),
      age(now - s.lastActivity),
      ...(options.all ? [s.cwd] : []),
      s.title.length > 60 ? `${s.title.slice(0, 59)}…` : s.title
    ])
    const header = ["ID", "STATE", "TURNS", "LAST ACTIVITY", ...(options.all ? ["DIRECTORY"] : []), "FIRST PROMPT"]
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
    const format = (cells: ReadonlyArray<string>) =>
      cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd()
    yield* Output.line(format(header))
    for (const row of rows) yield* Output.line(format(row))
  }))
