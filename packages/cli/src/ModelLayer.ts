/**
 * The model a command talks to: its name (Claude Code's aliases — `sonnet`,
 * `opus`, `haiku`, their `[1m]` variants — resolved from one table, for
 * `--model`, the environment and `/model`), the Anthropic layer with its
 * credentials (`ANTHROPIC_AUTH_TOKEN` as a bearer token, else
 * `ANTHROPIC_API_KEY`), retries announced and `--fallback-model` on
 * overload, and the suggestion generator of the interactive session. The
 * Anthropic SDK is imported lazily, when a command builds one of these.
 *
 * @since 0.1.0
 */
import * as Model from "@switchyard/core/Model"
import * as SuggestionGenerator from "@switchyard/core/SuggestionGenerator"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as Cost from "./Cost.js"

// -----------------------------------------------------------------------------
// names
// -----------------------------------------------------------------------------

/**
 * A model alias: the name people type, the model id it stands for now, and
 * the variable that overrides it (Claude Code's `ANTHROPIC_DEFAULT_*_MODEL`).
 *
 * @since 0.1.0
 * @category names
 */
export interface Alias {
  readonly name: string
  readonly model: string
  readonly variable?: string | undefined
  readonly description: string
}

/**
 * Claude Code's model aliases and the current model each resolves to. A
 * `[1m]` model has the 1M-token context window (the adapter sends the beta).
 * `default` is the model a run uses when none is named.
 *
 * @since 0.1.0
 * @category names
 */
export const aliases: ReadonlyArray<Alias> = [
  { name: "default", model: "claude-sonnet-5-5", description: "the default model (Sonnet)" },
  {
    name: "sonnet",
    model: "claude-sonnet-5-5",
    variable: "ANTHROPIC_DEFAULT_SONNET_MODEL",
    description: "the newest Sonnet, for everyday work"
  },
  {
    name: "opus",
    model: "claude-opus-5-5",
    variable: "ANTHROPIC_DEFAULT_OPUS_MODEL",
    description: "the newest Opus, for hard reasoning"
  },
  {
    name: "haiku",
    model: "claude-haiku-5-5",
    variable: "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    description: "the newest Haiku, fast and cheap"
  },
  { name: "sonnet[1m]", model: "claude-sonnet-5-5[1m]", description: "Sonnet with a 1M-token context window" },
  { name: "opus[1m]", model: "claude-opus-5-5[1m]", description: "Opus with a 1M-token context window" }
]

/**
 * Model names shells offer for `--model` and `/model` (any name is
 * accepted): the aliases, then full ids.
 *
 * @since 0.1.0
 * @category names
 */
export const knownModels: ReadonlyArray<string> = [
  ...aliases.map((alias) => alias.name),
  "claude-sonnet-5-5",
  "claude-opus-5-5",
  "claude-haiku-5-5",
  "claude-opus-4-5",
  "claude-sonnet-4-5",
  "claude-haiku-4-5",
  "claude-opus-4-1"
]

/**
 * The model id for a name: an alias (case-insensitive, as Claude Code reads
 * them) is its variable's value when set, else the table's model; `[1m]` on
 * an alias (`opus[1m]`) keeps the suffix on its model; anything else is a
 * model id already.
 *
 * @since 0.1.0
 * @category names
 */
export const resolve = (name: string, env: Readonly<Record<string, string | undefined>> = process.env): string => {
  const trimmed = name.trim()
  const lower = trimmed.toLowerCase()
  const exact = aliases.find((alias) => alias.name === lower)
  if (exact !== undefined) {
    const override = exact.variable === undefined ? undefined : env[exact.variable]
    return override !== undefined && override !== "" ? override : exact.model
  }
  if (lower.endsWith("[1m]")) {
    const base = aliases.find((alias) => alias.name === lower.slice(0, -"[1m]".length))
    if (base !== undefined) return `${resolve(base.name, env).replace(/\[1m\]$/, "")}[1m]`
  }
  return trimmed
}

/**
 * The model id a run uses: `--model`, else `$SWITCHYARD_MODEL`, else
 * `$ANTHROPIC_MODEL`, else `default`; aliases resolved.
 *
 * @since 0.1.0
 * @category names
 */
export const modelName = (model: string | undefined): Effect.Effect<string> =>
  Effect.sync(() => {
    const named = [model, process.env["SWITCHYARD_MODEL"], process.env["ANTHROPIC_MODEL"]].find((m) =>
      m !== undefined && m.trim() !== ""
    )
    return resolve(named ?? "default")
  })

// -----------------------------------------------------------------------------
// credentials
// -----------------------------------------------------------------------------

/**
 * Where the credential comes from, as the `init` line's `apiKeySource` says
 * it: `ANTHROPIC_API_KEY`, or `none` (an `ANTHROPIC_AUTH_TOKEN` bearer token
 * is not an API key; it wins when both are set, as in Claude Code).
 *
 * @since 0.1.0
 * @category credentials
 */
export const apiKeySource = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  nonEmpty(env["ANTHROPIC_AUTH_TOKEN"]) || !nonEmpty(env["ANTHROPIC_API_KEY"]) ? "none" : "ANTHROPIC_API_KEY"

const nonEmpty = (value: string | undefined): boolean => value !== undefined && value.trim() !== ""

// -----------------------------------------------------------------------------
// retries and fallback
// -----------------------------------------------------------------------------

/**
 * How a retry (or a switch to the fallback model) is announced.
 *
 * @since 0.1.0
 * @category retries
 */
export type RetryListener = (text: string) => void

/**
 * The line announcing a retry: the failure, the attempt, the wait.
 *
 * @since 0.1.0
 * @category retries
 */
