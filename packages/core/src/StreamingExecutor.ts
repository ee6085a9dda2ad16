/**
 * The streaming tool executor (SPEC §4.8, the chapter's §5.6): one per model
 * turn. Tools are added one by one as their `tool_use` blocks complete and
 * start while the model is still streaming.
 *
 * Each tool moves `queued → executing → completed → yielded`. Progress goes to
 * the consumer at once; results are released by a walk in call order in which
 * a completed tool is yielded, an executing unsafe tool stops the walk and an
 * executing safe tool is passed over (so a later safe tool that finished first
 * is yielded first).
 *
 * The executor is the turn's node in the interruption tree (SPEC §4.9): a
 * failed Bash call aborts it with `sibling_error` (running siblings are
 * interrupted, queued and later tools never start); a user abort or a new
 * message reaching it from the query interrupts what its reason covers.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Batches from "./Batches.js"
import * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import * as Interruption from "./Interruption.js"
import type * as Messages from "./Messages.js"
import * as Registry from "./Registry.js"
import * as Results from "./Results.js"
import * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category models
 */
export type ToolStatus = "queued" | "executing" | "completed" | "yielded"

/**
 * Which failures cancel the siblings: Bash errors (Claude Code's rule) or none.
 *
 * @since 0.1.0
 * @category models
 */
export type SiblingCancellation = "bash" | "none"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Overrides `Batches.maxToolUseConcurrency`. */
  readonly concurrency?: number | undefined
  /** Default `"bash"`. */
  readonly siblingCancellation?: SiblingCancellation | undefined
  /** The query's node; the executor becomes its child. */
  readonly interruption?: Interruption.InterruptionNode | undefined
}

/**
 * A snapshot of one tracked tool, for observers and tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface TrackedToolView {
  readonly toolUseId: string
  readonly name: string
  readonly status: ToolStatus
  readonly isConcurrencySafe: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamingExecutor {
  /** Track a completed `tool_use` block and start it if it can run. */
  readonly addTool: (block: Messages.ToolUseBlock) => Effect.Effect<void>
  /** What is ready now, without waiting: progress, and results per the yield walk. */
  readonly getCompletedResults: Effect.Effect<ReadonlyArray<DispatchEvent.DispatchEvent>>
  /**
   * No more tools this turn: stream every event until all tools are yielded.
   * (Events already taken by `getCompletedResults` are not repeated.)
   */
  readonly getRemainingResults: Stream.Stream<DispatchEvent.DispatchEvent>
  /**
   * Every event as it is released, for a consumer running alongside the model
   * stream; ends once `finish` was called and every tool is yielded. Read
   * either this or `getCompletedResults`/`getRemainingResults`, not both.
   */
  readonly results: Stream.Stream<DispatchEvent.DispatchEvent>
  /** No more tools will be added this turn. */
  readonly finish: Effect.Effect<void>
  /** Interrupt per reason: `user_interrupt` stops everything, `new_message` only `cancel` tools. */
  readonly interrupt: (reason: "user_interrupt" | "new_message") => Effect.Effect<void>
  /** Drop this attempt (model fallback/retry): interrupt everything, yield nothing more. */
  readonly discard: Effect.Effect<void>
  /** The `tool_result` blocks so far, in call order. */
  readonly toolResults: Effect.Effect<ReadonlyArray<Messages.ToolResultBlock>>
  /** The tracked tools and their states. */
  readonly tools: Effect.Effect<ReadonlyArray<TrackedToolView>>
  /** The reason the turn was aborted, if it was (not `sibling_error`, which stays in the turn). */
  readonly abortReason: Effect.Effect<Option.Option<Interruption.InterruptReason>>
  /** A hook's `continue: false` reason, if any tool's hook asked to stop. */
  readonly stopReason: Effect.Effect<Option.Option<string>>
  /** The executor's node in the interruption tree. */
  readonly interruption: Interruption.InterruptionNode
}

