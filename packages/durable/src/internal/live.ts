/**
 * The turn being run, as the journal's steps see it: the workflow execution
 * it is, what an earlier run of it left, and how the steps reach the store.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import type * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Store from "./store.js"

/** What the steps share: the store, the engine, where the journal is. */
export interface Steps {
  readonly location: string
  readonly engine: WorkflowEngine.WorkflowEngine["Type"]
  readonly onStore: <A, E>(
    what: string,
    effect: Effect.Effect<A, E, SqlClient.SqlClient>
  ) => Effect.Effect<A, Journal.JournalError>
}

/** One run of a turn's workflow in this process. */
export interface LiveTurn {
  /** The key of the turn's markers (its workflow execution, or the workflow's own and the turn). */
  readonly executionId: string
  /** The name of a call's activity: its own (a turn's workflow), or prefixed by the turn (inside another workflow). */
  readonly activity: (name: string) => string
  readonly instance: WorkflowEngine.WorkflowInstance["Type"]
  /** The calls an earlier run of this turn started (none for a turn begun here). */
  readonly markers: ReadonlyMap<string, Store.CallMarker>
  /** When the process that ran it before was last seen. */
  readonly previousSeenAt: number | undefined
  /** The order the next call starts in. */
  ordinal: number
  /** The first failure to record something; the turn fails with it at its end. */
  failure: Journal.JournalError | undefined
}

/** The turn the current fiber belongs to. */
export class CurrentTurn
  extends Context.Tag("@switchyard/durable/internal/live/CurrentTurn")<CurrentTurn, LiveTurn>()
{}

/** Remember the first failure to record; the turn ends with it. */
export const failed = (live: LiveTurn, error: Journal.JournalError): Effect.Effect<void> =>
  Effect.sync(() => {
    live.failure ??= error
  })

/** An effect of the turn's workflow: with its engine and instance. */
export const inTurn = <A, E, R>(steps: Steps, live: LiveTurn, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(WorkflowEngine.WorkflowInstance, live.instance),
    Effect.provideService(WorkflowEngine.WorkflowEngine, steps.engine)
  ) as Effect.Effect<A, E, Exclude<R, WorkflowEngine.WorkflowInstance | WorkflowEngine.WorkflowEngine>>

const encodeBlock = Schema.encodeSync(Schema.parseJson(Messages.ToolUseBlock))
const decodeBlock = Schema.decodeUnknownOption(Schema.parseJson(Messages.ToolUseBlock))

/** A tool call's block, as its marker holds it. */
export const blockText = (block: Messages.ToolUseBlock): string => encodeBlock(block)

/** The `tool_use` blocks of the calls an earlier run started, in the order they started. */
export const startedBlocks = (markers: ReadonlyMap<string, Store.CallMarker>): ReadonlyArray<Messages.ToolUseBlock> =>
  [...markers.values()]
    .filter((m) => m.ordinal > 0 && m.progress !== undefined)
    .sort((a, b) => a.ordinal - b.ordinal)
    .flatMap((m) => {
      const block = decodeBlock(m.progress)
      return block._tag === "Some" ? [block.value] : []
    })
