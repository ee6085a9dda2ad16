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
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import * as Footprint from "./Footprint.js"
import type * as Messages from "./Messages.js"
import * as Registry from "./Registry.js"
import type * as Results from "./Results.js"
import type * as Tool from "./Tool.js"
import * as ToolCall from "./ToolCall.js"
import * as ToolUseContext from "./ToolUseContext.js"
import * as Validation from "./Validation.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_CONCURRENCY = 10

// Each distinct bad setting is reported once per process, not once per turn.
const reportedSettings = new Set<string>()

const isPositiveInteger = (n: number): boolean => Number.isSafeInteger(n) && n > 0

/**
 * The variables that set the tool concurrency cap, the first one set wins.
 *
 * @since 0.1.0
 * @category config
 */
export const CONCURRENCY_VARIABLES: ReadonlyArray<string> = [
  "SWITCHYARD_MAX_TOOL_USE_CONCURRENCY",
  "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY"
]

const rawConcurrency = Config.all(CONCURRENCY_VARIABLES.map((name) => Config.option(Config.string(name))))

/**
 * The cap on concurrently executing tools (SPEC §4.7), for `runTools` and the
 * streaming executor: `override` when given, else the first of
 * `CONCURRENCY_VARIABLES` that is set, else `fallback` (10). An invalid
 * value (`0`, `-1`, `abc`, `2.5`) is reported once as a warning and
 * `fallback` is used: a bad setting never stops a dispatch.
 *
 * @since 0.1.0
 * @category config
 */
export const concurrencyCap = (
  override: number | undefined,
  fallback: number = DEFAULT_MAX_CONCURRENCY
): Effect.Effect<number> => {
  const invalid = (what: string) =>
    Effect.suspend(() => {
      if (reportedSettings.has(what)) return Effect.succeed(fallback)
      reportedSettings.add(what)
      return Effect.as(
        Effect.logWarning(`${what} is not a positive integer, so the default tool concurrency cap ${fallback} is used`),
        fallback
      )
    })
  if (override !== undefined) {
    return isPositiveInteger(override) ? Effect.succeed(override) : invalid(`The concurrency option ${override}`)
  }
  return Effect.flatMap(Effect.orElseSucceed(rawConcurrency, () => []), (values) => {
    const index = values.findIndex(Option.isSome)
    if (index === -1) return Effect.succeed(fallback)
    const text = Option.getOrThrow(values[index]!).trim()
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN
    return isPositiveInteger(n) ? Effect.succeed(n) : invalid(`${CONCURRENCY_VARIABLES[index]}=${JSON.stringify(text)}`)
  })
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Batch<C extends ToolCall.Any = Messages.ToolUseBlock> {
  readonly isConcurrencySafe: boolean
  readonly calls: ReadonlyArray<C>
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
  block: ToolCall.Any,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const safety = safetyOf(block, env, context)
    return typeof safety === "boolean" ? Effect.succeed(safety) : safety
  })

/** `isCallConcurrencySafe`, as a plain answer when the predicate gives one (most do). */
const safetyOf = (
  call: ToolCall.Any,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext
): boolean | Effect.Effect<boolean> => {
  const block = ToolCall.blockOf(call)
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
  /**
   * The footprint came from the tool's declaration (resolved against the tree
   * as it is now), not from the fail-closed defaults: it is resolved again
   * when a barrier before the call has finished.
   */
  readonly declared: boolean
}

const unsafeUnknown: Classification = {
  tool: undefined,
  isConcurrencySafe: false,
  footprint: Footprint.writesEverything,
  declared: false
}

/**
 * Classify a call for a schedule (SPEC §4.7, §4.13). Under `"greedy"` the
 * footprint is the fail-closed one (a safe call reads `*`, an unsafe one
 * writes `*`); under `"footprints"` it is the tool's declaration, when it has
 * one and it is proven complete (`Footprint.trusted`). An unknown tool, an
 * input that fails to decode, or a declaration that fails writes `*`.
 *
 * @since 0.1.0
 * @category partitioning
 */
export const classify = (
  call: ToolCall.Any,
  env: Execution.Environment,
  context: ToolUseContext.ToolUseContext,
  scheduling: Footprint.Scheduling
): Effect.Effect<Classification> => {
  const block = ToolCall.blockOf(call)
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
      footprint: isConcurrencySafe ? Footprint.readsEverything : Footprint.writesEverything,
      declared: false
    }
    if (scheduling === "greedy" || tool.footprint === undefined) return Effect.succeed(fallback)
    const declare = tool.footprint
    return Effect.suspend(() => {
      const declared = declare(input, context)
      return Effect.isEffect(declared) ? declared : Effect.succeed(declared)
    }).pipe(
      Effect.map((footprint): Classification => ({
        tool,
        isConcurrencySafe,
        footprint: Footprint.trusted(footprint),
        declared: true
      })),
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
export const partitionToolCalls = <C extends ToolCall.Any>(
  calls: ReadonlyArray<C>,
  env: Execution.Environment
): Effect.Effect<ReadonlyArray<Batch<C>>> =>
  Effect.flatMap(Ref.get(env.context), (context) => {
    const batches: Array<{ isConcurrencySafe: boolean; calls: Array<C> }> = []
    const place = (call: C, safe: boolean) => {
      const last = batches[batches.length - 1]
      if (safe && last !== undefined && last.isConcurrencySafe) last.calls.push(call)
      else batches.push({ isConcurrencySafe: safe, calls: [call] })
    }
    // A plain loop while the predicates answer at once; an Effect only for those that do not.
    const from = (start: number): Effect.Effect<ReadonlyArray<Batch<C>>> => {
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
  /** Overrides the cap of `concurrencyCap`. */
  readonly concurrency?: number | undefined
}

/**
 * Run the calls batch by batch (no sibling cancellation; that belongs to the
 * streaming executor). Outputs of a concurrent batch interleave, first ready
 * first out. Context modifiers of a concurrent batch are applied after the
 * batch, in call order; in a serial batch at once. A call that repeats an
 * earlier call's id is renamed and answered with an error, as the query loop
 * does (`ToolCall.uniqueIds`).
 *
 * @since 0.1.0
 * @category execution
 */
export const runTools = (
  calls: ReadonlyArray<ToolCall.Any>,
  env: Execution.Environment,
  options: RunOptions = {}
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const concurrency = yield* concurrencyCap(options.concurrency)
      const mailbox = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
        capacity: Execution.MAILBOX_CAPACITY,
        strategy: "suspend"
      })
      const emit = Execution.emitTo(mailbox)
      const apply = (outcomes: ReadonlyArray<Execution.Outcome>) =>
        Ref.update(env.context, (context) =>
          ToolUseContext.applyAll(context, outcomes.flatMap((outcome) => outcome.modifiers)))
      const program = Effect.gen(function*() {
        const batches = yield* partitionToolCalls(calls.map(ToolCall.uniqueIds()), env)
        for (const batch of batches) {
          if (batch.isConcurrencySafe) {
            // The calls of a concurrent batch all start from the context as it was before it.
            const options = { context: yield* Ref.get(env.context) }
            const outcomes = yield* Effect.forEach(batch.calls, (call) =>
              Execution.execute(call, env, emit, options), {
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
