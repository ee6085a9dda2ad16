/**
 * `switchyard -p PROMPT` (and `switchyard run` without a terminal): the agent
 * loop with the built-in tools, the settings' rules and hooks, against
 * Claude (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), run once for the prompt
 * (an argument or stdin) — or, with `--input-format stream-json`, once per
 * user message on stdin — printed as text, one JSON result or stream-json
 * lines (`StreamJson`). Nothing is asked: an `ask` is a denial that says how
 * to allow the call. The interactive session is `Terminal`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createInterface } from "node:readline"
import * as CliError from "./CliError.js"
import * as Conversation from "./Conversation.js"
import * as Journaling from "./Journaling.js"
import * as LoopRunner from "./LoopRunner.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as StreamJson from "./StreamJson.js"

/** Lines of stdin as they arrive. */
const stdinLines = async function*(): AsyncGenerator<string> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) yield line
}

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Conversation.Options) =>
  Effect.scoped(Effect.gen(function*() {
    const inputFormat = options.inputFormat ?? "text"
    if (inputFormat === "stream-json" && options.outputFormat !== "stream-json") {
      return yield* Effect.fail(CliError.badInput("--input-format stream-json needs --output-format stream-json"))
    }
    if (inputFormat === "stream-json" && options.prompt !== undefined) {
      return yield* Effect.fail(
        CliError.badInput("--input-format stream-json reads the prompts from stdin; drop the PROMPT argument")
      )
    }
    const { loopOptions, model, prepared } = yield* Conversation.setup(options)
    // The run's journal (SPEC §4.14): where the conversation is read back from and recorded.
    const journal = yield* Journaling.open(prepared)
    return yield* runJournaled(options, inputFormat, loopOptions, model, prepared).pipe(
      Effect.provide(Journaling.layer(journal))
    )
  }))

const runJournaled = (
  options: Conversation.Options,
  inputFormat: "text" | "stream-json",
  loopOptions: Conversation.Setup["loopOptions"],
  model: string,
  prepared: Conversation.Setup["prepared"]
) =>
  Effect.gen(function*() {
    const start = yield* Conversation.startingPoint(options, prepared.cwd, undefined)
    // A resumed session is taken for this process now: one running elsewhere is a clear error.
    if (start !== undefined) yield* Journaling.attach(start.id, prepared.cwd)
    const modelLive = yield* ModelLayer.layer(options.model)
    const format: LoopRunner.Format = options.outputFormat === "text" ? "final" : options.outputFormat
    const settings = { format, model, verbose: options.verbose }
    const layer = Runtime.layer(prepared, {
      model: modelLive,
      modelName: model,
      prompt: Runtime.noPrompt(
        "no interactive terminal; allow the call with --allowed-tools, a settings rule, or --permission-mode"
      )
    })
    if (inputFormat === "stream-json") {
      return yield* Effect.gen(function*() {
        const conversation = yield* Conversation.open(prepared, start, loopOptions)
        yield* Output.line(JSON.stringify(yield* StreamJson.initLine(conversation.context, model)))
        const iterator = stdinLines()
        let last: LoopRunner.Outcome | undefined
        for (let lineNumber = 1;; lineNumber++) {
          const next = yield* Effect.promise(() => iterator.next())
          if (next.done) break
          if (next.value.trim() === "") continue
          const prompt = StreamJson.parseInputLine(next.value, lineNumber)
          if (Either.isLeft(prompt)) return yield* Effect.fail(prompt.left)
          last = yield* LoopRunner.runPrompt(conversation.session, prompt.right, {
            ...settings,
            recorder: conversation.recorder
          })
        }
        if (last === undefined) return yield* Effect.fail(CliError.badInput("no user message on stdin"))
        yield* LoopRunner.failUnlessEnded(last)
      }).pipe(Effect.provide(layer))
    }
    const prompt = options.prompt ??
      (process.stdin.isTTY ? undefined : (yield* Effect.promise(() => Output.readStdin())).trim())
    if (prompt === undefined || prompt === "") {
      return yield* Effect.fail(CliError.badInput("run -p needs a prompt: an argument, or text on stdin"))
    }
    const outcome = yield* Effect.gen(function*() {
      const conversation = yield* Conversation.open(prepared, start, loopOptions)
      if (format === "stream-json") {
        yield* Output.line(JSON.stringify(yield* StreamJson.initLine(conversation.context, model)))
      }
      return yield* LoopRunner.runPrompt(conversation.session, prompt, { ...settings, recorder: conversation.recorder })
    }).pipe(Effect.provide(layer))
    yield* LoopRunner.failUnlessEnded(outcome)
  })
