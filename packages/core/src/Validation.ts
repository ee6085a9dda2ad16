/**
 * Two-level input validation (SPEC §4.4): the Schema decode with readable,
 * per-parameter messages, then the tool's own business rules. Also the hint
 * for a deferred tool whose schema the model never saw.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Messages from "./Messages.js"
import * as Text from "./Text.js"
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
export const decode = (tool: Tool.Any, input: unknown): Either.Either<unknown, ParseResult.ParseError> => {
  if (typeof input !== "object" || input === null) return decoderFor(tool)(input)
  // A call is decoded twice, when its batch is planned and when it runs: the second is a lookup.
  const cached = lastDecoded.get(input)
  if (cached !== undefined && cached.tool === tool) return cached.result
  const result = decoderFor(tool)(input)
  lastDecoded.set(input, { tool, result })
  return result
}

const lastDecoded = new WeakMap<object, {
  readonly tool: Tool.Any
  readonly result: Either.Either<unknown, ParseResult.ParseError>
}>()

const MAX_SHOWN = 80

const show = (value: unknown): string => {
  if (value === undefined) return "undefined"
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return Text.clipNotingLength(text, MAX_SHOWN)
}

const typeName = (value: unknown): string => value === null ? "null" : Array.isArray(value) ? "array" : typeof value

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("")

/** What was given, in words: `the string "abc"`, `the number 42`, `null`, `an object {…}`. */
const given = (value: unknown): string => {
  if (value === null) return "null"
  if (value === undefined) return "nothing"
  if (Array.isArray(value)) return `an array ${show(value)}`
  if (typeof value === "object") return `an object ${show(value)}`
  return `the ${typeof value} ${show(value)}`
}

const clip = Text.clip(160)

const MAX_DEPTH = 4

const isUndefined = (ast: AST.AST) => ast._tag === "UndefinedKeyword"

const annotatedDescription = (ast: AST.AST): string | undefined =>
  Option.getOrUndefined(AST.getDescriptionAnnotation(ast))

const joinOr = (items: ReadonlyArray<string>): string => {
  const unique = [...new Set(items)]
  return unique.length <= 1
    ? unique[0] ?? "a value"
    : `${unique.slice(0, -1).join(", ")} or ${unique[unique.length - 1]}`
}

/**
 * What a schema accepts, in words (`a string`, `an array of arrays of
 * numbers`, `"replace" or "insert"`), for the model: no Schema or TypeScript
 * notation.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeExpected = (ast: AST.AST, depth = 0): string => {
  if (depth > MAX_DEPTH) return "a value"
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean (true or false)"
    case "BigIntKeyword":
      return "an integer"
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "left out"
    case "UnknownKeyword":
    case "AnyKeyword":
      return "any value"
    case "Literal":
      return ast.literal === null
        ? "null"
        : JSON.stringify(typeof ast.literal === "bigint" ? String(ast.literal) : ast.literal)
    case "Enums":
      return joinOr(ast.enums.map(([, value]) => JSON.stringify(value)))
    case "TemplateLiteral":
      return "a string of the form " + JSON.stringify(String(ast))
    case "Union":
      return joinOr(
        ast.types.filter((member) => !isUndefined(member)).map((member) => describeExpected(member, depth + 1))
      )
    case "TupleType": {
      if (ast.elements.length === 0 && ast.rest.length === 1) {
        return `an array of ${plural(ast.rest[0]!.type, depth + 1)}`
      }
      const items = ast.elements.map((element) => describeExpected(element.type, depth + 1))
      return ast.rest.length === 0
        ? `an array of ${items.length} item${items.length === 1 ? "" : "s"} (${items.join(", ")})`
        : `an array starting with ${items.join(", ")}`
    }
    case "TypeLiteral": {
      const names = ast.propertySignatures.map((signature) => `\`${String(signature.name)}\``)
      if (names.length > 0) return `an object with ${joinOr(names).replace(/ or ([^,]*)$/, " and $1")}`
      const index = ast.indexSignatures[0]
      return index === undefined ? "an object" : `an object whose values are ${plural(index.type, depth + 1)}`
    }
    case "Refinement":
      return annotatedDescription(ast) ?? describeExpected(ast.from, depth + 1)
    case "Transformation":
      // What the model sends is the encoded side.
      return describeExpected(ast.from, depth + 1)
    case "Suspend":
      return describeExpected(ast.f(), depth + 1)
    case "Declaration":
      return annotatedDescription(ast) ?? Option.getOrElse(AST.getTitleAnnotation(ast), () => "a valid value")
    default:
      return annotatedDescription(ast) ?? "a valid value"
  }
}

/** `numbers`, `arrays of strings`, `objects with …`: the items of an array, in words. */
const plural = (ast: AST.AST, depth: number): string => {
  const one = describeExpected(ast, depth)
  const simple = /^an? ([a-z]+)( .*)?$/.exec(one)
  if (simple !== null && !one.includes(" or ")) {
    const [, noun, rest] = simple
    return `${noun}s${rest ?? ""}`
  }
  return `items that are each ${one}`
}

