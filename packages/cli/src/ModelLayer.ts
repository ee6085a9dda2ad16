/**
 * The model a command talks to: its name (`--model`, the environment, the
 * adapter's default), the Anthropic layer with retries announced, and the
 * suggestion generator of the interactive session. The Anthropic SDK is
 * imported lazily, when a command builds one of these.
 *
 * @since 0.1.0
 */
import type * as Model from "@switchyard/core/Model"
import type * as SuggestionGenerator from "@switchyard/core/SuggestionGenerator"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CliError from "./CliError.js"

/**
 * The model name a run uses: `--model`, else `$SWITCHYARD_MODEL`, else
 * `$ANTHROPIC_MODEL`, else the adapter's default.
 *
 * @since 0.1.0
 * @category names
 */
export const modelName = (model: string | undefined): Effect.Effect<string> =>
  Effect.gen(function*() {
    if (model !== undefined) return model
    const fromEnv = [process.env["SWITCHYARD_MODEL"], process.env["ANTHROPIC_MODEL"]].find((m) =>
      m !== undefined && m !== ""
    )
    if (fromEnv !== undefined) return fromEnv
    const Anthropic = yield* Effect.promise(() => import("@switchyard/core/anthropic"))
    return Anthropic.defaultModel
  })

/**
 * How a retry is announced.
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
 * The Anthropic model from the environment, loaded lazily (the SDK is only
 * imported by the commands that talk to Claude). Without a key: what to do
 * instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  model: string | undefined,
  onRetry: RetryListener = toStderr
): Effect.Effect<Layer.Layer<Model.LanguageModel>, CliError.CliError> =>
  Effect.gen(function*() {
    const key = process.env["ANTHROPIC_API_KEY"]
    if (key === undefined || key.trim() === "") {
      return yield* Effect.fail(
        CliError.badInput(
          "No API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for an Anthropic-compatible endpoint), " +
            "or run the offline demo with `switchyard demo`"
        )
      )
    }
    const Anthropic = yield* Effect.promise(() => import("@switchyard/core/anthropic"))
    return Layer.orDie(Anthropic.layerConfig({
      ...(model === undefined ? {} : { model }),
      onRetry: (notice) => Effect.sync(() => onRetry(retryText(notice)))
    }))
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
 * The interactive session's suggestions: the Anthropic-backed generator,
 * off with `SWITCHYARD_SUGGESTIONS=0`.
 *
 * @since 0.1.0
 * @category layers
 */
export const interactiveSuggestions: Layer.Layer<never> | Layer.Layer<SuggestionGenerator.SuggestionGenerator> =
  Layer.unwrapEffect(
    Effect.sync(() => process.env["SWITCHYARD_SUGGESTIONS"] === "0" ? Layer.empty : suggestionGenerator)
  )
