/**
 * The journal's own tables, on any `@effect/sql` client (the embedded SQLite
 * file or PostgreSQL): the format version, the session index, each turn's
 * messages, the call markers that tell a call the process stopped in from one
 * that never started, and the tables of `SqlWorkflowEngine`.
 *
 * Times are milliseconds since the epoch; JSON is stored as text.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The format this version writes. A journal with a larger number was written
 * by a newer Switchyard and is not touched.
 *
 * @internal
 */
export const FORMAT = 1

const tables: ReadonlyArray<string> = [
  `CREATE TABLE IF NOT EXISTS switchyard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS switchyard_sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    turns INTEGER NOT NULL,
    owner TEXT,
    heartbeat_at BIGINT
  )`,
  `CREATE INDEX IF NOT EXISTS switchyard_sessions_cwd ON switchyard_sessions (cwd, updated_at)`,
  `CREATE TABLE IF NOT EXISTS switchyard_turns (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    reset INTEGER NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    PRIMARY KEY (session_id, seq)
  )`,
  `CREATE TABLE IF NOT EXISTS switchyard_calls (
    execution_id TEXT NOT NULL,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    started_at BIGINT NOT NULL,
    progress TEXT,
    PRIMARY KEY (execution_id, name)
  )`,
  `CREATE TABLE IF NOT EXISTS switchyard_workflows (
    execution_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    payload TEXT NOT NULL,
    result TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS switchyard_activities (
    execution_id TEXT NOT NULL,
    name TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    result TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, name, attempt)
  )`,
  `CREATE TABLE IF NOT EXISTS switchyard_deferreds (
    execution_id TEXT NOT NULL,
    name TEXT NOT NULL,
    exit TEXT NOT NULL,
    PRIMARY KEY (execution_id, name)
  )`
]

/** SQLite gives `bigint` (safe integers), PostgreSQL's BIGINT a string. */
export const toNumber = (value: unknown): number =>
  typeof value === "number"
    ? value
    : typeof value === "bigint" || typeof value === "string"
    ? Number(value)
    : Number.NaN

const toOptionalNumber = (value: unknown): number | undefined =>
  value === null || value === undefined ? undefined : toNumber(value)

/** What the stored format says. */
export type FormatCheck =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Newer"; readonly format: number }

/**
 * Create the tables (in one transaction) unless the journal was written by a
 * newer format, which is reported and left as it is.
 */
