/**
 * The streaming executor's state and its transitions (SPEC §4.8, §4.13),
 * without fibers: which calls are queued, executing, completed and yielded,
 * what each waits for before it may start and before its result may be
 * released, the context each starts with, and what an abort or a failure
 * cancels. Every method is one synchronous step; the executor's glue
 * (`StreamingExecutor.ts`) runs the calls as fibers, publishes events and
 * feeds the outcomes back in.
 *
 * Starting a call is asked of the `Driver`, which may complete it on the spot
 * (a call that never waits): the transitions are re-entrant for that.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as Batches from "../Batches.js"
import * as DispatchEvent from "../DispatchEvent.js"
import * as Footprint from "../Footprint.js"
import * as Interruption from "../Interruption.js"
import * as Messages from "../Messages.js"
import * as Results from "../Results.js"
import type * as ToolCall from "../ToolCall.js"
import * as ToolUseContext from "../ToolUseContext.js"
import { CallHeap } from "./callHeap.js"
import { FootprintIndex } from "./footprintIndex.js"

/** @internal */
export type ToolStatus = "queued" | "executing" | "completed" | "yielded"

/** @internal */
export type SiblingCancellation = "bash" | "dependents" | "none"

/** One tracked call. Its fields are the state's to change. */
export interface Tracked {
  readonly index: number
  readonly call: ToolCall.ToolCall
  readonly block: Messages.ToolUseBlock
  readonly isConcurrencySafe: boolean
  footprint: Footprint.Footprint
  /** The footprint is the tool's declaration, resolved against the tree: it is resolved again after a barrier. */
  readonly declared: boolean
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
  startDependents: Array<Tracked> | undefined
  /** The later calls that read or write what this one writes: a failure of this call cancels them. */
  dataDependents: Array<Tracked> | undefined
  yieldDependents: Array<Tracked> | undefined
  waitedFor: Array<DispatchEvent.Wait> | undefined
  startedAt: number
  interruptedBy: Interruption.InterruptReason | undefined
  /** Under `"dependents"`: the failed Bash call whose failure this call is part of. */
  failedRoot: Tracked | undefined
}

/** How a started call ended, as the glue reports it. */
export type Ending =
  | {
    readonly _tag: "Outcome"
    readonly result: DispatchEvent.Result
    readonly modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
    readonly abort: Interruption.InterruptReason | undefined
    readonly stop: string | undefined
  }
  /** Interrupted or failed outside the pipeline: it gets a synthetic result. */
  | { readonly _tag: "Interrupted" }

/** What the state asks of the glue. */
export interface Driver {
  /** Run this call now, starting from `context`. It may complete before this returns. */
  readonly start: (tool: Tracked, context: ToolUseContext.ToolUseContext) => void
}

/** @internal */
export interface Config {
  readonly cap: number
  readonly scheduling: Footprint.Scheduling
  readonly siblingCancellation: SiblingCancellation
}

const noModifiers: ReadonlyArray<ToolUseContext.ContextModifier> = []

const synthetic = (tool: Tracked, reason: Interruption.InterruptReason, startedAt: number, endedAt: number) =>
  DispatchEvent.Result({
    toolUseId: tool.block.id,
    name: tool.block.name,
    status: "cancelled",
    block: Results.interrupted(tool.block.id, reason),
    startedAt,
    endedAt
  })

const cancelledAsDependent = (tool: Tracked, failed: Tracked, at: number) =>
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

/** The executor's state for one turn. */
/** What a completed call asks of the glue. */
export interface Completion {
  /** The aborts to raise on the executor's node (after this step: their listeners change the state again). */
  readonly raise: ReadonlyArray<Interruption.InterruptReason>
  /**
   * A barrier finished: the footprints of these queued calls (in call order)
   * must be resolved again, against the tree it left, and handed to
   * `resolved` before anything else starts.
   */
  readonly resolve: ReadonlyArray<Tracked>
}

const noTools: ReadonlyArray<Tracked> = []
const noAborts: ReadonlyArray<Interruption.InterruptReason> = []
const nothing: Completion = { raise: noAborts, resolve: noTools }

const sameResources = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string> | undefined): boolean => {
  const x = a ?? []
  const y = b ?? []
  if (x.length !== y.length) return false
  const set = new Set(x)
  return y.every((r) => set.has(r))
}

const sameFootprint = (a: Footprint.Footprint, b: Footprint.Footprint): boolean =>
  a === b || (sameResources(a.reads, b.reads) && sameResources(a.writes, b.writes))

