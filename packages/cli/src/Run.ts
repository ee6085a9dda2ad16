/**
 * `switchyard [run] [PROMPT]`: the agent loop with the built-in tools, the
 * settings' rules and hooks, against Claude (`ANTHROPIC_API_KEY`,
 * `ANTHROPIC_BASE_URL`). In a terminal it is interactive (PROMPT, if given,
 * is the first message); with `-p`, or without a terminal, the prompt (an
 * argument or stdin) runs once and the result is printed. Every run records
 * its transcript (see `Sessions`); `--continue`, `--resume` and
 * `--session-id` pick the conversation.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as Journal from "@switchyard/core/Journal"
import type * as Messages from "@switchyard/core/Messages"
import type * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
import * as Journaling from "./Journaling.js"
import * as LoopRunner from "./LoopRunner.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as Sessions from "./Sessions.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly prompt: string | undefined
  readonly print: boolean
  readonly outputFormat: "text" | "json" | "stream-json"
  readonly inputFormat?: "text" | "stream-json" | undefined
  readonly model: string | undefined
  readonly maxTurns: number | undefined
  readonly systemPrompt: string | undefined
  readonly appendSystemPrompt?: string | undefined
  readonly continue?: boolean | undefined
  /** `""`: `--resume` without an id (pick one). */
  readonly resume?: string | undefined
  readonly sessionId?: string | undefined
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
 * The model name a run uses: `--model`, else `$SWITCHYARD_MODEL`, else
 * `$ANTHROPIC_MODEL`, else the adapter's default.
 *
 * @since 0.1.0
 * @category config
 */
export const modelName = (model: string | undefined): Effect.Effect<string> =>
  Effect.gen(function*() {
    if (model !== undefined) return model
    const fromEnv = [process.env["SWITCHYARD_MODEL"], process.env["ANTHROPIC_MODEL"]].find((m) => m !== undefined && m !== "")
    if (fromEnv !== undefined) return fromEnv
    const Anthropic = yield* Effect.promise(() => import("@switchyard/core/anthropic"))
    return Anthropic.defaultModel
  })

/**
 * How a retry is announced.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryListener = (text: string) => void

/**
 * The line announcing a retry: the failure, the attempt, the wait.
 *
 * @since 0.1.0
 * @category formatting
 */
export const retryText = (notice: { readonly error: Model.ModelError; readonly attempt: number; readonly delay: Duration.Duration }) => {
  const what = notice.error.status !== undefined ? `${notice.error.status} ${notice.error.reason}` : notice.error.reason
  return `API ${what} (${notice.error.message.split("\n")[0]}); retrying, attempt ${notice.attempt + 1}, in ${
    (Duration.toMillis(notice.delay) / 1000).toFixed(1)
  } s`
}

/**
 * The Anthropic model from the environment, loaded lazily (the SDK is only
 * imported by `run`). Without a key: what to do instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const modelLayer = (
  model: string | undefined,
  onRetry: RetryListener = (text) => void process.stderr.write(`switchyard: ${text}\n`)
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
 * A user message on stdin with `--input-format stream-json`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InputLine = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown))
  })
})

const decodeInputLine = Schema.decodeUnknownEither(Schema.parseJson(InputLine))
const decodeBlocks = Schema.decodeUnknownEither(Schema.Array(Schema.Unknown))

/**
 * Decode one stdin line of `--input-format stream-json` into a prompt.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseInputLine = (
  line: string,
  lineNumber: number
): Either.Either<string | ReadonlyArray<Messages.ContentBlock>, CliError.CliError> => {
  const decoded = decodeInputLine(line)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    return Either.left(
      CliError.badInput(
        `stdin line ${lineNumber}: expected {"type":"user","message":{"role":"user","content":…}}${where}` +
          (issue === undefined ? "" : ` (${issue.message.slice(0, 120)})`)
      )
    )
  }
  const content = decoded.right.message.content
  if (typeof content === "string") return Either.right(content)
  const blocks = decodeBlocks(content)
  // Content blocks are sent as given: the API checks their shapes.
  return Either.right(Either.getOrElse(blocks, () => []) as ReadonlyArray<Messages.ContentBlock>)
}

/** Lines of stdin as they arrive. */
const stdinLines = async function*(): AsyncGenerator<string> {
  const { createInterface } = await import("node:readline")
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) yield line
}

/**
 * The conversation a run starts from: new (with an id), or one read back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Start {
  readonly id: string
  readonly messages: ReadonlyArray<Messages.Message>
  readonly repaired: boolean
}

/**
 * Pick the conversation from `--continue`, `--resume ID` and `--session-id`
 * (`--resume` without an id is answered by `pick`, which only a terminal has).
 *
 * @since 0.1.0
 * @category sessions
 */
