/**
 * The hook protocol (SPEC §4.5): what one hook's answer means for its event
 * (a `Verdict`), and how the answers of all matching hooks combine into the
 * outcomes of the `Hooks` port. Command hooks (exit code, stdout, stderr) and
 * programmatic hooks (an already parsed object) go through the same decoding.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Hooks from "../Hooks.js"
import * as Messages from "../Messages.js"
import { MAX_OUTPUT_BYTES, type ProcessResult } from "./hookProcess.js"

/** @internal */
export const PermissionDecision = Schema.Literal("allow", "deny", "ask")

/** @internal */
export const HookSpecificOutput = Schema.Struct({
  hookEventName: Schema.optional(Schema.String),
  permissionDecision: Schema.optional(PermissionDecision),
  permissionDecisionReason: Schema.optional(Schema.String),
  updatedInput: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  additionalContext: Schema.optional(Schema.String),
  updatedToolOutput: Schema.optional(Schema.Unknown),
  /** Claude Code's name for `updatedToolOutput`. */
  updatedMCPToolOutput: Schema.optional(Schema.Unknown)
})

/** @internal */
export const HookOutput = Schema.Struct({
  continue: Schema.optional(Schema.Boolean),
  stopReason: Schema.optional(Schema.String),
  suppressOutput: Schema.optional(Schema.Boolean),
  systemMessage: Schema.optional(Schema.String),
  decision: Schema.optional(Schema.Literal("approve", "block")),
  reason: Schema.optional(Schema.String),
  hookSpecificOutput: Schema.optional(HookSpecificOutput)
})

type HookOutput = Schema.Schema.Type<typeof HookOutput>

/**
 * What one hook said, already read for its event.
 *
 * @internal
 */
export interface Verdict {
  readonly decision: "allow" | "deny" | "ask" | undefined
  readonly reason: string | undefined
  readonly updatedInput: { readonly input: unknown; readonly source: string } | undefined
  readonly additionalContext: ReadonlyArray<string>
  readonly updatedToolOutput: Messages.ToolResultContent | undefined
  readonly blockReason: string | undefined
  readonly messages: ReadonlyArray<Hooks.HookMessage>
  readonly stop: string | undefined
}

/** @internal */
export const emptyVerdict: Verdict = {
  decision: undefined,
  reason: undefined,
  updatedInput: undefined,
  additionalContext: [],
  updatedToolOutput: undefined,
  blockReason: undefined,
  messages: [],
  stop: undefined
}

/** Names a hook in messages: `PreToolUse hook "./check.sh"`. */
export const label = (event: Hooks.HookEvent, source: string): string => `${event} hook "${source}"`

/** @internal */
export const errorVerdict = (content: string): Verdict => ({
  ...emptyVerdict,
  messages: [{ level: "error", content }]
})

/** @internal */
export const warningVerdict = (content: string): Verdict => ({
  ...emptyVerdict,
  messages: [{ level: "warning", content }]
})

const block = (event: Hooks.HookEvent, reason: string): Verdict =>
  event === "PreToolUse"
    ? { ...emptyVerdict, decision: "deny", reason }
    : { ...emptyVerdict, blockReason: reason }

// One line per offending field (an optional field also reports its `undefined` branch; keep the first).
const formatIssues = (error: ParseResult.ParseError): string => {
  const byPath = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.join(".")
    if (!byPath.has(path)) byPath.set(path, path.length > 0 ? `${path}: ${issue.message}` : issue.message)
  }
  return [...byPath.values()].join("; ")
}

const decodeOutput = Schema.decodeUnknownEither(HookOutput)
const decodeContent = Schema.decodeUnknownEither(Messages.ToolResultContent)

/**
 * A replacement tool output: a `tool_result` content as it is, anything else
 * (an MCP result object, a number) as its JSON text.
 */
const toContent = (value: unknown): Messages.ToolResultContent => {
  const decoded = decodeContent(value)
  if (Either.isRight(decoded)) return decoded.right
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}

// PostToolUseFailure answers may be written for PostToolUse (Claude Code's older shape).
const fitsEvent = (event: Hooks.HookEvent, name: string): boolean =>
  name === event || (event === "PostToolUseFailure" && name === "PostToolUse")

/**
 * Read a hook's JSON answer (a parsed value, from stdout or a programmatic
 * hook) for its event. A value of the wrong shape is a non-blocking error.
 */
