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
import * as SqlClient from "@effect/sql/SqlClient"
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import type * as Execution from "@switchyard/core/Execution"
import type * as Interruption from "@switchyard/core/Interruption"
import * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import * as Model from "@switchyard/core/Model"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Owner from "./internal/owner.js"
import * as Recovery from "./internal/recovery.js"
import * as Store from "./internal/store.js"

/**
 * The turn workflow: one per turn of a session.
 *
 * @since 0.1.0
 * @category workflows
 */
export const TurnWorkflow = Workflow.make({
  name: "switchyard/Turn",
  payload: { sessionId: Schema.String, seq: Schema.Number },
  idempotencyKey: ({ seq, sessionId }) => `${sessionId}/${seq}`
})

/**
 * What a tool call's activity records: its `tool_result` and how it ended.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedCall = Schema.Struct({
  status: Schema.Literal("success", "error", "cancelled", "denied"),
  block: Messages.ToolResultBlock,
  startedAt: Schema.Number,
  endedAt: Schema.Number,
  abort: Schema.optional(Schema.String),
  stop: Schema.optional(Schema.String)
})

/**
 * What the model call's activity records: the response's blocks, complete or
 * as far as they had closed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedResponse = Schema.Struct({
  content: Schema.Array(Messages.ContentBlock),
  stopReason: Schema.NullOr(Schema.String),
  complete: Schema.Boolean,
  error: Schema.optional(Schema.Struct({ reason: Schema.String, message: Schema.String }))
})
type RecordedResponse = typeof RecordedResponse.Type

const encodeResponse = Schema.encodeSync(Schema.parseJson(RecordedResponse))
const decodeResponse = Schema.decodeUnknownOption(Schema.parseJson(RecordedResponse))
const Conversation = Schema.parseJson(Schema.Array(Messages.Message))
const encodeMessages = Schema.encodeSync(Conversation)
const decodeMessages = Schema.decodeUnknownEither(Conversation)

// `Activity.make` builds a fresh `Exit` schema per activity, and Effect compiles a decoder
// for each new one on first use (≈4 ms: it rebuilds the `Cause` schema). Activities of one
// kind share one exit schema, so its decoder is compiled once (bench/REPORT.md).
const sharedExit = <S extends Schema.Schema.Any>(success: S) =>
  Activity.make({ name: "exit-schema", success, execute: Effect.die("never run") }).exitSchema
const callExit = sharedExit(RecordedCall)
const responseExit = sharedExit(RecordedResponse)
const withExit = <A extends Activity.Any>(activity: A, exitSchema: unknown): A =>
  Object.assign(activity, { exitSchema })

/** The name of the model call's activity (the `tool_use` ids name the others). */
const MODEL = "model"

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
  /** The conversation the journal holds for a session (none when it has no turn of it). */
  readonly messages: (sessionId: string) => Effect.Effect<Option.Option<ReadonlyArray<Messages.Message>>, Journal.JournalError>
}

/** One session as this process journals it. */
interface SessionState {
  /** The last turn begun. */
  seq: number
  /** The messages the turns hold so far. */
  recorded: number
  /** A turn whose end is not recorded. */
  open: number | undefined
  /** When the process that held the session before was last seen (its heartbeat). */
  readonly previousSeenAt: number | undefined
}

/** The turn being run: its execution and what an earlier run of it left. */
interface LiveTurn {
  readonly executionId: string
  readonly instance: WorkflowEngine.WorkflowInstance["Type"]
  readonly markers: ReadonlyMap<string, Store.CallMarker>
  readonly previousSeenAt: number | undefined
  /** The first failure to record something; the turn fails with it at its end. */
  failure: Journal.JournalError | undefined
}

class CurrentTurn extends Context.Tag("@switchyard/durable/DurableJournal/CurrentTurn")<CurrentTurn, LiveTurn>() {}

const titleOf = (messages: ReadonlyArray<Messages.Message>): string => {
  for (const message of messages) {
    if (message.role !== "user") continue
    const text = Messages.blocks(message).flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ").trim()
    if (text !== "") return text.replace(/\s+/g, " ").slice(0, 200)
  }
  return ""
}

