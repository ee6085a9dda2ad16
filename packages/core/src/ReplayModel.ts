/**
 * A `LanguageModel` that replays a transcript of assistant turns (SPEC §4.11),
 * so tests and the offline demo can drive the query loop deterministically.
 *
 * A transcript is JSON decoded with {@link Transcript}:
 *
 * ```json
 * {
 *   "turns": [
 *     {
 *       "expect": { "user_text_includes": "fix the failing test" },
 *       "blocks": [
 *         { "block": { "type": "text", "text": "Let me look at the test." } },
 *         {
 *           "block": { "type": "tool_use", "id": "toolu_1", "name": "Read", "input": { "file_path": "/repo/a.test.ts" } },
 *           "delayMs": 150,
 *           "chunks": 8,
 *           "chunkDelayMs": 5
 *         }
 *       ],
 *       "usage": { "input_tokens": 1200, "output_tokens": 40 }
 *     },
 *     {
 *       "expect": { "tool_results": [{ "tool_use_id": "toolu_1", "is_error": false, "content_includes": "describe(" }] },
 *       "blocks": [{ "block": { "type": "text", "text": "Found it." } }]
 *     }
 *   ]
 * }
 * ```
 *
 * - `blocks[].block`: a `text`, `tool_use` (with its full `input`), `thinking`
 *   or `redacted_thinking` content block.
 * - `blocks[].delayMs`: time to wait before the block starts (after the
 *   previous block ended). `Effect.sleep`, so `TestClock` drives it in tests.
 * - `blocks[].chunks`: how many deltas the block's text, thinking or input JSON
 *   is split into (default 3; fewer when the content is shorter).
 *   `blocks[].chunkDelayMs`: time between two of those deltas.
 * - `stop_reason`: default `tool_use` when the turn has a `tool_use` block,
 *   else `end_turn`. `usage`: reported in `message_start` (input side) and
 *   `message_delta`.
 * - `expect`: checks on the request that asks for this turn. The text of its
 *   last user message must include `user_text_includes`; its `tool_result`
 *   blocks must be exactly `tool_results`, in order (`is_error` absent means
 *   `false`; `content_includes` checks the result's text).
 *
 * Each `stream(request)` replays the next turn (turns are consumed in the
 * order the streams run) as the exact Anthropic event sequence. Whenever the
 * previous turn asked for tools, the request's last user message must carry
 * exactly one `tool_result` per `tool_use`, in call order. A divergence (no
 * turn left, a missing or misordered result, an `expect` that does not hold)
 * fails the stream with a `ModelError` of reason `"replay"` naming the turn;
 * the turn is not consumed then.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Messages from "./Messages.js"
import * as Model from "./Model.js"

/**
 * One content block of a replayed turn, with its timing and chunking.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReplayBlock = Schema.Struct({
  block: Schema.Union(
    Messages.TextBlock,
    Messages.ToolUseBlock,
    Messages.ThinkingBlock,
    Messages.RedactedThinkingBlock
  ),
  delayMs: Schema.optional(Schema.NonNegative),
  chunks: Schema.optional(Schema.Int.pipe(Schema.positive())),
  chunkDelayMs: Schema.optional(Schema.NonNegative)
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ReplayBlock extends Schema.Schema.Type<typeof ReplayBlock> {}

/**
 * An expected `tool_result` of the request that asks for a turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExpectedToolResult = Schema.Struct({
  tool_use_id: Schema.String,
  is_error: Schema.optional(Schema.Boolean),
  content_includes: Schema.optional(Schema.String)
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ExpectedToolResult extends Schema.Schema.Type<typeof ExpectedToolResult> {}

/**
 * Checks on the request that asks for a turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Expectation = Schema.Struct({
  user_text_includes: Schema.optional(Schema.String),
  tool_results: Schema.optional(Schema.Array(ExpectedToolResult))
})
/**
 * @since 0.1.0
 * @category models
 */