export class ExecutorState {
  readonly tools: Array<Tracked> = []
  private index = new FootprintIndex<Tracked>()
  private readonly ready = new CallHeap<Tracked>()
  private readonly yieldable = new CallHeap<Tracked>()
  private readonly queued = new Set<Tracked>()
  readonly executingTools = new Set<Tracked>()
  private lastUnsafe: Tracked | undefined
  private executing = 0
  private yielded = 0
  addingDone = false
  discarded = false
  private siblingError = false
  private newMessage = false
  private hardAbort: Interruption.InterruptReason | undefined
  abortReason: Option.Option<Interruption.InterruptReason> = Option.none()
  stopReason: Option.Option<string> = Option.none()
  // Context modifiers (SPEC §4.8): `settledContext` is the turn's starting context plus the
  // modifiers of the leading run of completed calls; `loose` holds the completed calls
  // after it that have modifiers, in call order.
  private settled = 0
  settledContext: ToolUseContext.ToolUseContext
  private readonly loose: Array<Tracked> = []
  /** Footprints are being resolved again after a barrier: nothing starts until they are. */
  private resolving = false
  /** How many barriers have run (under footprint scheduling): a footprint resolved before one may be stale. */
  barriersRun = 0

  constructor(
    readonly config: Config,
    baseContext: ToolUseContext.ToolUseContext,
    private readonly driver: Driver
  ) {
    this.settledContext = baseContext
  }

  /** Every call is yielded and no more will come: the turn is over. */
  get isOver(): boolean {
    return this.addingDone && this.yielded === this.tools.length
  }

  /** Why a call that has not started must not start, if it must not. */
  private cancelReason(tool: Tracked): Interruption.InterruptReason | undefined {
    return this.siblingError
      ? "sibling_error"
      : this.hardAbort !== undefined
      ? this.hardAbort
      : this.newMessage && tool.cancellable
      ? "new_message"
      : undefined
  }

  private startContext(tool: Tracked): ToolUseContext.ToolUseContext {
    let context = this.settledContext
    for (const earlier of this.loose) {
      if (earlier.index >= tool.index) break
      context = ToolUseContext.applyAll(context, earlier.modifiers)
    }
    return context
  }

  private settle(tool: Tracked): void {
    const loose = this.loose
    if (tool.modifiers.length > 0) {
      let i = loose.length
      while (i > 0 && loose[i - 1]!.index > tool.index) i--
      loose.splice(i, 0, tool)
    }
    while (this.settled < this.tools.length) {
      const next = this.tools[this.settled]!
      if (next.status !== "completed" && next.status !== "yielded") break
      if (next.modifiers.length > 0) {
        this.settledContext = ToolUseContext.applyAll(this.settledContext, next.modifiers)
        loose.shift()
      }
      this.settled++
    }
  }

  private markCompleted(tool: Tracked, result: DispatchEvent.Result): void {
    if (tool.status === "executing") {
      this.executing--
      this.executingTools.delete(tool)
    } else {
      this.queued.delete(tool)
    }
    tool.status = "completed"
    tool.result = result
    this.settle(tool)
    const dependents = tool.startDependents
    if (dependents !== undefined) {
      for (const dependent of dependents) {
        if (--dependent.startWaits === 0 && dependent.status === "queued") this.ready.push(dependent)
      }
    }
    if (tool.yieldWaits === 0) this.yieldable.push(tool)
  }

  /** The next result the yield rules release, lowest position first. */
  nextYieldable(): Tracked | undefined {
    while (true) {
      const tool = this.yieldable.pop()
      if (tool === undefined || tool.status === "completed") return tool
    }
  }

  /** The glue offered this call's result. */
  markYielded(tool: Tracked): void {
    tool.status = "yielded"
    this.yielded++
    // A failed call and its cancelled dependents stay in the index: later calls that
    // conflict with them are cancelled too.
    if (tool.failedRoot === undefined) this.index.remove(tool)
    const dependents = tool.yieldDependents
    if (dependents !== undefined) {
      for (const dependent of dependents) {
        if (--dependent.yieldWaits === 0 && dependent.status === "completed") this.yieldable.push(dependent)
      }
    }
  }

  /**
   * Cancel the queued calls that depend on a failed Bash call's data — that
   * read or write what it wrote or may have written — and, transitively, the
   * calls that depend on theirs (a cancelled call did not write what it would
   * have). A call that only had to wait for it (it writes what the failed call
   * read) runs.
   */
  private cancelDependents(failed: Tracked, now: number): void {
    failed.failedRoot = failed
    const stack = failed.dataDependents === undefined ? [] : failed.dataDependents.slice()
    while (stack.length > 0) {
      const dependent = stack.pop()!
      if (dependent.status !== "queued") continue
      dependent.failedRoot = failed
      this.markCompleted(dependent, cancelledAsDependent(dependent, failed, now))
      if (dependent.dataDependents !== undefined) stack.push(...dependent.dataDependents)
    }
  }

