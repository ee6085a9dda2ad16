/**
 * The sessions a journal holds in this process: taking one (`claimed`, with
 * what its turns hold so far), its heartbeat, letting it go, and the end of a
 * turn recorded.
 *
 * @internal
 */
import * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Live from "./live.js"
import * as Owner from "./owner.js"
import * as Store from "./store.js"

const Conversation = Schema.parseJson(Schema.Array(Messages.Message))
/** A conversation as the turns table holds it. */
export const encodeMessages = Schema.encodeSync(Conversation)
/** A conversation from the turns table. */
export const decodeMessages = Schema.decodeUnknownEither(Conversation)

/** One session as this process journals it. */
export interface SessionState {
  /** The last turn begun. */
  seq: number
  /** The messages the turns hold so far. */
  recorded: number
  /** A turn whose end is not recorded. */
  open: number | undefined
  /** When the process that held the session before was last seen (its heartbeat). */
  readonly previousSeenAt: number | undefined
}

/** A session's title: its first prompt, on one line. */
export const titleOf = (messages: ReadonlyArray<Messages.Message>): string => {
  for (const message of messages) {
    if (message.role !== "user") continue
    const text = Messages.blocks(message).flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ").trim()
    if (text !== "") return text.replace(/\s+/g, " ").slice(0, 200)
  }
  return ""
}

/** What the sessions need of the journal. */
export interface Deps {
  readonly location: string
  readonly onStore: Live.Steps["onStore"]
  /** The messages of a turn whose workflow ended (none while it has not). */
  readonly finishedOutput: (
    sessionId: string,
    seq: number
  ) => Effect.Effect<Option.Option<ReadonlyArray<Messages.Message>>, Journal.JournalError>
}

/** The sessions of a journal; they are let go when the scope closes. */
export const make = (deps: Deps) =>
  Effect.gen(function*() {
    const { finishedOutput, onStore } = deps
    const options = { location: deps.location }
    const sessions = new Map<string, SessionState>()

    // The heartbeat of the sessions this process holds; they are let go when it ends.
    yield* Effect.gen(function*() {
      if (sessions.size === 0) return
      const now = yield* Clock.currentTimeMillis
      yield* Effect.ignore(onStore("record a heartbeat", Store.heartbeat(Owner.self(), now)))
    }).pipe(Effect.repeat(Schedule.spaced(Owner.HEARTBEAT_MS)), Effect.forkScoped)
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        sessions.keys(),
        (id) => Effect.ignore(onStore("let a session go", Store.releaseSession(id, Owner.self()))),
        { discard: true }
      )
    )

    const finishTurn = (sessionId: string, state: SessionState, seq: number, output: ReadonlyArray<Messages.Message>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* onStore(
          "record the end of a turn",
          Store.endTurn({ sessionId, seq, output: encodeMessages(output), now })
        )
        state.recorded += output.length
        state.open = undefined
      })

    const claimed = (
      sessionId: string,
      cwd: string,
      title: string
    ): Effect.Effect<SessionState, Journal.JournalError> =>
      Effect.suspend(() => {
        const known = sessions.get(sessionId)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const before = yield* onStore("read a session", Store.getSession(sessionId))
          const holder = yield* onStore(
            "take a session",
            Store.claimSession({
              sessionId,
              cwd,
              title,
              owner: Owner.self(),
              now,
              isGone: (owner, heartbeatAt) => Owner.isGone(owner, heartbeatAt, now)
            })
          )
          if (Option.isSome(holder)) {
            return yield* Effect.fail(
              new Journal.JournalError({
                message: `The session ${sessionId} is in use by ${Owner.describe(holder.value)}; ` +
                  "a session runs in one process at a time (wait for it to end, or resume another)",
                path: options.location
              })
            )
          }
          const rows = yield* onStore("read a session's turns", Store.turns(sessionId))
          let recorded = 0
          for (const row of rows) {
            const input = decodeMessages(row.input)
            const output = row.output === undefined ? undefined : decodeMessages(row.output)
            recorded = (row.reset ? 0 : recorded) + (input._tag === "Right" ? input.right.length : 0) +
              (output !== undefined && output._tag === "Right" ? output.right.length : 0)
          }
          const last = rows[rows.length - 1]
          const state: SessionState = {
            seq: last?.seq ?? 0,
            recorded,
            open: last !== undefined && last.endedAt === undefined ? last.seq : undefined,
            previousSeenAt: Option.getOrUndefined(Option.flatMap(before, (row) => Option.fromNullable(row.heartbeatAt)))
          }
          // The process stopped after the turn's workflow ended but before the turn did: its
          // messages are in the workflow's result.
          if (state.open !== undefined) {
            const output = yield* finishedOutput(sessionId, state.open)
            if (Option.isSome(output)) yield* finishTurn(sessionId, state, state.open, output.value)
          }
          sessions.set(sessionId, state)
          return state
        })
      })

    const stateOf = (context: Ref.Ref<ToolUseContext.ToolUseContext>) =>
      Effect.flatMap(Ref.get(context), (ctx) =>
        Effect.map(claimed(ctx.sessionId, ctx.cwd, titleOf(ctx.messages)), (state) => ({ ctx, state })))

    const release = (sessionId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!sessions.delete(sessionId)) {
          return Effect.void
        }
        return Effect.ignore(onStore("let a session go", Store.releaseSession(sessionId, Owner.self())))
      })

    return { claimed, finishTurn, release, stateOf }
  })
