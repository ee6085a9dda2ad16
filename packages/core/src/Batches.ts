/**
 * The non-streaming path for a complete list of calls (SPEC §4.7,
 * chapter 5.5): a greedy partition into batches — consecutive
 * concurrency-safe calls merge, each unsafe call stands alone — then safe
 * batches run concurrently under a cap and unsafe ones alone.
 *
 * Calls run as fibers (`Effect.forEach` with `concurrency`) publishing into
 * one bounded mailbox that the consumer reads as a Stream.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import * as Footprint from "./Footprint.js"
import type * as Messages from "./Messages.js"
import * as Registry from "./Registry.js"
import type * as Results from "./Results.js"
import * as Tool from "./Tool.js"
import * as ToolUseContext from "./ToolUseContext.js"
import * as Validation from "./Validation.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_CONCURRENCY = 10

/**
 * The cap on concurrently executing tools: `SWITCHYARD_MAX_TOOL_USE_CONCURRENCY`,
 * else `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`, else 10.
 *
 * @since 0.1.0
 * @category config
 */
export const maxToolUseConcurrency: Config.Config<number> = Config.integer("SWITCHYARD_MAX_TOOL_USE_CONCURRENCY").pipe(
  Config.orElse(() => Config.integer("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY")),
  Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
  Config.withDefault(DEFAULT_MAX_CONCURRENCY)
)

/**
 * @since 0.1.0
 * @category models
 */
export interface Batch {
  readonly isConcurrencySafe: boolean
  readonly calls: ReadonlyArray<Messages.ToolUseBlock>
}

/**
 * Whether one call may run alongside others. Input-dependent (Bash is safe for
 * `ls`, not for `mkdir`); an unknown tool, an input that fails to decode, or a
 * predicate that fails counts as unsafe.
 *
 * @since 0.1.0
 * @category partitioning
 */
export const isCallConcurrencySafe = (
  block: Messages.ToolUseBlock,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const safety = safetyOf(block, env, context)
    return typeof safety === "boolean" ? Effect.succeed(safety) : safety
  })

/** `isCallConcurrencySafe`, as a plain answer when the predicate gives one (most do). */
const safetyOf = (
  block: Messages.ToolUseBlock,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext
): boolean | Effect.Effect<boolean> => {
  const resolved = Registry.resolve(block.name, env.tools, env.pool)
  if (Either.isLeft(resolved)) return false
  const tool = resolved.right
  const decoded = Validation.decode(tool, block.input)
  if (Either.isLeft(decoded)) return false
  let safety: boolean | Effect.Effect<boolean>
  try {
    safety = tool.isConcurrencySafe(decoded.right, context)
  } catch {
    return false
  }
  return typeof safety === "boolean" ? safety : Effect.catchAllCause(safety, () => Effect.succeed(false))
}

/**
 * How the scheduler sees one call: whether it is concurrency-safe and what it
 * reads and writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Classification {
  readonly tool: Tool.Any | undefined
  readonly isConcurrencySafe: boolean
  readonly footprint: Footprint.Footprint
}

const unsafeUnknown: Classification = {
  tool: undefined,
  isConcurrencySafe: false,
  footprint: Footprint.writesEverything
}

/**
 * Classify a call for a schedule (SPEC §4.7, §4.13). Under `"greedy"` the
 * footprint is the fail-closed one (a safe call reads `*`, an unsafe one
 * writes `*`); under `"footprints"` it is the tool's declaration, when it has
 * one. An unknown tool, an input that fails to decode, or a declaration that
 * fails writes `*`.
 *
 * @since 0.1.0
 * @category partitioning
 */
