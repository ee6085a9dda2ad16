/**
 * Durable steps (SPEC §4.14): the port through which the query loop runs a
 * turn, the turn's model call and each tool call "as a durable step". The
 * default, `none`, runs everything as it is, so nothing changes for an
 * embedder who does not pass a journal; `@switchyard/durable` implements it
 * on `@effect/workflow` (a turn is a workflow, the model call and each tool
 * call an activity), so that after a crash:
 *
 * - a completed call is never run again: its recorded result is replayed;
 * - a read-only call that was in flight runs again;
 * - any other call that was in flight is answered "the process stopped while
 *   this ran; its effect is unknown" (with the command and how long it had
 *   run), unless the tool is idempotent (`isIdempotent`, MCP's
 *   `idempotentHint`), which then runs again with the same idempotency key
 *   (`currentIdempotencyKey`);
 * - a result over the inline limit is journaled as the preview the model got,
 *   which names the file holding it in full (SPEC §4.10).
 *
 * `QueryLoop.Options.journal` selects the journal of a session; the loop
 * provides it to its turn as `Current`, which `Execution.execute` reads, so a
 * nested loop (an agent, a speculation) journals nothing of its own unless it
 * is given a journal too.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as Execution from "./Execution.js"
import type * as Messages from "./Messages.js"
import type * as Model from "./Model.js"
import type * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * A journal that cannot do its job (its store is unreachable, locked,
 * corrupt, or written by a newer version). `path` names the store.
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalError extends Schema.TaggedError<JournalError>()("JournalError", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/**
 * One turn of a session: the loop's own turn number in this run, and the
 * session's context (its id and the messages so far).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnStep {
  readonly turn: number
  readonly context: Ref.Ref<ToolUseContext.ToolUseContext>
}

/**
 * The model call of the current turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelStep {
  readonly turn: number
  readonly request: Model.ModelRequest
}

/**
 * One tool call: its block, the tool it resolved to (none when the name is
 * unknown) and the context the call starts in.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolStep {
  readonly block: Messages.ToolUseBlock
  readonly tool: Tool.Any | undefined
  readonly context: Ref.Ref<ToolUseContext.ToolUseContext>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Journal {
  /**
   * Run one turn as a durable step. The effect's own error, or a
   * `JournalError` when the turn could not be recorded.
   */
  readonly turn: <A, E, R>(step: TurnStep, run: Effect.Effect<A, E, R>) => Effect.Effect<A, E | JournalError, R>
  /**
   * The turn's model call: a response already recorded is replayed as its
   * events (the model is not asked again); otherwise `stream` runs and is
   * recorded as it goes.
   */
  readonly model: <E, R>(
    step: ModelStep,
    stream: Stream.Stream<Model.ModelStreamEvent, E, R>
  ) => Stream.Stream<Model.ModelStreamEvent, E | Model.ModelError, R>
  /**
   * One tool call, the whole pipeline (SPEC §4.6): a recorded result is
   * published and returned without running anything; otherwise `run` runs
   * with an `emit` the journal may observe. Never fails.
   */
  readonly tool: <R>(
    step: ToolStep,
    emit: Execution.Emit,
    run: (emit: Execution.Emit) => Effect.Effect<Execution.Outcome, never, R>
  ) => Effect.Effect<Execution.Outcome, never, R>
  /**
   * Whether the session stopped in a turn whose model response (or part of
   * it, with tool calls) is recorded: the loop then finishes that turn from
   * the journal before the next prompt, without asking the model in between.
   */
  readonly unfinished: (context: Ref.Ref<ToolUseContext.ToolUseContext>) => Effect.Effect<boolean, JournalError>
}

/**
 * The journal that records nothing: every step runs as it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const none: Journal = {
  turn: (_step, run) => run,
  model: (_step, stream) => stream,
  tool: (_step, emit, run) => run(emit),
  unfinished: () => Effect.succeed(false)
}

/**
 * Whether a journal records anything.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isNone = (journal: Journal): boolean => journal === none

/**
 * The journal of the turn being run (`none` outside a journaled turn). The
 * query loop provides it; `Execution.execute` reads it.
 *
 * @since 0.1.0
 * @category services
 */
export class Current extends Context.Reference<Current>()("@switchyard/core/Journal/Current", {
  defaultValue: (): Journal => none
}) {}

/**
 * The idempotency key of the call being run, when a journal runs it: the
 * same on every run of the same call (`Activity.idempotencyKey`), so a tool
 * that declares itself idempotent can pass it on (an MCP tool sends it in
 * `_meta`) and let the other side drop a repeat. Made when asked for (it is a
 * hash).
 *
 * @since 0.1.0
 * @category services
 */
export class IdempotencyKey extends Context.Reference<IdempotencyKey>()("@switchyard/core/Journal/IdempotencyKey", {
  defaultValue: (): Option.Option<Effect.Effect<string>> => Option.none()
}) {}

/**
 * The idempotency key of the current call, if a journal runs it.
 *
 * @since 0.1.0
 * @category getters
 */
export const currentIdempotencyKey: Effect.Effect<Option.Option<string>> = Effect.flatMap(
  IdempotencyKey,
  Option.match({ onNone: () => Effect.succeedNone, onSome: (key) => Effect.asSome(key) })
)
