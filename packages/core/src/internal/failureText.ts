/**
 * The text of a failed tool call for the model, and the `error.type` of its
 * span (SPEC §4.10: a failure or a defect is an error `tool_result`, never a
 * crash): a tagged error without a message is given by its tag and fields.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import * as Tool from "../Tool.js"

const MAX_FIELDS_SHOWN = 300

/** A tagged error's fields (what a person needs to act), as JSON. */
const fieldsOf = (error: object): string => {
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(error)) {
    if (key !== "_tag" && key !== "message" && key !== "stack" && key !== "cause") {
      fields[key] = (error as Record<string, unknown>)[key]
    }
  }
  if (Object.keys(fields).length === 0) return ""
  let text: string
  try {
    text = JSON.stringify(fields)
  } catch {
    text = String(fields)
  }
  return text.length > MAX_FIELDS_SHOWN ? `${text.slice(0, MAX_FIELDS_SHOWN - 1)}…` : text
}

const describeError = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const record = error as { readonly _tag?: unknown; readonly message?: unknown }
  const message = typeof record.message === "string" ? record.message : ""
  const fields = fieldsOf(error)
  if (typeof record._tag === "string") {
    // A message the error was given (a field or a getter) counts; `Data.TaggedError` without
    // one has "", and `Schema.TaggedError` without one derives `{ …fields }`: neither names
    // what failed, so the tag and fields do.
    const derived = message === "" ||
      (!Object.prototype.hasOwnProperty.call(error, "message") && /^\{[\s\S]*\}$/.test(message.trim()))
    if (!derived) return message
    return fields === "" ? record._tag : `${record._tag} ${fields}`
  }
  if (message !== "") return message
  if (fields !== "") return error instanceof Error && error.name !== "Error" ? `${error.name} ${fields}` : fields
  return error instanceof Error ? error.name : String(error)
}

/**
 * The text of a failed call for the model. A tagged error without a message
 * is given by its tag and fields (`Error: OutOfStock {"sku":"a-1"}`).
 */
export const formatFailure = (toolName: string, cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof Tool.ToolError) return error.message
    return `Error: ${describeError(error)}`
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    const value = defect.value
    const text = value instanceof Error ? `${value.name}: ${value.message}` : describeError(value)
    return `Error: ${toolName} failed unexpectedly (${text})`
  }
  if (Cause.isInterruptedOnly(cause)) return `Error: ${toolName} was interrupted`
  return `Error: ${toolName} failed: ${Cause.pretty(cause).split("\n", 1)[0]}`
}

/** The `error.type` of a failed call's span: the error's tag or class, else a code. */
export const errorTypeOf = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const value = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (value === undefined) return Cause.isInterruptedOnly(cause) ? "interrupted" : "_OTHER"
  if (typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string") {
    return value._tag
  }
  if (value instanceof Error) return value.name
  return Option.isSome(failure) ? "_OTHER" : "defect"
}