  private start(tool: Tracked, now: number): void {
    tool.status = "executing"
    tool.startedAt = now
    this.executing++
    this.queued.delete(tool)
    this.executingTools.add(tool)
    this.driver.start(tool, this.startContext(tool))
  }

  /** Start ready calls, lowest position first, while the cap allows. */
  pump(now: number): void {
    while (this.executing < this.config.cap && !this.resolving) {
      const tool = this.ready.pop()
      if (tool === undefined) return
      // A wait added by a second resolution pushes it again once the wait is over.
      if (tool.status !== "queued" || tool.startWaits > 0) continue
      const reason = this.cancelReason(tool)
      if (reason !== undefined) this.markCompleted(tool, synthetic(tool, reason, now, now))
      else this.start(tool, now)
    }
  }

  /** A started call ended. */
  complete(tool: Tracked, ending: Ending, now: number): Completion {
    if (this.discarded || tool.status !== "executing") return nothing
    const raise: Array<Interruption.InterruptReason> = []
    if (ending._tag === "Outcome") {
      tool.modifiers = ending.modifiers
      this.markCompleted(tool, ending.result)
      if (ending.stop !== undefined && Option.isNone(this.stopReason)) this.stopReason = Option.some(ending.stop)
      // The chapter's isErrorResult: any error result, a denial included.
      if (tool.isBash && ending.result.block.is_error === true) {
        if (this.config.siblingCancellation === "bash" && !this.siblingError) {
          this.siblingError = true
          raise.push("sibling_error")
        } else if (this.config.siblingCancellation === "dependents") {
          this.cancelDependents(tool, now)
        }
      }
      if (ending.abort !== undefined) {
        // Decided now, so that the pump below starts nothing more this turn.
        if (Interruption.propagatesUp(ending.abort) && this.hardAbort === undefined) this.hardAbort = ending.abort
        raise.push(ending.abort)
      }
    } else {
      const reason = tool.interruptedBy ?? this.cancelReason(tool) ?? "user_interrupt"
      this.markCompleted(tool, synthetic(tool, reason, tool.startedAt, now))
    }
    const resolve = this.afterBarrier(tool)
    this.pump(now)
    return raise.length === 0 && resolve.length === 0 ? nothing : { raise, resolve }
  }

  /**
   * The queued calls with declared footprints between a barrier that ran and
   * the next barrier (those behind the next one are resolved when it has
   * run). Only a barrier may change what a path denotes (links are
   * barriers), and a barrier runs alone: while they are resolved nothing runs.
   */
  private afterBarrier(barrier: Tracked): ReadonlyArray<Tracked> {
    if (this.config.scheduling !== "footprints" || !Footprint.isBarrier(barrier.footprint)) return noTools
    this.barriersRun++
    let found: Array<Tracked> | undefined
    for (let i = barrier.index + 1; i < this.tools.length; i++) {
      const tool = this.tools[i]!
      if (tool.status === "queued" && tool.declared) (found ??= []).push(tool)
      if (Footprint.isBarrier(tool.footprint)) break
    }
    if (found === undefined) return noTools
    this.resolving = true
    return found
  }

  /**
   * The footprints of `tools` (as `afterBarrier` listed them), resolved again.
   * When any changed, every wait is found again from the new footprints (the
   * old waits stay: waiting longer is safe); then the ready calls start.
   */
  resolved(tools: ReadonlyArray<Tracked>, footprints: ReadonlyArray<Footprint.Footprint>, now: number): void {
    this.resolving = false
    if (this.discarded) return
    let changed = false
    tools.forEach((tool, i) => {
      const footprint = footprints[i]!
      if (tool.status !== "queued" || sameFootprint(tool.footprint, footprint)) return
      tool.footprint = footprint
      changed = true
    })
    if (changed) this.rebuild(now)
    this.pump(now)
  }

  /** Register every call not yielded yet afresh, in call order, adding the waits the new footprints need. */
  private rebuild(now: number): void {
    const index = new FootprintIndex<Tracked>()
    const live = this.tools.filter((tool) => tool.status !== "yielded")
    const starts = new Set<string>()
    const yields = new Set<string>()
    for (const tool of live) {
      for (const later of tool.startDependents ?? []) starts.add(`${tool.index}:${later.index}`)
      for (const later of tool.yieldDependents ?? []) yields.add(`${tool.index}:${later.index}`)
    }
    for (const tool of live) {
      let doomedBy: Tracked | undefined
      for (const { call: earlier, data, reason } of index.add(tool, tool.footprint)) {
        if (tool.status !== "queued") continue
        const key = `${earlier.index}:${tool.index}`
        if (data && earlier.failedRoot !== undefined && doomedBy === undefined) doomedBy = earlier.failedRoot
        if ((earlier.status === "queued" || earlier.status === "executing") && !starts.has(key)) {
          this.waitFor(tool, earlier, reason, data)
        }
        if (this.config.scheduling === "footprints" && earlier.status !== "yielded" && !yields.has(key)) {
          tool.yieldWaits++
          ;(earlier.yieldDependents ??= []).push(tool)
        }
      }
      if (doomedBy !== undefined && tool.status === "queued") {
        tool.failedRoot = doomedBy
        this.markCompleted(tool, cancelledAsDependent(tool, doomedBy, now))
      }
    }
    this.index = index
  }

