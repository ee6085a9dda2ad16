/**
 * Content blocks and messages in the Anthropic Messages API shapes (SPEC §3).
 *
 * Everything here is a plain JSON value, so a transcript built from these
 * Schemas can be sent to the API as is.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
/**
 * @since 0.1.0
 * @category models
 */
export interface TextBlock extends Schema.Schema.Type<typeof TextBlock> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Union(
    Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.String, data: Schema.String }),
    Schema.Struct({ type: Schema.Literal("url"), url: Schema.String })
  )
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ImageBlock extends Schema.Schema.Type<typeof ImageBlock> {}

/**
 * A reference to a (deferred) tool, returned by ToolSearch inside a
 * `tool_result`; the API expands it to the tool's full definition.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolReferenceBlock = Schema.Struct({
  type: Schema.Literal("tool_reference"),
  tool_name: Schema.String
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ToolReferenceBlock extends Schema.Schema.Type<typeof ToolReferenceBlock> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ToolUseBlock extends Schema.Schema.Type<typeof ToolUseBlock> {}

/**
 * What a `tool_result` may carry besides a plain string.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultContentBlock = Schema.Union(TextBlock, ImageBlock, ToolReferenceBlock)
/**
 * @since 0.1.0
 * @category models
 */
export type ToolResultContentBlock = Schema.Schema.Type<typeof ToolResultContentBlock>

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultContent = Schema.Union(Schema.String, Schema.Array(ToolResultContentBlock))
/**
 * @since 0.1.0
 * @category models
 */
export type ToolResultContent = Schema.Schema.Type<typeof ToolResultContent>

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: ToolResultContent,
  is_error: Schema.optional(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ToolResultBlock extends Schema.Schema.Type<typeof ToolResultBlock> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: Schema.String
})
/**
 * @since 0.1.0
 * @category models
 */
export interface ThinkingBlock extends Schema.Schema.Type<typeof ThinkingBlock> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const RedactedThinkingBlock = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
})
/**
 * @since 0.1.0
 * @category models
 */
export interface RedactedThinkingBlock extends Schema.Schema.Type<typeof RedactedThinkingBlock> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlock = Schema.Union(
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock
)
/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = Schema.Schema.Type<typeof ContentBlock>

/**
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("user", "assistant")
/**
 * @since 0.1.0
 * @category models
 */
export type Role = Schema.Schema.Type<typeof Role>

/**
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Struct({
  role: Role,
  content: Schema.Union(Schema.String, Schema.Array(ContentBlock))
})
/**
 * @since 0.1.0
 * @category models
 */
export interface Message extends Schema.Schema.Type<typeof Message> {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): TextBlock => ({ type: "text", text })

/**
 * @since 0.1.0
 * @category constructors
 */
export const toolUse = (id: string, name: string, input: unknown): ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input
})

/**
 * @since 0.1.0
 * @category constructors
 */
export const toolResult = (toolUseId: string, content: ToolResultContent, isError = false): ToolResultBlock =>
  isError
    ? { type: "tool_result", tool_use_id: toolUseId, content, is_error: true }
    : { type: "tool_result", tool_use_id: toolUseId, content }

/**
 * The blocks of a message as an array (a string content is one text block).
 *
 * @since 0.1.0
 * @category getters
 */
export const blocks = (message: Message): ReadonlyArray<ContentBlock> =>
  typeof message.content === "string" ? [text(message.content)] : message.content

/**
 * The `tool_use` blocks of a message, in order.
 *
 * @since 0.1.0
 * @category getters
 */
export const toolUses = (message: Message): ReadonlyArray<ToolUseBlock> =>
  blocks(message).filter((block): block is ToolUseBlock => block.type === "tool_use")

/**
 * The plain text of a `tool_result` content (text blocks joined by newlines).
 *
 * @since 0.1.0
 * @category getters
 */
export const contentText = (content: ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
