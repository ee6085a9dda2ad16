/**
 * The conversation of `switchyard run`: where it starts (new, `--continue`,
 * `--resume [ID]`, `--session-id`), and opening it — its tool-use context,
 * the loop session and the transcript recorder. Shared by the headless run
 * (`Run`) and the interactive session (`Terminal`).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as Journal from "@switchyard/core/Journal"
import type * as Messages from "@switchyard/core/Messages"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as CliError from "./CliError.js"
import * as Journaling from "./Journaling.js"
import * as Memory from "./Memory.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as Sessions from "./Sessions.js"

/**
 * The options of `switchyard run`.
 *
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
  /** With `--continue`/`--resume`: go on in a new session (`--session-id` names it). */
  readonly forkSession?: boolean | undefined
  readonly fallbackModel?: string | undefined
  readonly maxBudgetUsd?: number | undefined
  /** A JSON Schema (text) the answer must match. */
  readonly jsonSchema?: string | undefined
  /** An MCP tool that answers permission questions. */
  readonly permissionPromptTool?: string | undefined
  readonly includePartialMessages?: boolean | undefined
  readonly includeDispatchEvents?: boolean | undefined
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
    "Read files before editing them. Prefer several independent tool calls in one message: " +
    "read-only calls run in parallel."
  ].join("\n")

/**
 * What a run is set up with: the prepared settings, the model name and the
 * loop's options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Setup {
  readonly prepared: Runtime.Prepared
  readonly model: string
  readonly loopOptions: QueryLoop.Options
  /** The memory files, sent with every request (`loopOptions.userContext`). */
  readonly memory: Memory.Memory
}

/**
 * Prepare the settings (warnings on stderr, the files loaded with
 * `--verbose`), pick the model name, build the system prompt and read the
 * memory files.
 *
 * @since 0.1.0
 * @category constructors
 */
export const setup = (
  options: Options
): Effect.Effect<Setup, CliError.CliError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    if (options.verbose) {
      for (const line of Runtime.settingsSummary(prepared)) yield* Output.error(line)
    }
    const model = yield* ModelLayer.modelName(options.model)
    const system = [options.systemPrompt ?? defaultSystemPrompt(prepared.cwd), options.appendSystemPrompt]
      .filter((part): part is string => part !== undefined && part !== "")
      .join("\n\n")
    const withheld: Array<string> = []
    const memory = yield* Memory.make(prepared.cwd, {
      permissions: prepared.permissions,
      onWithheld: (file) => withheld.push(file)
    })
    for (const file of new Set(withheld)) {
      yield* Output.warn(`memory: ${file} is not loaded: a Read deny rule covers it`)
    }
    if (options.verbose) {
      for (const file of yield* memory.files) yield* Output.error(`memory: loaded ${file.path} (${file.kind})`)
    }
    const loopOptions: QueryLoop.Options = {
      system,
      maxTurns: options.maxTurns,
      model,
      scheduling: prepared.scheduling,
      userContext: memory.userContext
    }
    return { prepared, model, loopOptions, memory }
  })

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
 * How `--resume` without an id picks a session (only a terminal has one):
 * the id, or nothing picked.
 *
 * @since 0.1.0
 * @category models
 */
export type Picker = (sessions: ReadonlyArray<Sessions.Summary>) => Effect.Effect<string | undefined>

/**
 * Pick the conversation from `--continue`, `--resume ID` and `--session-id`
 * (`--resume` without an id is answered by `pick`). Nothing picked ends the
 * command quietly with exit code 1. With `--fork-session` a resumed
 * conversation goes on under a new id (`--session-id`'s, else a fresh one):
 * its transcript is a copy, the old one stays as it was.
 *
 * @since 0.1.0
 * @category sessions
 */
export const startingPoint = (
  options: Options,
  cwd: string,
  pick: Picker | undefined
): Effect.Effect<Start | undefined, CliError.CliError | CliError.SilentExit, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const resuming = options.continue === true || options.resume !== undefined
    const chosen = [
      options.continue ? "--continue" : undefined,
      options.resume !== undefined ? "--resume" : undefined,
      // A fork may be named.
      options.sessionId !== undefined && !(options.forkSession && resuming) ? "--session-id" : undefined
    ].filter((x): x is string => x !== undefined)
    if (chosen.length > 1) {
      return yield* Effect.fail(CliError.badInput(`${chosen.join(" and ")} cannot be used together; give one of them`))
    }
    if (options.forkSession && !resuming) {
      return yield* Effect.fail(CliError.badInput("--fork-session forks a resumed session: add --continue or --resume"))
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
          CliError.badInput(
            `--session-id ${options.sessionId}: that session exists already; ` +
              `continue it with --resume ${options.sessionId}`
          )
        )
      }
      if (!resuming) return { id: options.sessionId, messages: [], repaired: false }
    }
    const fork = (start: Start): Start =>
      options.forkSession
        ? { id: options.sessionId ?? crypto.randomUUID(), messages: start.messages, repaired: true }
        : start
    return yield* Effect.map(resumed(options, cwd, pick), (start) => (start === undefined ? undefined : fork(start)))
  })

const resumed = (
  options: Options,
  cwd: string,
  pick: Picker | undefined
): Effect.Effect<Start | undefined, CliError.CliError | CliError.SilentExit, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    if (options.continue) {
      const recent = yield* Journaling.mostRecent(cwd)
      if (Option.isNone(recent)) {
        return yield* Effect.fail(
          CliError.badInput(`--continue: no earlier session in ${cwd}; start one without --continue`)
        )
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
    if (id === undefined) {
      return yield* Effect.fail(new CliError.SilentExit({ exitCode: 1, reason: "no session picked" }))
    }
    return yield* load(cwd, id)
  })

/**
 * A session by id: the journal's record of it (SPEC §4.14), else its
 * transcript.
 *
 * @since 0.1.0
 * @category sessions
 */
export const load = (
  cwd: string,
  id: string
): Effect.Effect<Start, CliError.CliError, FileSystem.FileSystem | Path.Path> =>
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
 * @category constructors
 */
export const open = (
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
