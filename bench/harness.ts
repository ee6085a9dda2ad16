/**
 * A tiny benchmark harness: time effects and promises with warm-up and
 * repeated samples, and collect rows for the report.
 */
import * as Effect from "effect/Effect"

export interface Row {
  readonly suite: string
  readonly name: string
  readonly value: string
  readonly note?: string
}

export const rows: Array<Row> = []

export const record = (suite: string, name: string, value: string, note?: string) => {
  rows.push(note === undefined ? { suite, name, value } : { suite, name, value, note })
  console.log(`  ${name.padEnd(58)} ${value}${note ? `  (${note})` : ""}`)
}

/** Median of `samples` timed runs (ms), after `warmup` untimed runs. */
export const timeEffect = <A, E>(
  effect: Effect.Effect<A, E>,
  options: { readonly samples?: number; readonly warmup?: number } = {}
): Promise<number> =>
  timePromise(() => Effect.runPromise(effect), options)

export const timePromise = async (
  run: () => Promise<unknown>,
  options: { readonly samples?: number; readonly warmup?: number } = {}
): Promise<number> => {
  for (let i = 0; i < (options.warmup ?? 2); i++) await run()
  const times: Array<number> = []
  for (let i = 0; i < (options.samples ?? 5); i++) {
    const start = performance.now()
    await run()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits)