export interface Expectation extends Schema.Schema.Type<typeof Expectation> {}

/**
 * One assistant turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Turn = Schema.Struct({
  expect: Schema.optional(Expectation),
  blocks: Schema.Array(ReplayBlock),
  stop_reason: Schema.optional(Model.StopReason),
  usage: Schema.optional(Model.Usage)
})
/**
 * @since 0.1.0
 * @category models
 */
export interface Turn extends Schema.Schema.Type<typeof Turn> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const Transcript = Schema.Struct({
  /** Reported as the model name in `message_start`; default `"replay"`. */
  model: Schema.optional(Schema.String),
  turns: Schema.Array(Turn),
  /** Next prompts the replay suggestion generator hands out in order (speculation, SPEC §4.12). */
  suggestions: Schema.optional(Schema.Array(Schema.String))
})
/**
 * @since 0.1.0
 * @category models
 */
export interface Transcript extends Schema.Schema.Type<typeof Transcript> {}

/**
 * A transcript that could not be read or decoded; `message` names the field.
 *
 * @since 0.1.0
 * @category errors
 */
export class TranscriptError extends Schema.TaggedError<TranscriptError>()("TranscriptError", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * A stream event and how long to wait before emitting it.
 *
 * @since 0.1.0
 * @category models
 */
export interface TimedEvent {
  readonly event: Model.ModelStreamEvent
  readonly delayMs: number
}

const defaultChunks = 3

/** Splits `text` into `n` pieces of near-equal length, never inside a code point. */
const split = (text: string, n: number): ReadonlyArray<string> => {
  const points = Array.from(text)
  const count = Math.min(n, points.length)
  const pieces: Array<string> = []
  for (let i = 0; i < count; i++) {
    pieces.push(
      points.slice(Math.floor((i * points.length) / count), Math.floor(((i + 1) * points.length) / count)).join("")
    )
  }
  return pieces
}

/**
 * The stop reason a turn reports: its own, else `tool_use` when it has a
 * `tool_use` block, else `end_turn`.
 *
 * @since 0.1.0
 * @category getters
 */
export const stopReason = (turn: Turn): Model.StopReason =>
  turn.stop_reason ?? (turn.blocks.some(({ block }) => block.type === "tool_use") ? "tool_use" : "end_turn")

/**
 * The Anthropic event sequence of a turn: `message_start`, per block
 * `content_block_start` / deltas / `content_block_stop`, `message_delta` with
 * the stop reason and usage, `message_stop`. Shared by the replay model and
 * the test server, so both speak the same protocol.
 *
 * @since 0.1.0
 * @category constructors
 */
export const turnEvents = (
  turn: Turn,
  options: { readonly messageId: string; readonly model?: string | undefined }
): ReadonlyArray<TimedEvent> => {
  const now = (event: Model.ModelStreamEvent): TimedEvent => ({ event, delayMs: 0 })
  const usage = turn.usage ?? {}
  const events: Array<TimedEvent> = [
    now({
      type: "message_start",
      message: {
        id: options.messageId,
        model: options.model ?? "replay",
        role: "assistant",
        usage: {
          input_tokens: usage.input_tokens ?? 0,
          output_tokens: 0,
          ...(usage.cache_creation_input_tokens !== undefined
            ? { cache_creation_input_tokens: usage.cache_creation_input_tokens }
            : {}),
          ...(usage.cache_read_input_tokens !== undefined
            ? { cache_read_input_tokens: usage.cache_read_input_tokens }
            : {})
        }
      }
    })
  ]
  turn.blocks.forEach(({ block, chunkDelayMs, chunks, delayMs }, index) => {
    const deltas = (pieces: ReadonlyArray<string>, delta: (piece: string) => Model.ModelStreamEvent) =>
      pieces.forEach((piece, i) => events.push({ event: delta(piece), delayMs: i === 0 ? 0 : chunkDelayMs ?? 0 }))
    const pieces = (text: string) => split(text, chunks ?? defaultChunks)
    const start = (content_block: Schema.Schema.Type<typeof Model.StartedBlock>) =>
      events.push({ event: { type: "content_block_start", index, content_block }, delayMs: delayMs ?? 0 })
    switch (block.type) {
      case "text":
        start({ type: "text", text: "" })
        deltas(
          pieces(block.text),
          (text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })
        )
        break
      case "tool_use":
        start({ type: "tool_use", id: block.id, name: block.name, input: {} })
        deltas(pieces(JSON.stringify(block.input ?? {})), (partial_json) => ({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json }
        }))
        break
      case "thinking":
        start({ type: "thinking", thinking: "", signature: "" })
        deltas(pieces(block.thinking), (thinking) => ({
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking }
        }))
        events.push(
          now({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } })
        )
        break
      case "redacted_thinking":
        start(block)
        break
    }
    events.push(now({ type: "content_block_stop", index }))
  })
  events.push(
    now({
      type: "message_delta",
      delta: { stop_reason: stopReason(turn), stop_sequence: null },
      usage: { ...usage, output_tokens: usage.output_tokens ?? 0 }
    }),
    now({ type: "message_stop" })
  )
  return events
}

