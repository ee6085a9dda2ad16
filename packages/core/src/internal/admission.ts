/**
 * The streaming executor's admission queue (SPEC §4.13): a call is
 * classified as it is added, and the calls whose footprints take time to
 * resolve (a real path through the FileSystem) are resolved concurrently, a
 * bounded number at once, while they are handed to the executor's state
 * strictly in call order. What a call waits for depends only on the calls
 * before it and their footprints, exactly as if they were resolved one after
 * another; only the waiting for the FileSystem overlaps.
 *
 * A footprint resolved before an earlier barrier (a call that writes `*`:
 * links are barriers) has run may name what the barrier changed, so a
 * declared footprint is classified again at admission when a barrier ran
 * since it was resolved. Once it is in the state, the state resolves it
 * again after the next barrier that runs.
 *
 * Every method is one synchronous step.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Batches from "../Batches.js"
import type * as ToolCall from "../ToolCall.js"

/** What the queue asks of the executor. */
export interface Host {
  /** Classify a call against the tree and context as they are now. */
  readonly classify: (call: ToolCall.ToolCall) => Effect.Effect<Batches.Classification>
  /** Run a resolution in the executor's scope (interrupted when the turn is dropped). */
  readonly fork: (resolution: Effect.Effect<void>) => void
  /** Hand a classified call to the state, in call order. */
  readonly admit: (call: ToolCall.ToolCall, classification: Batches.Classification) => void
  /** How many barriers have run this turn: a change means a footprint resolved before may be stale. */
  readonly barriersRun: () => number
  /** The turn was dropped: nothing more is admitted. */
  readonly dropped: () => boolean
  /** Every call added was admitted after `close`. */
  readonly closed: () => void
}

interface Pending {
  readonly call: ToolCall.ToolCall
  classification: Batches.Classification | undefined
  /** A classification not started yet: every resolution slot was taken. */
  waiting: Effect.Effect<Batches.Classification> | undefined
  /** `barriersRun` when it was classified. */
  epoch: number
}

/** The answer when the classification is at hand (most tools declare synchronously). */
const immediate = (classified: Effect.Effect<Batches.Classification>): Batches.Classification | undefined => {
  if (!Exit.isExit(classified)) return undefined
  const exit = classified as Exit.Exit<Batches.Classification>
  return Exit.isSuccess(exit) ? exit.value : undefined
}

/** @internal */
export class AdmissionQueue {
  private pending: Array<Pending> = []
  private head = 0
  /** The first pending call whose classification has not started. */
  private nextToStart = 0
  private inFlight = 0
  private closing = false
  private done = false

  constructor(private readonly host: Host, private readonly concurrency: number) {}

  /** Every call added is in the state. */
  get isEmpty(): boolean {
    return this.head === this.pending.length
  }

  /** Classify a call and admit it as soon as it and every call before it are classified. */
  add(call: ToolCall.ToolCall): void {
    if (this.closing || this.host.dropped()) return
    const epoch = this.host.barriersRun()
    const classified = this.host.classify(call)
    const answer = immediate(classified)
    if (answer !== undefined && this.isEmpty) {
      this.host.admit(call, answer)
      return
    }
    this.pending.push({
      call,
      classification: answer,
      waiting: answer === undefined ? classified : undefined,
      epoch
    })
    this.startWaiting()
    this.admitReady()
  }

  /** No more calls: `closed` is called once every call added is admitted. */
  close(): void {
    this.closing = true
    this.admitReady()
  }

  private startWaiting(): void {
    while (this.inFlight < this.concurrency && this.nextToStart < this.pending.length) {
      const entry = this.pending[this.nextToStart++]!
      const waiting = entry.waiting
      if (waiting === undefined) continue
      entry.waiting = undefined
      this.resolve(entry, waiting)
    }
  }

  private resolve(entry: Pending, classification: Effect.Effect<Batches.Classification>): void {
    this.inFlight++
    this.host.fork(Effect.map(classification, (answer) => {
      this.inFlight--
      entry.classification = answer
      this.startWaiting()
      this.admitReady()
    }))
  }

  /** Admit the leading run of classified calls, in call order. */
  private admitReady(): void {
    const host = this.host
    while (this.head < this.pending.length && !host.dropped()) {
      const entry = this.pending[this.head]!
      const answer = entry.classification
      if (answer === undefined) return
      if (answer.declared && entry.epoch !== host.barriersRun()) {
        // A barrier ran since it was resolved: resolve it again against the tree it left.
        entry.epoch = host.barriersRun()
        const again = host.classify(entry.call)
        entry.classification = immediate(again)
        if (entry.classification === undefined) {
          this.resolve(entry, again)
          return
        }
        continue
      }
      this.head++
      host.admit(entry.call, answer)
    }
    if (this.isEmpty) {
      this.pending = []
      this.head = 0
      this.nextToStart = 0
      if (this.closing && !this.done && !host.dropped()) {
        this.done = true
        host.closed()
      }
    }
  }
}
