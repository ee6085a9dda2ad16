/**
 * How the query loop's events look to people: a live transcript (assistant
 * text as it streams, one line per call and result), call labels and result
 * lines. What programs read is `StreamJson`.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
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
          if (since !== undefined) {
            this.waited.set(inner.toolUseId, (this.waited.get(inner.toolUseId) ?? 0) + inner.at - since)
          }
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
          this.println(
            `  ${paint("gray", "⎿")} ${paint("dim", label)} ${resultLine(inner, this.waited.get(inner.toolUseId))}`
          )
        } else if (inner._tag === "HookAttachment" && inner.level !== "info") {
          this.println(`  ${paint("yellow", "hook")} ${inner.hookEvent}: ${firstLine(inner.content)}`)
        }
        return
      }
      case "HookMessage":
        if (event.level !== "info") {
          this.println(`${paint("yellow", "hook")} ${event.hookEvent}: ${firstLine(event.content)}`)
        }
        return
      case "Error":
        this.println(`${paint("red", "error:")} ${event.message}`)
        return
      case "Stopped":
        this.ensureLineStart()
        if (event.reason !== "end_turn") {
          this.println(
            paint("yellow", `stopped: ${event.reason}${event.detail === undefined ? "" : ` (${event.detail})`}`)
          )
        }
        return
      default:
        return
    }
  }
}
