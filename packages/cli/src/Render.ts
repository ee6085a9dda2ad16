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
export const resultLine = (result: DispatchEvent.Result): string => {
  const text = Messages.contentText(result.block.content)
  const took = Timeline.formatMs(result.endedAt - result.startedAt)
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
          this.println(`  ${paint("gray", "⎿")} ${paint("dim", label)} ${resultLine(inner)}`)
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
 * The final `result` object of `--output-format json` (and the last line of
 * `stream-json`), shaped like Claude Code's.
 *
 * @since 0.1.0
 * @category formatting
 */
export const resultJson = (
  events: ReadonlyArray<QueryLoop.LoopEvent>,
  options: { readonly sessionId: string; readonly durationMs: number; readonly finalText: string }
): Record<string, unknown> => {
  const stopped = events.findLast((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
  const usage = { input_tokens: 0, output_tokens: 0 }
  for (const event of events) {
    if (event._tag !== "Usage") continue
    usage.input_tokens += event.usage.input_tokens ?? 0
    usage.output_tokens += event.usage.output_tokens ?? 0
  }
  const isError = stopped === undefined || stopped.reason === "error" || stopped.reason === "max_turns"
  return {
    type: "result",
    subtype: stopped === undefined ? "error" : stopped.reason === "end_turn" ? "success" : `error_${stopped.reason}`,
    is_error: isError,
    result: options.finalText,
    num_turns: stopped?.turns ?? 0,
    duration_ms: Math.round(options.durationMs),
    session_id: options.sessionId,
    stop_reason: stopped?.reason ?? null,
    ...(stopped?.detail !== undefined ? { detail: stopped.detail } : {}),
    usage
  }
}
