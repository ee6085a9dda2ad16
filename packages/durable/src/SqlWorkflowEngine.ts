/**
 * A durable `WorkflowEngine` (`@effect/workflow`) on the journal's SQL tables,
 * for one process running its own workflows: `execute` runs the workflow in
 * the caller's fiber, each activity runs in place too, and what completed is
 * stored, so a workflow executed again (after a crash) gets every completed
 * activity's recorded result instead of running it.
 *
 * It is the embedded journal's engine. `ClusterWorkflowEngine` with
 * `SingleRunner` does the same over the cluster's message storage, but sends
 * each activity through the sharding as a persisted request and reply — about
 * 10 ms of CPU per activity on this stack even on the fastest SQLite client,
 * where the budget is 2 ms (bench/REPORT.md). Runners (`Runner`) keep using
 * the cluster engine: sharding and taking over a dead runner's workflows are
 * what it is for.
 *
 * Running in place also keeps Effect's interruption: interrupting the caller
 * interrupts the activity (the cluster engine runs an activity on the
 * entity's fiber, uninterruptibly). An interrupted activity stores nothing.
 *
 * Durable clocks sleep in this process only: a workflow waiting on one when
 * the process stops waits again, in full, when it is executed again.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Journal from "@switchyard/core/Journal"

const ExitUnknown = Schema.Exit({ success: Schema.Unknown, failure: Schema.Unknown, defect: Schema.Defect })
const encodeExit = Schema.encodeSync(Schema.parseJson(ExitUnknown))
const decodeExit = Schema.decodeSync(Schema.parseJson(ExitUnknown))

/** A store failure is a defect of the engine: its interface has no error channel. */
const orDieJournal = <A, R>(what: string) => (effect: Effect.Effect<A, unknown, R>): Effect.Effect<A, never, R> =>
  Effect.orDieWith(effect, (cause) =>
    new Journal.JournalError({
      message: `The journal could not ${what}: ${cause instanceof Error ? cause.message : String(cause)}`
    }))

interface Registered {
  readonly workflow: Workflow.Any
  readonly execute: (
    payload: object,
    executionId: string
  ) => Effect.Effect<unknown, unknown, WorkflowEngine.WorkflowInstance | WorkflowEngine.WorkflowEngine>
  /** `Workflow.Result` of this workflow, to and from JSON. */
  readonly encodeResult: (result: Workflow.Result<unknown, unknown>) => string
  readonly decodeResult: (text: string) => Workflow.Result<unknown, unknown>
  readonly encodePayload: (payload: object) => string
}

