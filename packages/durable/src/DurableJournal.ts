/**
 * The journal of durable sessions (SPEC §4.14), on `@effect/workflow`: each
 * turn is a workflow keyed by session and turn, its model call an activity
 * (`model`) whose result is the response, and each tool call an activity
 * named by its `tool_use_id` whose result is the call's `tool_result`.
 *
 * What a session gets after a crash, per kind of call:
 * - a completed call is never run again: its recorded result is replayed (no
 *   hook, permission question or tool runs);
 * - a read-only call that was in flight runs again;
 * - any other call that was in flight is answered "the process stopped while
 *   this ran; its effect is unknown", with its command and how long it had
 *   run — unless its tool is idempotent, which runs it again with the same
 *   `Activity.idempotencyKey` (`Journal.currentIdempotencyKey`);
 * - a call that was waiting for a permission answer, or had not started, runs
 *   (and asks) as usual;
 * - a result over the inline limit is recorded as the preview the model got,
 *   which names the file that holds it in full.
 * "In flight" is told by a marker each call writes as it starts, before the
 * tool runs; a model response records its blocks as each `tool_use` closes,
 * so a response cut off mid-stream is finished with the calls it had made.
 *
 * Sessions are held by one process at a time (`claim`; a holder that died on
 * this host, or went silent elsewhere, lets go), and the journal keeps each
 * turn's messages, so a session is resumed from the journal on any machine
 * that reaches the store.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Live from "./internal/live.js"
import * as ModelStep from "./internal/modelStep.js"
import * as Recovery from "./internal/recovery.js"
import * as Sessions from "./internal/sessions.js"
import * as Store from "./internal/store.js"
import * as ToolStep from "./internal/toolStep.js"
import * as SessionIndex from "./SessionIndex.js"

/**
 * The turn workflow: one per turn of a session.
 *
 * @since 0.1.0
 * @category workflows
 */
export const TurnWorkflow = Workflow.make({
  name: "switchyard/Turn",
  payload: { sessionId: Schema.String, seq: Schema.Number },
  // The messages the turn added: recorded with the workflow's end, so a crash right after it
  // loses none of them.
  success: Schema.Array(Messages.Message),
  idempotencyKey: ({ seq, sessionId }) => `${sessionId}/${seq}`
})

const { decodeMessages, encodeMessages } = Sessions

/**
 * The journal, with the session operations the CLI needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface DurableJournal extends Journal.Journal {
  /** Where it is kept, for messages. */
  readonly location: string
  /**
   * Take a session for this process: fails, naming the holder, when another
   * live process holds it.
   */
  readonly claim: (sessionId: string, cwd: string) => Effect.Effect<void, Journal.JournalError>
  /** Let a session go (a runner, after its prompt). */
  readonly release: (sessionId: string) => Effect.Effect<void>
  /** The conversation the journal holds for a session (none when it has no turn of it). */
  readonly messages: (
    sessionId: string
  ) => Effect.Effect<Option.Option<ReadonlyArray<Messages.Message>>, Journal.JournalError>
  /** The session index: a working directory's sessions (all of them when `cwd` is undefined). */
  readonly sessions: (cwd: string | undefined) => Effect.Effect<ReadonlyArray<SessionIndex.Entry>, Journal.JournalError>
}

/**
 * A journal over the current `SqlClient` (its tables made) and
 * `WorkflowEngine`. Sessions it holds are let go when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly location: string
  /**
   * `workflow` (default): each turn is a workflow of its own. `inline`: the
   * turns run inside the workflow that runs the loop (a runner's prompt, see
   * `Runner`), their activities named by turn (`3/toolu_…`).
   */
  readonly turns?: "workflow" | "inline" | undefined
}): Effect.Effect<
  DurableJournal,
  never,
  SqlClient.SqlClient | WorkflowEngine.WorkflowEngine | Scope.Scope