/** One problem at one parameter path. */
interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly kind: "missing" | "unexpected" | "expected" | "rule" | "invalid"
  readonly text: string
  readonly actual: unknown
}

const toArray = <A>(value: A | ReadonlyArray<A>): ReadonlyArray<A> => Array.isArray(value) ? value : [value as A]

const isUndefinedIssue = (issue: ParseResult.ParseIssue): boolean => issue._tag === "Type" && isUndefined(issue.ast)

/** Walk the issue tree down to the problems a person can act on. */
const problems = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<Problem>): void => {
  switch (issue._tag) {
    case "Pointer":
      return problems(issue.issue, [...path, ...toArray(issue.path)], out)
    case "Missing":
      out.push({ path, kind: "missing", text: "", actual: undefined })
      return
    case "Unexpected":
      out.push({ path, kind: "unexpected", text: "", actual: issue.actual })
      return
    case "Composite": {
      const issues = toArray(issue.issues)
      if (issue.ast._tag === "Union") {
        // An optional field is `X | undefined`: its "expected undefined" says nothing. With one
        // member left, that member's own problem is the real one.
        const relevant = issues.filter((sub) => !isUndefinedIssue(sub))
        if (relevant.length === 1) return problems(relevant[0]!, path, out)
        out.push({ path, kind: "expected", text: describeExpected(issue.ast), actual: issue.actual })
        return
      }
      for (const sub of issues) problems(sub, path, out)
      return
    }
    case "Refinement":
      if (issue.kind === "From") return problems(issue.issue, path, out)
      out.push({ path, kind: "rule", text: describeExpected(issue.ast), actual: issue.actual })
      return
    case "Transformation":
      if (issue.kind !== "Transformation") return problems(issue.issue, path, out)
      out.push({ path, kind: "invalid", text: transformationMessage(issue.issue), actual: issue.actual })
      return
    case "Type":
      out.push({
        path,
        kind: "expected",
        text: issue.message ?? describeExpected(issue.ast),
        actual: issue.actual
      })
      return
    case "Forbidden":
      out.push({ path, kind: "invalid", text: issue.message ?? "it cannot be checked here", actual: issue.actual })
      return
  }
}

const transformationMessage = (issue: ParseResult.ParseIssue): string => {
  if (issue._tag === "Type" && issue.message !== undefined) return issue.message
  const inner: Array<Problem> = []
  problems(issue, [], inner)
  return inner.map((problem) => `expected ${problem.text}`).join("; ") || "it could not be converted"
}

/**
 * Turn a decode error into one readable line per parameter, naming the
 * parameter path and what was expected, in words.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatIssues = (
  toolName: string,
  input: unknown,
  error: ParseResult.ParseError
): ReadonlyArray<string> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    const kind = typeName(input)
    const shown = show(input)
    return [
      `The input of ${toolName} must be a JSON object of parameters, but it was ${
        kind === shown ? kind : `${kind}: ${shown}`
      }`
    ]
  }
  const found: Array<Problem> = []
  problems(error.issue, [], found)
  const byPath = new Map<string, Array<Problem>>()
  for (const problem of found) {
    const key = JSON.stringify(problem.path.map(String))
    const group = byPath.get(key)
    if (group === undefined) byPath.set(key, [problem])
    else group.push(problem)
  }
  const lines: Array<string> = []
  for (const group of byPath.values()) {
    const first = group[0]!
    const name = formatPath(first.path)
    if (group.some((problem) => problem.kind === "missing")) {
      lines.push(`The required parameter \`${name}\` is missing`)
      continue
    }
    if (group.some((problem) => problem.kind === "unexpected")) {
      lines.push(`An unexpected parameter \`${name}\` was provided`)
      continue
    }
    const invalid = group.filter((problem) => problem.kind === "invalid")
    if (invalid.length > 0) {
      lines.push(`The parameter \`${name}\` is invalid: ${clip([...new Set(invalid.map((p) => p.text))].join("; "))}`)
      continue
    }
    const expected = [...new Set(group.map((problem) => problem.text))]
    lines.push(`The parameter \`${name}\` must be ${clip(expected.join(" and "))}, but was ${given(first.actual)}`)
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