interface TrackedTool {
  readonly index: number
  readonly block: Messages.ToolUseBlock
  readonly isConcurrencySafe: boolean
  readonly cancelsSiblings: boolean
  readonly ignoresNewMessage: boolean
  status: ToolStatus
  result: DispatchEvent.Result | undefined
  modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
  /** The next tool not yet yielded, in call order (the yield walk's list). */
  nextPending: TrackedTool | undefined
}

/**
 * Create an executor for one turn. Its fibers live in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  env: Execution.Environment,
  options: Options = {}
): Effect.Effect<StreamingExecutor, never, Scope.Scope | Results.ResultStore> =>
  Effect.gen(function*() {
    const cap = yield* Execution.concurrencyCap(options.concurrency, Batches.DEFAULT_MAX_CONCURRENCY)
    const siblingCancellation = options.siblingCancellation ?? "bash"
    const node = options.interruption !== undefined ? yield* options.interruption.child() : yield* Interruption.makeRoot
    const fibers = yield* FiberSet.make<void>()
    const out = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
      capacity: Execution.MAILBOX_CAPACITY,
      strategy: "suspend"
    })
    // State changes happen inside single synchronous steps (`Effect.suspend`/`sync`), which no
    // other fiber can interleave with, so they need no lock. Yielding offers to a bounded
    // mailbox and may suspend: one fiber flushes at a time, others leave it a note.
    let flushing = false
    let flushAgain = false
    const services = yield* Effect.context<Results.ResultStore>()

    const tools: Array<TrackedTool> = []
    let addingDone = false
    let discarded = false
    let siblingError = false
    let abortReason: Option.Option<Interruption.InterruptReason> = Option.none()
    let stopReason: Option.Option<string> = Option.none()
    // Bookkeeping that keeps every step O(1) amortised, so a turn of thousands of calls
    // stays linear: queued tools are always a suffix of `tools` (they start in call order),
    // unyielded tools form a linked list, and modifiers waiting to be applied are few.
    let nextToStart = 0
    let executing = 0
    let executingUnsafe = 0
    let yielded = 0
    let pendingHead: TrackedTool | undefined
    let pendingTail: TrackedTool | undefined
    const unappliedModifiers: Array<TrackedTool> = []

    const emit: Execution.Emit = (event) =>
      // Results are held back for the yield walk; everything else goes out at once.
      event._tag === "Result" || discarded ? Effect.void : Effect.asVoid(out.offer(event))

    const canExecute = (tool: TrackedTool): boolean =>
      (executing === 0 || (tool.isConcurrencySafe && executingUnsafe === 0)) && executing < cap

    /** Mark a tool completed with its result; called with the state lock held. */
    const markCompleted = (tool: TrackedTool, result: DispatchEvent.Result) => {
      if (tool.status === "executing") {
        executing--
        if (!tool.isConcurrencySafe) executingUnsafe--
      }
      tool.result = result
      tool.status = "completed"
      if (tool.modifiers.length > 0) unappliedModifiers.push(tool)
    }

    /** Why a tool that has not started will never start, if it will not. */
    const notStartingReason = (): Interruption.InterruptReason | undefined =>
      siblingError ? "sibling_error" : Option.getOrUndefined(abortReason)

    const synthetic = (tool: TrackedTool, reason: Interruption.InterruptReason, startedAt: number, endedAt: number) =>
      DispatchEvent.Result({
        toolUseId: tool.block.id,
        name: tool.block.name,
        status: "cancelled",
        block: Results.interrupted(tool.block.id, reason),
        startedAt,
        endedAt
      })

    // The walk of SPEC §4.8 (the chapter's getCompletedResults), over the unyielded tools:
    // a completed tool is yielded, an executing unsafe tool stops the walk, an executing
    // safe tool is passed over. Queued tools form a suffix with nothing completed behind
    // them, so the walk may stop at the first one.
    const walk = (): Array<DispatchEvent.Result> => {
      const ready: Array<DispatchEvent.Result> = []
      let previous: TrackedTool | undefined
      let tool = pendingHead
      while (tool !== undefined) {
        const next = tool.nextPending
        if (tool.status === "completed") {
          tool.status = "yielded"
          yielded++
          if (previous === undefined) pendingHead = next
          else previous.nextPending = next
          if (pendingTail === tool) pendingTail = previous
          tool.nextPending = undefined
          ready.push(tool.result!)
        } else if (tool.status === "queued" || !tool.isConcurrencySafe) {
          break
        } else {
          previous = tool
        }
        tool = next
      }
      return ready
    }

    const flushLoop: Effect.Effect<void> = Effect.suspend(() => {
      if (discarded) return Effect.void
      flushAgain = false
      const ready = walk()
      const done = addingDone && yielded === tools.length
      return Effect.gen(function*() {
        if (ready.length > 0) yield* out.offerAll(ready)
        if (done) {
          // The turn is over: the next one sees every modifier, in call order.
          yield* applyEarlierModifiers(tools.length)
          yield* out.end
          return
        }
        if (flushAgain) yield* flushLoop
      })
    })

    const flush: Effect.Effect<void> = Effect.suspend(() => {
      if (flushing) {
        flushAgain = true
        return Effect.void
      }
      flushing = true
      return Effect.ensuring(flushLoop, Effect.sync(() => {
        flushing = false
      }))
    })

    const applyEarlierModifiers = (before: number) =>
      Effect.suspend(() => {
        if (unappliedModifiers.length === 0) return Effect.void
        const ready = unappliedModifiers.filter((t) => t.index < before).sort((a, b) => a.index - b.index)
        if (ready.length === 0) return Effect.void
        for (const t of ready) unappliedModifiers.splice(unappliedModifiers.indexOf(t), 1)
        const pending = ready.flatMap((t) => t.modifiers)
        return Ref.update(env.context, (context) => ToolUseContext.applyAll(context, pending))
      })

    const complete = (
      tool: TrackedTool,
      exit: Exit.Exit<Execution.Outcome>,
      toolNode: Interruption.InterruptionNode,
      startedAt: number
    ) =>
      Effect.gen(function*() {
        const endedAt = yield* Clock.currentTimeMillis
        // Aborts are raised after the state lock is released: their listeners take it again.
        const aborts = yield* Effect.suspend(() => {
          const raise: Array<Effect.Effect<void>> = []
          if (Exit.isSuccess(exit)) {
            const outcome = exit.value
            tool.modifiers = outcome.modifiers
            markCompleted(tool, outcome.result)
            if (outcome.stop !== undefined && Option.isNone(stopReason)) stopReason = Option.some(outcome.stop)
            if (tool.cancelsSiblings && outcome.result.status === "error" && !siblingError) {
              siblingError = true
              raise.push(node.abort("sibling_error"))
            }
            if (outcome.abort !== undefined) {
              // Decided now, so that the processQueue below starts nothing more this turn.
              if (Interruption.propagatesUp(outcome.abort) && Option.isNone(abortReason)) {
                abortReason = Option.some(outcome.abort)
              }
              raise.push(toolNode.abort(outcome.abort))
            }
          } else {
            const reason = Option.getOrElse(
              Option.orElse(toolNode.reason(), () => abortReason),
              (): Interruption.InterruptReason => "user_interrupt"
            )
            markCompleted(tool, synthetic(tool, reason, startedAt, endedAt))
          }
          return Effect.as(processQueue, raise)
        })
        yield* toolNode.detach
        yield* Effect.all(aborts, { discard: true })
        yield* flush
      })

    const start = (tool: TrackedTool): Effect.Effect<void> =>
      Effect.gen(function*() {
        yield* applyEarlierModifiers(tool.index)
        const toolNode = yield* node.child({ ignore: tool.ignoresNewMessage ? ["new_message"] : [] })
        const startedAt = yield* Clock.currentTimeMillis
        const runner = Effect.gen(function*() {
          const work = yield* Effect.fork(Execution.execute(tool.block, env, emit))
          yield* toolNode.onAbort(() => Effect.asVoid(Fiber.interruptFork(work)))
          const exit = yield* Fiber.await(work)
          yield* complete(tool, exit, toolNode, startedAt)
        })
        yield* FiberSet.run(fibers, Effect.provide(runner, services))
      })

    // Walk queued tools in call order; start each that can run, stop at the first that cannot.
    const processQueue: Effect.Effect<void> = Effect.suspend(() => {
      const reason = notStartingReason()
      if (reason !== undefined) {
        const cancelled = tools.slice(nextToStart)
        nextToStart = tools.length
        if (cancelled.length === 0) return Effect.void
        return Effect.map(Clock.currentTimeMillis, (now) => {
          for (const tool of cancelled) markCompleted(tool, synthetic(tool, reason, now, now))
        })
      }
      const toStart: Array<TrackedTool> = []
      while (nextToStart < tools.length) {
        const tool = tools[nextToStart]!
        if (!canExecute(tool)) break
        tool.status = "executing"
        executing++
        if (!tool.isConcurrencySafe) executingUnsafe++
        toStart.push(tool)
        nextToStart++
      }
      return toStart.length === 0 ? Effect.void : Effect.forEach(toStart, start, { discard: true })
    })

    // An abort reaching the executor (user, new message, a rejected permission, a failed Bash).
    yield* node.onAbort((reason) =>
      Effect.suspend(() => {
        if (reason !== "sibling_error" && Option.isNone(abortReason)) abortReason = Option.some(reason)
        return processQueue
      }).pipe(Effect.zipRight(flush))
    )

    const addTool = (block: Messages.ToolUseBlock): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (discarded || addingDone) return
        const context = yield* Ref.get(env.context)
        const isConcurrencySafe = yield* Batches.isCallConcurrencySafe(block, env, context)
        const tool = Registry.findToolByName(env.pool, block.name)
        yield* Effect.suspend(() => {
          const tracked: TrackedTool = {
            index: tools.length,
            block,
            isConcurrencySafe,
            cancelsSiblings: siblingCancellation === "bash" && (tool?.name ?? block.name) === "Bash",
            ignoresNewMessage: (tool?.interruptBehavior ?? "block") === "block",
            status: "queued",
            result: undefined,
            modifiers: [],
            nextPending: undefined
          }
          tools.push(tracked)
          if (pendingTail === undefined) pendingHead = tracked
          else pendingTail.nextPending = tracked
          pendingTail = tracked
          return processQueue
        })
        yield* flush
      })

    const finishAdding = Effect.sync(() => {
      addingDone = true
    }).pipe(Effect.zipRight(flush))

    const executor: StreamingExecutor = {
      addTool,
      getCompletedResults: Effect.map(out.clear, Chunk.toReadonlyArray),
      getRemainingResults: Stream.unwrap(Effect.as(finishAdding, Mailbox.toStream(out))),
      results: Mailbox.toStream(out),
      finish: finishAdding,
      interrupt: (reason) => node.abort(reason),
      discard: Effect.gen(function*() {
        if (discarded) return
        discarded = true
        yield* FiberSet.clear(fibers)
        yield* out.shutdown
      }),
      toolResults: Effect.sync(() =>
        tools.flatMap((tool) => (tool.result !== undefined ? [tool.result.block] : []))
      ),
      tools: Effect.sync(() =>
        tools.map((tool) => ({
          toolUseId: tool.block.id,
          name: tool.block.name,
          status: tool.status,
          isConcurrencySafe: tool.isConcurrencySafe
        }))
      ),
      abortReason: Effect.sync(() => abortReason),
      stopReason: Effect.sync(() => stopReason),
      interruption: node
    }
    return executor
  })

/**
 * Feed a complete list of calls to a fresh executor at once (what
 * `switchyard dispatch` does): the schedule equals the greedy partition of
 * SPEC §4.7, plus sibling cancellation.
 *
 * @since 0.1.0
 * @category utils
 */
export const runAll = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  env: Execution.Environment,
  options: Options = {}
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const executor = yield* make(env, options)
      // Add while the consumer reads: the output mailbox is bounded, so adding
      // everything before reading could fill it and stall.
      yield* Effect.forkScoped(
        Effect.zipRight(Effect.forEach(calls, executor.addTool, { discard: true }), executor.finish)
      )
      return executor.results
    })
  )