export const retryText = (
  notice: { readonly error: Model.ModelError; readonly attempt: number; readonly delay: Duration.Duration }
) => {
  const what = notice.error.status !== undefined ? `${notice.error.status} ${notice.error.reason}` : notice.error.reason
  return `API ${what} (${notice.error.message.split("\n")[0]}); retrying, attempt ${notice.attempt + 1}, in ${
    (Duration.toMillis(notice.delay) / 1000).toFixed(1)
  } s`
}

const toStderr: RetryListener = (text) => void process.stderr.write(`switchyard: ${text}\n`)

/**
 * How many attempts an overloaded primary model gets before the fallback
 * model takes over (Claude Code's three).
 *
 * @since 0.1.0
 * @category retries
 */
export const attemptsBeforeFallback = 3

/**
 * The model service with a fallback: a request the primary model answers
 * with `overloaded` before sending anything is sent again to `fallback`, and
 * every later request of the session goes to `fallback` too (announced once).
 *
 * @since 0.1.0
 * @category retries
 */
export const withFallback = (
  primary: Model.Service,
  fallback: string,
  announce: (from: string) => void
): Model.Service => {
  let switched = false
  return {
    stream: (request) =>
      Stream.suspend(() => {
        if (switched) return primary.stream({ ...request, model: fallback })
        let emitted = false
        return primary.stream(request).pipe(
          Stream.tap(() => Effect.sync(() => (emitted = true))),
          Stream.catchAll((error) => {
            if (emitted || error.reason !== "overloaded") return Stream.fail(error)
            if (!switched) announce(request.model ?? "the model")
            switched = true
            return primary.stream({ ...request, model: fallback })
          })
        )
      })
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export interface LayerOptions {
  readonly onRetry?: RetryListener | undefined
  /** `--fallback-model`: the model that takes over when the primary is overloaded. */
  readonly fallbackModel?: string | undefined
}

/**
 * The Anthropic model from the environment, loaded lazily (the SDK is only
 * imported by the commands that talk to Claude). Without a credential: what
 * to do instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  model: string | undefined,
  options: LayerOptions | RetryListener = {}
): Effect.Effect<Layer.Layer<Model.LanguageModel | Cost.Meter>, CliError.CliError> =>
  Effect.gen(function*() {
    const { fallbackModel, onRetry = toStderr } = typeof options === "function" ? { onRetry: options } : options
    if (!nonEmpty(process.env["ANTHROPIC_API_KEY"]) && !nonEmpty(process.env["ANTHROPIC_AUTH_TOKEN"])) {
      return yield* Effect.fail(
        CliError.badInput(
          "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a bearer token, and ANTHROPIC_BASE_URL " +
            "for an Anthropic-compatible endpoint), or run the offline demo with `switchyard demo`"
        )
      )
    }
    const Anthropic = yield* Effect.promise(() => import("@switchyard/core/anthropic"))
    const base = Anthropic.layerConfig({
      ...(model === undefined ? {} : { model: resolve(model) }),
      onRetry: (notice) => Effect.sync(() => onRetry(retryText(notice))),
      ...(fallbackModel === undefined ? {} : {
        // Overloaded gets three attempts, then the fallback; other failures keep the usual retries.
        retrySchedule: Schedule.intersect(
          Anthropic.defaultRetrySchedule,
          Schedule.union(
            Schedule.recurWhile((error: Model.ModelError) => error.reason !== "overloaded"),
            Schedule.recurs(attemptsBeforeFallback - 1)
          )
        )
      })
    })
    // Counted per request, under the model asked for (the fallback's requests under its name).
    const metered = Cost.layerMetered(Layer.orDie(base))
    if (fallbackModel === undefined) return metered
    const fallback = resolve(fallbackModel)
    return Layer.effect(
      Model.LanguageModel,
      Effect.map(Model.LanguageModel, (primary) =>
        withFallback(primary, fallback, (from) =>
          onRetry(`${from} is overloaded; switched to the fallback model ${fallback}`)))
    ).pipe(Layer.provideMerge(metered))
  })

/**
 * The Anthropic-backed suggestion generator (`SWITCHYARD_SUGGESTION_MODEL`
 * picks its model).
 *
 * @since 0.1.0
 * @category layers
 */
export const suggestionGenerator: Layer.Layer<SuggestionGenerator.SuggestionGenerator> = Layer.unwrapEffect(
  Effect.map(
    Effect.promise(() => import("@switchyard/core/anthropic")),
    (Anthropic) => Layer.orDie(Anthropic.layerSuggestionGenerator())
  )
)

/**
 * Whether the interactive session suggests next prompts (and speculates
 * them): off unless `SWITCHYARD_SUGGESTIONS=1` — each suggestion costs two
 * more model requests after every turn (`/cost` shows them when on).
 *
 * @since 0.1.0
 * @category layers
 */
export const suggestionsEnabled = (env: Readonly<Record<string, string | undefined>> = process.env): boolean =>
  env["SWITCHYARD_SUGGESTIONS"] === "1" || env["SWITCHYARD_SUGGESTIONS"] === "true"

/**
 * The interactive session's suggestion generator: the session's own
 * (metered) model asked with the small suggestion model
 * (`SWITCHYARD_SUGGESTION_MODEL`, else the adapter's).
 *
 * @since 0.1.0
 * @category layers
 */
export const interactiveSuggestions: Layer.Layer<SuggestionGenerator.SuggestionGenerator, never, Model.LanguageModel> =
  Layer.effect(
    SuggestionGenerator.SuggestionGenerator,
    Effect.flatMap(
      Effect.promise(() => import("@switchyard/core/anthropic")),
      (Anthropic) =>
        SuggestionGenerator.fromModel({
          model: resolve(process.env["SWITCHYARD_SUGGESTION_MODEL"] ?? Anthropic.defaultSuggestionModel)
        })
    )
  )
