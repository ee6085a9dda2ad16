/**
 * Activities for the journal's hot path: the same `Activity.Any` that
 * `Activity.make` builds and the same execution (`engine.activityExecute`
 * inside `Workflow.wrapActivityResult`, a suspended result suspending the
 * workflow), without what `Activity.make` costs per activity.
 *
 * Measured here (1 000 calls in one turn, bench/REPORT.md): `Activity.make`
 * builds a fresh `Schema.ExitFromSelf` for every activity (≈1.9 ms each, with
 * its retry wrapper), and Effect compiles a decoder for every new exit schema
 * on first use (≈4 ms: it rebuilds the `Cause` schema). A tool call is one
 * activity, named by its `tool_use_id`, so every call paid both. Here the
 * schemas of a kind of activity are made once and shared.
 *
 * An activity interrupted from outside is not retried (the engine records
 * nothing for it, so a later run finds the call in flight).
 *
 * @internal
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The schemas shared by every activity of one kind. */
export interface Kind<A, I> {
  readonly success: Schema.Schema<A, I>
  readonly exitSchema: Activity.Activity<Schema.Schema<A, I>>["exitSchema"]
  readonly encode: (value: A) => Effect.Effect<I>
}

/** The shared schemas of activities that succeed with `success` and never fail. */
export const kind = <A, I>(success: Schema.Schema<A, I>): Kind<A, I> => {
  const encode = Schema.encode(success)
  return {
    success,
    exitSchema: Schema.ExitFromSelf({ success, failure: Schema.Never, defect: Schema.Defect }) as never,
    encode: (value) => Effect.orDie(encode(value))
  }
}

/** An activity of a kind. */
export const make = <A, I, R>(
  kind: Kind<A, I>,
  name: string,
  execute: Effect.Effect<A, never, R>
): Activity.Any =>
  ({
    [Activity.TypeId]: Activity.TypeId,
    name,
    successSchema: kind.success,
    errorSchema: Schema.Never,
    exitSchema: kind.exitSchema,
    execute,
    executeEncoded: Effect.flatMap(execute, kind.encode)
  }) as unknown as Activity.Any

/** Run an activity in the current workflow: its recorded result, or its effect (then recorded). */
export const execute = <A>(
  activity: Activity.Any
): Effect.Effect<A, never, WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance> =>
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    const instance = yield* WorkflowEngine.WorkflowInstance
    const attempt = yield* Activity.CurrentAttempt
    const result = yield* Workflow.wrapActivityResult(
      engine.activityExecute(activity as Activity.Activity<Schema.Schema<A>>, attempt),
      (r) => r._tag === "Suspended"
    )
    if (result._tag === "Suspended") return yield* Workflow.suspend(instance)
    return yield* (result.exit as Effect.Effect<A>)
  })
