/**
 * Token usage and its price, as `--output-format json` and `/cost` report
 * them.
 *
 * Each API response is counted once: its `message_start` usage, with every
 * field a `message_delta` reports replaced by that value (the API's delta
 * counts are cumulative for the response, so adding them would count tokens
 * twice), summed over the responses.
 *
 * @since 0.1.0
 */
import type * as QueryLoop from "@switchyard/core/QueryLoop"

/**
 * The usage totals, in the API's field names.
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
}

/**
 * @since 0.1.0
 * @category constants
 */
export const zero: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const fields = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const

/**
 * Add two usages.
 *
 * @since 0.1.0
 * @category combinators
 */
export const add = (a: Usage, b: Usage): Usage => ({
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens,
  cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
  cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens
})

/**
 * The usage of a run's events: per turn (one response each) the first usage
 * seen, each later report's fields replacing it, then the turns summed.
 *
 * @since 0.1.0
 * @category accounting
 */
export const fromEvents = (events: Iterable<QueryLoop.LoopEvent>): Usage => {
  const perTurn = new Map<number, Record<(typeof fields)[number], number>>()
  for (const event of events) {
    if (event._tag !== "Usage") continue
    const current = perTurn.get(event.turn) ?? { ...zero }
    for (const field of fields) {
      const value = event.usage[field]
      if (typeof value === "number") current[field] = value
    }
    perTurn.set(event.turn, current)
  }
  let total = zero
  for (const usage of perTurn.values()) total = add(total, usage)
  return total
}

/**
 * US dollars per million tokens.
 *
 * @since 0.1.0
 * @category models
 */
export interface Price {
  readonly input: number
  readonly output: number
}

/**
 * The list prices of the Claude models, by model name (a dated name such as
 * `claude-sonnet-4-5-20250929` matches its family). Cache writes cost 1.25×
 * and cache reads 0.1× the input price.
 *
 * @since 0.1.0
 * @category constants
 */
export const prices: ReadonlyArray<readonly [RegExp, Price]> = [
  [/^claude-opus-4(-1)?(-\d{8})?$/, { input: 15, output: 75 }],
  [/^claude-3-opus/, { input: 15, output: 75 }],
  [/^claude-opus-\d/, { input: 5, output: 25 }],
  [/^claude-(sonnet-\d|3-7-sonnet|3-5-sonnet)/, { input: 3, output: 15 }],
  [/^claude-3-5-haiku/, { input: 0.8, output: 4 }],
  [/^claude-3-haiku/, { input: 0.25, output: 1.25 }],
  [/^claude-haiku-\d/, { input: 1, output: 5 }]
]

/**
 * The price of a model, if it is a known Claude model.
 *
 * @since 0.1.0
 * @category accounting
 */
export const priceOf = (model: string): Price | undefined => prices.find(([pattern]) => pattern.test(model))?.[1]

/**
 * What a usage costs on a model, in US dollars; `undefined` for a model
 * without a known price.
 *
 * @since 0.1.0
 * @category accounting
 */
export const costUsd = (model: string, usage: Usage): number | undefined => {
  const price = priceOf(model)
  if (price === undefined) return undefined
  const dollars = (usage.input_tokens * price.input + usage.output_tokens * price.output +
    usage.cache_creation_input_tokens * price.input * 1.25 + usage.cache_read_input_tokens * price.input * 0.1) / 1e6
  return Math.round(dollars * 1e6) / 1e6
}

/**
 * The warning for a model without a price.
 *
 * @since 0.1.0
 * @category accounting
 */
export const unknownPriceWarning = (model: string): string =>
  `no price known for the model ${model}; total_cost_usd is 0`