export const migrate: Effect.Effect<FormatCheck, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Several processes may open a new PostgreSQL journal at once: one makes the tables.
  yield* sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(7361982)`),
    orElse: () => Effect.void
  })
  yield* sql.unsafe(tables[0]!)
  const existing = yield* sql<{ readonly value: string }>`SELECT value FROM switchyard_meta WHERE key = 'format'`
  const stored = existing[0] === undefined ? undefined : Number(existing[0].value)
  if (stored !== undefined && stored > FORMAT) return { _tag: "Newer", format: stored } as const
  if (stored === FORMAT) return { _tag: "Ready" } as const
  yield* Effect.forEach(tables.slice(1), (ddl) => sql.unsafe(ddl), { discard: true })
  yield* sql`
    INSERT INTO switchyard_meta (key, value) VALUES ('format', ${String(FORMAT)})
    ON CONFLICT (key) DO UPDATE SET value = ${String(FORMAT)}
  `
  return { _tag: "Ready" } as const
}).pipe((effect) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)))

// -----------------------------------------------------------------------------
// sessions and turns
// -----------------------------------------------------------------------------

/** A row of the session index. */
export interface SessionRow {
  readonly id: string
  readonly cwd: string
  readonly title: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly turns: number
  readonly owner: string | undefined
  readonly heartbeatAt: number | undefined
  /** Whether the last turn has no end (the process stopped in it). */
  readonly unfinished: boolean
}

const sessionFromRow = (row: Record<string, unknown>): SessionRow => ({
  id: String(row["id"]),
  cwd: String(row["cwd"]),
  title: String(row["title"]),
  createdAt: toNumber(row["created_at"]),
  updatedAt: toNumber(row["updated_at"]),
  turns: toNumber(row["turns"]),
  owner: row["owner"] === null || row["owner"] === undefined ? undefined : String(row["owner"]),
  heartbeatAt: toOptionalNumber(row["heartbeat_at"]),
  unfinished: toNumber(row["unfinished"]) > 0
})

const sessionColumns = `s.id, s.cwd, s.title, s.created_at, s.updated_at, s.turns, s.owner, s.heartbeat_at,
  (SELECT COUNT(*) FROM switchyard_turns t WHERE t.session_id = s.id AND t.ended_at IS NULL) AS unfinished`

/** The sessions of a working directory (every one when `cwd` is undefined), the most recent first. */
export const listSessions = (cwd: string | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    (cwd === undefined
      ? sql<Record<string, unknown>>`
        SELECT ${sql.literal(sessionColumns)} FROM switchyard_sessions s ORDER BY s.updated_at DESC
      `
      : sql<Record<string, unknown>>`
        SELECT ${sql.literal(sessionColumns)} FROM switchyard_sessions s WHERE s.cwd = ${cwd} ORDER BY s.updated_at DESC
      `).pipe(Effect.map((rows) => rows.map(sessionFromRow))))

/** One session's row. */
export const getSession = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, unknown>>`
      SELECT ${sql.literal(sessionColumns)} FROM switchyard_sessions s WHERE s.id = ${id}
    `.pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), sessionFromRow))))

/** A turn as recorded: the messages that preceded it, and its own once it ended. */
export interface TurnRow {
  readonly seq: number
  readonly reset: boolean
  readonly input: string
  readonly output: string | undefined
  readonly startedAt: number
  readonly endedAt: number | undefined
}

/** A session's turns in order. */
export const turns = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, unknown>>`
      SELECT seq, reset, input, output, started_at, ended_at FROM switchyard_turns
      WHERE session_id = ${sessionId} ORDER BY seq
    `.pipe(Effect.map((rows) =>
      rows.map((row): TurnRow => ({
        seq: toNumber(row["seq"]),
        reset: toNumber(row["reset"]) === 1,
        input: String(row["input"]),
        output: row["output"] === null || row["output"] === undefined ? undefined : String(row["output"]),
        startedAt: toNumber(row["started_at"]),
        endedAt: toOptionalNumber(row["ended_at"])
      }))
    )))

/** Record a turn's start: the session row (made on the first turn) and the turn with its input. */
export const beginTurn = (options: {
  readonly sessionId: string
  readonly cwd: string
  readonly title: string
  readonly seq: number
  readonly reset: boolean
  readonly input: string
  readonly now: number
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`
        INSERT INTO switchyard_sessions (id, cwd, title, created_at, updated_at, turns)
        VALUES (${options.sessionId}, ${options.cwd}, ${options.title}, ${options.now}, ${options.now}, 0)
        ON CONFLICT (id) DO UPDATE SET updated_at = ${options.now},
          title = CASE WHEN switchyard_sessions.title = '' THEN ${options.title} ELSE switchyard_sessions.title END
      `,
      sql`
        INSERT INTO switchyard_turns (session_id, seq, reset, input, started_at)
        VALUES (${options.sessionId}, ${options.seq}, ${options.reset ? 1 : 0}, ${options.input}, ${options.now})
      `
    ], { discard: true }).pipe(sql.withTransaction))

/** Record a turn's end with the messages it added. */
export const endTurn = (options: {
  readonly sessionId: string
  readonly seq: number
  readonly output: string
  readonly now: number
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`
        UPDATE switchyard_turns SET output = ${options.output}, ended_at = ${options.now}
        WHERE session_id = ${options.sessionId} AND seq = ${options.seq}
      `,
      sql`
        UPDATE switchyard_sessions SET updated_at = ${options.now}, turns = turns + 1
        WHERE id = ${options.sessionId}
      `
    ], { discard: true }).pipe(sql.withTransaction))

/**
 * Take a session for this process: when nobody holds it, or its holder is
 * gone (`isGone` judges the recorded owner and its last heartbeat). Succeeds
 * with the owner that holds it instead, if any.
 */
export const claimSession = (options: {
  readonly sessionId: string
  readonly cwd: string
  readonly title: string
  readonly owner: string
  readonly now: number
  readonly isGone: (owner: string, heartbeatAt: number | undefined) => boolean
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO switchyard_sessions (id, cwd, title, created_at, updated_at, turns)
        VALUES (${options.sessionId}, ${options.cwd}, ${options.title}, ${options.now}, ${options.now}, 0)
        ON CONFLICT (id) DO NOTHING
      `
      const rows = yield* sql<{ readonly owner: string | null; readonly heartbeat_at: unknown }>`
        SELECT owner, heartbeat_at FROM switchyard_sessions WHERE id = ${options.sessionId}
      `
      const row = rows[0]
      const holder = row?.owner ?? null
      if (holder !== null && holder !== options.owner && !options.isGone(holder, toOptionalNumber(row?.heartbeat_at))) {
        return Option.some(holder)
      }
      yield* sql`
        UPDATE switchyard_sessions SET owner = ${options.owner}, heartbeat_at = ${options.now}
        WHERE id = ${options.sessionId}
      `
      return Option.none<string>()
    }).pipe(sql.withTransaction))

