/**
 * Where the journal lives and how it is opened: the embedded default, one
 * SQLite file `journal.db` in the state directory (no server), or PostgreSQL
 * (`SWITCHYARD_JOURNAL_URL=postgresql://…`, or the `journalUrl` setting), so
 * that sessions are listed and resumed on any machine that reaches it.
 *
 * Opening checks what can go wrong before a session starts and says it
 * plainly, touching nothing: a file that is not a database (corrupt), a file
 * another program holds locked, a server that cannot be reached, a journal
 * written by a newer version.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Journal from "@switchyard/core/Journal"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as DurableJournal from "./DurableJournal.js"
import * as Sqlite from "./internal/sqlite.js"
import * as Store from "./internal/store.js"
import * as SqlWorkflowEngine from "./SqlWorkflowEngine.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Location =
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Postgres"; readonly url: string }

/**
 * The variable that selects the journal: a `postgresql://` URL, a file path,
 * or `off`.
 *
 * @since 0.1.0
 * @category config
 */
export const URL_VARIABLE = "SWITCHYARD_JOURNAL_URL"

/**
 * The embedded journal's file name in the state directory.
 *
 * @since 0.1.0
 * @category config
 */
export const FILE_NAME = "journal.db"

/**
 * Where the journal is: `url` (the variable, else the setting) when given —
 * `off`/`none`/`false` for no journal — else `journal.db` in the state
 * directory.
 *
 * @since 0.1.0
 * @category config
 */
export const resolve = (options: {
  readonly url: string | undefined
  readonly stateDirectory: string
}): Either.Either<Option.Option<Location>, Journal.JournalError> => {
  const url = options.url?.trim()
  if (url === undefined || url === "") {
    return Either.right(Option.some({ _tag: "File", path: `${options.stateDirectory}/${FILE_NAME}` }))
  }
  if (/^(off|none|false|0)$/i.test(url)) return Either.right(Option.none())
  if (/^postgres(ql)?:\/\//i.test(url)) return Either.right(Option.some({ _tag: "Postgres", url }))
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !url.startsWith("file://")) {
    return Either.left(
      new Journal.JournalError({
        message: `${URL_VARIABLE}=${redact(url)}: not a journal location; use postgresql://…, a file path, or off`
      })
    )
  }
  const path = url.startsWith("file://") ? url.slice("file://".length) : url
  return Either.right(Option.some({ _tag: "File", path }))
}

/** A URL as it may be shown: without its password. */
const redact = (url: string): string => url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@]*@/i, "$1:***@")

/**
 * How a location is named in messages.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (location: Location): string => location._tag === "File" ? location.path : redact(location.url)

const sqliteFailure = (path: string) => (error: unknown): Journal.JournalError => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  const detail = cause instanceof Error ? cause.message : String(cause)
  const message = code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT"
    ? `The journal ${path} is not a database it can read (${detail}): it may be damaged. It was left as it is; ` +
      `move it away to start a new journal, or set ${URL_VARIABLE}=off to run without one`
    : code === "SQLITE_BUSY" || code === "SQLITE_LOCKED"
    ? `The journal ${path} is locked by another program (${detail}); nothing was changed. ` +
      `Close what holds it, or set ${URL_VARIABLE}=off to run without a journal`
    : `The journal ${path} cannot be opened: ${detail}`
  return new Journal.JournalError({ message, path })
}

const newer = (where: string, format: number) =>
  new Journal.JournalError({
    message: `The journal ${where} was written by a newer Switchyard ` +
      `(format ${format}; this one reads format ${Store.FORMAT}); ` +
      `it was left as it is. Upgrade Switchyard, or set ${URL_VARIABLE} to another journal`,
    path: where
  })

/** Create the tables, unless the journal is of a newer format. */
const prepare = (where: string, failure: (error: unknown) => Journal.JournalError) =>
  Effect.flatMap(
    Effect.mapError(Store.migrate, failure),
    (check) => check._tag === "Newer" ? Effect.fail(newer(where, check.format)) : Effect.void
  )

const fileClient = (
  path: string
): Layer.Layer<SqlClient.SqlClient, Journal.JournalError, FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    yield* fs.makeDirectory(paths.dirname(path), { recursive: true }).pipe(
      Effect.mapError((error) =>
        new Journal.JournalError({ message: `Cannot make ${paths.dirname(path)}: ${error.message}`, path })
      )
    )
    const handle = yield* Effect.mapError(Sqlite.open({ filename: path }), sqliteFailure(path))
    // The format is checked before anything is written, so a newer journal stays as it is.
    const client = Sqlite.layer(handle)
    return Layer.effectDiscard(
      prepare(path, sqliteFailure(path)).pipe(
        Effect.zipRight(Effect.mapError(Sqlite.useWal(handle), sqliteFailure(path)))
      )
    ).pipe(Layer.provideMerge(client))
  }))

// `pg` is loaded only for a PostgreSQL journal.
const postgresClient = (url: string): Layer.Layer<SqlClient.SqlClient, Journal.JournalError> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("@effect/sql-pg/PgClient")), (PgClient) =>
    PgClient.layer({
      url: Redacted.make(url),
      connectTimeout: Duration.seconds(5),
      applicationName: "switchyard",
      maxConnections: 4
    }))).pipe(
      Layer.mapError((error) => {
        const cause = error.cause instanceof Error ? error.cause.message : String(error.cause ?? error.message)
        return new Journal.JournalError({
          message:
            `Cannot reach the journal at ${redact(url)} (${cause}); nothing was changed. Check that PostgreSQL ` +
            `runs there, or set ${URL_VARIABLE}=off to run without a journal`,
          path: redact(url)
        })
      })
    )

/**
 * The SQL client of a location, with the journal's tables made.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  location: Location
): Layer.Layer<SqlClient.SqlClient, Journal.JournalError, FileSystem.FileSystem | Path.Path> => {
  if (location._tag === "File") return fileClient(location.path)
  const where = describe(location)
  const failure = (error: unknown) =>
    new Journal.JournalError({
      message: `The journal at ${where} could not be prepared: ${
        error instanceof Error ? error.message : String(error)
      }`,
      path: where
    })
  return Layer.effectDiscard(prepare(where, failure)).pipe(Layer.provideMerge(postgresClient(location.url)))
}

/**
 * The embedded engine (`SqlWorkflowEngine`) on a location.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  location: Location
): Layer.Layer<
  SqlClient.SqlClient | WorkflowEngine.WorkflowEngine,
  Journal.JournalError,
  FileSystem.FileSystem | Path.Path
> => SqlWorkflowEngine.layer.pipe(Layer.provideMerge(layerClient(location)))

/**
 * Open the journal at a location for this process's sessions.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  location: Location
): Effect.Effect<
  DurableJournal.DurableJournal,
  Journal.JournalError,
  FileSystem.FileSystem | Path.Path | Scope.Scope
> =>
  Effect.flatMap(
    Layer.build(layer(location)),
    (context) => DurableJournal.make({ location: describe(location) }).pipe(Effect.provide(context))
  )
