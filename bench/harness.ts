/**
 * A small benchmark harness. Candidates that are compared are timed in
 * interleaved rounds (round 1: a, b, c; round 2: a, b, c; …) so drift on a
 * shared machine hits all of them alike; every figure is reported as a median
 * with its min–max, and comparisons as ratios of medians.
 */
import * as Effect from "effect/Effect"

/** Samples of one measure, in its unit. */
export interface Stats {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly samples: ReadonlyArray<number>
}

/** One line of the report. `value` is what the table shows; `stats` is what report.json keeps. */
export interface Row {
  readonly suite: string
  readonly name: string
  readonly value: string
  readonly note?: string
  readonly unit?: string
  readonly stats?: Stats
}

export const rows: Array<Row> = []

/** Free text for a suite's section of the report (where a peer is faster and why, what a figure means). */
export const prose: Array<{ readonly suite: string; readonly text: string }> = []

export const stats = (samples: ReadonlyArray<number>): Stats => {
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, samples }
}

/** Scale every sample (e.g. ms per batch to µs per call). */
export const scale = (s: Stats, factor: number): Stats => stats(s.samples.map((x) => x * factor))

export const fmt = (n: number, digits = 2) => n.toFixed(digits)

/** Digits that keep three significant figures or so. */
const auto = (n: number) => fmt(n, Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2)

/** `median (min–max)`. */
export const show = (s: Stats, digits?: number) => {
  const f = (n: number) => (digits === undefined ? auto(n) : fmt(n, digits))
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`
}

/** Ratio of medians, `1.23×`. */
export const ratio = (a: Stats, b: Stats, digits = 2) => `${fmt(a.median / b.median, digits)}×`

/** A row with a pre-formatted value (kept for suites that compute their own figure). */
export const record = (suite: string, name: string, value: string, note?: string) => {
  rows.push(note === undefined ? { suite, name, value } : { suite, name, value, note })
  console.log(`  ${name.padEnd(58)} ${value}${note ? `  (${note})` : ""}`)
}

/** A row for a measured figure: median (min–max) in `unit`. */
export const recordStats = (suite: string, name: string, s: Stats, unit: string, note?: string) => {
  const value = show(s)
  const row: Row = { suite, name: `${name} (${unit})`, value, unit, stats: s }
  rows.push(note === undefined ? row : { ...row, note })
  console.log(`  ${row.name.padEnd(58)} ${value}${note ? `  (${note})` : ""}`)
}

export const note = (suite: string, text: string) => {
  prose.push({ suite, text })
}

/**
 * Time each candidate `rounds` times, interleaved, after `warmup` untimed
 * interleaved rounds. Returns ms per run for each candidate.
 */
export const compare = async <K extends string>(
  candidates: Record<K, () => Promise<unknown>>,
  options: { readonly rounds?: number; readonly warmup?: number } = {}
): Promise<Record<K, Stats>> => {
  const keys = Object.keys(candidates) as Array<K>
  for (let i = 0; i < (options.warmup ?? 1); i++) for (const k of keys) await candidates[k]()
  const samples = Object.fromEntries(keys.map((k) => [k, [] as Array<number>])) as Record<K, Array<number>>
  for (let i = 0; i < (options.rounds ?? 5); i++) {
    for (const k of keys) {
      const start = performance.now()
      await candidates[k]()
      samples[k].push(performance.now() - start)
    }
  }
  return Object.fromEntries(keys.map((k) => [k, stats(samples[k])])) as Record<K, Stats>
}

/** Run an effect as a promise (for `compare`). */
export const promised = <A, E>(effect: Effect.Effect<A, E>) => () => Effect.runPromise(effect)

/** Median of `samples` timed runs (ms), after `warmup` untimed runs. */
export const timeEffect = <A, E>(
  effect: Effect.Effect<A, E>,
  options: { readonly samples?: number; readonly warmup?: number } = {}
): Promise<number> => timePromise(() => Effect.runPromise(effect), options)

/** Median of `samples` timed runs (ms), after `warmup` untimed runs. */
export const timePromise = async (
  run: () => Promise<unknown>,
  options: { readonly samples?: number; readonly warmup?: number } = {}
): Promise<number> => {
  const result = await compare({ run }, { rounds: options.samples ?? 5, warmup: options.warmup ?? 2 })
  return result.run.median
}
