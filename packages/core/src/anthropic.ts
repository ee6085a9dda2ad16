/**
 * The Anthropic adapter of the model port (SPEC §4.11), on `@anthropic-ai/sdk`.
 * A separate entry point (`@switchyard/core/anthropic`), so embedders that
 * bring their own model do not load the SDK.
 *
 * ```ts
 * import * as AnthropicModel from "@switchyard/core/anthropic"
 * // ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, SWITCHYARD_MODEL / ANTHROPIC_MODEL
 * const ModelLive = AnthropicModel.layerConfig()
 * ```
 *
 * Each `stream(request)` sends one streaming Messages request
 * (`client.messages.create({ ...params, stream: true })`) and decodes every
 * raw event with `Model.ModelStreamEvent`.
 *
 * - Retries: the SDK's own are off (`maxRetries: 0`); retryable failures
 *   (429, 529 and `overloaded_error`, 408/409/5xx, a refused or broken
 *   connection, an `error` event) are retried with `retrySchedule`, each wait
 *   at least the response's `retry-after`, but only before the first event
 *   was emitted: a partial stream is never replayed. `onRetry` hears of each
 *   retry. 401 and 403 are never retried; an endpoint that cannot be reached
 *   is given up after three attempts, naming its URL.
 * - After the first event every failure ends the stream with a `ModelError`
 *   whose `retryable` is `false` and whose message says how far the stream
 *   got: an `error` SSE event (the SDK raises it; its `error.type` gives the
 *   reason, e.g. `overloaded_error` → `"overloaded"`), a connection broken
 *   mid-block (`"network"`), an end without `message_stop` (`"network"`), an
 *   undecodable event (`"protocol"`, naming the event type) or no event for
 *   `idleTimeout` (`"network"`). The stream therefore never emits `error`
 *   events, nor `ping`s (the SDK drops them).
 * - Interrupting the consuming fiber aborts the HTTP request.
 * - A model name ending in `[1m]` (Claude Code's spelling, `claude-sonnet-5-5[1m]`)
 *   is sent without the suffix and with the 1M-token context beta.
 * - Credentials: an API key, or an auth token (`ANTHROPIC_AUTH_TOKEN`, sent
 *   as `Authorization: Bearer`, for gateways); the token wins when both are
 *   set, as in Claude Code.
 *
 * @since 0.1.0
 */
import Anthropic from "@anthropic-ai/sdk"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as internal from "./internal/anthropic.js"
import * as Model from "./Model.js"
import * as SuggestionGenerator from "./SuggestionGenerator.js"

/**
 * The model used when neither the options, the request nor the environment
 * name one.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultModel = "claude-sonnet-5-5"

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 8192

/**
 * Exponential backoff from 500 ms with jitter, each wait capped at 30 s, for
 * up to 8 attempts in all.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRetrySchedule: Schedule.Schedule<unknown, Model.ModelError> = Schedule.exponential("500 millis")
  .pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.seconds(30))),
    Schedule.intersect(Schedule.recurs(7))
  )

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The API key; optional when `authToken` is given. */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** A bearer token (`ANTHROPIC_AUTH_TOKEN`); it wins over `apiKey`. */
  readonly authToken?: Redacted.Redacted<string> | undefined
  /** Default: the SDK's (`ANTHROPIC_BASE_URL`, else the public API). */
  readonly baseUrl?: string | undefined
  /** Default {@link defaultModel}; a request's `model` wins. */
  readonly model?: string | undefined
  /** Default {@link defaultMaxTokens}; a request's `maxTokens` wins. */
  readonly maxTokens?: number | undefined
  /** Retries before the first event; default {@link defaultRetrySchedule}. */
  readonly retrySchedule?: Schedule.Schedule<unknown, Model.ModelError> | undefined
  /** The longest wait for the next event before the stream fails; default 5 minutes. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** The SDK's timeout for one HTTP request until its response starts; default the SDK's (10 minutes). */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** Called before each retry with the failure, the attempt that failed (from 1) and the wait. */
  readonly onRetry?: ((notice: RetryNotice) => Effect.Effect<void>) | undefined
}

/**
 * What `onRetry` is told.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryNotice {
  readonly error: Model.ModelError
  readonly attempt: number
  readonly delay: Duration.Duration
}

/**
 * The request parameters sent for a model request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestParams = (
  request: Model.ModelRequest,
  defaults: { readonly model: string; readonly maxTokens: number }
): Anthropic.MessageCreateParamsStreaming => ({
  model: apiModel(request.model ?? defaults.model).model,
  max_tokens: request.maxTokens ?? defaults.maxTokens,
  // Messages and tool definitions are already in the API's JSON shapes (the
  // Messages schemas; `input_schema` inlined; `defer_loading` on deferred
  // tools): they are sent as given. The SDK's types are the same shapes with
  // mutable arrays.
  messages: request.messages as Array<Anthropic.MessageParam>,
  ...(request.system !== undefined && request.system.length > 0 ? { system: request.system } : {}),
  ...(request.tools.length > 0 ? { tools: request.tools as Array<Anthropic.Tool> } : {}),
  stream: true
})

/**
 * The beta that gives a model the 1M-token context window (Claude Code's `[1m]` models).
 *
 * @since 0.1.0
 * @category constants
 */
export const longContextBeta = "context-1m-2025-08-07"

