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
 * Under `"footprints"` a declared footprint is trusted only when it is proven
 * complete (else the call writes `*`), and it is resolved when the call is
 * added and again, before anything starts, once a barrier (a call that writes
 * `*`: links are barriers) before it has run — so a link made earlier in the
 * batch is seen.
 *
 * The executor is the turn's node in the interruption tree (SPEC §4.9): a
 * failed Bash call aborts it with `sibling_error` under `"bash"` (running
 * siblings are interrupted, queued and later tools never start), or cancels
 * just its data dependents under `"dependents"` (the calls that read or write
 * what it wrote or may have written; a call that only waited for it, because
 * it writes what the failed call read, runs); a user abort or a new message
 * reaching it from the query interrupts what its reason covers.
 *
 * The state and its transitions are in `internal/executorState.ts` (no
 * fibers); this module runs the calls as fibers and publishes into one
 * bounded mailbox.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import type * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Batches from "./Batches.js"
import * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import type * as Footprint from "./Footprint.js"
import { AdmissionQueue } from "./internal/admission.js"
import * as State from "./internal/executorState.js"
import { RunnerPool } from "./internal/runnerPool.js"
import * as Interruption from "./Interruption.js"
import type * as Messages from "./Messages.js"
import type * as Results from "./Results.js"
import * as ToolCall from "./ToolCall.js"
import * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category models
 */
export type ToolStatus = State.ToolStatus

/**
 * Which failures cancel other calls: a Bash error cancels every sibling
 * (`"bash"`, Claude Code's rule), only the later calls that depend on what it
 * wrote or may have written, transitively (`"dependents"`, SPEC §4.13), or
 * nothing (`"none"`).
 *
 * @since 0.1.0
 * @category models
 */
export type SiblingCancellation = State.SiblingCancellation

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
  /** Overrides the cap of `Batches.concurrencyCap`. */
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
  /** The earlier calls it had to wait for, and why (found when it was added, and after a barrier). */
  readonly waitedFor: ReadonlyArray<DispatchEvent.Wait>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamingExecutor {
  /** Track a completed `tool_use` block and start it if it can run. */
  readonly addTool: (call: ToolCall.Any) => Effect.Effect<void>
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

/** How many calls `runAll` adds in one step. */
const FEED_SLICE = 64

/** Footprints resolved at once, as calls are added and after a barrier (each is a few system calls). */
const RESOLVE_CONCURRENCY = 8

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
  /** `addTool` of several calls in the current step, in call order. */
  readonly addNow: (calls: ReadonlyArray<ToolCall.Any>) => void
}

