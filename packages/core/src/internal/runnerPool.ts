/**
 * The streaming executor's runners: the fibers that run the calls the state
 * starts (SPEC §4.8). The state asks for starts in call order; they wait in
 * a FIFO for a fiber, and start in that order.
 *
 * A runner whose call ended takes the next waiting call itself, so a turn of
 * many short calls forks about as many fibers as run at once, not one per
 * call (a fork copies the fiber's FiberRefs and registers it with its scope
 * and supervisor: most of a no-op call's cost). It takes one only when
 *
 * - no interrupt can still reach it: an abort marks the calls it interrupts
 *   (`interruptedBy`) in the step that picks them, before it sends the
 *   interrupt to their fibers, so a runner whose call was not marked when it
 *   ended receives none; and
 * - its call left the FiberRefs that decide how an effect runs as they were
 *   forked (`ambientOf`), so the next call starts as it would on a fresh fork.
 *
 * Otherwise it ends and the waiting calls get fibers of their own. A call that
 * was marked while it waited for a fiber ends in its synthetic result without
 * running, as it would have on a fiber interrupted before it began.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as Execution from "../Execution.js"
import type * as Results from "../Results.js"
import type * as ToolUseContext from "../ToolUseContext.js"
import type * as State from "./executorState.js"

/** Starts on one stack before the next runner is forked to start later (runners starting each other). */
const MAX_NESTED_STARTS = 4

/**
 * The values of the FiberRefs that decide how an effect runs: its services,
 * logging, tracing, scheduling, batching, metrics. Effect's own combinators
 * that change one (`provideService`, `locally`, `annotateLogs`, spans) put
 * the same value back when they end.
 */
const ambientOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): ReadonlyArray<unknown> => [
  fiber.getFiberRef(FiberRef.currentContext),
  fiber.getFiberRef(FiberRef.currentConcurrency),
  fiber.getFiberRef(FiberRef.currentRequestBatchingEnabled),
  fiber.getFiberRef(FiberRef.currentRequestCache),
  fiber.getFiberRef(FiberRef.currentRequestCacheEnabled),
  fiber.getFiberRef(FiberRef.currentSchedulingPriority),
  fiber.getFiberRef(FiberRef.currentMaxOpsBeforeYield),
  fiber.getFiberRef(FiberRef.currentLogAnnotations),
  fiber.getFiberRef(FiberRef.currentLoggers),
  fiber.getFiberRef(FiberRef.currentLogLevel),
  fiber.getFiberRef(FiberRef.currentMinimumLogLevel),
  fiber.getFiberRef(FiberRef.currentLogSpan),
  fiber.getFiberRef(FiberRef.currentScheduler),
  fiber.getFiberRef(FiberRef.currentSupervisor),
  fiber.getFiberRef(FiberRef.currentMetricLabels),
  fiber.getFiberRef(FiberRef.currentTracerEnabled),
  fiber.getFiberRef(FiberRef.currentTracerTimingEnabled),
  fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations),
  fiber.getFiberRef(FiberRef.currentTracerSpanLinks)
]

const sameAmbient = (fiber: Fiber.RuntimeFiber<unknown, unknown>, forked: ReadonlyArray<unknown>): boolean => {
  const now = ambientOf(fiber)
  for (let i = 0; i < now.length; i++) if (now[i] !== forked[i]) return false
  return true
}

interface Start {
  readonly tool: State.Tracked
  readonly context: ToolUseContext.ToolUseContext
}

interface Runner {
  readonly fiber: Fiber.RuntimeFiber<void>
  readonly ambient: ReadonlyArray<unknown>
}

/** What the pool asks of the executor. */
export interface Host {
  /** Fork from the executor's runtime (uninterruptible: a runner opens an interruptible region around its call). */
  readonly fork: (
    run: Effect.Effect<void, never, Results.ResultStore>,
    immediate: boolean
  ) => Fiber.RuntimeFiber<void>
  /** The call's pipeline. */
  readonly execute: (
    tool: State.Tracked,
    context: ToolUseContext.ToolUseContext
  ) => Effect.Effect<Execution.Outcome, never, Results.ResultStore>
  /** The call ended: change the state in this step; the Effect runs on the runner after it. */
  readonly complete: (tool: State.Tracked, ending: State.Ending) => Effect.Effect<void>
  /** The turn was dropped: nothing more starts. */
  readonly dropped: () => boolean
}