  private waitFor(tool: Tracked, earlier: Tracked, reason: string, data: boolean): void {
    tool.startWaits++
    ;(earlier.startDependents ??= []).push(tool)
    if (data) (earlier.dataDependents ??= []).push(tool)
    ;(tool.waitedFor ??= []).push({ toolUseId: earlier.block.id, name: earlier.block.name, reason })
  }

  /**
   * An abort reached the executor (user, new message, a rejected permission, a
   * failed Bash). Returns the executing calls to interrupt.
   */
  abort(reason: Interruption.InterruptReason, now: number): ReadonlyArray<Tracked> {
    if (reason !== "sibling_error" && Option.isNone(this.abortReason)) this.abortReason = Option.some(reason)
    if (reason === "sibling_error") this.siblingError = true
    else if (reason === "new_message") this.newMessage = true
    else if (this.hardAbort === undefined) this.hardAbort = reason
    const victims: Array<Tracked> = []
    for (const tool of this.executingTools) {
      if (reason === "new_message" && !tool.cancellable) continue
      if (tool.interruptedBy === undefined) tool.interruptedBy = reason
      victims.push(tool)
    }
    for (const tool of Array.from(this.queued)) {
      const cancel = this.cancelReason(tool)
      if (cancel !== undefined) this.markCompleted(tool, synthetic(tool, cancel, now, now))
    }
    this.pump(now)
    return victims
  }

  /** Track a classified call: wait for what it conflicts with, or start it. */
  add(call: ToolCall.ToolCall, classification: Batches.Classification, now: number): void {
    if (this.discarded || this.addingDone) return
    const block = call.block
    const tool: Tracked = {
      index: this.tools.length,
      call,
      block,
      isConcurrencySafe: classification.isConcurrencySafe,
      footprint: classification.footprint,
      declared: classification.declared,
      isBash: (classification.tool?.name ?? block.name) === "Bash",
      cancellable: classification.tool?.interruptBehavior === "cancel",
      status: "queued",
      result: undefined,
      modifiers: noModifiers,
      startWaits: 0,
      yieldWaits: 0,
      startDependents: undefined,
      dataDependents: undefined,
      yieldDependents: undefined,
      waitedFor: undefined,
      startedAt: now,
      interruptedBy: undefined,
      failedRoot: undefined
    }
    this.tools.push(tool)
    this.queued.add(tool)
    let doomedBy: Tracked | undefined
    for (const { call: earlier, data, reason } of this.index.add(tool, tool.footprint)) {
      // Only a call that depends on a failed one's data is cancelled with it.
      if (data && earlier.failedRoot !== undefined && doomedBy === undefined) doomedBy = earlier.failedRoot
      if (earlier.status === "queued" || earlier.status === "executing") this.waitFor(tool, earlier, reason, data)
      if (this.config.scheduling === "footprints" && earlier.status !== "yielded") {
        tool.yieldWaits++
        ;(earlier.yieldDependents ??= []).push(tool)
      }
    }
    if (this.config.scheduling === "greedy") {
      // The chapter's walk: an unsafe call's result comes before every later one's.
      const lastUnsafe = this.lastUnsafe
      if (lastUnsafe !== undefined && lastUnsafe.status !== "yielded") {
        tool.yieldWaits++
        ;(lastUnsafe.yieldDependents ??= []).push(tool)
      }
      if (!tool.isConcurrencySafe) this.lastUnsafe = tool
    }
    const reason = this.cancelReason(tool)
    if (reason !== undefined) {
      this.markCompleted(tool, synthetic(tool, reason, now, now))
    } else if (doomedBy !== undefined) {
      tool.failedRoot = doomedBy
      this.markCompleted(tool, cancelledAsDependent(tool, doomedBy, now))
    } else if (tool.startWaits === 0) {
      this.ready.push(tool)
    }
    this.pump(now)
  }

  /** Every modifier of the turn, in call order: what the next turn starts with. */
  turnModifiers(): ReadonlyArray<ToolUseContext.ContextModifier> {
    return this.tools.flatMap((tool) => tool.modifiers)
  }
}
