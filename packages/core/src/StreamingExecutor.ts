/**
 * The streaming tool executor (SPEC §4.8, chapter 5.6): one per model
 * turn. Tools are added one by one as their `tool_use` blocks complete and
 * start while the model is still streaming.
 *
 * Each tool moves `queued → executing → completed → yielded`. A call starts
 * once every earlier call it conflicts with has completed, under the
 * concurrency cap, lowest position first. What conflicts depends on the
 * schedule: under `"greedy"` (the chapter) an unsafe call conflicts with
 * everything; under `"footprints"` (SPEC §4.13) a write conflicts with reads
 * and writes of an overlapping resource. Progress goes to the consumer at
 * once; a completed result is released once the results that must precede it
 * are (greedy: the last earlier unsafe call's; footprints: every earlier
 * conflicting call's).
 *
 * The executor is the turn's node in the interruption tree (SPEC §4.9): a
 * failed Bash call aborts it with `sibling_error` under `"bash"` (running
 * siblings are interrupted, queued and later tools never start), or cancels
 * just its dependents under `"dependents"`; a user abort or a new message
 * reaching it from the query interrupts what its reason covers.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Batches from "./Batches.js"
import * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import type * as Footprint from "./Footprint.js"
import { CallHeap } from "./internal/callHeap.js"
import { FootprintIndex } from "./internal/footprintIndex.js"
import * as Interruption from "./Interruption.js"
import * as Messages from "./Messages.js"
import * as Results from "./Results.js"
import * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category models
 */
export type ToolStatus = "queued" | "executing" | "completed" | "yielded"

/**
 * Which failures cancel other calls: a Bash error cancels every sibling
 * (`"bash"`, Claude Code's rule), only the later calls that conflict with it,
 * transitively (`"dependents"`, SPEC §4.13), or nothing (`"none"`).
 *
 * @since 0.1.0
 * @category models
 */
export type SiblingCancellation = "bash" | "dependents" | "none"

/**
 * @since 0.1.0
 * @category models
 */
export type Scheduling = Footprint.Scheduling

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Overrides `Batches.maxToolUseConcurrency`. */
  readonly concurrency?: number | undefined
  /** Default `"footprints"`; `"greedy"` is the chapter's schedule. */
  readonly scheduling?: Scheduling | undefined
  /** Default `"dependents"` under footprint scheduling, `"bash"` under greedy. */
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
  /** What the scheduler took the call to read and write. */
  readonly footprint: Footprint.Footprint
  /** The earlier calls it had to wait for when it was added, and why. */
  readonly waitedFor: ReadonlyArray<DispatchEvent.Wait>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamingExecutor {
  /** Track a completed `tool_use` block and start it if it can run. */
  readonly addTool: (block: Messages.ToolUseBlock) => Effect.Effect<void>
  /** What is ready now, without waiting: progress, and results per the yield rules. */
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
  readonly footprint: Footprint.Footprint
  readonly isBash: boolean
  /** `interruptBehavior: "cancel"`: a new user message stops it. */
  readonly cancellable: boolean
  status: ToolStatus
  result: DispatchEvent.Result | undefined
  modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
  /** Earlier conflicting calls not completed yet: it starts when this is 0. */
  startWaits: number
  /** Earlier calls whose results must be yielded first, not yielded yet. */
  yieldWaits: number
  startDependents: Array<TrackedTool> | undefined
  yieldDependents: Array<TrackedTool> | undefined
  waitedFor: Array<DispatchEvent.Wait> | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
  startedAt: number
  interruptedBy: Interruption.InterruptReason | undefined
  /** Under `"dependents"`: the failed Bash call whose failure this call is part of. */
  failedRoot: TrackedTool | undefined
}

const noModifiers: ReadonlyArray<ToolUseContext.ContextModifier> = []

const MAX_NESTED_STARTS = 4

/** How many calls `runAll` adds in one step. */
const FEED_SLICE = 64

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
  Effect.map(makeFeedable(env, options), ({ executor }) => executor)

/** An executor and its `addTool` in the current step, for `runAll`. */
interface Feedable {
  readonly executor: StreamingExecutor
  readonly addNow: (block: Messages.ToolUseBlock) => Effect.Effect<void> | undefined
}