export const startingPoint = (
  options: Options,
  cwd: string,
  pick: ((sessions: ReadonlyArray<Sessions.Summary>) => Effect.Effect<string | undefined>) | undefined
): Effect.Effect<Start | undefined, CliError.CliError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const chosen = [options.continue ? "--continue" : undefined, options.resume !== undefined ? "--resume" : undefined, options.sessionId !== undefined ? "--session-id" : undefined]
      .filter((x): x is string => x !== undefined)
    if (chosen.length > 1) {
      return yield* Effect.fail(CliError.badInput(`${chosen.join(" and ")} cannot be used together; give one of them`))
    }
    if (options.sessionId !== undefined) {
      if (!Sessions.isValidId(options.sessionId)) {
        return yield* Effect.fail(
          CliError.badInput(`--session-id ${options.sessionId}: use letters, digits, '-', '_' or '.' (e.g. a UUID)`)
        )
      }
      const existing = yield* Effect.either(load(cwd, options.sessionId))
      if (Either.isRight(existing)) {
        return yield* Effect.fail(
          CliError.badInput(`--session-id ${options.sessionId}: that session exists already; continue it with --resume ${options.sessionId}`)
        )
      }
      return { id: options.sessionId, messages: [], repaired: false }
    }
    if (options.continue) {
      const recent = yield* Journaling.mostRecent(cwd)
      if (Option.isNone(recent)) {
        return yield* Effect.fail(CliError.badInput(`--continue: no earlier session in ${cwd}; start one without --continue`))
      }
      return yield* load(cwd, recent.value)
    }
    if (options.resume === undefined) return undefined
    if (options.resume !== "") return yield* load(cwd, options.resume)
    if (pick === undefined) {
      return yield* Effect.fail(
        CliError.badInput("--resume needs a session id when there is no terminal to pick one in (or use --continue)")
      )
    }
    const sessions = yield* Sessions.list(cwd)
    if (sessions.length === 0) {
      return yield* Effect.fail(CliError.badInput(`--resume: no earlier session in ${cwd}`))
    }
    const id = yield* pick(sessions)
    if (id === undefined) return yield* Effect.fail(new CliError.CliError({ message: "no session picked", exitCode: 1, detail: "quiet" }))
    return yield* load(cwd, id)
  })

/** A session by id: the journal's record of it (SPEC §4.14), else its transcript. */
const load = (cwd: string, id: string) =>
  Effect.flatMap(
    Sessions.isValidId(id) ? Journaling.load(id) : Effect.succeedNone,
    Option.match({ onNone: () => Sessions.load(cwd, id), onSome: Effect.succeed })
  )

/**
 * A conversation ready to run: its context, the loop session and the
 * transcript recorder.
 *
 * @since 0.1.0
 * @category models
 */
export interface Conversation {
  readonly context: Ref.Ref<ToolUseContext.ToolUseContext>
  readonly session: QueryLoop.Session
  readonly recorder: Sessions.Recorder
  /** The journal the session's turns go to (SPEC §4.14), when the run journals. */
  readonly journal?: Journal.Journal | undefined
}

/**
 * Open a conversation: a new one, or `start` read back.
 *
 * @since 0.1.0
 * @category sessions
 */
export const openConversation = (
  prepared: Runtime.Prepared,
  start: Start | undefined,
  loopOptions: QueryLoop.Options
): Effect.Effect<Conversation, never, QueryLoop.Requirements | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const id = start?.id ?? crypto.randomUUID()
    const file = path.join(yield* Sessions.directory(prepared.cwd), `${id}.jsonl`)
    const context = yield* Ref.make(ToolUseContext.make({
      cwd: prepared.cwd,
      sessionId: id,
      permissions: prepared.permissions,
      messages: start?.messages ?? [],
      transcriptPath: file
    }))
    const recorder = yield* Sessions.recorder(file, context, { rewrite: start?.repaired ?? false })
    const journal = Option.getOrUndefined(yield* Effect.serviceOption(Journaling.Current))
    const session = yield* QueryLoop.makeSession(context, { ...loopOptions, journal })
    return { context, session, recorder, journal }
  })

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.scoped(Effect.gen(function*() {
    const inputFormat = options.inputFormat ?? "text"
    const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true
    const interactive = !options.print && inputFormat === "text" && terminal
    if (inputFormat === "stream-json" && options.outputFormat !== "stream-json") {
      return yield* Effect.fail(CliError.badInput("--input-format stream-json needs --output-format stream-json"))
    }
    if (inputFormat === "stream-json" && options.prompt !== undefined) {
      return yield* Effect.fail(
        CliError.badInput("--input-format stream-json reads the prompts from stdin; drop the PROMPT argument")
      )
    }
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    if (options.verbose) {
      for (const line of Runtime.settingsSummary(prepared)) yield* Output.error(line)
    }
    const journal = yield* Journaling.open(prepared)
    return yield* runWith(options, prepared, inputFormat, interactive).pipe(Effect.provide(Journaling.layer(journal)))
  }))