const makeFeedable = (
  env: Execution.Environment,
  options: Options
): Effect.Effect<Feedable, never, Scope.Scope | Results.ResultStore> =>
  Effect.gen(function*() {
    const cap = yield* Batches.concurrencyCap(options.concurrency)
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

    // The state changes in single synchronous steps (`Effect.suspend`/`sync`), which no
    // other fiber can interleave with, so they need no lock. Only the flusher offers
    // results, and it marks a tool yielded after its offer: an interrupted offer loses nothing.
    // Calls are being added (`addNow`): the calls they start get fibers after the last one is
    // added, in call order, so that a runner whose call ends on the spot takes the next.
    let batching = false
    const signal = () => wake.unsafeOpen()

    // Results are held back for the yield rules; everything else goes out at once.
    const held = (event: DispatchEvent.DispatchEvent) => event._tag === "Result" || state.discarded
    const emit: Execution.Emit = Object.assign(
      (event: DispatchEvent.DispatchEvent) => held(event) ? Effect.void : Effect.asVoid(out.offer(event)),
      { unsafeOffer: (event: DispatchEvent.DispatchEvent) => held(event) || out.unsafeOffer(event) }
    )

    const emitFor = (tool: State.Tracked): Execution.Emit => {
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

    // Runs in the runner once its call has ended (the state changes in this one step).
    const complete = (tool: State.Tracked, ending: State.Ending): Effect.Effect<void> => {
      const { raise, resolve } = state.complete(tool, ending, clock.unsafeCurrentTimeMillis())
      if (resolve.length > 0) FiberSet.unsafeAdd(fibers, runFork(resolveAgain(resolve)))
      signal()
      return raise.length === 0 ? Effect.void : Effect.forEach(raise, node.abort, { discard: true })
    }

    // A barrier has run: the declared footprints behind it are resolved against the tree it left
    // (SPEC §4.13: footprints are resolved when the call is about to start), then the calls start.
    const resolveAgain = (tools: ReadonlyArray<State.Tracked>): Effect.Effect<void> =>
      Effect.forEach(
        tools,
        (tool) =>
          Effect.map(
            Batches.classify(tool.call, env, state.settledContext, scheduling),
            (classification) => classification.footprint
          ),
        { concurrency: RESOLVE_CONCURRENCY }
      ).pipe(
        Effect.flatMap((footprints) =>
          Effect.sync(() => {
            state.resolved(tools, footprints, clock.unsafeCurrentTimeMillis())
            runners.flush()
            signal()
          })
        ),
        Effect.interruptible
      )

    const runners: RunnerPool = new RunnerPool({
      fork: (run, immediate) => {
        const fiber = immediate ? runFork(run) : runFork(run, { immediate: false })
        FiberSet.unsafeAdd(fibers, fiber)
        return fiber
      },
      execute: (tool, context) => Execution.execute(tool.call, env, emitFor(tool), { context }),
      complete,
      dropped: () => state.discarded
    })
    const driver: State.Driver = { start: runners.start }
    const state = new State.ExecutorState({ cap, scheduling, siblingCancellation }, baseContext, driver)

    // The only fiber that offers results: it releases every yieldable result, lowest
    // position first, and ends the stream once the turn is over.
    const flusher = Effect.gen(function*() {
      while (true) {
        yield* wake.close
        while (!state.discarded) {
          const tool = state.nextYieldable()
          if (tool === undefined) break
          // The offer suspends only when the mailbox is full.
          if (!out.unsafeOffer(tool.result!)) yield* out.offer(tool.result!)
          state.markYielded(tool)
        }
        if (state.discarded) return
        if (state.isOver) {
          // The turn is over: the next one sees every modifier, in call order.
          const modifiers = state.turnModifiers()
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
        const victims = state.abort(reason, clock.unsafeCurrentTimeMillis())
        runners.flush()
        signal()
        return Effect.forEach(victims, (tool) => runners.interrupt(tool), { discard: true })
      })
    )

    // Calls are classified as they are added; those whose footprints take time to resolve are
    // resolved concurrently and reach the state in call order (`internal/admission.ts`).
    const admissions = new AdmissionQueue({
      classify: (call) => Batches.classify(call, env, state.settledContext, scheduling),
      fork: (resolution) => FiberSet.unsafeAdd(fibers, runFork(Effect.interruptible(resolution))),
      admit: (call, classification) => {
        state.add(call, classification, clock.unsafeCurrentTimeMillis())
        if (!batching) runners.flush()
        signal()
      },
      barriersRun: () => state.barriersRun,
      dropped: () => state.discarded,
      closed: () => {
        state.addingDone = true
        signal()
      }
    }, RESOLVE_CONCURRENCY)

    const addNow = (calls: ReadonlyArray<ToolCall.Any>): void => {
      if (state.discarded || state.addingDone) return
      batching = true
      try {
        for (const call of calls) admissions.add(ToolCall.of(call))
      } finally {
        batching = false
      }
      runners.flush()
    }

    const addTool = (call: ToolCall.Any): Effect.Effect<void> => Effect.sync(() => addNow([call]))

    const finishAdding = Effect.sync(() => admissions.close())

    const executor: StreamingExecutor = {
      addTool,
      getCompletedResults: Effect.map(out.clear, Chunk.toReadonlyArray),
      getRemainingResults: Stream.unwrap(Effect.as(finishAdding, Mailbox.toStream(out))),
      results: Mailbox.toStream(out),
      finish: finishAdding,
      interrupt: (reason) => node.abort(reason),
      discard: Effect.suspend(() => {
        if (state.discarded) return Effect.void
        state.discarded = true
        signal()
        return Effect.zipRight(out.shutdown, FiberSet.clear(fibers))
      }),
      toolResults: Effect.sync(() =>
        state.tools.flatMap((tool) => (tool.result !== undefined ? [tool.result.block] : []))
      ),
      tools: Effect.sync(() =>
        state.tools.map((tool) => ({
          toolUseId: tool.block.id,
          name: tool.block.name,
          status: tool.status,
          isConcurrencySafe: tool.isConcurrencySafe,
          footprint: tool.footprint,
          waitedFor: tool.waitedFor ?? []
        }))
      ),
      abortReason: Effect.sync(() => state.abortReason),
      stopReason: Effect.sync(() => state.stopReason),
      interruption: node
    }
    return { executor, addNow }
  })

/**
 * Feed a complete list of calls to a fresh executor at once (what
 * `switchyard dispatch` does): under `"greedy"` the schedule equals the
 * greedy partition of SPEC §4.7, plus sibling cancellation; under
 * `"footprints"` (the default) each call waits only for the earlier calls it
 * conflicts with. A call that repeats an earlier call's id is renamed and
 * answered with an error, as the query loop does (`ToolCall.uniqueIds`).
 *
 * @since 0.1.0
 * @category utils
 */
export const runAll = (
  calls: ReadonlyArray<ToolCall.Any>,
  env: Execution.Environment,
  options: Options = {}
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const { addNow, executor } = yield* makeFeedable(env, options)
      const unique = ToolCall.uniqueIds()
      // Add while the consumer reads: the output mailbox is bounded, so adding
      // everything before reading could fill it and stall. The calls go in a slice at a
      // time in one step each, with a yield between slices so the consumer keeps up.
      const feed = (from: number): Effect.Effect<void> =>
        Effect.suspend(() => {
          const to = Math.min(from + FEED_SLICE, calls.length)
          addNow(calls.slice(from, to).map(unique))
          return to === calls.length ? executor.finish : Effect.zipRight(Effect.yieldNow(), feed(to))
        })
      yield* Effect.forkScoped(feed(0))
      return executor.results
    })
  )
