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
import * as Model from "@switchyard/core/Model"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

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
export const zero: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0
}

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
export const priceOf = (model: string): Price | undefined => {
  // A `[1m]` model is priced as its base model.
  const base = model.replace(/\[1m\]$/, "")
  return prices.find(([pattern]) => pattern.test(base))?.[1]
}

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

// -----------------------------------------------------------------------------
// the meter: what every model response of a run used
// -----------------------------------------------------------------------------

/**
 * One model response: the model that answered and what it used.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly model: string
  readonly usage: Usage
}

/**
 * Counts every response the program's model gives, the sub-agents' included,
 * as it streams past (so a limit is checked on what was spent, not on what a
 * consumer has read so far).
 *
 * @since 0.1.0
 * @category models
 */
export interface MeterService {
  /** The responses so far, in order. */
  readonly responses: () => ReadonlyArray<Response>
}

/**
 * @since 0.1.0
 * @category services
 */
export class Meter extends Context.Tag("@switchyard/cli/Cost/Meter")<Meter, MeterService>() {}

const toUsage = (usage: Model.Usage | undefined): Partial<Record<(typeof fields)[number], number>> => {
  const out: Partial<Record<(typeof fields)[number], number>> = {}
  for (const field of fields) {
    const value = usage?.[field]
    if (typeof value === "number") out[field] = value
  }
  return out
}

/**
 * The model service counted by a meter: each response's `message_start`
 * usage, with the fields its `message_delta`s report replaced by theirs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const metered = (model: Model.Service, into: Array<Response>): Model.Service => ({
  stream: (request) =>
    Stream.suspend(() => {
      let index: number | undefined
      return model.stream(request).pipe(
        Stream.tap((event) =>
          Effect.sync(() => {
            if (event.type === "message_start") {
              index = into.length
              into.push({
                // The model asked for: its price is known (the API may answer with a dated or another name).
                model: request.model ?? event.message.model ?? "unknown",
                usage: { ...zero, ...toUsage(event.message.usage) }
              })
            } else if (event.type === "message_delta" && index !== undefined) {
              const current = into[index]!
              into[index] = { ...current, usage: { ...current.usage, ...toUsage(event.usage) } }
            }
          })
        )
      )
    })
})

/**
 * The model layer metered: the `LanguageModel` counted, and the `Meter`
 * that reads the count.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMetered = <E, R>(
  model: Layer.Layer<Model.LanguageModel, E, R>
): Layer.Layer<Model.LanguageModel | Meter, E, R> =>
  Layer.unwrapEffect(Effect.sync(() => {
    const responses: Array<Response> = []
    return Layer.merge(
      Layer.effect(Model.LanguageModel, Effect.map(Model.LanguageModel, (service) => metered(service, responses))).pipe(
        Layer.provide(model)
      ),
      Layer.succeed(Meter, { responses: () => responses })
    )
  }))

/**
 * The usage of some responses, summed.
 *
 * @since 0.1.0
 * @category accounting
 */
export const total = (responses: ReadonlyArray<Response>): Usage =>
  responses.reduce((sum, response) => add(sum, response.usage), zero)

/**
 * What some responses cost, in US dollars (a model without a price counts 0).
 *
 * @since 0.1.0
 * @category accounting
 */
export const totalCostUsd = (responses: ReadonlyArray<Response>): number =>
  Math.round(responses.reduce((sum, r) => sum + (costUsd(r.model, r.usage) ?? 0), 0) * 1e6) / 1e6

/**
 * Claude Code's `modelUsage`: per model, the tokens and their cost.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  readonly webSearchRequests: number
  readonly costUSD: number
  readonly contextWindow: number
  readonly maxOutputTokens: number
}

/**
 * The tokens a response may hold unless a request says otherwise (the
 * Anthropic adapter's `defaultMaxTokens`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxOutputTokens = 8192

/**
 * The context window of a model: 1M tokens for a `[1m]` model, else 200 000.
 *
 * @since 0.1.0
 * @category accounting
 */
export const contextWindow = (model: string): number => (model.endsWith("[1m]") ? 1_000_000 : 200_000)

/**
 * `modelUsage` of some responses, by model, in the order models first answered.
 *
 * @since 0.1.0
 * @category accounting
 */
export const modelUsage = (
  responses: ReadonlyArray<Response>,
  options: { readonly maxOutputTokens?: number | undefined } = {}
): Record<string, ModelUsage> => {
  const out: Record<string, ModelUsage> = {}
  for (const { model, usage } of responses) {
    const before = out[model]
    out[model] = {
      inputTokens: (before?.inputTokens ?? 0) + usage.input_tokens,
      outputTokens: (before?.outputTokens ?? 0) + usage.output_tokens,
      cacheReadInputTokens: (before?.cacheReadInputTokens ?? 0) + usage.cache_read_input_tokens,
      cacheCreationInputTokens: (before?.cacheCreationInputTokens ?? 0) + usage.cache_creation_input_tokens,
      webSearchRequests: 0,
      costUSD: Math.round(((before?.costUSD ?? 0) + (costUsd(model, usage) ?? 0)) * 1e6) / 1e6,
      contextWindow: contextWindow(model),
      maxOutputTokens: options.maxOutputTokens ?? defaultMaxOutputTokens
    }
  }
  return out
}
