/**
 * `switchyard runner` and `switchyard submit` (SPEC §4.14): runners execute
 * the prompts clients submit, sharded by `@effect/cluster` over the
 * PostgreSQL journal (`SWITCHYARD_JOURNAL_URL`); a runner that dies has its
 * prompts taken over by another. A runner runs a prompt as `run -p` does —
 * the built-in tools, the settings of the session's directory, the options
 * the client gave (model, permission rules, MCP servers), Claude from the
 * runner's environment — nothing is asked, and the conversation is the
 * journal's, so `switchyard --resume ID` continues it anywhere.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Path from "@effect/platform/Path"
import * as Activity from "@effect/workflow/Activity"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import type * as DurableJournal from "@switchyard/durable/DurableJournal"
import type * as Runner from "@switchyard/durable/Runner"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
import * as Journaling from "./Journaling.js"
import * as Output from "./Output.js"
import * as Conversation from "./Conversation.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Runtime from "./Runtime.js"
import * as Sessions from "./Sessions.js"

const durable = Effect.promise(() => import("@switchyard/durable/Runner"))

/**
 * What a client passes with a prompt: the run options a runner applies.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PromptOptions = Schema.Struct({
  model: Schema.optional(Schema.String),
  maxTurns: Schema.optional(Schema.Number),
  systemPrompt: Schema.optional(Schema.String),
  appendSystemPrompt: Schema.optional(Schema.String),
  permissionMode: Schema.optional(Schema.String),
  allowedTools: Schema.optional(Schema.Array(Schema.String)),
  disallowedTools: Schema.optional(Schema.Array(Schema.String)),
  mcpConfig: Schema.optional(Schema.Array(Schema.String)),
  settings: Schema.optional(Schema.Array(Schema.String))
})
const decodeOptions = Schema.decodeUnknownEither(PromptOptions)

/** The PostgreSQL journal runners and clients share; anything else is bad usage. */
const postgres = (prepared: Runtime.Prepared, what: string) =>
  Effect.flatMap(Journaling.location(prepared), (where) =>
    Option.isSome(where) && where.value._tag === "Postgres"
      ? Effect.succeed(where.value)
      : Effect.fail(
        CliError.badInput(
          `${what} needs a PostgreSQL journal: set SWITCHYARD_JOURNAL_URL=postgresql://… (or the journalUrl setting)`
        )
      ))

/** The loop of one prompt, in its workflow, with the session's runtime. */
const loop = (
  prompt: Runner.Prompt,
  journal: DurableJournal.DurableJournal,
  prepared: Runtime.Prepared,
  options: typeof PromptOptions.Type
) =>
  Effect.gen(function*() {
    const system = [options.systemPrompt ?? Conversation.defaultSystemPrompt(prepared.cwd), options.appendSystemPrompt]
      .filter((part): part is string => part !== undefined && part !== "")
      .join("\n\n")
    // A runner that died may still be seen holding the session for a few seconds.
    yield* journal.claim(prompt.sessionId, prepared.cwd).pipe(
      Effect.retry({ schedule: Schedule.spaced(Duration.seconds(1)), times: 20 })
    )
    const messages = Option.getOrElse(yield* journal.messages(prompt.sessionId), () => [])
    // How long the conversation was when the prompt came, recorded: executed again (the runner
    // died), the prompt is in the conversation already, and the loop goes on from there.
    const before = yield* Activity.make({
      name: "prompt",
      success: Schema.Number,
      execute: Effect.succeed(messages.length)
    })
    const context = yield* Ref.make(ToolUseContext.make({
      cwd: prepared.cwd,
      sessionId: prompt.sessionId,
      permissions: prepared.permissions,
      messages
    }))
    const session = yield* QueryLoop.makeSession(context, {
      system,
      maxTurns: options.maxTurns,
      model: options.model,
      scheduling: prepared.scheduling,
      journal
    })
    const events = yield* QueryLoop.collect(session.run(messages.length > before ? [] : prompt.prompt))
    const stopped = events.find((e) => e._tag === "Stopped")
    return {
      stopReason: stopped?._tag === "Stopped" ? stopped.reason : "error",
      ...(stopped?._tag === "Stopped" && stopped.detail !== undefined ? { detail: stopped.detail } : {}),
      text: QueryLoop.finalText(events),
      turns: stopped?._tag === "Stopped" ? stopped.turns : 0
    } satisfies Runner.Outcome
  })

