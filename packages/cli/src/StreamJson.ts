/**
 * The wire contract: every JSON line and object the CLI prints for programs,
 * in one place. `dispatch --output-format stream-json` prints
 * {@link dispatchEventLine}s; `run -p`, `replay` and `demo` print Claude
 * Code's headless lines (the `system`/`init` line, assistant and user
 * messages, the result object); `run --input-format stream-json` reads
 * {@link InputLine}s; `speculate --output-format json` prints one
 * {@link speculationReport}.
 *
 * The field names are fixed (external checks and Claude Code consumers read
 * them); change them only with the issue that fixes them.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Execution from "@switchyard/core/Execution"
import type * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as Registry from "@switchyard/core/Registry"
import * as SandboxPort from "@switchyard/core/Sandbox"
import type * as Speculation from "@switchyard/core/Speculation"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as McpServers from "@switchyard/tools/McpServers"
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
// the headless run
// -----------------------------------------------------------------------------

/**
 * A loop event as a stream-json line (snake_case `type`), with times relative
 * to `t0`. Tool events use the `dispatch` line shapes plus the turn.
 *
 * @since 0.1.0
 * @category run
 */
export const loopEventJson = (event: QueryLoop.LoopEvent, t0: number): Record<string, unknown> => {
  switch (event._tag) {
    case "TurnStarted":
      return { type: "turn_started", turn: event.turn, at: event.at - t0 }
    case "TextDelta":
      return { type: "text_delta", turn: event.turn, index: event.index, text: event.text }
    case "ThinkingDelta":
      return { type: "thinking_delta", turn: event.turn, index: event.index, thinking: event.thinking }
    case "ToolUse":
      return {
        type: "tool_use",
        turn: event.turn,
        tool_use_id: event.block.id,
        name: event.block.name,
        input: event.block.input,
        at: event.at - t0
      }
    case "Tool":
      return { ...dispatchEventLine(event.event, t0), turn: event.turn }
    case "AssistantMessage":
      return { type: "assistant", turn: event.turn, message: event.message }
    case "ToolResults":
      return { type: "user", turn: event.turn, message: event.message }
    case "Usage":
      return { type: "usage", turn: event.turn, usage: event.usage }
    case "HookMessage":
      return { type: "hook", hook_event: event.hookEvent, level: event.level, content: event.content }
    case "ResponseEnded":
      return { type: "response_ended", turn: event.turn, stop_reason: event.stopReason ?? null, at: event.at - t0 }
    case "Error":
      return { type: "error", turn: event.turn, reason: event.reason, message: event.message }
    case "TurnEnded":
      return { type: "turn_ended", turn: event.turn, stop_reason: event.stopReason ?? null, at: event.at - t0 }
    case "Stopped":
      return { type: "stopped", reason: event.reason, turns: event.turns, detail: event.detail ?? null }
  }
}

/** The configured MCP servers and their status; none when no MCP layer runs. */
const mcpServers: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly status: string }>> = Effect.flatMap(
  Effect.serviceOption(McpServers.McpServers),
  (service) =>
    service._tag === "None"
      ? Effect.succeed([])
      : Effect.map(service.value.servers, (servers) => servers.map((s) => ({ name: s.name, status: s.state })))
)

/**
 * The `system`/`init` line of stream-json (with the sandbox's state:
 * `"sandbox": {"enabled", "available"}`).
 *
 * @since 0.1.0
 * @category run
 */
export const initLine = (
  context: Ref.Ref<ToolUseContext.ToolUseContext>,
  model: string
): Effect.Effect<Record<string, unknown>, never, Registry.ToolRegistry> =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(context)
    const ctx = yield* Ref.get(context)
    const sandbox = yield* (yield* SandboxPort.Sandbox).status
    return {
      type: "system",
      subtype: "init",
      session_id: ctx.sessionId,
      cwd: ctx.cwd,
      model,
      permissionMode: ctx.permissions.mode,
      tools: env.tools.map((tool) => tool.name),
      // Claude Code's shape: each server with connected, failed, needs-auth or pending.
      mcp_servers: yield* mcpServers,
      sandbox: { enabled: sandbox.enabled, available: sandbox.available }
    }
  })

/**
 * The result object of `--output-format json` (and the last line of
 * `stream-json`), in Claude Code's shape.
 *
 * @since 0.1.0
 * @category run
 */
export interface ResultJson {
  readonly type: "result"
  readonly subtype: "success" | "error_max_turns" | "error_during_execution"
  readonly is_error: boolean
  readonly result: string
  readonly session_id: string
  readonly num_turns: number
  readonly duration_ms: number
  readonly duration_api_ms: number
  readonly total_cost_usd: number
  readonly usage: Cost.Usage
  readonly permission_denials: ReadonlyArray<{
    readonly tool_name: string
    readonly tool_use_id: string
    readonly tool_input: unknown
  }>
}

/**
 * The result object for a run's events. A run that ended at its last turn or
 * by a hook's stop is a success; the turn limit is `error_max_turns`; an
 * error, an interrupt or a blocked prompt is `error_during_execution`.
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
  }
): ResultJson => {
  const stopped = events.findLast((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
  const subtype = stopped === undefined
    ? "error_during_execution"
    : stopped.reason === "end_turn" || stopped.reason === "hook_stop"
    ? "success"
    : stopped.reason === "max_turns"
    ? "error_max_turns"
    : "error_during_execution"
  const inputs = new Map<string, unknown>()
  const started = new Map<number, number>()
  let apiMs = 0
  const denials: Array<ResultJson["permission_denials"][number]> = []
  for (const event of events) {
    if (event._tag === "ToolUse") inputs.set(event.block.id, event.block.input)
    else if (event._tag === "TurnStarted") started.set(event.turn, event.at)
    else if (event._tag === "ResponseEnded") apiMs += event.at - (started.get(event.turn) ?? event.at)
    else if (event._tag === "Tool" && DispatchEvent.isResult(event.event) && event.event.status === "denied") {
      const result = event.event
      denials.push({
        tool_name: result.name,
        tool_use_id: result.toolUseId,
        tool_input: inputs.get(result.toolUseId) ?? {}
      })
    }
  }
  const error = events.findLast((e) => e._tag === "Error")
  return {
    type: "result",
    subtype,
    is_error: subtype !== "success",
    result: options.finalText === "" && error?._tag === "Error" ? error.message : options.finalText,
    session_id: options.sessionId,
    num_turns: stopped?.turns ?? 0,
    duration_ms: Math.round(options.durationMs),
    duration_api_ms: Math.round(apiMs),
    total_cost_usd: options.costUsd,
    usage: options.usage,
    permission_denials: denials
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