const interrupted: State.Ending = { _tag: "Interrupted" }

/** @internal */
export class RunnerPool {
  private starts: Array<Start> = []
  private head = 0
  /** A `flush` is on the stack: it gives the waiting calls fibers once the current runner suspends. */
  private flushing = false
  private nesting = 0
  /** The fiber running each call that has one. */
  private readonly running = new Map<State.Tracked, Fiber.RuntimeFiber<void>>()

  constructor(private readonly host: Host) {}

  /** The state started a call (`Driver.start`): it waits for a fiber until `flush`. */
  readonly start = (tool: State.Tracked, context: ToolUseContext.ToolUseContext): void => {
    this.starts.push({ tool, context })
  }

  /** Give every waiting call a fiber, in call order (a runner whose call ends on the spot takes the next). */
  flush(): void {
    if (this.flushing) return
    this.flushing = true
    try {
      while (true) {
        const next = this.take()
        if (next === undefined) return
        this.forkRunner(next, this.nesting < MAX_NESTED_STARTS)
      }
    } finally {
      this.flushing = false
    }
  }

  /** Interrupt the fiber running `tool`, if it has one (`tool.interruptedBy` is already set). */
  interrupt(tool: State.Tracked): Effect.Effect<void> {
    const fiber = this.running.get(tool)
    return fiber === undefined ? Effect.void : Fiber.interruptFork(fiber)
  }

  private take(): Start | undefined {
    if (this.host.dropped()) {
      this.starts = []
      this.head = 0
      return undefined
    }
    if (this.head === this.starts.length) {
      if (this.head > 0) {
        this.starts = []
        this.head = 0
      }
      return undefined
    }
    return this.starts[this.head++]
  }

  private forkRunner(first: Start, immediate: boolean): void {
    const run = Effect.withFiberRuntime<void, never, Results.ResultStore>((fiber) =>
      this.runCall({ fiber, ambient: ambientOf(fiber) }, first)
    )
    let fiber: Fiber.RuntimeFiber<void>
    if (immediate) {
      this.nesting++
      try {
        fiber = this.host.fork(run, true)
      } finally {
        this.nesting--
      }
    } else {
      fiber = this.host.fork(run, false)
    }
    if (first.tool.status === "executing" && !this.running.has(first.tool)) this.running.set(first.tool, fiber)
  }

  private runCall(runner: Runner, { context, tool }: Start): Effect.Effect<void, never, Results.ResultStore> {
    this.running.set(tool, runner.fiber)
    if (tool.interruptedBy !== undefined || this.host.dropped()) return this.complete(runner, tool, interrupted)
    return Effect.matchCauseEffect(Effect.interruptible(this.host.execute(tool, context)), {
      onFailure: () => this.complete(runner, tool, interrupted),
      onSuccess: (outcome) =>
        this.complete(runner, tool, {
          _tag: "Outcome",
          result: outcome.result,
          modifiers: outcome.modifiers,
          abort: outcome.abort,
          stop: outcome.stop
        })
    })
  }

  private complete(
    runner: Runner,
    tool: State.Tracked,
    ending: State.Ending
  ): Effect.Effect<void, never, Results.ResultStore> {
    const reusable = ending._tag === "Outcome" && tool.interruptedBy === undefined &&
      sameAmbient(runner.fiber, runner.ambient)
    this.running.delete(tool)
    const after = this.host.complete(tool, ending)
    if (!reusable) {
      this.flush()
      return after
    }
    const next = this.take()
    if (next === undefined) return after
    this.running.set(next.tool, runner.fiber)
    // The calls behind it start after it: on this stack once it suspends (a `flush` is under
    // this runner), else on fibers forked to start once this one yields.
    if (!this.flushing) {
      for (let rest = this.take(); rest !== undefined; rest = this.take()) this.forkRunner(rest, false)
    }
    return Effect.zipRight(after, this.runCall(runner, next))
  }
}
