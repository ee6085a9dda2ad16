/**
 * The wire contract: every JSON line and object the CLI prints for programs,
 * in one place. `dispatch --output-format stream-json` prints
 * {@link dispatchEventLine}s; `run -p`, `replay` and `demo` print Claude
 * Code's headless lines, field for field with its SDK message types (the
 * `system`/`init` line, assistant and user messages with
 * `parent_tool_use_id`, `stream_event` lines, the result object); every line
 * of a run has `session_id` and a `uuid`; `run --input-format stream-json` reads
 * {@link InputLine}s; `speculate --output-format json` prints one
 * {@link speculationReport}.
 *
 * The field names are fixed (external checks and Claude Code consumers read
 * them); change them only with the issue that fixes them.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Messages from "@switchyard/core/Messages"
import type * as Model from "@switchyard/core/Model"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as Speculation from "@switchyard/core/Speculation"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
import type * as Cost from "./Cost.js"

// -----------------------------------------------------------------------------
// dispatch events
// -----------------------------------------------------------------------------

/**
 * The stream-json line of a dispatch event, with times relative to `t0`
 * (`switchyard dispatch`'s contract: every line has `type` and
 * `tool_use_id`; `started` {name, at, waited_for?}; `progress` {at, data};
 * `result` {name, status, is_error, content, startedAt, endedAt};
 * `permission_requested`, `permission_decided`, `hook`).
 *
 * @since 0.1.0
 * @category dispatch
 */
export const dispatchEventLine = (event: DispatchEvent.DispatchEvent, t0: number): Record<string, unknown> => {
  switch (event._tag) {
    case "Started":
      return {
        type: "started",
        tool_use_id: event.toolUseId,
        name: event.name,
        at: event.at - t0,
        ...(event.waitedFor === undefined
          ? {}
          : { waited_for: event.waitedFor.map((w) => ({ tool_use_id: w.toolUseId, reason: w.reason })) })
      }
    case "Progress":
      return { type: "progress", tool_use_id: event.toolUseId, at: event.at - t0, data: event.data }
    case "Result":
      return {
        type: "result",
        tool_use_id: event.toolUseId,
        name: event.name,
        status: event.status,
        is_error: event.block.is_error === true,
        content: event.block.content,
        startedAt: event.startedAt - t0,
        endedAt: event.endedAt - t0
      }
    case "PermissionRequested":
      return {
        type: "permission_requested",
        tool_use_id: event.toolUseId,
        name: event.name,
        message: event.message,
        at: event.at - t0
      }
    case "PermissionDecided":
      return {
        type: "permission_decided",
        tool_use_id: event.toolUseId,
        name: event.name,
        behavior: event.behavior,
        source: event.source,
        reason: event.reason ?? null,
        at: event.at - t0
      }
    case "HookAttachment":
      return {
        type: "hook",
        tool_use_id: event.toolUseId,
        name: event.name,
        hook_event: event.hookEvent,
        level: event.level,
        content: event.content,
        at: event.at - t0
      }
  }
}

// -----------------------------------------------------------------------------
// the headless run: Claude Code's SDK message types
// -----------------------------------------------------------------------------

/**
 * What every line of a run's stream has: the session and a fresh `uuid`.
 *
 * @since 0.1.0
 * @category run
 */
export interface Envelope {
  readonly sessionId: string
  /** `null` for the main conversation; the Agent call's `tool_use` id for a sub-agent's lines. */
  readonly parentToolUseId: string | null
}

/**
 * The `system`/`init` line's facts. Modules that own more facts add them
 * where the record is built (`LoopRunner.initFacts`: the sandbox's state,
 * `"sandbox": {"enabled", "available"}`); `extra` fields follow Claude
 * Code's, before the `uuid`.
 *
 * @since 0.1.0
 * @category run
 */
export interface Init {
  readonly cwd: string
  readonly sessionId: string
  readonly tools: ReadonlyArray<string>
  readonly mcpServers: ReadonlyArray<{ readonly name: string; readonly status: string }>
  readonly model: string
  readonly permissionMode: string
  readonly slashCommands: ReadonlyArray<string>
  readonly apiKeySource: string
  /** Switchyard's version, in the field Claude Code's consumers read (`claude_code_version`). */
  readonly version: string
  readonly outputStyle: string
  readonly agents: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, unknown>> | undefined
}

/**
 * `{"type":"system","subtype":"init",…}`: Claude Code's `SDKSystemMessage`.
 *
 * @since 0.1.0
 * @category run
 */
export const initLine = (init: Init, uuid: string): Record<string, unknown> => ({
  type: "system",
  subtype: "init",
  cwd: init.cwd,
  session_id: init.sessionId,
  tools: init.tools,
  mcp_servers: init.mcpServers,
  model: init.model,
  permissionMode: init.permissionMode,
  slash_commands: init.slashCommands,
  apiKeySource: init.apiKeySource,
  claude_code_version: init.version,
  output_style: init.outputStyle,
  agents: init.agents,
  skills: [],
  plugins: [],
  ...init.extra,
  uuid
})

