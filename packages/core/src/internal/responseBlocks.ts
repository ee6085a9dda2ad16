/**
 * A model response assembled from its stream events (QueryLoop's turn): the
 * blocks still open, closing one into a content block or a tool call, and
 * what to make of the response once its stream has ended.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Messages from "../Messages.js"
import type * as Model from "../Model.js"
import * as ToolCall from "../ToolCall.js"

/** A block being assembled from stream events. */
export interface OpenBlock {
  readonly start: StartedBlock
  text: string
  json: string
  signature: string
  closed: boolean
}
type StartedBlock = typeof Model.StartedBlock.Type

const MAX_JSON_SHOWN = 200

const parseToolInput = (json: string): Either.Either<unknown, string> => {
  if (json.trim() === "") return Either.right({})
  const shown = json.length > MAX_JSON_SHOWN ? `${json.slice(0, MAX_JSON_SHOWN)}… (${json.length} characters)` : json
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? Either.right(value)
      : Either.left(
        `expected a JSON object, got ${
          Array.isArray(value) ? "an array" : value === null ? "null" : typeof value
        }: ${shown}`
      )
  } catch (error) {
    return Either.left(`${error instanceof Error ? error.message : String(error)} in ${shown}`)
  }
}

export const closeBlock = (open: OpenBlock): Messages.ContentBlock | ToolCall.ToolCall => {
  const start = open.start
  switch (start.type) {
    case "text":
      return Messages.text(start.text + open.text)
    case "thinking":
      return { type: "thinking", thinking: start.thinking + open.text, signature: start.signature + open.signature }
    case "redacted_thinking":
      return start
    case "tool_use": {
      const input = parseToolInput(open.json)
      // Malformed input answers this call with an error result; the rest of the message runs.
      return Either.isLeft(input)
        ? ToolCall.unparsed(start.id, start.name, input.left)
        : Messages.toolUse(start.id, start.name, input.right)
    }
  }
}

/**
 * How a turn's response ended, once its stream is done: a failure's text when it did not end well (the
 * stream failed, stopped before `message_stop`, or inside a block), and the tool calls it broke off inside,
 * each closed as an unparsed call. An aborted response keeps the text that had streamed. Closes the blocks
 * it settles (`open`) and adds them to `closed`.
 */
export const endOfResponse = (
  response: {
    readonly open: Map<number, OpenBlock>
    readonly closed: Array<{ readonly index: number; readonly block: Messages.ContentBlock }>
    readonly sawMessageStop: boolean
    readonly stopReason: Model.StopReason | undefined
  },
  finished: Either.Either<void, { readonly message: string }>,
  aborted: boolean,
  uniqueToolUse: (call: ToolCall.Any) => ToolCall.ToolCall
): { readonly failure: string | undefined; readonly cutOff: ReadonlyArray<ToolCall.ToolCall> } => {
  const { closed, open, sawMessageStop, stopReason } = response
  let failure: string | undefined
  if (Either.isLeft(finished)) {
    failure = finished.left.message
  } else if (aborted) {
    // Interrupted: nothing more is added; the executor gives what ran its results. Text that had
    // streamed stays (Claude Code keeps it); a half-streamed tool call or thinking block is dropped.
    for (const [index, block] of [...open.entries()].sort(([a], [b]) => a - b)) {
      if (block.closed || block.start.type !== "text") continue
      block.closed = true
      closed.push({ index, block: Messages.text(block.start.text + block.text) })
    }
  } else if (!sawMessageStop) {
    failure = "The model stream ended before message_stop"
  } else {
    const unfinished = [...open.values()].find((b) => !b.closed)
    if (unfinished !== undefined) {
      const what = unfinished.start.type === "tool_use"
        ? `the tool call ${unfinished.start.id} (${unfinished.start.name})`
        : `a ${unfinished.start.type} block`
      failure = stopReason === "max_tokens"
        ? `The response hit max_tokens in the middle of ${what}.`
        : `The response ended in the middle of ${what}.`
    }
  }
  // A tool call the response broke off inside gets an error result (its input never
  // completed), like a malformed one: the transcript stays paired and the model can retry.
  const cutOff: Array<ToolCall.ToolCall> = []
  if (failure !== undefined) {
    const unclosed = [...open.entries()]
      .filter(([, b]) => !b.closed && b.start.type === "tool_use")
      .sort(([a], [b]) => a - b)
    for (const [index, b] of unclosed) {
      b.closed = true
      const start = b.start as Messages.ToolUseBlock
      const why = stopReason === "max_tokens" && Either.isRight(finished)
        ? "the response hit max_tokens before the input was complete"
        : `the model stream ended before the input was complete (${failure})`
      const call = uniqueToolUse(ToolCall.unparsed(start.id, start.name, why))
      closed.push({ index, block: call.block })
      cutOff.push(call)
    }
  }
  return { failure, cutOff }
}