export const classify = (
  block: Messages.ToolUseBlock,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext,
  scheduling: Footprint.Scheduling
): Effect.Effect<Classification> => {
  const resolved = Registry.resolve(block.name, env.tools, env.pool)
  if (Either.isLeft(resolved)) return Effect.succeed(unsafeUnknown)
  const tool = resolved.right
  const decoded = Validation.decode(tool, block.input)
  if (Either.isLeft(decoded)) return Effect.succeed({ ...unsafeUnknown, tool })
  const input = decoded.right
  const withSafety = (isConcurrencySafe: boolean): Effect.Effect<Classification> => {
    const fallback: Classification = {
      tool,
      isConcurrencySafe,
      footprint: isConcurrencySafe ? Footprint.readsEverything : Footprint.writesEverything
    }
    if (scheduling === "greedy" || tool.footprint === undefined) return Effect.succeed(fallback)
    const declare = tool.footprint
    return Effect.suspend(() => {
      const declared = declare(input, context)
      return Effect.isEffect(declared) ? declared : Effect.succeed(declared)
    }).pipe(
      Effect.map((footprint): Classification => ({ tool, isConcurrencySafe, footprint })),
      Effect.catchAllCause(() => Effect.succeed({ ...fallback, footprint: Footprint.writesEverything }))
    )
  }
  // Most predicates answer synchronously: skip the Effect machinery for them (the hot path).
  let safety: boolean | Effect.Effect<boolean>
  try {
    safety = tool.isConcurrencySafe(input, context)
  } catch {
    safety = false
  }
  return typeof safety === "boolean"
    ? withSafety(safety)
    : Effect.flatMap(Effect.catchAllCause(safety, () => Effect.succeed(false)), withSafety)
}

/**
 * Greedy partition: `[Read A, Read B, Grep C] [Edit D] [Read E, Read F]`.
 *
 * @since 0.1.0
 * @category partitioning
 */
export const partitionToolCalls = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  env: Execution.Environment
): Effect.Effect<ReadonlyArray<Batch>> =>
  Effect.flatMap(Ref.get(env.context), (context) => {
    const batches: Array<{ isConcurrencySafe: boolean; calls: Array<Messages.ToolUseBlock> }> = []
    const place = (call: Messages.ToolUseBlock, safe: boolean) => {
      const last = batches[batches.length - 1]
      if (safe && last !== undefined && last.isConcurrencySafe) last.calls.push(call)
      else batches.push({ isConcurrencySafe: safe, calls: [call] })
    }
    // A plain loop while the predicates answer at once; an Effect only for those that do not.
    const from = (start: number): Effect.Effect<ReadonlyArray<Batch>> => {
      for (let i = start; i < calls.length; i++) {
        const call = calls[i]!
        const safety = safetyOf(call, env, context)
        if (typeof safety !== "boolean") {
          return Effect.flatMap(safety, (safe) => {
            place(call, safe)
            return from(i + 1)
          })
        }
        place(call, safety)
      }
      return Effect.succeed(batches)
    }
    return from(0)
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Overrides `maxToolUseConcurrency`. */
  readonly concurrency?: number | undefined
}

/**
 * Run the calls batch by batch (no sibling cancellation; that belongs to the
 * streaming executor). Outputs of a concurrent batch interleave, first ready
 * first out. Context modifiers of a concurrent batch are applied after the
 * batch, in call order; in a serial batch at once.
 *
 * @since 0.1.0
 * @category execution
 */
export const runTools = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  env: Execution.Environment,
  options: RunOptions = {}
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const concurrency = yield* Execution.concurrencyCap(options.concurrency, DEFAULT_MAX_CONCURRENCY)
      const mailbox = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
        capacity: Execution.MAILBOX_CAPACITY,
        strategy: "suspend"
      })
      const emit = Execution.emitTo(mailbox)
      const apply = (outcomes: ReadonlyArray<Execution.Outcome>) =>
        Ref.update(env.context, (context) =>
          ToolUseContext.applyAll(context, outcomes.flatMap((outcome) => outcome.modifiers)))
      const program = Effect.gen(function*() {
        const batches = yield* partitionToolCalls(calls, env)
        for (const batch of batches) {
          if (batch.isConcurrencySafe) {
            // The calls of a concurrent batch all start from the context as it was before it.
            const options = { context: yield* Ref.get(env.context) }
            const outcomes = yield* Effect.forEach(batch.calls, (call) => Execution.execute(call, env, emit, options), {
              concurrency
            })
            yield* apply(outcomes)
          } else {
            for (const call of batch.calls) {
              yield* apply([yield* Execution.execute(call, env, emit)])
            }
          }
        }
      })
      yield* program.pipe(Mailbox.into(mailbox), Effect.forkScoped)
      return Mailbox.toStream(mailbox)
    })
  )