/**
 * The engine over the current `SqlClient` (its tables are created by the
 * journal's migration).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  WorkflowEngine.WorkflowEngine["Type"],
  never,
  SqlClient.SqlClient | Scope.Scope
> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workflows = new Map<string, Registered>()
    /** Each execution's stored activity results (`name/attempt` → exit JSON), loaded when it starts. */
    const activityResults = new Map<string, Map<string, string>>()
    const running = new Map<string, {
      readonly instance: WorkflowEngine.WorkflowInstance["Type"]
      readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
    }>()
    const clocks = yield* FiberMap.make<string>()

    const storedResult = (executionId: string) =>
      sql<{ readonly result: string | null }>`
        SELECT result FROM switchyard_workflows WHERE execution_id = ${executionId}
      `
        .pipe(orDieJournal("read a workflow"))

    const loadActivities = (executionId: string) =>
      sql<{ readonly name: string; readonly attempt: unknown; readonly result: string }>`
        SELECT name, attempt, result FROM switchyard_activities WHERE execution_id = ${executionId}
      `.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [`${row.name}/${Number(row.attempt)}`, row.result]))),
        orDieJournal("read a workflow's activities")
      )

    const run = (registered: Registered, executionId: string, payload: object) =>
      Effect.gen(function*() {
        const instance = WorkflowEngine.WorkflowInstance.initial(registered.workflow, executionId)
        const result = yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const fiber = yield* registered.execute(payload, executionId).pipe(
              Workflow.intoResult,
              Effect.provideService(WorkflowEngine.WorkflowInstance, instance),
              Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
              Effect.fork
            )
            running.set(executionId, { instance, fiber })
            return yield* restore(Fiber.join(fiber)).pipe(
              Effect.onInterrupt(() => Fiber.interrupt(fiber)),
              Effect.ensuring(Effect.sync(() => {
                running.delete(executionId)
                activityResults.delete(executionId)
              }))
            )
          })
        )
        if (result._tag === "Complete") {
          const now = yield* Clock.currentTimeMillis
          yield* sql`
            UPDATE switchyard_workflows SET result = ${registered.encodeResult(result)}, updated_at = ${now}
            WHERE execution_id = ${executionId}
          `.pipe(orDieJournal("record a finished workflow"))
        }
        return result
      })

    const engine: WorkflowEngine.WorkflowEngine["Type"] = WorkflowEngine.makeUnsafe({
      register: (workflow, execute) =>
        Effect.sync(() => {
          const resultSchema = Schema.parseJson(
            Workflow.Result({ success: workflow.successSchema, error: workflow.errorSchema })
          ) as unknown as Schema.Schema<Workflow.Result<unknown, unknown>, string>
          workflows.set(workflow.name, {
            workflow,
            execute,
            encodeResult: Schema.encodeSync(resultSchema),
            decodeResult: Schema.decodeSync(resultSchema),
            encodePayload: Schema.encodeSync(
              Schema.parseJson(workflow.payloadSchema as unknown as Schema.Schema<object, unknown>)
            )
          })
        }),

      execute: (workflow, options) =>
        Effect.gen(function*() {
          const registered = workflows.get(workflow.name)
          if (registered === undefined) return yield* Effect.dieMessage(`Workflow ${workflow.name} is not registered`)
          const { executionId, payload } = options
          const rows = yield* storedResult(executionId)
          const stored = rows[0]
          if (stored !== undefined && stored.result !== null) {
            return (options.discard ? undefined : registered.decodeResult(stored.result)) as never
          }
          if (stored === undefined) {
            const now = yield* Clock.currentTimeMillis
            yield* sql`
              INSERT INTO switchyard_workflows (execution_id, workflow, payload, created_at, updated_at)
              VALUES (${executionId}, ${workflow.name}, ${registered.encodePayload(payload)}, ${now}, ${now})
            `.pipe(orDieJournal("record a workflow"))
            activityResults.set(executionId, new Map())
          } else {
            // Executed again (the process that ran it stopped): what its activities recorded is replayed.
            activityResults.set(executionId, yield* loadActivities(executionId))
          }
          const result = yield* run(registered, executionId, payload)
          return (options.discard ? undefined : result) as never
        }),

      poll: (workflow, executionId) =>
        Effect.gen(function*() {
          const registered = workflows.get(workflow.name)
          const stored = (yield* storedResult(executionId))[0]
          if (registered === undefined || stored === undefined || stored.result === null) return undefined
          return registered.decodeResult(stored.result)
        }),

      interrupt: (_workflow, executionId) =>
        Effect.suspend(() => {
          const live = running.get(executionId)
          if (live === undefined) return Effect.void
          live.instance.interrupted = true
          return Fiber.interrupt(live.fiber).pipe(Effect.asVoid)
        }),

      // Nothing waits here: an execution that suspended is run again by executing it.
      resume: () => Effect.void,

      activityExecute: (activity: Activity.Any, attempt: number) =>
        Effect.gen(function*() {
          const instance = yield* WorkflowEngine.WorkflowInstance
          const key = `${activity.name}/${attempt}`
          let results = activityResults.get(instance.executionId)
          if (results === undefined) {
            results = yield* loadActivities(instance.executionId)
            activityResults.set(instance.executionId, results)
          }
          const recorded = results.get(key)
          if (recorded !== undefined) return new Workflow.Complete({ exit: decodeExit(recorded) })
          // In place, in the workflow's instance. Interrupted from outside, it records nothing:
          // a later run of the workflow finds it not done.
          const exit = yield* Effect.exit(activity.executeEncoded as Effect.Effect<unknown, unknown>)
          if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
          const result = new Workflow.Complete({ exit })
          const text = encodeExit(exit)
          const now = yield* Clock.currentTimeMillis
          yield* sql`
            INSERT INTO switchyard_activities (execution_id, name, attempt, result, created_at)
            VALUES (${instance.executionId}, ${activity.name}, ${attempt}, ${text}, ${now})
          `.pipe(orDieJournal(`record the activity ${activity.name}`))
          results.set(key, text)
          return result
        }),

      deferredResult: (deferred) =>
        Effect.gen(function*() {
          const instance = yield* WorkflowEngine.WorkflowInstance
          const rows = yield* sql<{ readonly exit: string }>`
            SELECT exit FROM switchyard_deferreds
            WHERE execution_id = ${instance.executionId} AND name = ${deferred.name}
          `.pipe(orDieJournal("read a deferred result"))
          return rows[0] === undefined ? undefined : decodeExit(rows[0].exit)
        }),

      deferredDone: (options) =>
        sql`
          INSERT INTO switchyard_deferreds (execution_id, name, exit)
          VALUES (${options.executionId}, ${options.deferredName}, ${encodeExit(options.exit)})
          ON CONFLICT (execution_id, name) DO NOTHING
        `.pipe(Effect.asVoid, orDieJournal("record a deferred result")),

      scheduleClock: (workflow, options) =>
        engine.deferredDone(options.clock.deferred, {
          workflowName: workflow.name,
          executionId: options.executionId,
          deferredName: options.clock.deferred.name,
          exit: Exit.void
        }).pipe(
          Effect.delay(options.clock.duration),
          FiberMap.run(clocks, `${options.executionId}/${options.clock.name}`, { onlyIfMissing: true }),
          Effect.asVoid
        )
    })
    return engine
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<WorkflowEngine.WorkflowEngine, never, SqlClient.SqlClient> = Layer.scoped(
  WorkflowEngine.WorkflowEngine,
  make
)