> =>
  Effect.gen(function*() {
    const sqlContext = yield* Effect.context<SqlClient.SqlClient | WorkflowEngine.WorkflowEngine>()
    const onStore = <A, E>(what: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      Effect.mapError(Effect.provide(effect, sqlContext), Recovery.journalError(what, options.location))
    /** The bodies of the turns being run in this process, by execution id. */
    const bodies = new Map<
      string,
      Effect.Effect<ReadonlyArray<Messages.Message>, never, WorkflowEngine.WorkflowInstance>
    >()

    const engine = yield* WorkflowEngine.WorkflowEngine
    const inline = options.turns === "inline"
    if (!inline) {
      yield* engine.register(TurnWorkflow, (_payload, executionId) => {
        const body = bodies.get(executionId)
        // An execution this process did not start has no body here: it waits for its own.
        return body ?? Effect.flatMap(WorkflowEngine.WorkflowInstance, Workflow.suspend)
      })
    }
    const steps: Live.Steps = { location: options.location, engine, onStore }

    /** The key of a turn's markers. */
    const markerKey = (sessionId: string, seq: number) =>
      inline
        ? Effect.map(
          Effect.serviceOption(WorkflowEngine.WorkflowInstance),
          (outer) => `${Option.match(outer, { onNone: () => sessionId, onSome: (o) => o.executionId })}/${seq}`
        )
        : TurnWorkflow.executionId({ sessionId, seq })

    /** The messages of a turn whose workflow ended (none while it has not; inline turns have none). */
    const finishedOutput = (sessionId: string, seq: number) =>
      Effect.gen(function*() {
        if (inline) return Option.none<ReadonlyArray<Messages.Message>>()
        const executionId = yield* TurnWorkflow.executionId({ sessionId, seq })
        const result = yield* TurnWorkflow.poll(executionId).pipe(Effect.provide(sqlContext))
        return result !== undefined && result._tag === "Complete" && result.exit._tag === "Success"
          ? Option.some(result.exit.value)
          : Option.none()
      })

    const { claimed, finishTurn, release, stateOf } = yield* Sessions.make({
      location: options.location,
      onStore,
      finishedOutput
    })

    /** A turn inside the workflow that runs the loop: its activities are that workflow's. */
    const inlineTurn = <A, E, R>(
      step: Journal.TurnStep,
      run: Effect.Effect<A, E, R>,
      sessionId: string,
      state: Sessions.SessionState,
      seq: number,
      resumed: boolean
    ) =>
      Effect.gen(function*() {
        const outer = yield* Effect.serviceOption(WorkflowEngine.WorkflowInstance)
        if (Option.isNone(outer)) {
          return yield* Effect.fail(
            new Journal.JournalError({
              message: "A journal with inline turns runs inside a workflow",
              path: options.location
            })
          )
        }
        const executionId = `${outer.value.executionId}/${seq}`
        const markers = resumed ? yield* onStore("read a turn's calls", Store.markers(executionId)) : new Map()
        const live: Live.LiveTurn = {
          executionId,
          activity: (name) => `${seq}/${name}`,
          instance: outer.value,
          markers,
          previousSeenAt: state.previousSeenAt,
          ordinal: Math.max(0, ...[...markers.values()].map((m) => m.ordinal)),
          failure: undefined
        }
        const exit = yield* run.pipe(Effect.provideService(Live.CurrentTurn, live), Effect.exit)
        const after = yield* Ref.get(step.context)
        yield* finishTurn(sessionId, state, seq, after.messages.slice(state.recorded))
        if (live.failure !== undefined) return yield* Effect.fail(live.failure)
        return yield* exit
      })

    const turn: Journal.Journal["turn"] = <A, E, R>(step: Journal.TurnStep, run: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const { ctx, state } = yield* stateOf(step.context)
        const sessionId = ctx.sessionId
        const now = yield* Clock.currentTimeMillis
        let seq: number
        const resumed = state.open !== undefined
        if (state.open !== undefined) {
          // The turn the process stopped in: executed again, it replays what it recorded.
          seq = state.open
        } else {
          seq = state.seq + 1
          const reset = ctx.messages.length < state.recorded
          const input = reset ? ctx.messages : ctx.messages.slice(state.recorded)
          yield* onStore(
            "record the start of a turn",
            Store.beginTurn({
              sessionId,
              cwd: ctx.cwd,
              title: Sessions.titleOf(ctx.messages),
              seq,
              reset,
              input: encodeMessages(input),
              now
            })
          )
          state.seq = seq
          state.open = seq
          state.recorded = ctx.messages.length
        }
        if (inline) return yield* inlineTurn(step, run, sessionId, state, seq, resumed)
        const executionId = yield* TurnWorkflow.executionId({ sessionId, seq })
        // A turn begun here has no calls yet; one finished from an earlier run has what it left.
        const markers = resumed ? yield* onStore("read a turn's calls", Store.markers(executionId)) : new Map()
        const context = yield* Effect.context<R>()
        let live: Live.LiveTurn | undefined
        let exit: Exit.Exit<A, E> | undefined
        bodies.set(
          executionId,
          Effect.flatMap(WorkflowEngine.WorkflowInstance, (instance) => {
            live = {
              executionId,
              activity: (name) => name,
              instance,
              markers,
              previousSeenAt: state.previousSeenAt,
              ordinal: Math.max(0, ...[...markers.values()].map((m) => m.ordinal)),
              failure: undefined
            }
            return run.pipe(
              Effect.provide(context),
              Effect.provideService(Live.CurrentTurn, live),
              Effect.exit,
              Effect.flatMap((e) => {
                exit = e
                return Effect.map(Ref.get(step.context), (after) => after.messages.slice(state.recorded))
              })
            ) as Effect.Effect<ReadonlyArray<Messages.Message>, never, WorkflowEngine.WorkflowInstance>
          })
        )
        // The engine directly: `TurnWorkflow.execute` would hash the execution id again.
        const payload = TurnWorkflow.payloadSchema.make({ sessionId, seq })
        const output = yield* engine.execute(TurnWorkflow, { executionId, payload }).pipe(
          Effect.provide(sqlContext),
          Effect.ensuring(Effect.sync(() => bodies.delete(executionId)))
        )
        if (exit === undefined) {
          return yield* Effect.fail(
            new Journal.JournalError({
              message: `The turn ${seq} of ${sessionId} was recorded as finished already`,
              path: options.location
            })
          )
        }
        yield* finishTurn(sessionId, state, seq, output)
        const failure = (live as Live.LiveTurn | undefined)?.failure
        if (failure !== undefined) return yield* Effect.fail(failure)
        return yield* exit
      })

    const unfinished: Journal.Journal["unfinished"] = (context) =>
      Effect.gen(function*() {
        const { ctx, state } = yield* stateOf(context)
        if (state.open === undefined) return false
        const executionId = yield* markerKey(ctx.sessionId, state.open)
        const marks = yield* onStore("read a turn's calls", Store.markers(executionId))
        if (ModelStep.hasCalls(ModelStep.leftOver(marks))) return true
        // Nothing to finish (the response made no call before the process stopped): the turn
        // ends with what it has, and the next prompt follows its input.
        const now = yield* Clock.currentTimeMillis
        yield* onStore(
          "record the end of a turn",
          Store.endTurn({ sessionId: ctx.sessionId, seq: state.open, output: "[]", now })
        )
        state.open = undefined
        return false
      })

    const messages: DurableJournal["messages"] = (sessionId) =>
      Effect.gen(function*() {
        const rows = yield* onStore("read a session's turns", Store.turns(sessionId))
        if (rows.length === 0) return Option.none()
        let out: Array<Messages.Message> = []
        for (const row of rows) {
          const input = decodeMessages(row.input)
          const output = row.output === undefined ? undefined : decodeMessages(row.output)
          if (input._tag === "Left" || (output !== undefined && output._tag === "Left")) {
            return yield* Effect.fail(
              new Journal.JournalError({
                message: `The journal's turn ${row.seq} of ${sessionId} does not hold messages it can read`,
                path: options.location
              })
            )
          }
          if (row.reset) out = []
          out.push(...input.right)
          if (output !== undefined && output._tag === "Right") out.push(...output.right)
          else if (output === undefined) {
            out.push(...Option.getOrElse(yield* finishedOutput(sessionId, row.seq), () => []))
          }
        }
        return Option.some(out)
      })

    return {
      location: options.location,
      turn,
      model: ModelStep.make(steps),
      tool: ToolStep.make(steps),
      unfinished,
      claim: (sessionId, cwd) => Effect.asVoid(claimed(sessionId, cwd, "")),
      release,
      messages,
      sessions: (cwd) => Effect.provide(SessionIndex.list(cwd), sqlContext)
    }
  })