/** The events that replay a recorded response, as the loop reads a live one. */
const responseEvents = (response: RecordedResponse, turn: number): ReadonlyArray<Model.ModelStreamEvent> => {
  const events: Array<Model.ModelStreamEvent> = [
    { type: "message_start", message: { id: `msg_journal_${turn}`, role: "assistant", usage: {} } }
  ]
  response.content.forEach((block, index) => {
    switch (block.type) {
      case "text":
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: block.text } })
        break
      case "tool_use":
        events.push(
          { type: "content_block_start", index, content_block: { ...block, input: {} } },
          {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) }
          }
        )
        break
      case "thinking":
        events.push(
          { type: "content_block_start", index, content_block: { type: "thinking", thinking: block.thinking, signature: "" } },
          { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } }
        )
        break
      case "redacted_thinking":
        events.push({ type: "content_block_start", index, content_block: block })
        break
      default:
        return
    }
    events.push({ type: "content_block_stop", index })
  })
  if (!response.complete) {
    const error = response.error ?? {
      reason: "process_stopped",
      message: "The process stopped while this response was streaming; the blocks that had arrived are kept"
    }
    events.push({ type: "error", error: { type: error.reason, message: error.message } })
    return events
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: (response.stopReason ?? "end_turn") as Model.StopReason },
      usage: { output_tokens: 0 }
    },
    { type: "message_stop" }
  )
  return events
}

const hasToolUse = (content: ReadonlyArray<Messages.ContentBlock>): boolean => content.some((b) => b.type === "tool_use")