/**
 * The API's message object for an assistant response: `{id, type, role,
 * model, content, stop_reason, stop_sequence, usage}`.
 *
 * @since 0.1.0
 * @category run
 */
export const apiMessage = (response: {
  readonly message: Messages.Message
  readonly id?: string | undefined
  readonly model?: string | undefined
  readonly stopReason?: string | undefined
  readonly stopSequence?: string | undefined
  readonly usage?: Model.Usage | undefined
}, fallback: { readonly id: string; readonly model: string }): Record<string, unknown> => ({
  id: response.id ?? fallback.id,
  type: "message",
  role: "assistant",
  model: response.model ?? fallback.model,
  content: Messages.blocks(response.message),
  stop_reason: response.stopReason ?? null,
  stop_sequence: response.stopSequence ?? null,
  usage: response.usage ?? {}
})

/**
 * `{"type":"assistant","message":<the API message>,"parent_tool_use_id","session_id","uuid"}`.
 *
 * @since 0.1.0
 * @category run
 */
export const assistantLine = (message: Record<string, unknown>, envelope: Envelope, uuid: string) => ({
  type: "assistant",
  message,
  parent_tool_use_id: envelope.parentToolUseId,
  session_id: envelope.sessionId,
  uuid
})

/**
 * `{"type":"user","message":{"role":"user","content":…},"parent_tool_use_id","session_id","uuid"}`:
 * the tool results sent back to the model.
 *
 * @since 0.1.0
 * @category run
 */
export const userLine = (message: Messages.Message, envelope: Envelope, uuid: string) => ({
  type: "user",
  message: { role: "user", content: message.content },
  parent_tool_use_id: envelope.parentToolUseId,
  session_id: envelope.sessionId,
  uuid
})

/**
 * `{"type":"stream_event","event":<the raw Messages API stream event>,…}`
 * (`--include-partial-messages`): Claude Code's `SDKPartialAssistantMessage`.
 *
 * @since 0.1.0
 * @category run
 */
export const streamEventLine = (event: Model.ModelStreamEvent, envelope: Envelope, uuid: string) => ({
  type: "stream_event",
  event,
  parent_tool_use_id: envelope.parentToolUseId,
  uuid,
  session_id: envelope.sessionId
})

/**
 * A dispatch event in a run's stream (`--include-dispatch-events`): the
 * `dispatch` line with the turn, the session and a `uuid`.
 *
 * @since 0.1.0
 * @category run
 */
export const runDispatchLine = (
  event: DispatchEvent.DispatchEvent,
  t0: number,
  turn: number,
  envelope: Envelope,
  uuid: string
) => ({
  ...dispatchEventLine(event, t0),
  turn,
  parent_tool_use_id: envelope.parentToolUseId,
  session_id: envelope.sessionId,
  uuid
})

/**
 * The result's `subtype`.
 *
 * @since 0.1.0
 * @category run
 */
export type ResultSubtype =
  | "success"
  | "error_max_turns"
  | "error_during_execution"
  | "error_max_budget_usd"
  | "error_max_structured_output_retries"

/**
 * The result object of `--output-format json` (and the last line of
 * `stream-json`): Claude Code's `SDKResultMessage`. `result` is on a
 * success, `errors` on the error subtypes, `structured_output` with
 * `--json-schema`.
 *
 * @since 0.1.0
 * @category run
 */
export interface ResultJson {
  readonly type: "result"
  readonly subtype: ResultSubtype
  readonly is_error: boolean
  readonly duration_ms: number
  readonly duration_api_ms: number
  readonly num_turns: number
  readonly result?: string
  readonly stop_reason: string | null
  readonly session_id: string
  readonly total_cost_usd: number
  readonly usage: Cost.Usage
  readonly modelUsage: Readonly<Record<string, Cost.ModelUsage>>
  readonly permission_denials: ReadonlyArray<{
    readonly tool_name: string
    readonly tool_use_id: string
    readonly tool_input: unknown
  }>
  readonly structured_output?: unknown
  readonly errors?: ReadonlyArray<string>
  readonly uuid: string
}

/**
 * The subtype of a run that stopped so: at its last turn or by a hook's stop,
 * a success; the turn limit, `error_max_turns`; a spending limit,
 * `error_max_budget_usd`; an error, an interrupt or a blocked prompt,
 * `error_during_execution`.
 *
 * @since 0.1.0
 * @category run
 */
export const subtypeOf = (stopped: QueryLoop.StopReason | undefined): ResultSubtype =>
  stopped === "end_turn" || stopped === "hook_stop"
    ? "success"
    : stopped === "max_turns"
    ? "error_max_turns"
    : stopped === "budget"
    ? "error_max_budget_usd"
    : "error_during_execution"