export const fromValue = (event: Hooks.HookEvent, source: string, value: unknown): Verdict => {
  const decoded = decodeOutput(value, { onExcessProperty: "ignore", errors: "all" })
  if (Either.isLeft(decoded)) {
    return errorVerdict(
      `${label(event, source)} answered with JSON that is not a hook output (${
        formatIssues(decoded.left)
      }); it was ignored`
    )
  }
  return fromOutput(event, source, decoded.right)
}

const fromOutput = (event: Hooks.HookEvent, source: string, output: HookOutput): Verdict => {
  const name = label(event, source)
  const messages: Array<Hooks.HookMessage> = []
  if (output.systemMessage !== undefined) messages.push({ level: "warning", content: output.systemMessage })
  let specific = output.hookSpecificOutput
  if (specific?.hookEventName !== undefined && !fitsEvent(event, specific.hookEventName)) {
    messages.push({
      level: "error",
      content: `${name} answered with hookSpecificOutput for ${specific.hookEventName}; it was ignored`
    })
    specific = undefined
  }
  const base: Verdict = {
    ...emptyVerdict,
    additionalContext: specific?.additionalContext !== undefined ? [specific.additionalContext] : [],
    messages,
    stop: output.continue === false ? output.stopReason ?? `${name} stopped the session` : undefined
  }
  switch (event) {
    case "PreToolUse": {
      // `decision: approve|block` is the legacy spelling of allow|deny; hookSpecificOutput wins.
      const legacy = output.decision === "approve" ? "allow" : output.decision === "block" ? "deny" : undefined
      const decision = specific?.permissionDecision ?? legacy
      const reason = specific?.permissionDecisionReason ?? output.reason
      let updatedInput: Verdict["updatedInput"] = undefined
      if (specific?.updatedInput !== undefined) {
        if (decision === "allow" || decision === "ask") updatedInput = { input: specific.updatedInput, source: name }
        else {
          messages.push({
            level: "warning",
            content: `${name} returned updatedInput without permissionDecision "allow" or "ask"; it was ignored`
          })
        }
      }
      return {
        ...base,
        decision,
        reason: reason ?? (decision === "deny" ? `Blocked by ${name}` : undefined),
        updatedInput
      }
    }
    case "PostToolUse":
    case "PostToolUseFailure": {
      const replacement = specific?.updatedToolOutput ?? specific?.updatedMCPToolOutput
      return {
        ...base,
        blockReason: output.decision === "block" ? output.reason ?? `Blocked by ${name}` : undefined,
        updatedToolOutput: replacement !== undefined ? toContent(replacement) : undefined
      }
    }
    case "PostToolBatch":
    case "UserPromptSubmit":
    case "Stop":
      return {
        ...base,
        blockReason: output.decision === "block" ? output.reason ?? `Blocked by ${name}` : undefined
      }
  }
}

/**
 * Read a command hook's run: exit 0 → JSON (stdout starting with `{`) or plain
 * text; exit 2 → block with stderr; any other exit, a signal, a failed start
 * or a timeout → a message to the user and no decision.
 */
export const fromProcess = (
  event: Hooks.HookEvent,
  command: string,
  result: ProcessResult,
  timeoutSeconds: number
): Verdict => {
  const verdict = verdictOf(event, command, result, timeoutSeconds)
  if (result._tag !== "Exited" && result._tag !== "Signaled" || result.truncated === undefined) return verdict
  // Say that the output was cut, so nobody takes a partial answer for the whole.
  const { stderrBytes, stdoutBytes } = result.truncated
  const streams = [
    ...(stdoutBytes > MAX_OUTPUT_BYTES ? [`${stdoutBytes} bytes on stdout`] : []),
    ...(stderrBytes > MAX_OUTPUT_BYTES ? [`${stderrBytes} bytes on stderr`] : [])
  ]
  const note = `${label(event, command)} printed ${streams.join(" and ")}; only the first ${MAX_OUTPUT_BYTES} ` +
    `bytes of each were kept`
  return { ...verdict, messages: [...verdict.messages, { level: "warning", content: note }] }
}

