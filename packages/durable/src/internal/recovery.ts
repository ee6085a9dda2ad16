/**
 * What a call the process stopped in gets (SPEC §4.14): run again when it is
 * read-only or idempotent, else the "effect unknown" answer with what is
 * known — the command and how long it had run.
 *
 * @internal
 */
import * as Journal from "@switchyard/core/Journal"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** The first words of the "effect unknown" result: what tests and people look for. */
export const EFFECT_UNKNOWN = "The process stopped while this ran; its effect is unknown."

/** What to do with a call that was in flight. */
export type Rerun =
  | { readonly _tag: "Run"; readonly why: "read-only" | "idempotent" | "not-started" }
  | { readonly _tag: "Unknown"; readonly text: string }

const MAX_INPUT_SHOWN = 500

const describeInput = (tool: Tool.Any, input: unknown): string => {
  const record = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}
  if (typeof record["command"] === "string") return `The command: ${record["command"]}`
  let text: string
  try {
    text = JSON.stringify(input)
  } catch {
    text = String(input)
  }
  if (text.length > MAX_INPUT_SHOWN) text = `${text.slice(0, MAX_INPUT_SHOWN)}… (${text.length} characters)`
  return `The call: ${tool.name} ${text}`
}

const seconds = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 1 : 0)

/** The "effect unknown" text for a call that started at `startedAt` in a process last seen at `lastSeenAt`. */
export const unknownText = (
  tool: Tool.Any,
  input: unknown,
  startedAt: number,
  lastSeenAt: number | undefined
): string => {
  const ran = lastSeenAt === undefined ? undefined : lastSeenAt - startedAt
  const howLong = ran === undefined
    ? `It started at ${new Date(startedAt).toISOString()}.`
    : ran > 0
    ? `It had run for at least ${seconds(ran)} s (started ${new Date(startedAt).toISOString()}; ` +
      `the process was last seen ${seconds(ran)} s later).`
    : `It started at ${new Date(startedAt).toISOString()}, within a second of the process's last sign of life.`
  return [
    `${EFFECT_UNKNOWN} ${describeInput(tool, input)}`,
    howLong,
    "It was not run again, because it is not read-only: check what it changed before running it again."
  ].join("\n")
}

/** Decide for a call found in flight (its marker says it started; no result was recorded). */
export const decide = (
  block: Messages.ToolUseBlock,
  tool: Tool.Any | undefined,
  context: ToolUseContext.ToolUseContext,
  startedAt: number,
  lastSeenAt: number | undefined
): Effect.Effect<Rerun> =>
  Effect.gen(function*() {
    // An unknown tool or an input that does not decode never reached the tool: answering it
    // again is the same error.
    if (tool === undefined) return { _tag: "Run", why: "not-started" } as const
    const decoded = Schema.decodeUnknownEither(tool.inputSchema)(block.input)
    if (Either.isLeft(decoded)) return { _tag: "Run", why: "not-started" } as const
    const input = decoded.right
    const judge = (predicate: Tool.InputPredicate<unknown, never>) =>
      Effect.suspend(() => Tool.evaluate(predicate(input, context))).pipe(Effect.orElseSucceed(() => false))
    if (yield* judge(tool.isReadOnly)) return { _tag: "Run", why: "read-only" } as const
    if (yield* judge(tool.isIdempotent)) return { _tag: "Run", why: "idempotent" } as const
    return { _tag: "Unknown", text: unknownText(tool, input, startedAt, lastSeenAt) } as const
  }).pipe(Effect.catchAllDefect(() =>
    Effect.succeed<Rerun>({
      _tag: "Unknown",
      text: unknownText(tool!, block.input, startedAt, lastSeenAt)
    })
  ))

/** `Journal.JournalError` from any failure of the store. */
export const journalError = (what: string, path?: string) => (cause: unknown): Journal.JournalError =>
  cause instanceof Journal.JournalError ? cause : new Journal.JournalError({
    message: `The journal could not ${what}: ${
      typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)
    }${
      typeof cause === "object" && cause !== null && "cause" in cause && cause.cause instanceof Error
        ? ` (${cause.cause.message})`
        : ""
    }`,
    ...(path === undefined ? {} : { path })
  })