const replayError = (message: string) => new Model.ModelError({ reason: "replay", message, retryable: false })

const lastUserMessage = (request: Model.ModelRequest): Messages.Message | undefined => {
  const last = request.messages[request.messages.length - 1]
  return last?.role === "user" ? last : undefined
}

const toolResults = (message: Messages.Message | undefined): ReadonlyArray<Messages.ToolResultBlock> =>
  message === undefined
    ? []
    : Messages.blocks(message).filter((block): block is Messages.ToolResultBlock => block.type === "tool_result")

const userText = (message: Messages.Message | undefined): string =>
  message === undefined
    ? ""
    : Messages.blocks(message).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

const list = (ids: ReadonlyArray<string>) => `[${ids.join(", ")}]`

/** Why a request does not match turn `turnNumber` (1-based), if it does not. */
const divergence = (
  turnNumber: number,
  turn: Turn,
  previousToolUseIds: ReadonlyArray<string>,
  request: Model.ModelRequest
): string | undefined => {
  const last = lastUserMessage(request)
  const results = toolResults(last)
  const resultIds = results.map((result) => result.tool_use_id)
  if (previousToolUseIds.length > 0) {
    if (last === undefined) {
      return `turn ${turnNumber}: the request does not end with a user message, but turn ${
        turnNumber - 1
      } asked for tools ${list(previousToolUseIds)}`
    }
    if (resultIds.length !== previousToolUseIds.length || resultIds.some((id, i) => id !== previousToolUseIds[i])) {
      return `turn ${turnNumber}: the last user message carries tool_results ${list(resultIds)}, but turn ${
        turnNumber - 1
      } asked for ${list(previousToolUseIds)} (one result per tool_use, in call order)`
    }
  }
  const expect = turn.expect
  if (expect?.user_text_includes !== undefined && !userText(last).includes(expect.user_text_includes)) {
    return `turn ${turnNumber}: expected the last user message to include ${
      JSON.stringify(expect.user_text_includes)
    }, got ${JSON.stringify(userText(last))}`
  }
  if (expect?.tool_results !== undefined) {
    const expectedIds = expect.tool_results.map((result) => result.tool_use_id)
    if (resultIds.length !== expectedIds.length || resultIds.some((id, i) => id !== expectedIds[i])) {
      return `turn ${turnNumber}: expected tool_results ${list(expectedIds)}, got ${list(resultIds)}`
    }
    for (const [i, expected] of expect.tool_results.entries()) {
      const actual = results[i]!
      if (expected.is_error !== undefined && (actual.is_error ?? false) !== expected.is_error) {
        return `turn ${turnNumber}: expected tool_result ${expected.tool_use_id} to have is_error ${expected.is_error}, got ${
          actual.is_error ?? false
        }`
      }
      const content = Messages.contentText(actual.content)
      if (expected.content_includes !== undefined && !content.includes(expected.content_includes)) {
        return `turn ${turnNumber}: expected tool_result ${expected.tool_use_id} to include ${
          JSON.stringify(expected.content_includes)
        }, got ${JSON.stringify(content)}`
      }
    }
  }
  return undefined
}

