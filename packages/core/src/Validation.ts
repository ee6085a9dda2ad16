/**
 * Two-level input validation (SPEC §4.4): the Schema decode with readable,
 * per-parameter messages, then the tool's own business rules. Also the hint
 * for a deferred tool whose schema the model never saw.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Messages from "./Messages.js"
import * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ValidationFailure {
  readonly _tag: "ValidationFailure"
  /** The whole text of the error `tool_result`. */
  readonly message: string
}

const failure = (message: string): ValidationFailure => ({ _tag: "ValidationFailure", message })

const decoders = new WeakMap<Tool.Any, (u: unknown) => Either.Either<unknown, ParseResult.ParseError>>()

const decoderFor = (tool: Tool.Any) => {
  let decoder = decoders.get(tool)
  if (decoder === undefined) {
    // Models add stray keys rarely and usually by mistake (a misspelt optional
    // parameter), so an unknown key is an error rather than silently ignored.
    decoder = Schema.decodeUnknownEither(tool.inputSchema, { errors: "all", onExcessProperty: "error" })
    decoders.set(tool, decoder)
  }
  return decoder
}

/**
 * Decode a call's raw input with the tool's schema.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (tool: Tool.Any, input: unknown): Either.Either<unknown, ParseResult.ParseError> =>
  decoderFor(tool)(input)

const MAX_SHOWN = 80

const show = (value: unknown): string => {
  if (value === undefined) return "undefined"
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)` : text
}

const typeName = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("")

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input
  )

const expectedOf = (message: string): string | undefined => /^Expected ([\s\S]*?), actual [\s\S]*$/.exec(message)?.[1]

const clip = (text: string, max = 160) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/**
 * Turn a decode error into one readable line per parameter, naming the
 * parameter path and what was expected.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatIssues = (toolName: string, input: unknown, error: ParseResult.ParseError): ReadonlyArray<string> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    const kind = typeName(input)
    const shown = show(input)
    return [`The input of ${toolName} must be a JSON object of parameters, but it was ${kind === shown ? kind : `${kind}: ${shown}`}`]
  }
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const byPath = new Map<string, Array<ParseResult.ArrayFormatterIssue>>()
  for (const issue of issues) {
    const key = JSON.stringify(issue.path)
    const group = byPath.get(key)
    if (group === undefined) byPath.set(key, [issue])
    else group.push(issue)
  }
  const lines: Array<string> = []
  for (const group of byPath.values()) {
    const path = group[0]!.path
    const name = formatPath(path)
    const missing = group.find((issue) => issue._tag === "Missing")
    const unexpected = group.find((issue) => issue._tag === "Unexpected")
    if (missing !== undefined) {
      lines.push(`The required parameter \`${name}\` is missing`)
      continue
    }
    if (unexpected !== undefined) {
      lines.push(`An unexpected parameter \`${name}\` was provided`)
      continue
    }
    const actual = valueAt(input, path)
    const refinements = group.filter((issue) => issue._tag === "Refinement")
    if (refinements.length > 0) {
      const rules = [...new Set(refinements.map((issue) => expectedOf(issue.message) ?? issue.message))]
      lines.push(`The parameter \`${name}\` must be ${rules.join(" and ")}, but was ${show(actual)}`)
      continue
    }
    const expected = [
      ...new Set(group.flatMap((issue) => {
        const e = expectedOf(issue.message)
        return e === undefined || e === "undefined" ? [] : [e]
      }))
    ]
    if (expected.length === 0) {
      // Only "expected undefined" from the optional wrapper: the real issue is deeper in.
      const deeper = issues.some((issue) =>
        issue.path.length > path.length && path.every((key, i) => issue.path[i] === key)
      )
      if (deeper) continue
      lines.push(`The parameter \`${name}\` is invalid: ${clip(group.map((issue) => issue.message).join("; "))}`)
      continue
    }
    const nestedInvalid = path.length > 0 && group.some((issue) => issue._tag !== "Type")
    lines.push(
      nestedInvalid
        ? `The parameter \`${name}\` is invalid: ${clip(group.map((issue) => issue.message).join("; "))}`
        : `The parameter \`${name}\` type is expected as \`${clip(expected.join(" | "))}\` but provided as ${typeName(actual)} ${show(actual)}`
    )
  }
  return lines
}

/**
 * Whether a `tool_reference` to this tool is in the conversation (its full
 * schema has been "loaded", SPEC §4.3).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSchemaLoaded = (messages: ReadonlyArray<Messages.Message>, toolName: string): boolean =>
  messages.some((message) =>
    Messages.blocks(message).some((block) =>
      block.type === "tool_result" &&
      typeof block.content !== "string" &&
      block.content.some((item) => item.type === "tool_reference" && item.tool_name === toolName)
    )
  )

/**
 * The hint appended when a deferred tool is called without its schema loaded
 * and ToolSearch is available.
 *
 * @since 0.1.0
 * @category formatting
 */
export const schemaNotSentHint = (
  tool: Tool.Any,
  context: ToolUseContext.ToolUseContext,
  visibleTools: ReadonlyArray<Tool.Any>
): string | undefined =>
  Tool.isDeferred(tool) &&
    !isSchemaLoaded(context.messages, tool.name) &&
    visibleTools.some((t) => t.name === "ToolSearch")
    ? `\n\nThis tool's schema was not sent to you, so its parameters were guessed. Call ToolSearch with query "select:${tool.name}" to load its definition, then retry the call.`
    : undefined

/**
 * Level 1: decode, with the formatted error `InputValidationError: …`.
 *
 * @since 0.1.0
 * @category validation
 */
export const decodeInput = (
  tool: Tool.Any,
  input: unknown,
  context: ToolUseContext.ToolUseContext,
  visibleTools: ReadonlyArray<Tool.Any>
): Either.Either<unknown, ValidationFailure> =>
  Either.mapLeft(decode(tool, input), (error) => {
    const lines = formatIssues(tool.name, input, error)
    const hint = schemaNotSentHint(tool, context, visibleTools) ?? ""
    return failure(
      `InputValidationError: ${tool.name} failed due to the following issue${lines.length === 1 ? "" : "s"}:\n` +
        lines.join("\n") + hint
    )
  })

/**
 * Levels 1 and 2: decode, then the tool's `validateInput`.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = (
  tool: Tool.Any,
  input: unknown,
  context: ToolUseContext.ToolUseContext,
  visibleTools: ReadonlyArray<Tool.Any>
): Effect.Effect<unknown, ValidationFailure> =>
  Either.match(decodeInput(tool, input, context, visibleTools), {
    onLeft: Effect.fail,
    onRight: (decoded) =>
      tool.validateInput === undefined
        ? Effect.succeed(decoded)
        : tool.validateInput(decoded, context).pipe(
          Effect.as(decoded),
          Effect.mapError((error) => failure(error.message))
        )
  })
