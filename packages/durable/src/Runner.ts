/**
 * Runners (SPEC §4.14): processes that execute the prompts clients submit,
 * on `@effect/cluster` — a socket runner per process (`@effect/platform-node`
 * cluster sockets, msgpack), the cluster's message and runner storage in the
 * journal's PostgreSQL database, `ClusterWorkflowEngine`. Each prompt is a
 * workflow (`PromptWorkflow`) keyed by its session and prompt id, so prompts
 * shard across the runners; when a runner dies, the cluster hands its shards
 * to the others, which execute its prompts again: each turn's calls are
 * activities of the prompt's workflow, so what completed is replayed and
 * what was in flight gets the journal's guarantee (`DurableJournal`).
 *
 * What a prompt does is the host's (`PromptHost`): the CLI runs the loop with
 * the built-in tools, the settings of the session's directory and Claude.
 *
 * @since 0.1.0
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Journal from "@switchyard/core/Journal"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableJournal from "./DurableJournal.js"
import * as JournalDatabase from "./JournalDatabase.js"

/**
 * A prompt for a session, as a client submits it. `options` are the host's
 * (the CLI's run options: model, permission rules, MCP servers, …).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Prompt = Schema.Struct({
  sessionId: Schema.String,
  /** Unique per prompt: the workflow's key with the session. */
  promptId: Schema.String,
  prompt: Schema.String,
  cwd: Schema.String,
  options: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Prompt extends Schema.Schema.Type<typeof Prompt> {}

/**
 * How a prompt ended.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Struct({
  stopReason: Schema.String,
  detail: Schema.optional(Schema.String),
  text: Schema.String,
  turns: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Outcome extends Schema.Schema.Type<typeof Outcome> {}

/**
 * The workflow of a submitted prompt.
 *
 * @since 0.1.0
 * @category workflows
 */
export const PromptWorkflow = Workflow.make({
  name: "switchyard/Prompt",
  payload: Prompt,
  success: Outcome,
  idempotencyKey: ({ promptId, sessionId }) => `${sessionId}/${promptId}`
})

/**
 * What runs a prompt on a runner: the loop of the session, with `journal`
 * (its turns inside the prompt's workflow). Executed again after a runner
 * died, it is given the same prompt; `journal.messages` then holds it
 * already, and the loop goes on from there.
 *
 * @since 0.1.0
 * @category services
 */
export class PromptHost extends Context.Tag("@switchyard/durable/Runner/PromptHost")<PromptHost, {
  readonly run: (
    prompt: Prompt,
    journal: DurableJournal.DurableJournal
  ) => Effect.Effect<Outcome, Journal.JournalError, WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>
}>() {}

/**
 * How a runner is reached and how quickly the others notice that it died.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly host: string
  readonly port: number
  /** How often runners check each other (default 5 s). */
  readonly healthCheckInterval?: Duration.DurationInput | undefined
}

const sharding = (options: Options | undefined): Partial<ShardingConfig.ShardingConfig["Type"]> => ({
  runnerAddress: options === undefined
    ? Option.none()
    : Option.some(RunnerAddress.make(options.host, options.port)),
  // Picked up quickly after a runner died, without polling the database all the time.
  entityMessagePollInterval: Duration.seconds(1),
  refreshAssignmentsInterval: Duration.seconds(1),
  runnerHealthCheckInterval: options?.healthCheckInterval ?? Duration.seconds(5),
  shardLockRefreshInterval: Duration.seconds(2),
  shardLockExpiration: Duration.seconds(10),
  entityMaxIdleTime: Duration.minutes(5)
})

const clusterStorage = Layer.mergeAll(Layer.orDie(SqlMessageStorage.layer), Layer.orDie(SqlRunnerStorage.layer))

/**
 * A runner: the cluster on the journal's database, serving its socket, with
 * the prompt workflow registered.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  location: JournalDatabase.Location,
  options: Options
): Layer.Layer<WorkflowEngine.WorkflowEngine, Journal.JournalError, PromptHost | FileSystem.FileSystem | Path.Path> => {
  const cluster = SocketRunner.layer.pipe(
    Layer.provide(
      RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(NodeClusterSocket.layerClientProtocol))
    ),
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provideMerge(clusterStorage),
    Layer.provide(ShardingConfig.layer(sharding(options))),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
  const engine = ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(cluster))
  const prompts = Layer.scopedDiscard(Effect.gen(function*() {
    const host = yield* PromptHost
    const journal = yield* DurableJournal.make({ location: JournalDatabase.describe(location), turns: "inline" })
    const engine = yield* WorkflowEngine.WorkflowEngine
    yield* engine.register(PromptWorkflow, (prompt) => Effect.orDie(host.run(prompt, journal)))
  }))
  return prompts.pipe(
    Layer.provideMerge(engine),
    Layer.provideMerge(JournalDatabase.layerClient(location)),
    Layer.mapError((error) =>
      error instanceof Journal.JournalError
        ? error
        : new Journal.JournalError({ message: `The runner could not start: ${String(error)}` })
    )
  ) as Layer.Layer<WorkflowEngine.WorkflowEngine, Journal.JournalError, PromptHost | FileSystem.FileSystem | Path.Path>
}

/**
 * A client of the runners: submits prompts, waits for them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  location: JournalDatabase.Location
): Layer.Layer<
  WorkflowEngine.WorkflowEngine | SqlClient.SqlClient,
  Journal.JournalError,
  FileSystem.FileSystem | Path.Path
> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SocketRunner.layerClientOnly),
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provideMerge(clusterStorage),
    Layer.provide(ShardingConfig.layer(sharding(undefined))),
    Layer.provide(RpcSerialization.layerMsgPack),
    Layer.provideMerge(JournalDatabase.layerClient(location))
  )

/**
 * Submit a prompt. With `wait`, its outcome once a runner has run it (on any
 * runner, after any runner died); else the workflow's execution id at once.
 *
 * @since 0.1.0
 * @category running
 */
export const submit = (
  prompt: Prompt,
  options: { readonly wait: boolean }
): Effect.Effect<Option.Option<Outcome>, never, WorkflowEngine.WorkflowEngine> =>
  options.wait
    ? Effect.asSome(PromptWorkflow.execute(prompt))
    : Effect.as(PromptWorkflow.execute(prompt, { discard: true }), Option.none())
