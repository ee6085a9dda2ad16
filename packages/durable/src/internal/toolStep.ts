/**
 * A tool call as an activity named by its `tool_use_id` (SPEC §4.14). Its
 * marker is written before the pipeline runs; its result is the call's
 * `tool_result`. Run again after a crash, a completed call replays its result
 * (nothing runs: no hook, question or tool), and a call found in flight runs
 * again or is answered "effect unknown" (`Recovery.decide`).
 *
 * @internal
 */
import * as Activity from "@effect/workflow/Activity"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import type * as Execution from "@switchyard/core/Execution"
import type * as Interruption from "@switchyard/core/Interruption"
import * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Activities from "./activity.js"
import * as Live from "./live.js"
import * as Recovery from "./recovery.js"
import * as Store from "./store.js"

/** What a tool call's activity records: its `tool_result` and how it ended. */
export const RecordedCall = Schema.Struct({
  status: Schema.Literal("success", "error", "cancelled", "denied"),
  block: Messages.ToolResultBlock,
  startedAt: Schema.Number,
  endedAt: Schema.Number,
  abort: Schema.optional(Schema.String),
  stop: Schema.optional(Schema.String)
})
type RecordedCall = typeof RecordedCall.Type

const callKind = Activities.kind(RecordedCall)

const recordOf = (outcome: Execution.Outcome): RecordedCall => ({
  status: outcome.result.status,
  block: outcome.result.block,
  startedAt: outcome.result.startedAt,
  endedAt: outcome.result.endedAt,
  ...(outcome.abort === undefined ? {} : { abort: outcome.abort }),
  ...(outcome.stop === undefined ? {} : { stop: outcome.stop })
})

/** The `tool` step of the journal. */
export const make = (steps: Live.Steps): Journal.Journal["tool"] => (step, emit, run) =>
  Effect.gen(function*() {
    const current = yield* Effect.serviceOption(Live.CurrentTurn)
    if (Option.isNone(current)) return yield* run(emit)
    const live = current.value
    const block = step.block
    let outcome: Execution.Outcome | undefined

    /** Answer the call without running it: `Started`, then the result. */
    const answer = (recorded: RecordedCall) =>
      Effect.gen(function*() {
        const result = DispatchEvent.Result({
          toolUseId: block.id,
          name: block.name,
          status: recorded.status,
          block: recorded.block,
          startedAt: recorded.startedAt,
          endedAt: recorded.endedAt
        })
        yield* emit(
          DispatchEvent.Started({ toolUseId: block.id, name: block.name, input: block.input, at: recorded.startedAt })
        )
        yield* emit(result)
        return {
          result,
          modifiers: [],
          tool: step.tool,
          abort: recorded.abort as Interruption.InterruptReason | undefined,
          stop: recorded.stop
        } satisfies Execution.Outcome
      })
    const errorAnswer = (text: string, startedAt: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (endedAt) =>
        answer({ status: "error", block: Messages.toolResult(block.id, text, true), startedAt, endedAt }))

    // While a permission question is open nothing has run: a crash then leaves a call to ask again.
    let asking = false
    let ordinal = 0
    let startedAt = 0
    const setState = (state: "asking" | "running") => {
      asking = state === "asking"
      return steps.onStore(
        "record a call's state",
        Store.mark({ executionId: live.executionId, name: block.id, state, ordinal, startedAt, progress: null })
      ).pipe(Effect.catchAll((error) =>
        Live.failed(live, error)
      ))
    }
    const needsWrite = (event: DispatchEvent.DispatchEvent) =>
      event._tag === "PermissionRequested" || (event._tag === "PermissionDecided" && asking)
    const observed: Execution.Emit = Object.assign(
      (event: DispatchEvent.DispatchEvent) =>
        needsWrite(event)
          ? Effect.zipRight(setState(event._tag === "PermissionRequested" ? "asking" : "running"), emit(event))
          : emit(event),
      {
        unsafeOffer: (event: DispatchEvent.DispatchEvent) =>
          needsWrite(event) || emit.unsafeOffer === undefined ? false : emit.unsafeOffer(event)
      }
    )

    const body = Effect.gen(function*() {
      startedAt = yield* Clock.currentTimeMillis
      const previous = live.markers.get(block.id)
      if (previous !== undefined && previous.state === "running") {
        const context = yield* Ref.get(step.context)
        const decision = yield* Recovery.decide(block, step.tool, context, previous.startedAt, live.previousSeenAt)
        if (decision._tag === "Unknown") {
          outcome = yield* errorAnswer(decision.text, startedAt)
          return recordOf(outcome)
        }
      }
      ordinal = ++live.ordinal
      const marked = yield* Effect.either(steps.onStore(
        "record the start of a call",
        Store.mark({
          executionId: live.executionId,
          name: block.id,
          state: "running",
          ordinal,
          startedAt,
          progress: Live.blockText(block)
        })
      ))
      if (marked._tag === "Left") {
        yield* Live.failed(live, marked.left)
        // Not recorded as started, so not started: a crash now leaves no unknown effect.
        outcome = yield* errorAnswer(`Error: ${marked.left.message}; the call was not run.`, startedAt)
        return recordOf(outcome)
      }
      const key = Live.inTurn(steps, live, Activity.idempotencyKey(live.activity(block.id)))
      outcome = yield* run(observed).pipe(Effect.provideService(Journal.IdempotencyKey, Option.some(key)))
      return recordOf(outcome)
    })

    const exit = yield* Effect.exit(
      Live.inTurn(
        steps,
        live,
        Activities.execute<RecordedCall>(Activities.make(callKind, live.activity(block.id), body))
      )
    )
    if (Exit.isSuccess(exit)) {
      // Ran here, or completed in an earlier run: then its result is replayed, nothing runs.
      return outcome ?? (yield* answer(exit.value))
    }
    // Interrupted: the runner answers the call, and nothing is recorded (a later run finds it
    // in flight). A failure to record: the call's own outcome stands, or an error says it did
    // not run; the turn ends with the failure.
    if (Exit.isInterrupted(exit)) return yield* Effect.failCause(exit.cause)
    const error = Recovery.journalError("record a call", steps.location)(Cause.squash(exit.cause))
    yield* Live.failed(live, error)
    if (outcome !== undefined) return outcome
    return yield* errorAnswer(`Error: ${error.message}; the call was not run.`, yield* Clock.currentTimeMillis)
  })