/**
 * A journal over the current `SqlClient` (its tables made) and
 * `WorkflowEngine`. Sessions it holds are let go when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly location: string }): Effect.Effect<
  DurableJournal,
  never,
  SqlClient.SqlClient | WorkflowEngine.WorkflowEngine | Scope.Scope
> =>
  Effect.gen(function*() {
    const sqlContext = yield* Effect.context<SqlClient.SqlClient | WorkflowEngine.WorkflowEngine>()
    const onStore = <A, E>(what: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      Effect.mapError(Effect.provide(effect, sqlContext), Recovery.journalError(what, options.location))
    const sessions = new Map<string, SessionState>()
    /** The bodies of the turns being run in this process, by execution id. */
    const bodies = new Map<string, Effect.Effect<void, never, WorkflowEngine.WorkflowInstance>>()

    const engine = yield* WorkflowEngine.WorkflowEngine
    yield* engine.register(TurnWorkflow, (_payload, executionId) => {
      const body = bodies.get(executionId)
      // An execution this process did not start has no body here: it waits for its own.
      return body ?? Effect.flatMap(WorkflowEngine.WorkflowInstance, Workflow.suspend)
    })
    /** What an activity needs: the engine, and the instance of the turn it belongs to. */
    const inTurn = <A, E, R>(live: LiveTurn, effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(WorkflowEngine.WorkflowInstance, live.instance),
        Effect.provideService(WorkflowEngine.WorkflowEngine, engine)
      ) as Effect.Effect<A, E, Exclude<R, WorkflowEngine.WorkflowInstance | WorkflowEngine.WorkflowEngine>>

    // The heartbeat of the sessions this process holds; they are let go when it ends.
    yield* Effect.gen(function*() {
      if (sessions.size === 0) return
      const now = yield* Clock.currentTimeMillis
      yield* Effect.ignore(onStore("record a heartbeat", Store.heartbeat(Owner.self, now)))
    }).pipe(Effect.repeat(Schedule.spaced(Owner.HEARTBEAT_MS)), Effect.forkScoped)
    yield* Effect.addFinalizer(() =>
      Effect.forEach(sessions.keys(), (id) => Effect.ignore(onStore("let a session go", Store.releaseSession(id, Owner.self))), {
        discard: true
      })
    )

    const claimed = (sessionId: string, cwd: string, title: string): Effect.Effect<SessionState, Journal.JournalError> =>
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
              owner: Owner.self,
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
          sessions.set(sessionId, state)
          return state
        })
      })

    const stateOf = (context: Ref.Ref<ToolUseContext.ToolUseContext>) =>
      Effect.flatMap(Ref.get(context), (ctx) =>
        Effect.map(claimed(ctx.sessionId, ctx.cwd, titleOf(ctx.messages)), (state) => ({ ctx, state })))

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
            Store.beginTurn({ sessionId, cwd: ctx.cwd, title: titleOf(ctx.messages), seq, reset, input: encodeMessages(input), now })
          )
          state.seq = seq
          state.open = seq
          state.recorded = ctx.messages.length
        }
        const executionId = yield* TurnWorkflow.executionId({ sessionId, seq })
        // A turn begun here has no calls yet; one finished from an earlier run has what it left.
        const markers = resumed ? yield* onStore("read a turn's calls", Store.markers(executionId)) : new Map()
        const context = yield* Effect.context<R>()
        let live: LiveTurn | undefined
        let exit: Exit.Exit<A, E> | undefined
        bodies.set(
          executionId,
          Effect.flatMap(WorkflowEngine.WorkflowInstance, (instance) => {
            live = { executionId, instance, markers, previousSeenAt: state.previousSeenAt, failure: undefined }
            return run.pipe(
              Effect.provide(context),
              Effect.provideService(CurrentTurn, live),
              Effect.exit,
              Effect.map((e) => void (exit = e))
            ) as Effect.Effect<void, never, WorkflowEngine.WorkflowInstance>
          })
        )
        yield* TurnWorkflow.execute({ sessionId, seq }).pipe(
          Effect.provide(sqlContext),
          Effect.ensuring(Effect.sync(() => bodies.delete(executionId)))
        )
        if (exit === undefined) {
          return yield* Effect.fail(
            new Journal.JournalError({ message: `The turn ${seq} of ${sessionId} was recorded as finished already`, path: options.location })
          )
        }
        const after = yield* Ref.get(step.context)
        const output = after.messages.slice(state.recorded)
        const ended = yield* Clock.currentTimeMillis
        yield* onStore("record the end of a turn", Store.endTurn({ sessionId, seq, output: encodeMessages(output), now: ended }))
        state.recorded = after.messages.length
        state.open = undefined
        const failure = (live as LiveTurn | undefined)?.failure
        if (failure !== undefined) return yield* Effect.fail(failure)
        return yield* exit
      })

    const failed = (live: LiveTurn, error: Journal.JournalError) =>
      Effect.sync(() => {
        live.failure ??= error
      })

    const model: Journal.Journal["model"] = <E, R>(
      step: Journal.ModelStep,
      stream: Stream.Stream<Model.ModelStreamEvent, E, R>
    ) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const current = yield* Effect.serviceOption(CurrentTurn)
        if (Option.isNone(current)) return stream
        const live = current.value
        const out = yield* Mailbox.make<Model.ModelStreamEvent, E | Model.ModelError>({ capacity: 64, strategy: "suspend" })
        let ranHere = false
        const runLive = Effect.gen(function*() {
          const closed = new Map<number, Messages.ContentBlock>()
          const open = new Map<number, { start: Model.ModelStreamEvent & { type: "content_block_start" }; text: string; json: string; signature: string }>()
          let stopReason: string | null = null
          const content = () => [...closed.entries()].sort(([a], [b]) => a - b).map(([, b]) => b)
          const snapshot = (complete: boolean, error?: { reason: string; message: string }): RecordedResponse => ({
            content: content(),
            stopReason,
            complete,
            ...(error === undefined ? {} : { error })
          })
          const record = (response: RecordedResponse) =>
            onStore("record a response", Store.progress(live.executionId, MODEL, encodeResponse(response))).pipe(
              Effect.catchAll((error) => failed(live, error))
            )
          const track = (event: Model.ModelStreamEvent): Effect.Effect<void> => {
            switch (event.type) {
              case "content_block_start":
                open.set(event.index, { start: event, text: "", json: "", signature: "" })
                return Effect.void
              case "content_block_delta": {
                const block = open.get(event.index)
                if (block === undefined) return Effect.void
                const delta = event.delta
                if (delta.type === "text_delta") block.text += delta.text
                else if (delta.type === "thinking_delta") block.text += delta.thinking
                else if (delta.type === "signature_delta") block.signature += delta.signature
                else if (delta.type === "input_json_delta") block.json += delta.partial_json
                return Effect.void
              }
              case "content_block_stop": {
                const block = open.get(event.index)
                if (block === undefined) return Effect.void
                open.delete(event.index)
                const start = block.start.content_block
                if (start.type === "text") closed.set(event.index, Messages.text(start.text + block.text))
                else if (start.type === "thinking") {
                  closed.set(event.index, { type: "thinking", thinking: start.thinking + block.text, signature: start.signature + block.signature })
                } else if (start.type === "redacted_thinking") closed.set(event.index, start)
                else {
                  let input: unknown = {}
                  try {
                    input = block.json.trim() === "" ? {} : JSON.parse(block.json)
                  } catch {
                    // The loop answers a malformed input itself; the block is kept as sent.
                    input = {}
                  }
                  closed.set(event.index, Messages.toolUse(start.id, start.name, input))
                  // Its tool starts now: from here a crash leaves a call that may have run.
                  return record(snapshot(false))
                }
                return Effect.void
              }
              case "message_delta":
                if (event.delta.stop_reason != null) stopReason = event.delta.stop_reason
                return Effect.void
              default:
                return Effect.void
            }
          }
          const streamed = yield* stream.pipe(
            Stream.runForEach((event) => Effect.zipRight(track(event), out.offer(event))),
            Effect.either
          )
          if (streamed._tag === "Left") {
            const error = streamed.left
            const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
            const reason = typeof error === "object" && error !== null && "reason" in error ? String(error.reason) : "error"
            const response = snapshot(false, { reason, message })
            yield* record(response)
            yield* out.fail(error)
            return response
          }
          const response = snapshot(true)
          yield* record(response)
          return response
        })
        const activity = withExit(
          Activity.make({
            name: MODEL,
            success: RecordedResponse,
            execute: Effect.gen(function*() {
              const previous = live.markers.get(MODEL)
              const partial = previous?.progress === undefined ? Option.none() : decodeResponse(previous.progress)
              // Cut off mid-stream after it had made calls: finished as it was, the model not asked again.
              if (Option.isSome(partial) && hasToolUse(partial.value.content)) return partial.value
              ranHere = true
              const now = yield* Clock.currentTimeMillis
              yield* onStore("record the start of a response", Store.mark(live.executionId, MODEL, "running", now)).pipe(
                Effect.catchAll((error) => failed(live, error))
              )
              return yield* runLive
            })
          }),
          responseExit
        )
        yield* Effect.exit(inTurn(live, activity)).pipe(
          Effect.flatMap((exit) => {
            if (Exit.isSuccess(exit)) {
              if (ranHere) return out.end
              return out.offerAll(responseEvents(exit.value, step.turn)).pipe(Effect.zipRight(out.end))
            }
            if (Exit.isInterrupted(exit)) return out.failCause(exit.cause)
            // The response could not be recorded: it ends here, and the turn ends with why.
            return Effect.zipRight(
              failed(live, Recovery.journalError("record a response", options.location)(Cause.squash(exit.cause))),
              out.end
            )
          }),
          Effect.forkScoped
        )
        return Mailbox.toStream(out)
      }))

    const tool: Journal.Journal["tool"] = (step, emit, run) =>
      Effect.gen(function*() {
        const current = yield* Effect.serviceOption(CurrentTurn)
        if (Option.isNone(current)) return yield* run(emit)
        const live = current.value
        const block = step.block
        let outcome: Execution.Outcome | undefined
        const publish = (status: DispatchEvent.ResultStatus, content: Messages.ToolResultContent, startedAt: number) =>
          Effect.gen(function*() {
            const endedAt = yield* Clock.currentTimeMillis
            const result = DispatchEvent.Result({
              toolUseId: block.id,
              name: block.name,
              status,
              block: Messages.toolResult(block.id, content, status !== "success"),
              startedAt,
              endedAt
            })
            yield* emit(DispatchEvent.Started({ toolUseId: block.id, name: block.name, input: block.input, at: startedAt }))
            yield* emit(result)
            return { result, modifiers: [], tool: step.tool, abort: undefined, stop: undefined } satisfies Execution.Outcome
          })
        const recordOf = (o: Execution.Outcome): typeof RecordedCall.Type => ({
          status: o.result.status,
          block: o.result.block,
          startedAt: o.result.startedAt,
          endedAt: o.result.endedAt,
          ...(o.abort === undefined ? {} : { abort: o.abort }),
          ...(o.stop === undefined ? {} : { stop: o.stop })
        })
        // While a permission question is open nothing has run: a crash then leaves a call to ask again.
        let asking = false
        const observed: Execution.Emit = Object.assign(
          (event: DispatchEvent.DispatchEvent) =>
            event._tag === "PermissionRequested"
              ? Effect.zipRight(setState("asking"), emit(event))
              : event._tag === "PermissionDecided" && asking
              ? Effect.zipRight(setState("running"), emit(event))
              : emit(event),
          {
            unsafeOffer: (event: DispatchEvent.DispatchEvent) =>
              event._tag === "PermissionRequested" || (event._tag === "PermissionDecided" && asking)
                ? false
                : emit.unsafeOffer === undefined ? false : emit.unsafeOffer(event)
          }
        )
        let markedAt = 0
        function setState(state: "asking" | "running") {
          asking = state === "asking"
          return onStore("record a call's state", Store.mark(live.executionId, block.id, state, markedAt)).pipe(
            Effect.catchAll((error) => failed(live, error))
          )
        }
        const body = Effect.gen(function*() {
          const previous = live.markers.get(block.id)
          const startedAt = yield* Clock.currentTimeMillis
          if (previous !== undefined && previous.state === "running") {
            const context = yield* Ref.get(step.context)
            const decision = yield* Recovery.decide(block, step.tool, context, previous.startedAt, live.previousSeenAt)
            if (decision._tag === "Unknown") {
              outcome = yield* publish("error", decision.text, startedAt)
              return recordOf(outcome)
            }
          }
          markedAt = startedAt
          const marked = yield* Effect.either(onStore("record the start of a call", Store.mark(live.executionId, block.id, "running", startedAt)))
          if (marked._tag === "Left") {
            yield* failed(live, marked.left)
            // Not recorded as started, so not started: a crash now must not leave an unknown effect.
            outcome = yield* publish("error", `Error: ${marked.left.message}; the call was not run.`, startedAt)
            return recordOf(outcome)
          }
          const key = yield* inTurn(live, Activity.idempotencyKey(block.id))
          outcome = yield* run(observed).pipe(Effect.provideService(Journal.IdempotencyKey, Option.some(key)))
          return recordOf(outcome)
        })
        const activity = withExit(Activity.make({ name: block.id, success: RecordedCall, execute: body }), callExit)
        const exit = yield* Effect.exit(inTurn(live, activity))
        if (Exit.isSuccess(exit)) {
          if (outcome !== undefined) return outcome
          // Completed in an earlier run: its result is replayed, nothing runs.
          const recorded = exit.value
          const result = DispatchEvent.Result({
            toolUseId: block.id,
            name: block.name,
            status: recorded.status,
            block: recorded.block,
            startedAt: recorded.startedAt,
            endedAt: recorded.endedAt
          })
          yield* emit(DispatchEvent.Started({ toolUseId: block.id, name: block.name, input: block.input, at: recorded.startedAt }))
          yield* emit(result)
          return {
            result,
            modifiers: [],
            tool: step.tool,
            abort: recorded.abort as Interruption.InterruptReason | undefined,
            stop: recorded.stop
          } satisfies Execution.Outcome
        }
        // Interrupted: the runner answers the call. A failure to record: the call's own outcome
        // stands (or an error says it was not run), and the turn ends with the failure.
        if (Exit.isInterrupted(exit)) return yield* Effect.failCause(exit.cause)
        const error = Recovery.journalError("record a call", options.location)(Cause.squash(exit.cause))
        yield* failed(live, error)
        if (outcome !== undefined) return outcome
        return yield* publish("error", `Error: ${error.message}; the call was not run.`, yield* Clock.currentTimeMillis)
      })

    const unfinished: Journal.Journal["unfinished"] = (context) =>
      Effect.gen(function*() {
        const { ctx, state } = yield* stateOf(context)
        if (state.open === undefined) return false
        const executionId = yield* TurnWorkflow.executionId({ sessionId: ctx.sessionId, seq: state.open })
        const marks = yield* onStore("read a turn's calls", Store.markers(executionId))
        const response = Option.flatMap(Option.fromNullable(marks.get(MODEL)?.progress), decodeResponse)
        if (Option.isSome(response) && hasToolUse(response.value.content)) return true
        // Nothing to finish (the response made no call before the process stopped): the turn
        // ends with what it has, and the next prompt follows its input.
        const now = yield* Clock.currentTimeMillis
        yield* onStore("record the end of a turn", Store.endTurn({ sessionId: ctx.sessionId, seq: state.open, output: "[]", now }))
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
        }
        return Option.some(out)
      })

    return {
      location: options.location,
      turn,
      model,
      tool,
      unfinished,
      claim: (sessionId, cwd) => Effect.asVoid(claimed(sessionId, cwd, "")),
      messages
    }
  })
