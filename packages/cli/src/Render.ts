/**
 * How the query loop's events look: a live transcript for people, and JSON
 * lines (`--output-format stream-json`) or one JSON result (`json`) for
 * programs, in the spirit of Claude Code's output formats.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as Cost from "./Cost.js"
import * as Dispatch from "./Dispatch.js"
import { paint } from "./Output.js"
import * as Timeline from "./Timeline.js"

/**
 * A short label for a call: `Read(src/cart.js)`, `Bash(npm test)`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const callLabel = (name: string, input: unknown, max = 70): string => {
  const record = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}
  const key = ["command", "file_path", "notebook_path", "pattern", "url", "description", "prompt", "path", "task_id"]
    .find((k) => typeof record[k] === "string")
  const raw = key === undefined ? "" : String(record[key]).split("\n")[0]!
  const arg = raw.length > max ? `${raw.slice(0, max - 1)}…` : raw
  return arg === "" ? name : `${name}(${arg})`
}

const firstLine = (text: string, max = 120) => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * One line summing up a result for the transcript.
 *
 * @since 0.1.0
 * @category formatting
 */
export const resultLine = (result: DispatchEvent.Result, waitedMs = 0): string => {
  const text = Messages.contentText(result.block.content)
  const took = Timeline.formatMs(Math.max(0, result.endedAt - result.startedAt - waitedMs))
  if (result.status === "success") {
    const lines = text === "" ? 0 : text.split("\n").length
    return `${paint("green", "✓")} ${took} · ${lines} line${lines === 1 ? "" : "s"}`
  }
  const mark = result.status === "denied" ? paint("yellow", "⊘ denied") : result.status === "cancelled"
    ? paint("yellow", "◌ cancelled")
    : paint("red", "✗ error")
  return `${mark} ${took} · ${firstLine(text)}`
}

/**
 * Prints a run as a live transcript: assistant text as it streams, one line
 * per tool call when it completes (`● Read(a.ts)`), one line per result.
 *
 * @since 0.1.0
 * @category printers
 */
export class TranscriptPrinter {
  private atLineStart = true
  private readonly labels = new Map<string, string>()
  /** Time each call spent waiting for the user's permission answer, left out of its duration. */
  private readonly asked = new Map<string, number>()
  private readonly waited = new Map<string, number>()
  readonly runs: Array<Timeline.Run & { readonly turn: number }> = []

  constructor(private readonly write: (text: string) => void) {}

  private ensureLineStart() {
    if (!this.atLineStart) {
      this.write("\n")
      this.atLineStart = true
    }
  }

  private println(text: string) {
    this.ensureLineStart()
    this.write(`${text}\n`)
  }

  handle(event: QueryLoop.LoopEvent): void {
    switch (event._tag) {
      case "TurnStarted":
        this.ensureLineStart()
        return
      case "TextDelta":
        this.write(event.text)
        this.atLineStart = event.text.endsWith("\n")
        return
      case "ToolUse": {
        const label = callLabel(event.block.name, event.block.input)
        this.labels.set(event.block.id, label)
        this.println(`${paint("cyan", "●")} ${label}`)
        return
      }
      case "Tool": {
        const inner = event.event
        if (inner._tag === "PermissionRequested") this.asked.set(inner.toolUseId, inner.at)
        if (inner._tag === "PermissionDecided") {
          const since = this.asked.get(inner.toolUseId)
          if (since !== undefined) this.waited.set(inner.toolUseId, (this.waited.get(inner.toolUseId) ?? 0) + inner.at - since)
          this.asked.delete(inner.toolUseId)
        }
        if (DispatchEvent.isResult(inner)) {
          const label = this.labels.get(inner.toolUseId) ?? inner.name
          this.runs.push({
            turn: event.turn,
            toolUseId: inner.toolUseId,
            name: inner.name,
            label,
            status: inner.status,
            startedAt: inner.startedAt,
            endedAt: inner.endedAt
          })
          this.println(`  ${paint("gray", "⎿")} ${paint("dim", label)} ${resultLine(inner, this.waited.get(inner.toolUseId))}`)
        } else if (inner._tag === "HookAttachment" && inner.level !== "info") {
          this.println(`  ${paint("yellow", "hook")} ${inner.hookEvent}: ${firstLine(inner.content)}`)
        }
        return
      }
      case "HookMessage":
        if (event.level !== "info") this.println(`${paint("yellow", "hook")} ${event.hookEvent}: ${firstLine(event.content)}`)
        return
      case "Error":
        this.println(`${paint("red", "error:")} ${event.message}`)
        return
      case "Stopped":
        this.ensureLineStart()
        if (event.reason !== "end_turn") {
          this.println(paint("yellow", `stopped: ${event.reason}${event.detail === undefined ? "" : ` (${event.detail})`}`))
        }
        return
      default:
        return
    }
  }
}

/**
 * A loop event as a stream-json line (snake_case `type`), with times relative
 * to `t0`. Tool events use the `dispatch` line shapes plus the turn.
 *
 * @since 0.1.0
 * @category formatting
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
      return { type: "tool_use", turn: event.turn, tool_use_id: event.block.id, name: event.block.name, input: event.block.input, at: event.at - t0 }
    case "Tool":
      return { ...Dispatch.toJsonLine(event.event, t0), turn: event.turn }
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

/**
 * The result object of `--output-format json` (and the last line of
 * `stream-json`), in Claude Code's shape.
 *
 * @since 0.1.0
 * @category models
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
 * @category formatting
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
      denials.push({ tool_name: result.name, tool_use_id: result.toolUseId, tool_input: inputs.get(result.toolUseId) ?? {} })
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
