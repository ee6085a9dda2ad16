/**
 * An `@effect/sql` client for the embedded journal: one connection to a
 * SQLite file through `libsql`'s synchronous, better-sqlite3-compatible
 * binding (the prebuilt native module `@libsql/client` itself loads).
 *
 * Why not `@effect/sql-libsql`: its client runs each transaction through
 * `@libsql/client`'s `transaction()`, which hands the open connection to the
 * transaction and opens a fresh one for the next statement, so every
 * transaction re-opens the file and re-reads the schema (the 12–17 ms of CPU
 * per activity the issue measured; see bench/REPORT.md). Here one connection
 * serves everything: transactions are `BEGIN IMMEDIATE … COMMIT` on it, a
 * semaphore keeps one statement or transaction at a time, prepared statements
 * are cached, and integers come back as `bigint` (what `intMode: "bigint"`
 * gives), so the cluster's 64-bit snowflake ids survive.
 *
 * @since 0.1.0
 * @internal
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import Database from "libsql"

/** @internal */
export interface Options {
  readonly filename: string
  /** Milliseconds a statement waits for another connection's lock (default 5 000). */
  readonly busyTimeoutMs?: number | undefined
  readonly readonly?: boolean | undefined
}

/** The database handle, for the journal's own checks (integrity, version) before the cluster starts. */
/** @internal */
export interface SqliteHandle {
  readonly filename: string
  readonly db: Database.Database
}

const PREPARED_CACHE_SIZE = 256

const failure = (message: string) => (cause: unknown) => new SqlError({ cause, message })

/** Open (and create) the file. It is left as it is until `useWal`. */
/** @internal */
export const open = (options: Options): Effect.Effect<SqliteHandle, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const db = new Database(options.filename, { readonly: options.readonly ?? false })
        try {
          db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5_000}`)
          db.defaultSafeIntegers(true)
        } catch (error) {
          db.close()
          throw error
        }
        return { filename: options.filename, db }
      },
      catch: failure(`Cannot open the journal database ${options.filename}`)
    }),
    (handle) => Effect.sync(() => handle.db.close())
  )

/**
 * Switch the file to WAL, so readers (`switchyard sessions`) do not wait for
 * the writer, with NORMAL sync: a process crash (SIGKILL) loses no committed
 * transaction.
 */
/** @internal */
export const useWal = (handle: SqliteHandle): Effect.Effect<void, SqlError> =>
  Effect.try({
    try: () => {
      handle.db.pragma("journal_mode = WAL")
      handle.db.pragma("synchronous = NORMAL")
    },
    catch: failure(`Cannot switch the journal database ${handle.filename} to WAL`)
  })

/** A client over an open handle. */
/** @internal */
export const make = (
  handle: SqliteHandle
): Effect.Effect<SqlClient.SqlClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const db = handle.db
    const prepared = new Map<string, Database.Statement>()
    const prepare = (sql: string): Database.Statement => {
      const cached = prepared.get(sql)
      if (cached !== undefined) {
        // Most recently used last: the first key is the one to drop.
        prepared.delete(sql)
        prepared.set(sql, cached)
        return cached
      }
      const statement = db.prepare(sql)
      prepared.set(sql, statement)
      if (prepared.size > PREPARED_CACHE_SIZE) prepared.delete(prepared.keys().next().value!)
      return statement
    }
    const run = (sql: string, params: ReadonlyArray<unknown>, mode: "rows" | "raw" | "values") =>
      Effect.try({
        try: () => {
          // A BEGIN that failed (the file busy or not a database) left nothing to roll back;
          // @effect/sql rolls back anyway, and a failed ROLLBACK would be a defect.
          if (sql === "ROLLBACK" && !db.inTransaction) return []
          const statement = prepare(sql)
          if (!statement.reader) {
            const result = statement.run(...params)
            return mode === "raw" ? result as unknown as ReadonlyArray<unknown> : []
          }
          if (mode !== "values") return statement.all(...params) as ReadonlyArray<unknown>
          statement.raw(true)
          try {
            return statement.all(...params) as ReadonlyArray<unknown>
          } finally {
            statement.raw(false)
          }
        },
        catch: failure("Failed to execute statement")
      })
    const connection: SqlConnection.Connection = {
      execute: (sql, params, transformRows) =>
        transformRows === undefined
          ? run(sql, params, "rows")
          : Effect.map(run(sql, params, "rows"), (rows) => transformRows(rows as ReadonlyArray<object>)),
      executeRaw: (sql, params) => run(sql, params, "raw"),
      executeValues: (sql, params) =>
        run(sql, params, "values") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
      executeUnprepared: (sql, params, transformRows) => connection.execute(sql, params, transformRows),
      executeStream: () => Effect.dieMessage("executeStream is not supported by the journal's SQLite client") as never
    }
    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.flatMap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )
    return yield* SqlClient.make({
      acquirer,
      transactionAcquirer,
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes: [["db.system.name", "sqlite"]],
      // A write transaction takes the write lock at once, so it cannot fail half-way with SQLITE_BUSY.
      beginTransaction: "BEGIN IMMEDIATE"
    })
  })

/** @internal */
export const layer = (handle: SqliteHandle): Layer.Layer<SqlClient.SqlClient> =>
  Layer.scoped(SqlClient.SqlClient, make(handle)).pipe(Layer.provide(Reactivity.layer))