const verdictOf = (
  event: Hooks.HookEvent,
  command: string,
  result: ProcessResult,
  timeoutSeconds: number
): Verdict => {
  const name = label(event, command)
  switch (result._tag) {
    case "TimedOut":
      return warningVerdict(`${name} timed out after ${timeoutSeconds}s and was stopped; it gave no decision`)
    case "SpawnFailed":
      return errorVerdict(`${name} could not start: ${result.message}`)
    case "Signaled":
      return errorVerdict(withStderr(`${name} was killed (${result.message})`, result.stderr))
    case "Exited": {
      if (result.code === 2) {
        const stderr = result.stderr.trim()
        return block(event, stderr.length > 0 ? stderr : `Blocked by ${name} (exit code 2, no message on stderr)`)
      }
      if (result.code !== 0) {
        return errorVerdict(withStderr(`${name} failed with exit code ${result.code}`, result.stderr))
      }
      const stdout = result.stdout.trim()
      if (stdout.startsWith("{")) {
        let parsed: unknown
        try {
          parsed = JSON.parse(stdout)
        } catch (error) {
          return errorVerdict(
            `${name} printed invalid JSON (${error instanceof Error ? error.message : String(error)}); it was ignored`
          )
        }
        return fromValue(event, command, parsed)
      }
      if (stdout.length === 0) return emptyVerdict
      // Plain stdout is context for the model on UserPromptSubmit, and shown to the user otherwise.
      return event === "UserPromptSubmit"
        ? { ...emptyVerdict, additionalContext: [stdout] }
        : { ...emptyVerdict, messages: [{ level: "info", content: stdout }] }
    }
  }
}

const withStderr = (text: string, stderr: string): string => {
  const trimmed = stderr.trim()
  return trimmed.length > 0 ? `${text}: ${trimmed}` : text
}

const joinReasons = (reasons: ReadonlyArray<string | undefined>): string | undefined => {
  const present = reasons.filter((reason): reason is string => reason !== undefined && reason.length > 0)
  return present.length > 0 ? present.join("\n") : undefined
}

const firstStop = (verdicts: ReadonlyArray<Verdict>): string | undefined =>
  verdicts.find((verdict) => verdict.stop !== undefined)?.stop

/**
 * Combine PreToolUse answers (in config order): deny beats ask beats allow,
 * the reason comes from the winning answers, `updatedInput` from the last
 * allowing (or asking) hook unless the call is denied.
 */
export const combinePreToolUse = (verdicts: ReadonlyArray<Verdict>): Hooks.PreToolUseOutcome => {
  const decision = verdicts.some((verdict) => verdict.decision === "deny")
    ? "deny"
    : verdicts.some((verdict) => verdict.decision === "ask")
    ? "ask"
    : verdicts.some((verdict) => verdict.decision === "allow")
    ? "allow"
    : undefined
  const updatedInput = decision === "deny"
    ? undefined
    : verdicts.reduce<Verdict["updatedInput"]>((last, verdict) => verdict.updatedInput ?? last, undefined)
  return {
    decision,
    reason: joinReasons(verdicts.filter((verdict) => verdict.decision === decision).map((verdict) => verdict.reason)),
    updatedInput,
    additionalContext: verdicts.flatMap((verdict) => verdict.additionalContext),
    messages: verdicts.flatMap((verdict) => verdict.messages),
    stop: firstStop(verdicts)
  }
}

/** Combine PostToolUse(Failure) answers: the last `updatedToolOutput` in config order wins. */
export const combinePostToolUse = (verdicts: ReadonlyArray<Verdict>): Hooks.PostToolUseOutcome => ({
  additionalContext: verdicts.flatMap((verdict) => verdict.additionalContext),
  updatedToolOutput: verdicts.reduce<Messages.ToolResultContent | undefined>(
    (last, verdict) => verdict.updatedToolOutput ?? last,
    undefined
  ),
  blockReason: joinReasons(verdicts.map((verdict) => verdict.blockReason)),
  messages: verdicts.flatMap((verdict) => verdict.messages),
  stop: firstStop(verdicts)
})

/** Combine PostToolBatch, UserPromptSubmit and Stop answers. */
export const combineLoop = (verdicts: ReadonlyArray<Verdict>): Hooks.LoopHookOutcome => ({
  blockReason: joinReasons(verdicts.map((verdict) => verdict.blockReason)),
  additionalContext: verdicts.flatMap((verdict) => verdict.additionalContext),
  messages: verdicts.flatMap((verdict) => verdict.messages),
  stop: firstStop(verdicts)
})