const runWith = (options: Options, prepared: Runtime.Prepared, inputFormat: "text" | "stream-json", interactive: boolean) =>
  Effect.gen(function*() {
    const model = yield* modelName(options.model)
    const system = [options.systemPrompt ?? defaultSystemPrompt(prepared.cwd), options.appendSystemPrompt]
      .filter((part): part is string => part !== undefined && part !== "")
      .join("\n\n")
    const loopOptions: QueryLoop.Options = { system, maxTurns: options.maxTurns, model: options.model, scheduling: prepared.scheduling }

    if (interactive) {
      const Terminal = yield* Effect.promise(() => import("./Terminal.js"))
      const ui = new Terminal.TerminalUi()
      const modelLive = yield* modelLayer(options.model, (text) => ui.notice(text))
      const suggestions = yield* Effect.promise(() => import("./SuggestionUi.js"))
      return yield* Effect.acquireUseRelease(
        Effect.sync(() => ui.open()),
        () =>
          Effect.gen(function*() {
            const start = yield* startingPoint(options, prepared.cwd, (sessions) => Terminal.pickSession(ui, sessions))
            const controller = yield* suggestions.make(ui, loopOptions)
            yield* Terminal.repl(ui, {
              prepared,
              model,
              loopOptions,
              firstPrompt: options.prompt,
              start
            }, controller)
          }).pipe(
            Effect.scoped,
            Effect.provide(suggestions.generatorLayer),
            Effect.provide(Runtime.layer(prepared, { model: modelLive, prompt: Terminal.promptLayer(ui) }))
          ),
        () => Effect.sync(() => ui.close())
      )
    }

    const start = yield* startingPoint(options, prepared.cwd, undefined)
    // A resumed session is taken for this process now, so that one run elsewhere is a clear error.
    if (start !== undefined) yield* Journaling.attach(start.id, prepared.cwd)
    const modelLive = yield* modelLayer(options.model)
    const format: LoopRunner.Format = options.outputFormat === "text" ? "final" : options.outputFormat
    const settings = { format, model, verbose: options.verbose }
    const layer = Runtime.layer(prepared, {
      model: modelLive,
      prompt: Runtime.noPrompt(
        "no interactive terminal; allow the call with --allowed-tools, a settings rule, or --permission-mode"
      )
    })
    if (inputFormat === "stream-json") {
      return yield* Effect.gen(function*() {
        const conversation = yield* openConversation(prepared, start, loopOptions)
        yield* Output.line(JSON.stringify(yield* LoopRunner.initLine(conversation.context, model)))
        const iterator = stdinLines()
        let last: LoopRunner.Outcome | undefined
        for (let lineNumber = 1;; lineNumber++) {
          const next = yield* Effect.promise(() => iterator.next())
          if (next.done) break
          if (next.value.trim() === "") continue
          const prompt = parseInputLine(next.value, lineNumber)
          if (Either.isLeft(prompt)) return yield* Effect.fail(prompt.left)
          last = yield* LoopRunner.runPrompt(conversation.session, prompt.right, { ...settings, recorder: conversation.recorder })
        }
        if (last === undefined) return yield* Effect.fail(CliError.badInput("no user message on stdin"))
        yield* LoopRunner.failUnlessEnded(last)
      }).pipe(Effect.provide(layer))
    }
    const prompt = options.prompt ?? (process.stdin.isTTY ? undefined : (yield* Effect.promise(() => Output.readStdin())).trim())
    if (prompt === undefined || prompt === "") {
      return yield* Effect.fail(CliError.badInput("run -p needs a prompt: an argument, or text on stdin"))
    }
    const outcome = yield* Effect.gen(function*() {
      const conversation = yield* openConversation(prepared, start, loopOptions)
      if (format === "stream-json") yield* Output.line(JSON.stringify(yield* LoopRunner.initLine(conversation.context, model)))
      return yield* LoopRunner.runPrompt(conversation.session, prompt, { ...settings, recorder: conversation.recorder })
    }).pipe(Effect.provide(layer))
    yield* LoopRunner.failUnlessEnded(outcome)
  })