/**
 * The result object for a run's events (one or more runs of a session for
 * one prompt, as with `--json-schema`'s reminders).
 *
 * @since 0.1.0
 * @category run
 */
export const resultJson = (
  events: ReadonlyArray<QueryLoop.LoopEvent>,
  options: {
    readonly sessionId: string
    readonly durationMs: number
    readonly finalText: string
    readonly usage: Cost.Usage
    readonly costUsd: number
    readonly modelUsage: Readonly<Record<string, Cost.ModelUsage>>
    readonly uuid: string
    /** `--json-schema`: the validated output, or why there is none. */
    readonly structured?:
      | { readonly _tag: "Output"; readonly value: unknown }
      | { readonly _tag: "Missing" }
      | undefined
  }
): ResultJson => {
  const stops = events.filter((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
  const stopped = stops.at(-1)
  const missing = options.structured?._tag === "Missing" && subtypeOf(stopped?.reason) === "success"
  const subtype: ResultSubtype = missing ? "error_max_structured_output_retries" : subtypeOf(stopped?.reason)
  const inputs = new Map<string, unknown>()
  const started = new Map<number, number>()
  let apiMs = 0
  let stopReason: string | null = null
  const denials: Array<ResultJson["permission_denials"][number]> = []
  const errors: Array<string> = []
  for (const event of events) {
    if (event._tag === "ToolUse") inputs.set(event.block.id, event.block.input)
    else if (event._tag === "TurnStarted") started.set(event.turn, event.at)
    else if (event._tag === "ResponseEnded") {
      apiMs += event.at - (started.get(event.turn) ?? event.at)
      stopReason = event.stopReason ?? null
    } else if (event._tag === "Error") errors.push(event.message)
    else if (event._tag === "Tool" && DispatchEvent.isResult(event.event) && event.event.status === "denied") {
      const result = event.event
      denials.push({
        tool_name: result.name,
        tool_use_id: result.toolUseId,
        tool_input: inputs.get(result.toolUseId) ?? {}
      })
    }
  }
  if (subtype !== "success" && stopped !== undefined && stopped.reason !== "error") {
    errors.push(
      subtype === "error_max_structured_output_retries"
        ? "The model did not call StructuredOutput with an answer that matches the --json-schema"
        : `${stopped.reason}${stopped.detail === undefined ? "" : `: ${stopped.detail}`}`
    )
  }
  if (subtype !== "success" && stopped === undefined) errors.push("the run ended without a result")
  return {
    type: "result",
    subtype,
    is_error: subtype !== "success",
    duration_ms: Math.round(options.durationMs),
    duration_api_ms: Math.round(apiMs),
    num_turns: stops.reduce((sum, stop) => sum + stop.turns, 0),
    ...(subtype === "success" ? { result: options.finalText } : {}),
    stop_reason: stopReason,
    session_id: options.sessionId,
    total_cost_usd: options.costUsd,
    usage: options.usage,
    modelUsage: options.modelUsage,
    permission_denials: denials,
    ...(options.structured?._tag === "Output" ? { structured_output: options.structured.value } : {}),
    ...(subtype === "success" ? {} : { errors }),
    uuid: options.uuid
  }
}

// -----------------------------------------------------------------------------
// stream-json input
// -----------------------------------------------------------------------------

/**
 * A user message on stdin with `--input-format stream-json`.
 *
 * @since 0.1.0
 * @category input
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
 * @category input
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

// -----------------------------------------------------------------------------
// speculate
// -----------------------------------------------------------------------------

/**
 * The `boundary` object of a speculation report.
 *
 * @since 0.1.0
 * @category speculate
 */
export const boundaryJson = (boundary: Speculation.Boundary): Record<string, unknown> => ({
  type: boundary.type,
  ...(boundary.toolName !== undefined ? { tool_name: boundary.toolName } : {}),
  ...(boundary.input !== undefined ? { input: boundary.input } : {})
})

/**
 * `switchyard speculate --output-format json`'s one object:
 * `{"type":"speculation","boundary","written_paths","accepted","conflicts","time_saved_ms","messages"}`.
 *
 * @since 0.1.0
 * @category speculate
 */
export const speculationReport = (report: {
  readonly boundary: Speculation.Boundary
  readonly writtenPaths: ReadonlyArray<string>
  readonly accepted: boolean
  readonly conflicts: ReadonlyArray<string>
  readonly timeSavedMs: number
  readonly messages: ReadonlyArray<Messages.Message>
}): Record<string, unknown> => ({
  type: "speculation",
  boundary: boundaryJson(report.boundary),
  written_paths: report.writtenPaths,
  accepted: report.accepted,
  conflicts: report.conflicts,
  time_saved_ms: report.timeSavedMs,
  messages: report.messages
})
