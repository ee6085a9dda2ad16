/**
 * `switchyard -p PROMPT` (and `switchyard run` without a terminal): the agent
 * loop with the built-in tools, the settings' rules and hooks, against
 * Claude (`ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`),
 * run once for the prompt — piped stdin first, then the PROMPT argument, as
 * Claude Code sends them — or, with `--input-format stream-json`, once per
 * user message on stdin; printed as text, one JSON result or stream-json
 * lines (`StreamJson`). Nothing is asked unless `--permission-prompt-tool`
 * names an MCP tool to ask: an `ask` is a denial that says how to allow the
 * call. `--max-budget-usd`, `--fallback-model` and `--json-schema` shape the
 * run. The interactive session is `Terminal`.
 *
 * @since 0.1.0
 */
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { createInterface } from "node:readline"
import * as CliError from "./CliError.js"
import * as Conversation from "./Conversation.js"
import * as Cost from "./Cost.js"
import * as Journaling from "./Journaling.js"
import * as LoopRunner from "./LoopRunner.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Output from "./Output.js"
import * as PermissionPromptTool from "./PermissionPromptTool.js"
import * as Runtime from "./Runtime.js"
import * as StreamJson from "./StreamJson.js"
import * as StructuredOutput from "./StructuredOutput.js"

/** Lines of stdin as they arrive. */
const stdinLines = async function*(): AsyncGenerator<string> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) yield line
}

/**
 * How long piped stdin may stay silent before a run with a PROMPT argument
 * goes on without it (Claude Code's wait: a script that leaves stdin open
 * without writing to it must not hang the run).
 *
 * @since 0.1.0
 * @category constants
 */
export const stdinWaitMs = 3_000

/**
 * The prompt of a `-p` run: piped stdin first, then the argument, joined by
 * a newline (`git diff | switchyard -p "review this"` sends both).
 *
 * @since 0.1.0
 * @category input
 */
export const promptOf = (argument: string | undefined, stdin: string | undefined): string =>
  [stdin?.trim(), argument].filter((part): part is string => part !== undefined && part.trim() !== "").join("\n")

/** All of stdin, or (with a prompt argument) nothing if no data comes within {@link stdinWaitMs}. */
const readPipedStdin = (withArgument: boolean): Promise<string> =>
  withArgument ? Output.readStdin({ idleMs: stdinWaitMs }) : Output.readStdin()

/** `--max-budget-usd`: before each further model request, whether what was spent reached the limit. */
const budgetCheck = (maxBudgetUsd: number, meter: Cost.MeterService) => (): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const spent = Cost.totalCostUsd(meter.responses())
    return spent >= maxBudgetUsd ? `Reached maximum budget ($${maxBudgetUsd}); spent $${spent.toFixed(6)}` : undefined
  })

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
    const structured = options.jsonSchema === undefined ? undefined : yield* StructuredOutput.make(options.jsonSchema)
    const setup = yield* Conversation.setup(options)
    // The run's journal (SPEC §4.14): where the conversation is read back from and recorded.
    const journal = yield* Journaling.open(setup.prepared)
    return yield* runJournaled(options, inputFormat, setup, structured).pipe(
      Effect.provide(Journaling.layer(journal))
    )
  }))

const runJournaled = (
  options: Conversation.Options,
  inputFormat: "text" | "stream-json",
  setup: Conversation.Setup,
  structured: StructuredOutput.StructuredOutput | undefined
) =>
  Effect.gen(function*() {
    const { model, prepared } = setup
    const start = yield* Conversation.startingPoint(options, prepared.cwd, undefined)
    // A resumed session is taken for this process now: one running elsewhere is a clear error.
    if (start !== undefined) yield* Journaling.attach(start.id, prepared.cwd)
    const modelLive = yield* ModelLayer.layer(options.model, { fallbackModel: options.fallbackModel })
    const format: LoopRunner.Format = options.outputFormat === "text" ? "final" : options.outputFormat
    const settings: LoopRunner.Settings = {
      format,
      model,
      includeDispatchEvents: options.includeDispatchEvents,
      includePartialMessages: options.includePartialMessages,
      structured
    }
    const layer = Runtime.layer(prepared, {
      model: modelLive,
      modelName: model,
      prompt: options.permissionPromptTool !== undefined
        ? PermissionPromptTool.layer(options.permissionPromptTool)
        : Runtime.noPrompt(
          "no interactive terminal; allow the call with --allowed-tools, a settings rule, or --permission-mode"
        ),
      tools: structured === undefined ? [] : [structured.tool]
    })
    // Read before the engine starts (MCP servers): a run without a prompt starts nothing.
    const prompt = inputFormat === "stream-json"
      ? undefined
      : promptOf(
        options.prompt,
        process.stdin.isTTY ? undefined : yield* Effect.promise(() => readPipedStdin(options.prompt !== undefined))
      )
    if (prompt === "") {
      return yield* Effect.fail(CliError.badInput(
        "run -p needs a prompt: an argument, or text on stdin (words after a list option such as --allowedTools " +
          "are its values: put PROMPT before it, or end the list with --)"
      ))
    }
    return yield* Effect.gen(function*() {
      const meter = yield* Effect.serviceOption(Cost.Meter)
      const loopOptions: QueryLoop.Options = {
        ...setup.loopOptions,
        ...(structured === undefined ? {} : {
          system: [setup.loopOptions.system, StructuredOutput.systemPrompt].filter((p) => p !== undefined).join("\n\n")
        }),
        modelEvents: options.includePartialMessages === true,
        ...(options.maxBudgetUsd === undefined || Option.isNone(meter)
          ? {}
          : { beforeRequest: budgetCheck(options.maxBudgetUsd, meter.value) })
      }
      const conversation = yield* Conversation.open(prepared, start, loopOptions)
      if (format === "stream-json") {
        yield* Output.line(JSON.stringify(yield* LoopRunner.initLine(conversation.context, model)))
      }
      const recorded = { ...settings, recorder: conversation.recorder }
      if (prompt !== undefined) {
        return yield* LoopRunner.failUnlessEnded(yield* LoopRunner.runPrompt(conversation.session, prompt, recorded))
      }
      const iterator = stdinLines()
      let last: LoopRunner.Outcome | undefined
      for (let lineNumber = 1;; lineNumber++) {
        const next = yield* Effect.promise(() => iterator.next())
        if (next.done) break
        if (next.value.trim() === "") continue
        const line = StreamJson.parseInputLine(next.value, lineNumber)
        if (Either.isLeft(line)) return yield* Effect.fail(line.left)
        last = yield* LoopRunner.runPrompt(conversation.session, line.right, recorded)
      }
      if (last === undefined) return yield* Effect.fail(CliError.badInput("no user message on stdin"))
      yield* LoopRunner.failUnlessEnded(last)
    }).pipe(Effect.provide(layer))
  })