/** How a runner runs a prompt. */
const host = (prompt: Runner.Prompt, journal: DurableJournal.DurableJournal) =>
  Effect.gen(function*() {
    const decoded = decodeOptions(prompt.options)
    const options = decoded._tag === "Right" ? decoded.right : {}
    const prepared = yield* Runtime.prepare({
      cwd: prompt.cwd,
      settingsFiles: options.settings ?? [],
      permissionMode: options.permissionMode as PermissionContext.PermissionMode | undefined,
      allowedTools: options.allowedTools ?? [],
      disallowedTools: options.disallowedTools ?? [],
      verbose: false,
      mcpConfigFiles: options.mcpConfig ?? []
    })
    const model = yield* ModelLayer.layer(options.model)
    const runtime = Runtime.layer(prepared, {
      model,
      prompt: Runtime.noPrompt(
        "a runner cannot ask; allow the call with the prompt's --allowed-tools or a settings rule"
      )
    })
    return yield* Effect.scoped(loop(prompt, journal, prepared, options).pipe(Effect.provide(runtime))).pipe(
      // The prompt is done: the session is free for whoever continues it.
      Effect.ensuring(journal.release(prompt.sessionId))
    )
  }).pipe(
    // A prompt that cannot run ends with why (the client sees it), not as a defect of the runner.
    Effect.catchAll((error) =>
      Effect.succeed<Runner.Outcome>({ stopReason: "error", detail: error.message, text: "", turns: 0 })
    )
  )

/**
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions extends Runtime.CommonOptions {
  readonly host: string
  readonly port: number
}

/**
 * `switchyard runner`: serve as a runner until stopped.
 *
 * @since 0.1.0
 * @category commands
 */
export const serve = (options: ServeOptions) =>
  Effect.gen(function*() {
    const Runner = yield* durable
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const location = yield* postgres(prepared, "switchyard runner")
    const healthMs = Number(process.env["SWITCHYARD_RUNNER_HEALTH_CHECK_MS"] ?? "")
    const layer = Runner.layer(location, {
      host: options.host,
      port: options.port,
      ...(Number.isFinite(healthMs) && healthMs > 0 ? { healthCheckInterval: Duration.millis(healthMs) } : {})
    }).pipe(Layer.provide(Layer.succeed(Runner.PromptHost, {
      run: (prompt, journal) => host(prompt, journal).pipe(Effect.provide(NodeContext.layer))
    })))
    const JournalDatabase = yield* Effect.promise(() => import("@switchyard/durable/JournalDatabase"))
    yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(layer)
      yield* Output.line(
        `switchyard runner: serving on ${options.host}:${options.port}, journal ${JournalDatabase.describe(location)}`
      )
      return yield* Effect.never
    })).pipe(Effect.mapError((error) => CliError.failure(error.message)))
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface SubmitOptions extends Runtime.CommonOptions {
  readonly prompt: string
  readonly sessionId: string | undefined
  readonly resume: string | undefined
  readonly wait: boolean
  readonly outputFormat: "text" | "json"
  readonly model: string | undefined
  readonly maxTurns: number | undefined
}

/**
 * `switchyard submit PROMPT`: hand a prompt of a session (new, or
 * `--resume ID`) to the runners; `--wait` waits for its outcome.
 *
 * @since 0.1.0
 * @category commands
 */
export const submit = (options: SubmitOptions) =>
  Effect.gen(function*() {
    const Runner = yield* durable
    const path = yield* Path.Path
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const location = yield* postgres(prepared, "switchyard submit")
    if (options.sessionId !== undefined && options.resume !== undefined) {
      return yield* Effect.fail(
        CliError.badInput("--session-id and --resume cannot be used together; give one of them")
      )
    }
    const sessionId = options.resume ?? options.sessionId ?? crypto.randomUUID()
    if (!Sessions.isValidId(sessionId)) return yield* Effect.fail(CliError.badInput(`${sessionId}: not a session id`))
    const prompt: Runner.Prompt = {
      sessionId,
      promptId: crypto.randomUUID(),
      prompt: options.prompt,
      cwd: path.resolve(options.cwd),
      options: {
        ...(options.model === undefined ? {} : { model: options.model }),
        ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
        ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
        allowedTools: options.allowedTools,
        disallowedTools: options.disallowedTools,
        mcpConfig: options.mcpConfigFiles ?? [],
        settings: options.settingsFiles.map((file) => path.resolve(options.cwd, file))
      }
    }
    const outcome = yield* Runner.submit(prompt, { wait: options.wait }).pipe(
      Effect.provide(Runner.layerClient(location)),
      Effect.scoped,
      Effect.mapError((error) => CliError.failure(error.message))
    )
    if (options.outputFormat === "json") {
      yield* Output.line(JSON.stringify({
        type: "submitted",
        session_id: sessionId,
        ...(Option.isSome(outcome)
          ? {
            stop_reason: outcome.value.stopReason,
            result: outcome.value.text,
            num_turns: outcome.value.turns,
            ...(outcome.value.detail === undefined ? {} : { detail: outcome.value.detail })
          }
          : {})
      }))
    } else {
      yield* Output.line(Option.isSome(outcome) ? outcome.value.text : sessionId)
    }
    if (Option.isSome(outcome) && outcome.value.stopReason !== "end_turn") {
      return yield* Effect.fail(
        CliError.failure(`stopped: ${outcome.value.stopReason} (${outcome.value.detail ?? ""})`)
      )
    }
  })
