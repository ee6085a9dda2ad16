/**
 * A `tool_use` block as the runners take it (SPEC §4.6, §6): the block the
 * transcript keeps, and what the query loop knows about its input — parsed,
 * not parsed (malformed JSON, a stream that broke inside the block), or
 * refused (a repeated id). An unparsed or refused call is answered with an
 * error `tool_result` without running the tool, so every block is still
 * answered exactly once.
 *
 * The runners (`Execution.execute`, `Batches.runTools`, the streaming
 * executor) take a plain `ToolUseBlock` too: its input parsed.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Messages from "./Messages.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Input = Data.TaggedEnum<{
  /** The input is the block's `input`. */
  Parsed: {}
  /** The model's input text is not a JSON object, or was cut off; the block's `input` is `{}`. */
  Unparsed: { readonly reason: string }
  /** The call is kept in the transcript but not run; `message` is its error result. */
  Refused: { readonly message: string }
}>

/**
 * `Input.Unparsed({ reason })`, `Input.$is("Refused")`, …
 *
 * @since 0.1.0
 * @category constructors
 */
export const Input = Data.taggedEnum<Input>()

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolCall {
  readonly block: Messages.ToolUseBlock
  readonly input: Input
}

/**
 * What the runners accept: a block whose input parsed, or a `ToolCall`.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Messages.ToolUseBlock | ToolCall

const parsedInput: Input = Input.Parsed()

/**
 * @since 0.1.0
 * @category guards
 */
export const isToolCall = (u: Any | Messages.ContentBlock): u is ToolCall => !("type" in u)

/**
 * A block whose input parsed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parsed = (block: Messages.ToolUseBlock): ToolCall => ({ block, input: parsedInput })

/**
 * A `ToolCall` for either form.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (call: Any): ToolCall => (isToolCall(call) ? call : parsed(call))

/**
 * The block of either form.
 *
 * @since 0.1.0
 * @category getters
 */
export const blockOf = (call: Any): Messages.ToolUseBlock => (isToolCall(call) ? call.block : call)

/**
 * A `tool_use` whose input the model sent as text that is not a JSON object
 * (or that a broken stream cut off). The block has an empty input, as the
 * transcript keeps it; running it gives the error `tool_result`
 * `InputValidationError: the input is not valid JSON: <reason>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unparsed = (id: string, name: string, reason: string): ToolCall => ({
  block: Messages.toolUse(id, name, {}),
  input: Input.Unparsed({ reason })
})

/**
 * A `tool_use` kept in the transcript but not run: running it gives the error
 * `tool_result` `message`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const refused = (block: Messages.ToolUseBlock, message: string): ToolCall => ({
  block,
  input: Input.Refused({ message })
})

/**
 * The error `tool_result` text for an input that is not valid JSON.
 *
 * @since 0.1.0
 * @category formatting
 */
export const invalidJsonMessage = (reason: string): string =>
  `InputValidationError: the input is not valid JSON: ${reason}`

/**
 * The error text of a call that repeats an earlier block's id.
 *
 * @since 0.1.0
 * @category formatting
 */
export const repeatedIdMessage = (id: string, renamed: string): string =>
  `Error: this tool_use repeats the id ${id} of an earlier block in the same message, so it was not run ` +
  `(its id is now ${renamed}). Call the tool again if it is still needed.`

/**
 * `tool_use` ids must be unique within a message: the returned function
 * passes the first call with an id through and renames every later one
 * (`<id>_2`, `<id>_3`, …) and refuses it, so that the transcript stays valid,
 * each block gets its own result, and nothing runs twice under one id. The
 * query loop and the library runners use it alike.
 *
 * @since 0.1.0
 * @category constructors
 */
export const uniqueIds = (): (call: Any) => ToolCall => {
  const used = new Set<string>()
  return (call) => {
    const toolCall = of(call)
    const id = toolCall.block.id
    if (!used.has(id)) {
      used.add(id)
      return toolCall
    }
    let n = 2
    while (used.has(`${id}_${n}`)) n++
    const renamed = `${id}_${n}`
    used.add(renamed)
    return refused({ ...toolCall.block, id: renamed }, repeatedIdMessage(id, renamed))
  }
}
