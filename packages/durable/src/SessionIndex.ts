/**
 * The session index of a journal (`switchyard sessions`): every session with
 * its state — `running` (a live process holds it), `interrupted` (the process
 * stopped in a turn: `--resume` finishes it), `done` — its turn count and its
 * last activity.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Journal from "@switchyard/core/Journal"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Owner from "./internal/owner.js"
import * as Store from "./internal/store.js"

/**
 * @since 0.1.0
 * @category models
 */
export type State = "running" | "interrupted" | "done"

/**
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly id: string
  readonly cwd: string
  /** The first prompt, on one line. */
  readonly title: string
  readonly state: State
  /** Turns that ended. */
  readonly turns: number
  /** The last change, ms since the epoch. */
  readonly lastActivity: number
  /** Who runs it, when it is running (`process 123 on host`). */
  readonly runningIn?: string | undefined
}

/**
 * The sessions of a working directory (all of them when `cwd` is undefined),
 * the most recent first.
 *
 * @since 0.1.0
 * @category reading
 */
export const list = (
  cwd: string | undefined
): Effect.Effect<ReadonlyArray<Entry>, Journal.JournalError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const rows = yield* Store.listSessions(cwd).pipe(
      Effect.mapError((error) =>
        new Journal.JournalError({ message: `The journal's sessions cannot be read: ${error.message}` })
      )
    )
    return rows.map((row): Entry => {
      const running = row.owner !== undefined && !Owner.isGone(row.owner, row.heartbeatAt, now)
      return {
        id: row.id,
        cwd: row.cwd,
        title: row.title,
        state: running ? "running" : row.unfinished ? "interrupted" : "done",
        turns: row.turns,
        lastActivity: Math.max(row.updatedAt, running ? row.heartbeatAt ?? 0 : 0),
        ...(running ? { runningIn: Owner.describe(row.owner!) } : {})
      }
    })
  })
