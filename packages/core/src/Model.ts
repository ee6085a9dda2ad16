/**
 * The model port (SPEC §4.11): `LanguageModel.stream(request)` is a Stream of
 * events in the Anthropic streaming shapes, decoded with Schema at the edge.
 * Adapters: `@switchyard/core/anthropic` (the real API) and `ReplayModel`
 * (a transcript, for tests and the offline demo).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Messages from "./Messages.js"
import * as Tool from "./Tool.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  output_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_creation_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: Schema.optional(Schema.NullOr(Schema.Number))
})
/**
 * @since 0.1.0
 * @category models
 */
export interface Usage extends Schema.Schema.Type<typeof Usage> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const StopReason = Schema.Literal(
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded"
)
/**
 * @since 0.1.0
 * @category models
 */
export type StopReason = Schema.Schema.Type<typeof StopReason>

/**
 * @since 0.1.0
 * @category schemas
 */
export const MessageStart = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Schema.Struct({
    id: Schema.String,
    model: Schema.optional(Schema.String),
    role: Schema.optional(Schema.Literal("assistant")),
    usage: Schema.optional(Usage)
  })
})

/**
 * A block as announced by `content_block_start` (a `tool_use` starts with an
 * empty input that `input_json_delta`s fill in).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StartedBlock = Schema.Union(
  Messages.TextBlock,
  Messages.ToolUseBlock,
  Messages.ThinkingBlock,
  Messages.RedactedThinkingBlock
)

/**
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockStart = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Number,
  content_block: StartedBlock
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Delta = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String })
)

/**
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockDelta = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Number,
  delta: Delta
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlockStop = Schema.Struct({
  type: Schema.Literal("content_block_stop"),
  index: Schema.Number
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const MessageDelta = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({
    stop_reason: Schema.optional(Schema.NullOr(StopReason)),
    stop_sequence: Schema.optional(Schema.NullOr(Schema.String))
  }),
  usage: Schema.optional(Usage)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const MessageStop = Schema.Struct({ type: Schema.Literal("message_stop") })

/**
 * @since 0.1.0
 * @category schemas
 */
export const Ping = Schema.Struct({ type: Schema.Literal("ping") })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({ type: Schema.String, message: Schema.String })
})

/**
 * One event of a streamed model response.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelStreamEvent = Schema.Union(
  MessageStart,
  ContentBlockStart,
  ContentBlockDelta,
  ContentBlockStop,
  MessageDelta,
  MessageStop,
  Ping,
  ErrorEvent
)
/**
 * @since 0.1.0
 * @category models
 */
export type ModelStreamEvent = Schema.Schema.Type<typeof ModelStreamEvent>

/**
 * A tool as the API sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly input_schema: Tool.JsonObjectSchema
  /** Deferred tools (SPEC §4.3) are sent with `defer_loading: true`. */
  readonly defer_loading?: boolean
}

/**
 * The definition of a tool for a request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolDefinition = (tool: Tool.Any, options: { readonly deferred?: boolean } = {}): ToolDefinition => ({
  name: tool.name,
  description: tool.description,
  input_schema: Tool.inputJsonSchema(tool),
  ...(options.deferred ? { defer_loading: true } : {})
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ModelRequest {
  readonly system?: string | undefined
  readonly messages: ReadonlyArray<Messages.Message>
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly maxTokens?: number | undefined
  /** Overrides the adapter's model name. */
  readonly model?: string | undefined
}

/**
 * Why a model call failed. `retryable` errors (429, 529, overloaded, a broken
 * connection before any event) are retried by the adapter's `Schedule`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  reason: Schema.Literal(
    "overloaded",
    "rate_limited",
    "authentication",
    "invalid_request",
    "api",
    "network",
    "protocol",
    "replay"
  ),
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  retryable: Schema.Boolean
}) {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly stream: (request: ModelRequest) => Stream.Stream<ModelStreamEvent, ModelError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class LanguageModel extends Context.Tag("@switchyard/core/Model/LanguageModel")<LanguageModel, Service>() {}
