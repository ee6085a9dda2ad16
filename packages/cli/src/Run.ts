/**
 * `switchyard run [PROMPT]`: the agent loop with the built-in tools, the
 * settings' rules and hooks, against Claude (`ANTHROPIC_API_KEY`,
 * `ANTHROPIC_BASE_URL`). With `-p` it runs once and prints the result;
 * without a prompt in a terminal it is interactive.
 *
 * @since 0.1.0
 */
import type * as Model from "@switchyard/core/Model"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CliError from "./CliError.js"
import * as LoopRunner from "./LoopRunner.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly prompt: string | undefined
  readonly print: boolean
  readonly outputFormat: "text" | "json" | "stream-json"
  readonly model: string | undefined
  readonly maxTurns: number | undefined
  readonly systemPrompt: string | undefined
}

/**
 * The system prompt of `switchyard run`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSystemPrompt = (cwd: string) =>
  [
    "You are an agent working in a code base through tools. Be concise.",
    `The working directory is ${cwd}. Paths may be relative to it.`,
    "Read files before editing them. Prefer several independent tool calls in one message: read-only calls run in parallel."
  ].join("\n")

/**
 * The Anthropic model from the environment, loaded lazily (the SDK is only
 * imported by `run`). Without a key: what to do instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const modelLayer = (model: string | undefined): Effect.Effect<Layer.Layer<Model.LanguageModel>, CliError.CliError> =>
  Effect.gen(function*() {
    const key = process.env["ANTHROPIC_API_KEY"]
    if (key === undefined || key.trim() === "") {
      return yield* Effect.fail(
        CliError.badInput(
          "No API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for an Anthropic-compatible endpoint), " +
            "or run the offline demo with `npx switchyard demo`"
        )
      )
    }
    const Anthropic = yield* Effect.promise(() => import("@switchyard/core/anthropic"))
    return Layer.orDie(Anthropic.layerConfig(model === undefined ? {} : { model }))
  })

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const model = yield* modelLayer(options.model)
    const loopOptions: QueryLoop.Options = {
      system: options.systemPrompt ?? defaultSystemPrompt(prepared.cwd),
      maxTurns: options.maxTurns,
      model: options.model,
      scheduling: prepared.scheduling
    }
    const interactive = !options.print && options.prompt === undefined && process.stdin.isTTY === true &&
      process.stdout.isTTY === true
    if (interactive) {
      const Terminal = yield* Effect.promise(() => import("./Terminal.js"))
      const ui = new Terminal.TerminalUi()
      const banner = `${Output.paint("bold", "switchyard")} ${Output.paint("gray", `· ${prepared.cwd} · mode ${prepared.permissions.mode} · /help`)}`
      return yield* Effect.acquireUseRelease(
        Effect.sync(() => ui.open()),
        () =>
          Terminal.repl(ui, Runtime.toolUseContext(prepared), loopOptions, banner).pipe(
            Effect.provide(Runtime.layer(prepared, { model, prompt: Terminal.promptLayer(ui) }))
          ),
        () => Effect.sync(() => ui.close())
      )
    }
    const prompt = options.prompt ?? (process.stdin.isTTY ? undefined : (yield* Effect.promise(() => Output.readStdin())).trim())
    if (prompt === undefined || prompt === "") {
      return yield* Effect.fail(CliError.badInput("run -p needs a prompt: an argument, or text on stdin"))
    }
    const format: LoopRunner.Format = options.outputFormat === "text" ? "final" : options.outputFormat
    const outcome = yield* LoopRunner.runOnce(prompt, Runtime.toolUseContext(prepared), format, loopOptions).pipe(
      Effect.provide(
        Runtime.layer(prepared, {
          model,
          prompt: Runtime.noPrompt(
            "no interactive terminal; allow the call with --allowed-tools, a settings rule, or --permission-mode"
          )
        })
      )
    )
    yield* LoopRunner.failUnlessEnded(outcome, options.outputFormat !== "text")
  })