/** Give a session up (the process is done with it). */
export const releaseSession = (sessionId: string, owner: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE switchyard_sessions SET owner = NULL WHERE id = ${sessionId} AND owner = ${owner}`
  )

/** The heartbeat of the sessions this process holds. */
export const heartbeat = (owner: string, now: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE switchyard_sessions SET heartbeat_at = ${now} WHERE owner = ${owner}`
  )

// -----------------------------------------------------------------------------
// call markers
// -----------------------------------------------------------------------------

/**
 * A call's marker: written as it starts, before anything runs, so a later run
 * can tell it was in flight. A tool call's marker holds its `tool_use` block
 * (`progress`), in the order the calls started (`ordinal`); the model call's
 * holds the response once it is complete.
 */
export interface CallMarker {
  readonly name: string
  /** `running`, or `asking` while a permission question was open (nothing ran yet). */
  readonly state: string
  readonly ordinal: number
  readonly startedAt: number
  readonly progress: string | undefined
}

/** The markers of one execution (a turn), in the order they started. */
export const markers = (executionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, unknown>>`
      SELECT name, state, ordinal, started_at, progress FROM switchyard_calls
      WHERE execution_id = ${executionId} ORDER BY ordinal
    `.pipe(Effect.map((rows) =>
      new Map(rows.map((row): [string, CallMarker] => [String(row["name"]), {
        name: String(row["name"]),
        state: String(row["state"]),
        ordinal: toNumber(row["ordinal"]),
        startedAt: toNumber(row["started_at"]),
        progress: row["progress"] === null || row["progress"] === undefined ? undefined : String(row["progress"])
      }]))
    )))

/** Write (or restart) a call's marker. */
export const mark = (options: {
  readonly executionId: string
  readonly name: string
  readonly state: string
  readonly ordinal: number
  readonly startedAt: number
  readonly progress: string | null
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO switchyard_calls (execution_id, name, state, ordinal, started_at, progress)
      VALUES (
        ${options.executionId}, ${options.name}, ${options.state}, ${options.ordinal}, ${options.startedAt},
        ${options.progress}
      )
      ON CONFLICT (execution_id, name) DO UPDATE SET state = ${options.state}
    `)

/** What a call has produced (the model call's complete response). */
export const progress = (executionId: string, name: string, value: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE switchyard_calls SET progress = ${value} WHERE execution_id = ${executionId} AND name = ${name}`
  )