interface ReplayState {
  /** Index of the next turn to replay. */
  readonly next: number
  /** The `tool_use` ids of the last replayed turn, in call order. */
  readonly pendingToolUseIds: ReadonlyArray<string>
}

const delayed = ({ delayMs, event }: TimedEvent): Effect.Effect<Model.ModelStreamEvent> =>
  delayMs > 0 ? Effect.as(Effect.sleep(Duration.millis(delayMs)), event) : Effect.succeed(event)

/**
 * A replay model over a decoded transcript.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (transcript: Transcript): Effect.Effect<Model.Service> =>
  Effect.map(Ref.make<ReplayState>({ next: 0, pendingToolUseIds: [] }), (state) => ({
    stream: (request) =>
      Stream.unwrap(
        Ref.modify(
          state,
          (current): [Effect.Effect<Turn & { readonly number: number }, Model.ModelError>, ReplayState] => {
            const number = current.next + 1
            const turn = transcript.turns[current.next]
            if (turn === undefined) {
              return [
                Effect.fail(
                  replayError(
                    `turn ${number}: the transcript has only ${transcript.turns.length} turn(s), but the model was asked for another`
                  )
                ),
                current
              ]
            }
            const problem = divergence(number, turn, current.pendingToolUseIds, request)
            if (problem !== undefined) {
              return [Effect.fail(replayError(problem)), current]
            }
            const toolUseIds = turn.blocks.flatMap(({ block }) => (block.type === "tool_use" ? [block.id] : []))
            return [Effect.succeed({ ...turn, number }), { next: current.next + 1, pendingToolUseIds: toolUseIds }]
          }
        ).pipe(
          Effect.flatten,
          Effect.map((turn) =>
            Stream.fromIterable(
              turnEvents(turn, { messageId: `msg_replay_${turn.number}`, model: transcript.model })
            ).pipe(Stream.mapEffect(delayed))
          )
        )
      )
  }))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (transcript: Transcript): Layer.Layer<Model.LanguageModel> =>
  Layer.effect(Model.LanguageModel, make(transcript))

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

const decodeTranscript = Schema.decodeUnknown(Transcript, { errors: "all", onExcessProperty: "error" })

/**
 * Decodes a transcript from JSON text; unknown fields are errors (they are
 * usually typos). `source` names the text in errors (a path).
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string, source: string): Effect.Effect<Transcript, TranscriptError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      new TranscriptError({
        path: source,
        message: `${source}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`
      })
  }).pipe(
    Effect.flatMap((json) =>
      decodeTranscript(json).pipe(
        Effect.mapError((error) => {
          // The first issue per field: an optional field's union repeats itself.
          const issues = new Map<string, string>()
          for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
            const field = formatPath(issue.path) || "(root)"
            if (!issues.has(field)) issues.set(field, `${field}: ${issue.message}`)
          }
          return new TranscriptError({
            path: source,
            message: `${source}: invalid transcript: ${[...issues.values()].join("; ")}`
          })
        })
      )
    )
  )

/**
 * Reads and decodes a transcript file.
 *
 * @since 0.1.0
 * @category decoding
 */
export const load = (path: string): Effect.Effect<Transcript, TranscriptError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError((error) =>
      new TranscriptError({ path, message: `${path}: cannot read transcript: ${error.message}` })
    ),
    Effect.flatMap((text) => parse(text, path))
  )

/**
 * A replay model over a transcript file.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFile = (
  path: string
): Layer.Layer<Model.LanguageModel, TranscriptError, FileSystem.FileSystem> =>
  Layer.effect(Model.LanguageModel, Effect.flatMap(load(path), make))