const makeFeedable = (
  env: Execution.Environment,
  options: Options
): Effect.Effect<Feedable, never, Scope.Scope | Results.ResultStore> =>
  Effect.gen(function*() {
    const cap = yield* Execution.concurrencyCap(options.concurrency, Batches.DEFAULT_MAX_CONCURRENCY)
    const scheduling = options.scheduling ?? "footprints"
    const siblingCancellation = options.siblingCancellation ?? (scheduling === "footprints" ? "dependents" : "bash")
    const node = options.interruption !== undefined ? yield* options.interruption.child() : yield* Interruption.makeRoot
    const fibers = yield* FiberSet.make<void>()
    const out = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
      capacity: Execution.MAILBOX_CAPACITY,
      strategy: "suspend"
    })
    // Every runner is forked from this one runtime, captured once: forking each from the
    // runner that just finished would chain them, and every fork copies the FiberRef
    // stacks, which then grow by one entry per link (O(N²) over a turn). Runners start
    // uninterruptible and open an interruptible region only around the call, so an
    // interrupt that arrives before a runner begins still ends in its synthetic result.
    const runtime = Runtime.disableRuntimeFlag(yield* Effect.runtime<Results.ResultStore>(), RuntimeFlags.Interruption)
    const runFork = Runtime.runFork(runtime)
    const wake = yield* Effect.makeLatch(false)
    const clock = yield* Effect.clock
    const baseContext = yield* Ref.get(env.context)

    // State changes happen inside single synchronous steps (`Effect.suspend`/`sync`), which
    // no other fiber can interleave with, so they need no lock. Only the flusher offers
    // results, and it marks a tool yielded after its offer: an interrupted offer loses nothing.
    const tools: Array<TrackedTool> = []
    const index = new FootprintIndex<TrackedTool>()
    const ready = new CallHeap<TrackedTool>()
    const yieldable = new CallHeap<TrackedTool>()
    const queuedTools = new Set<TrackedTool>()
    const executingTools = new Set<TrackedTool>()
    let lastUnsafe: TrackedTool | undefined
    let nesting = 0
    let executing = 0
    let yielded = 0
    let addingDone = false
    let discarded = false
    let siblingError = false
    let newMessage = false
    let hardAbort: Interruption.InterruptReason | undefined
    let abortReason: Option.Option<Interruption.InterruptReason> = Option.none()
    let stopReason: Option.Option<string> = Option.none()
    // Context modifiers (SPEC §4.8): `settledContext` is the turn's starting context plus the
    // modifiers of the leading run of completed calls; `loose` holds the completed calls
    // after it that have modifiers, in call order.
    let settled = 0
    let settledContext = baseContext
    const loose: Array<TrackedTool> = []

    const signal = () => wake.unsafeOpen()

    // Results are held back for the yield rules; everything else goes out at once.
    const held = (event: DispatchEvent.DispatchEvent) => event._tag === "Result" || discarded
    const emit: Execution.Emit = Object.assign(
      (event: DispatchEvent.DispatchEvent) => held(event) ? Effect.void : Effect.asVoid(out.offer(event)),
      { unsafeOffer: (event: DispatchEvent.DispatchEvent) => held(event) || out.unsafeOffer(event) }
    )

    const emitFor = (tool: TrackedTool): Execution.Emit => {
      const waitedFor = tool.waitedFor
      if (waitedFor === undefined) return emit
      const withWaits = (event: DispatchEvent.DispatchEvent) =>
        event._tag === "Started"
          ? DispatchEvent.Started({
            toolUseId: event.toolUseId,
            name: event.name,
            input: event.input,
            at: event.at,
            waitedFor
          })
          : event
      return Object.assign((event: DispatchEvent.DispatchEvent) => emit(withWaits(event)), {
        unsafeOffer: (event: DispatchEvent.DispatchEvent) => emit.unsafeOffer!(withWaits(event))
      })
    }

    const synthetic = (tool: TrackedTool, reason: Interruption.InterruptReason, startedAt: number, endedAt: number) =>
      DispatchEvent.Result({
        toolUseId: tool.block.id,
        name: tool.block.name,
        status: "cancelled",
        block: Results.interrupted(tool.block.id, reason),
        startedAt,
        endedAt
      })

    const cancelledAsDependent = (tool: TrackedTool, failed: TrackedTool, at: number) =>
      DispatchEvent.Result({
        toolUseId: tool.block.id,
        name: tool.block.name,
        status: "cancelled",
        block: Messages.toolResult(
          tool.block.id,
          `Cancelled: this call depends on ${failed.block.id} (${failed.block.name}), which failed`,
          true
        ),
        startedAt: at,
        endedAt: at
      })

    /** Why a call that has not started must not start, if it must not. */
    const cancelReason = (tool: TrackedTool): Interruption.InterruptReason | undefined =>
      siblingError
        ? "sibling_error"
        : hardAbort !== undefined
        ? hardAbort
        : newMessage && tool.cancellable
        ? "new_message"
        : undefined

    const startContext = (tool: TrackedTool): ToolUseContext.ToolUseContext => {
      let context = settledContext
      for (const earlier of loose) {
        if (earlier.index >= tool.index) break
        context = ToolUseContext.applyAll(context, earlier.modifiers)
      }
      return context
    }

    const settle = (tool: TrackedTool) => {
      if (tool.modifiers.length > 0) {
        let i = loose.length
        while (i > 0 && loose[i - 1]!.index > tool.index) i--
        loose.splice(i, 0, tool)
      }
      while (settled < tools.length) {
        const next = tools[settled]!
        if (next.status !== "completed" && next.status !== "yielded") break
        if (next.modifiers.length > 0) {
          settledContext = ToolUseContext.applyAll(settledContext, next.modifiers)
          loose.shift()
        }
        settled++
      }
    }

    const markCompleted = (tool: TrackedTool, result: DispatchEvent.Result) => {
      if (tool.status === "executing") {
        executing--
        executingTools.delete(tool)
      } else {
        queuedTools.delete(tool)
      }
      tool.status = "completed"
      tool.result = result
      tool.fiber = undefined
      settle(tool)
      const dependents = tool.startDependents
      if (dependents !== undefined) {
        for (const dependent of dependents) {
          if (--dependent.startWaits === 0 && dependent.status === "queued") ready.push(dependent)
        }
      }
      if (tool.yieldWaits === 0) yieldable.push(tool)
    }

    const markYielded = (tool: TrackedTool) => {
      tool.status = "yielded"
      yielded++
      // A failed call and its cancelled dependents stay in the index: later calls that
      // conflict with them are cancelled too.
      if (tool.failedRoot === undefined) index.remove(tool)
      const dependents = tool.yieldDependents
      if (dependents !== undefined) {
        for (const dependent of dependents) {
          if (--dependent.yieldWaits === 0 && dependent.status === "completed") yieldable.push(dependent)
        }
      }
    }

    /** Cancel, transitively, the queued calls waiting for a failed Bash call. */
    const cancelDependents = (failed: TrackedTool, now: number) => {
      failed.failedRoot = failed
      const stack = failed.startDependents === undefined ? [] : failed.startDependents.slice()
      while (stack.length > 0) {
        const dependent = stack.pop()!
        if (dependent.status !== "queued") continue
        dependent.failedRoot = failed
        markCompleted(dependent, cancelledAsDependent(dependent, failed, now))
        if (dependent.startDependents !== undefined) stack.push(...dependent.startDependents)
      }
    }

    const runner = (
      tool: TrackedTool,
      options: Execution.ExecuteOptions
    ): Effect.Effect<void, never, Results.ResultStore> =>
      Effect.matchCauseEffect(Effect.interruptible(Execution.execute(tool.block, env, emitFor(tool), options)), {
        onFailure: (cause) => complete(tool, Exit.failCause(cause)),
        onSuccess: (outcome) => complete(tool, Exit.succeed(outcome))
      })

    const start = (tool: TrackedTool, now: number) => {
      tool.status = "executing"
      tool.startedAt = now
      executing++
      queuedTools.delete(tool)
      executingTools.add(tool)
      const options: Execution.ExecuteOptions = { context: startContext(tool) }
      // A runner starts on the spot, unless runners are already starting each other on this
      // stack (a call that completes without suspending starts the next): then it is queued.
      let fiber: Fiber.RuntimeFiber<void>
      if (nesting < MAX_NESTED_STARTS) {
        nesting++
        try {
          fiber = runFork(runner(tool, options))
        } finally {
          nesting--
        }
      } else {
        fiber = runFork(runner(tool, options), { immediate: false })
      }
      FiberSet.unsafeAdd(fibers, fiber)
      if (tool.status === "executing") tool.fiber = fiber
    }

    /** Start ready calls, lowest position first, while the cap allows. */
    const pump = (now: number) => {
      while (executing < cap) {
        const tool = ready.pop()
        if (tool === undefined) return
        if (tool.status !== "queued") continue
        const reason = cancelReason(tool)
        if (reason !== undefined) markCompleted(tool, synthetic(tool, reason, now, now))
        else start(tool, now)
      }
    }

    // Runs in the runner once its call has ended (the state changes in this one step).
    const complete = (tool: TrackedTool, exit: Exit.Exit<Execution.Outcome>): Effect.Effect<void> => {
      if (discarded || tool.status !== "executing") return Effect.void
      const now = clock.unsafeCurrentTimeMillis()
      // Aborts are raised after this step: their listeners change the state again.
      const raise: Array<Effect.Effect<void>> = []
      if (Exit.isSuccess(exit)) {
        const outcome = exit.value
        tool.modifiers = outcome.modifiers
        markCompleted(tool, outcome.result)
        if (outcome.stop !== undefined && Option.isNone(stopReason)) stopReason = Option.some(outcome.stop)
        // The chapter's isErrorResult: any error result, a denial included.
        if (tool.isBash && outcome.result.block.is_error === true) {
          if (siblingCancellation === "bash" && !siblingError) {
            siblingError = true
            raise.push(node.abort("sibling_error"))
          } else if (siblingCancellation === "dependents") {
            cancelDependents(tool, now)
          }
        }
        if (outcome.abort !== undefined) {
          // Decided now, so that the pump below starts nothing more this turn.
          if (Interruption.propagatesUp(outcome.abort) && hardAbort === undefined) hardAbort = outcome.abort
          raise.push(node.abort(outcome.abort))
        }
      } else {
        const reason = tool.interruptedBy ?? cancelReason(tool) ?? "user_interrupt"
        markCompleted(tool, synthetic(tool, reason, tool.startedAt, now))
      }
      pump(now)
      signal()
      return raise.length === 0 ? Effect.void : Effect.all(raise, { discard: true })
    }

    // The only fiber that offers results: it releases every yieldable result, lowest
    // position first, and ends the stream once the turn is over.
    const flusher = Effect.gen(function*() {
      while (true) {
        yield* wake.close
        while (!discarded) {
          const tool = yieldable.pop()
          if (tool === undefined) break
          if (tool.status !== "completed") continue
          // The offer suspends only when the mailbox is full.
          if (!out.unsafeOffer(tool.result!)) yield* out.offer(tool.result!)
          markYielded(tool)
        }
        if (discarded) return
        if (addingDone && yielded === tools.length) {
          // The turn is over: the next one sees every modifier, in call order.
          const modifiers = tools.flatMap((tool) => tool.modifiers)
          if (modifiers.length > 0) {
            yield* Ref.update(env.context, (context) => ToolUseContext.applyAll(context, modifiers))
          }
          yield* out.end
          return
        }
        yield* wake.await
      }
    })
    yield* Effect.forkScoped(flusher)

    // An abort reaching the executor (user, new message, a rejected permission, a failed Bash).
    yield* node.onAbort((reason) =>
      Effect.suspend(() => {
          const now = clock.unsafeCurrentTimeMillis()
          if (reason !== "sibling_error" && Option.isNone(abortReason)) abortReason = Option.some(reason)
          if (reason === "sibling_error") siblingError = true
          else if (reason === "new_message") newMessage = true
          else if (hardAbort === undefined) hardAbort = reason
          const victims: Array<Fiber.RuntimeFiber<void>> = []
          for (const tool of executingTools) {
            if (reason === "new_message" && !tool.cancellable) continue
            if (tool.interruptedBy === undefined) tool.interruptedBy = reason
            if (tool.fiber !== undefined) victims.push(tool.fiber)
          }
          for (const tool of Array.from(queuedTools)) {
            const cancel = cancelReason(tool)
            if (cancel !== undefined) markCompleted(tool, synthetic(tool, cancel, now, now))
          }
          pump(now)
          signal()
          return Effect.forEach(victims, (fiber) => Fiber.interruptFork(fiber), { discard: true })
        })
    )

    const track = (block: Messages.ToolUseBlock, classification: Batches.Classification): void => {
      if (discarded || addingDone) return
      const now = clock.unsafeCurrentTimeMillis()
      const tool: TrackedTool = {
        index: tools.length,
        block,
        isConcurrencySafe: classification.isConcurrencySafe,
        footprint: classification.footprint,
        isBash: (classification.tool?.name ?? block.name) === "Bash",
        cancellable: classification.tool?.interruptBehavior === "cancel",
        status: "queued",
        result: undefined,
        modifiers: noModifiers,
        startWaits: 0,
        yieldWaits: 0,
        startDependents: undefined,
        yieldDependents: undefined,
        waitedFor: undefined,
        fiber: undefined,
        startedAt: now,
        interruptedBy: undefined,
        failedRoot: undefined
      }
      tools.push(tool)
      queuedTools.add(tool)
      let doomedBy: TrackedTool | undefined
      for (const { call: earlier, reason } of index.add(tool, tool.footprint)) {
        if (earlier.failedRoot !== undefined && doomedBy === undefined) doomedBy = earlier.failedRoot
        if (earlier.status === "queued" || earlier.status === "executing") {
          tool.startWaits++
          ;(earlier.startDependents ??= []).push(tool)
          ;(tool.waitedFor ??= []).push({ toolUseId: earlier.block.id, name: earlier.block.name, reason })
        }
        if (scheduling === "footprints" && earlier.status !== "yielded") {
          tool.yieldWaits++
          ;(earlier.yieldDependents ??= []).push(tool)
        }
      }
      if (scheduling === "greedy") {
        // The chapter's walk: an unsafe call's result comes before every later one's.
        if (lastUnsafe !== undefined && lastUnsafe.status !== "yielded") {
          tool.yieldWaits++
          ;(lastUnsafe.yieldDependents ??= []).push(tool)
        }
        if (!tool.isConcurrencySafe) lastUnsafe = tool
      }
      const reason = cancelReason(tool)
      if (reason !== undefined) {
        markCompleted(tool, synthetic(tool, reason, now, now))
      } else if (doomedBy !== undefined) {
        tool.failedRoot = doomedBy
        markCompleted(tool, cancelledAsDependent(tool, doomedBy, now))
      } else if (tool.startWaits === 0) {
        ready.push(tool)
      }
      pump(now)
      signal()
    }

    /**
     * `addTool` in the current step when the call is classified at once (most are):
     * `undefined` then, else the Effect that finishes adding it.
     */
    const addNow = (block: Messages.ToolUseBlock): Effect.Effect<void> | undefined => {
      if (discarded || addingDone) return undefined
      const classified = Batches.classify(block, env, settledContext, scheduling)
      if (Exit.isExit(classified)) {
        const exit = classified as Exit.Exit<Batches.Classification>
        if (Exit.isSuccess(exit)) {
          track(block, exit.value)
          return undefined
        }
      }
      return Effect.map(classified, (classification) => track(block, classification))
    }

    const addTool = (block: Messages.ToolUseBlock): Effect.Effect<void> =>
      Effect.suspend(() => addNow(block) ?? Effect.void)

    const finishAdding = Effect.sync(() => {
      addingDone = true
      signal()
    })

    const executor: StreamingExecutor = {
      addTool,
      getCompletedResults: Effect.map(out.clear, Chunk.toReadonlyArray),
      getRemainingResults: Stream.unwrap(Effect.as(finishAdding, Mailbox.toStream(out))),
      results: Mailbox.toStream(out),
      finish: finishAdding,
      interrupt: (reason) => node.abort(reason),
      discard: Effect.suspend(() => {
        if (discarded) return Effect.void
        discarded = true
        signal()
        return Effect.zipRight(out.shutdown, FiberSet.clear(fibers))
      }),
      toolResults: Effect.sync(() =>
        tools.flatMap((tool) => (tool.result !== undefined ? [tool.result.block] : []))
      ),
      tools: Effect.sync(() =>
        tools.map((tool) => ({
          toolUseId: tool.block.id,
          name: tool.block.name,
          status: tool.status,
          isConcurrencySafe: tool.isConcurrencySafe,
          footprint: tool.footprint,
          waitedFor: tool.waitedFor ?? []
        }))
      ),
      abortReason: Effect.sync(() => abortReason),
      stopReason: Effect.sync(() => stopReason),
      interruption: node
    }
    return { executor, addNow }
  })

/**
 * Feed a complete list of calls to a fresh executor at once (what
 * `switchyard dispatch` does): under `"greedy"` the schedule equals the
 * greedy partition of SPEC §4.7, plus sibling cancellation; under
 * `"footprints"` (the default) each call waits only for the earlier calls it
 * conflicts with.
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
      const { addNow, executor } = yield* makeFeedable(env, options)
      // Add while the consumer reads: the output mailbox is bounded, so adding
      // everything before reading could fill it and stall. The calls go in a slice at a
      // time in one step each, with a yield between slices so the consumer keeps up.
      const feed = (from: number): Effect.Effect<void> =>
        Effect.suspend(() => {
          const to = Math.min(from + FEED_SLICE, calls.length)
          for (let i = from; i < to; i++) {
            const pending = addNow(calls[i]!)
            if (pending !== undefined) return Effect.flatMap(pending, () => feed(i + 1))
          }
          return to === calls.length ? executor.finish : Effect.zipRight(Effect.yieldNow(), feed(to))
        })
      yield* Effect.forkScoped(feed(0))
      return executor.results
    })
  )
