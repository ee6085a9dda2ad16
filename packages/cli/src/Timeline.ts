/**
 * What ran in parallel: groups of overlapping tool runs, and the time saved
 * against running every call one after another. Used by the dispatch report
 * and the demo's summary.
 *
 * @since 0.1.0
 */

/**
 * One tool run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Run {
  readonly toolUseId: string
  readonly name: string
  readonly label: string
  readonly status: string
  readonly startedAt: number
  readonly endedAt: number
  /**
   * How long the call takes run to the end, when it was cut short (a call
   * cancelled by a sibling's failure) and the caller knows; the serial
   * baseline counts this instead of the shortened run.
   */
  readonly fullDurationMs?: number | undefined
}

/**
 * Runs whose intervals overlap (transitively) form one group.
 *
 * @since 0.1.0
 * @category models
 */
export interface Group {
  readonly runs: ReadonlyArray<Run>
  readonly startedAt: number
  readonly endedAt: number
}

/**
 * Group runs that overlapped in time, in start order; runs that started in
 * the same millisecond keep the order given (pass them in call order, so that
 * the same calls print the same way however their timings fall).
 *
 * @since 0.1.0
 * @category grouping
 */
export const groups = (runs: ReadonlyArray<Run>): ReadonlyArray<Group> => {
  const sorted = [...runs].sort((a, b) => a.startedAt - b.startedAt)
  const out: Array<{ runs: Array<Run>; startedAt: number; endedAt: number }> = []
  for (const run of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && run.startedAt < last.endedAt) {
      last.runs.push(run)
      last.endedAt = Math.max(last.endedAt, run.endedAt)
    } else {
      out.push({ runs: [run], startedAt: run.startedAt, endedAt: run.endedAt })
    }
  }
  return out
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Savings {
  /** Every run's full duration added up: the time one after another would take. */
  readonly serialMs: number
  /** Time during which at least one tool was running. */
  readonly busyMs: number
  readonly savedMs: number
}

/**
 * What a run takes to the end: its known full duration, else how long it ran.
 *
 * @since 0.1.0
 * @category measuring
 */
export const fullDuration = (run: Run): number => Math.max(run.endedAt - run.startedAt, run.fullDurationMs ?? 0)

/**
 * @since 0.1.0
 * @category measuring
 */
export const savings = (runs: ReadonlyArray<Run>): Savings => {
  const serialMs = runs.reduce((sum, run) => sum + fullDuration(run), 0)
  const busyMs = groups(runs).reduce((sum, group) => sum + (group.endedAt - group.startedAt), 0)
  return { serialMs, busyMs, savedMs: Math.max(0, serialMs - busyMs) }
}

/**
 * `1234` → `1.2 s`, `87` → `87 ms`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatMs = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`)
