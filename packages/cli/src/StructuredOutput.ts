/**
 * `--json-schema SCHEMA`: structured output as Claude Code gives it. The run
 * gets a `StructuredOutput` tool whose input schema is SCHEMA; the model is
 * told to call it with its final answer, and the input is validated against
 * SCHEMA (a call that does not match is an error result naming what is
 * wrong, so the model can try again). When a turn ends without a valid call
 * the model is reminded, a few times; the result's `structured_output` holds
 * the answer, or the run ends as `error_max_structured_output_retries`.
 * The validator (Ajv) is loaded only when the flag is given.
 *
 * @since 0.1.0
 */
import * as Tool from "@switchyard/core/Tool"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"

/**
 * The tool's name (Claude Code's).
 *
 * @since 0.1.0
 * @category constants
 */
export const toolName = "StructuredOutput"

/**
 * How many times a model that ended without an answer is reminded.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxReminders = 3

/**
 * The line added to the system prompt.
 *
 * @since 0.1.0
 * @category constants
 */
export const systemPrompt =
  `When you have the final answer, call the ${toolName} tool exactly once with it: its input must match the ` +
  "JSON Schema the tool declares. The answer is taken from that call."

/**
 * The prompt sent when a turn ended without a valid answer.
 *
 * @since 0.1.0
 * @category constants
 */
export const reminder =
  `You ended without calling ${toolName}. Call ${toolName} now with your final answer; its input must match ` +
  "the tool's schema."

/**
 * A structured-output request: the tool to offer and the answer once given.
 *
 * @since 0.1.0
 * @category models
 */
export interface StructuredOutput {
  readonly tool: Tool.Any
  /** The validated input of the last successful call. */
  readonly answer: () => Option.Option<unknown>
}

const Input = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A CommonJS module's export, however the loader (Node, a bundle) shapes the namespace. */
const commonJsExport = <A>(namespace: unknown, name: string): A => {
  const ns = namespace as Record<string, unknown> & { readonly default?: Record<string, unknown> }
  return (ns[name] ?? ns.default?.[name] ?? ns.default) as A
}

/**
 * Parse SCHEMA (JSON text) and compile it. Bad input when it is not JSON, not
 * an object schema, or does not compile.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (text: string): Effect.Effect<StructuredOutput, CliError.CliError> =>
  Effect.gen(function*() {
    let schema: unknown
    try {
      schema = JSON.parse(text)
    } catch (error) {
      return yield* Effect.fail(CliError.badInput(
        `--json-schema is not valid JSON (${error instanceof Error ? error.message : String(error)})`
      ))
    }
    if (typeof schema !== "object" || schema === null || (schema as { type?: unknown }).type !== "object") {
      return yield* Effect.fail(CliError.badInput(
        "--json-schema must be an object schema ({\"type\":\"object\",\"properties\":{…}}): the answer is a tool input"
      ))
    }
    const record = schema as Tool.JsonObjectSchema
    const draft2020 = typeof record["$schema"] === "string" && record["$schema"].includes("2020-12")
    const validator = yield* Effect.tryPromise({
      try: async () => {
        const Validator = draft2020
          ? commonJsExport<typeof import("ajv/dist/2020.js").Ajv2020>(await import("ajv/dist/2020.js"), "Ajv2020")
          : commonJsExport<typeof import("ajv").Ajv>(await import("ajv"), "Ajv")
        return new Validator({ strict: false, allErrors: true }).compile(record)
      },
      catch: (error) =>
        CliError.badInput(`--json-schema does not compile: ${error instanceof Error ? error.message : String(error)}`)
    })
    const { $schema: _, ...inputSchema } = record
    let answer = Option.none<unknown>()
    const tool = Tool.make(toolName, {
      description: "Give the final answer as structured output. Call this once, at the end, with the answer.",
      input: Input,
      inputJsonSchema: inputSchema as Tool.JsonObjectSchema,
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      validateInput: (input) =>
        validator(input)
          ? Effect.void
          : Effect.fail(
            new Tool.ToolError({
              message: `The input does not match the schema: ${
                (validator.errors ?? []).map((e) => `${e.instancePath || "(input)"} ${e.message ?? "is invalid"}`)
                  .join("; ")
              }`
            })
          ),
      call: (input) =>
        Effect.sync(() => {
          answer = Option.some(input)
          return "Structured output provided successfully"
        })
    })
    return { tool: tool as Tool.Any, answer: () => answer }
  })
