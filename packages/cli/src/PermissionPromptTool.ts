/**
 * `--permission-prompt-tool mcp__server__tool`: in a headless run, an MCP
 * tool answers the permission questions a terminal would, with Claude
 * Code's shapes. The tool is called (directly, not through the permission
 * chain it answers for) with `{"tool_name", "input", "tool_use_id"}` and
 * answers with one text block holding JSON: `{"behavior":"allow",
 * "updatedInput":{…}}` (an empty `updatedInput` keeps the call's input) or
 * `{"behavior":"deny","message":"…","interrupt"?:true}` (the message goes to
 * the model; `interrupt` ends the turn). Anything else denies the call,
 * saying what was wrong.
 *
 * @since 0.1.0
 */
import * as Messages from "@switchyard/core/Messages"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as Tool from "@switchyard/core/Tool"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * What the prompt tool answers (Claude Code's `PermissionPromptToolResult`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Answer = Schema.Union(
  Schema.Struct({
    behavior: Schema.Literal("allow"),
    updatedInput: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    toolUseID: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    behavior: Schema.Literal("deny"),
    message: Schema.String,
    interrupt: Schema.optional(Schema.Boolean),
    toolUseID: Schema.optional(Schema.String)
  })
)

const decodeAnswer = Schema.decodeUnknownEither(Schema.parseJson(Answer))

/**
 * The prompt answer for the tool's result text.
 *
 * @since 0.1.0
 * @category decoding
 */
export const toPromptAnswer = (toolName: string, text: string, input: unknown): PermissionChain.PromptAnswer => {
  const decoded = decodeAnswer(text)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const why = issue === undefined ? "" : `; ${issue.message}`
    return {
      answer: "deny",
      message: `The permission prompt tool ${toolName} gave no valid answer (expected {"behavior":"allow",` +
        `"updatedInput":{…}} or {"behavior":"deny","message":"…"}${why}), so the call was denied.`,
      interrupt: false
    }
  }
  const answer = decoded.right
  if (answer.behavior === "deny") {
    return { answer: "deny", message: answer.message, interrupt: answer.interrupt === true }
  }
  return Object.keys(answer.updatedInput).length === 0 || JSON.stringify(answer.updatedInput) === JSON.stringify(input)
    ? { answer: "yes" }
    : { answer: "yes", updatedInput: answer.updatedInput }
}

const isStream = (value: unknown): value is Stream.Stream<Tool.StreamItem<unknown, unknown>, unknown> =>
  typeof value === "object" && value !== null && Stream.StreamTypeId in value

/** Run a tool's `call` to its output (progress dropped). */
const callTool = (tool: Tool.Any, input: unknown, question: PermissionChain.Question) =>
  Effect.gen(function*() {
    const decoded = yield* Schema.decodeUnknown(tool.inputSchema)(input)
    const called = tool.call(decoded, {
      toolUseId: `${question.toolUseId}-permission`,
      context: question.context,
      progress: () => Effect.void,
      modifyContext: () => Effect.void
    })
    if (!isStream(called)) return yield* (called as Effect.Effect<unknown, unknown>)
    let output: unknown
    yield* Stream.runForEach(called, (item) =>
      Effect.sync(() => {
        if (item._tag === "Output") output = item.value
      }))
    return output
  })

/**
 * The permission prompt that asks the tool named `name` (found in the tool
 * pool when the first question comes, so MCP servers have connected).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (name: string): Layer.Layer<PermissionChain.PermissionPrompt, never, Tool.ToolPool> =>
  Layer.effect(
    PermissionChain.PermissionPrompt,
    Effect.map(Tool.ToolPool, (pool) => ({
      ask: (question): Effect.Effect<PermissionChain.PromptAnswer> =>
        Effect.gen(function*() {
          const tool = (yield* pool.tools).find((t) => t.name === name)
          if (tool === undefined) {
            return {
              answer: "deny",
              message: `--permission-prompt-tool ${name}: no such tool (is its MCP server configured and ` +
                "connected?), so the call was denied.",
              interrupt: false
            } as const
          }
          const input = { tool_name: question.tool.name, input: question.input, tool_use_id: question.toolUseId }
          const output = yield* Effect.either(callTool(tool, input, question))
          if (Either.isLeft(output)) {
            const error = output.left
            return {
              answer: "deny",
              message: `The permission prompt tool ${name} failed (${
                error instanceof Error ? error.message : String(error)
              }), so the call was denied.`,
              interrupt: false
            } as const
          }
          const text = Messages.contentText(tool.mapResult(output.right, question.toolUseId))
          return toPromptAnswer(name, text, question.input)
        })
    }))
  )