/**
 * The model id the API is sent and the request headers it needs: `NAME[1m]`
 * is `NAME` with the {@link longContextBeta}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const apiModel = (
  model: string
): { readonly model: string; readonly headers: Readonly<Record<string, string>> } =>
  model.endsWith("[1m]")
    ? { model: model.slice(0, -"[1m]".length), headers: { "anthropic-beta": longContextBeta } }
    : { model, headers: {} }

/**
 * A model service on an SDK client (e.g. one configured for another backend).
 * Construct the client with `maxRetries: 0`: retries are `retrySchedule`'s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromClient = (
  client: Anthropic,
  options: Omit<Options, "apiKey" | "baseUrl" | "requestTimeout"> = {}
): Model.Service => {
  const defaults = { model: options.model ?? defaultModel, maxTokens: options.maxTokens ?? defaultMaxTokens }
  const idleTimeout = Duration.decode(options.idleTimeout ?? Duration.minutes(5))
  const schedule = options.retrySchedule ?? defaultRetrySchedule
  return {
    stream: (request) =>
      Stream.unwrapScoped(
        internal.open(
          client,
          requestParams(request, defaults),
          idleTimeout,
          apiModel(request.model ?? defaults.model).headers
        ).pipe(
          Effect.retry(internal.retryPolicy(schedule, { onRetry: options.onRetry })),
          Effect.mapError((failure) =>
            internal.isConnectionFailure(failure.error)
              ? new Model.ModelError({ ...failure.error, message: `${failure.error.message} at ${client.baseURL}` })
              : failure.error
          ),
          Effect.map((opened) => internal.events(opened, idleTimeout))
        )
      )
  }
}

/**
 * A model service talking to the Anthropic API with the SDK's retries off.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Model.Service> =>
  Effect.sync(() =>
    fromClient(
      new Anthropic({
        ...(options.authToken !== undefined
          ? { authToken: Redacted.value(options.authToken) }
          : options.apiKey !== undefined
          ? { apiKey: Redacted.value(options.apiKey) }
          : {}),
        maxRetries: 0,
        ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
        ...(options.requestTimeout !== undefined ? { timeout: Duration.toMillis(options.requestTimeout) } : {})
      }),
      options
    )
  )

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Model.LanguageModel> =>
  Layer.effect(Model.LanguageModel, make(options))

type Credentials = Pick<Options, "apiKey" | "authToken">

const apiKeyConfig = Config.redacted("ANTHROPIC_API_KEY")
const authTokenConfig = Config.option(
  Config.redacted("ANTHROPIC_AUTH_TOKEN").pipe(
    Config.validate({ message: "ANTHROPIC_AUTH_TOKEN is empty", validation: (token) => Redacted.value(token) !== "" })
  )
)
const baseUrlConfig = Config.option(Config.nonEmptyString("ANTHROPIC_BASE_URL"))
const modelConfig = Config.nonEmptyString("SWITCHYARD_MODEL").pipe(
  Config.orElse(() => Config.nonEmptyString("ANTHROPIC_MODEL")),
  Config.withDefault(defaultModel)
)

/**
 * The settings read from the environment: `ANTHROPIC_API_KEY` (redacted),
 * `ANTHROPIC_BASE_URL` (optional), the model from `SWITCHYARD_MODEL`, else
 * `ANTHROPIC_MODEL`, else {@link defaultModel}. (`ANTHROPIC_AUTH_TOKEN` is
 * read by {@link layerConfig}.)
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<{
  readonly apiKey: Redacted.Redacted<string>
  readonly baseUrl: Option.Option<string>
  readonly model: string
}> = Config.all({ apiKey: apiKeyConfig, baseUrl: baseUrlConfig, model: modelConfig })

/**
 * The model layer configured from the environment ({@link config}); a field
 * given in `options` wins over its variable (so `ANTHROPIC_API_KEY` is not
 * required when `options.apiKey` is given). With `ANTHROPIC_AUTH_TOKEN` set
 * (or `options.authToken`), the token is the credential and no API key is
 * needed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Partial<Options> = {}
): Layer.Layer<Model.LanguageModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const baseUrl = options.baseUrl ?? Option.getOrUndefined(yield* baseUrlConfig)
      const model = options.model ?? (yield* modelConfig)
      const token = options.authToken ?? Option.getOrUndefined(yield* authTokenConfig)
      // The token wins; without one an API key is required.
      const credentials: Credentials = token !== undefined
        ? { authToken: token }
        : { apiKey: options.apiKey ?? (yield* apiKeyConfig) }
      return layer({ ...options, ...credentials, baseUrl, model })
    })
  )

/**
 * The model that suggests next prompts when none is configured: small and
 * fast, since a suggestion should be ready before the user reads the answer.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSuggestionModel = "claude-haiku-4-5"

/**
 * A `SuggestionGenerator` asking the Anthropic API for a short next prompt,
 * with its own small model: `options.model`, else `SWITCHYARD_SUGGESTION_MODEL`,
 * else {@link defaultSuggestionModel}. The rest is configured like
 * {@link layerConfig}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSuggestionGenerator = (
  options: Partial<Options> = {}
): Layer.Layer<SuggestionGenerator.SuggestionGenerator, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(
      Config.nonEmptyString("SWITCHYARD_SUGGESTION_MODEL").pipe(Config.withDefault(defaultSuggestionModel)),
      (configured) => {
        const model = options.model ?? configured
        return Layer.effect(SuggestionGenerator.SuggestionGenerator, SuggestionGenerator.fromModel({ model })).pipe(
          Layer.provide(layerConfig({ ...options, model }))
        )
      }
    )
  )
