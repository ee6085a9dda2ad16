/**
 * Session transcripts: every run of `switchyard run` records its conversation
 * as JSON lines in `<state dir>/projects/<cwd as a safe name>/<session id>.jsonl`,
 * one line per user message, assistant message and tool result, each
 * appended (a write of its own) as it happens: the prompt when the turn
 * starts, the assistant message as soon as the model's response ends (before
 * its tools finish), each tool result as it completes. A crash loses at most
 * the line being written. `--continue`, `--resume` and `/resume` read them
 * back (decoded with Schema), join a turn's result lines into the one user
 * message the model was sent, and send the conversation as it was, with every
 * `tool_use` paired with its `tool_result` (a synthetic one for a call the
 * crash interrupted).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Settings from "@switchyard/core/Settings"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"

/**
 * One line of a transcript.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TranscriptLine = Schema.Struct({
  type: Messages.Role,
  session_id: Schema.String,
  cwd: Schema.String,
  timestamp: Schema.String,
  message: Messages.Message
})

/**
 * @since 0.1.0
 * @category models
 */
export interface TranscriptLine extends Schema.Schema.Type<typeof TranscriptLine> {}

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(TranscriptLine))

/**
 * The directory name for a working directory: every character other than a
 * letter, digit, `-` or `_` becomes `-` (`/home/me/shop` → `-home-me-shop`).
 *
 * @since 0.1.0
 * @category paths
 */
export const safeName = (cwd: string): string => cwd.replace(/[^A-Za-z0-9_-]/g, "-")

/**
 * Where the sessions of a working directory live.
 *
 * @since 0.1.0
 * @category paths
 */
export const directory = (cwd: string): Effect.Effect<string, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const state = yield* Settings.stateDirectory(yield* Settings.homeDirectory)
    return path.join(state, "projects", safeName(cwd))
  })

/**
 * A session id as a file name allows (no path separators).
 *
 * @since 0.1.0
 * @category validation
 */
export const isValidId = (id: string): boolean => /^[A-Za-z0-9][\w.-]{0,127}$/.test(id) && !id.includes("..")

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  readonly id: string
  readonly file: string
  /** The last change, ms since the epoch. */
  readonly modifiedAt: number
  readonly firstPrompt: string
  readonly messages: number
}

const promptText = (message: Messages.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ")

/**
 * The sessions recorded for a working directory, the most recent first.
 *
 * @since 0.1.0
 * @category reading
 */
export const list = (cwd: string): Effect.Effect<ReadonlyArray<Summary>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* directory(cwd)
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => []))
    const summaries = yield* Effect.forEach(
      names.filter((n) => n.endsWith(".jsonl")),
      (name) =>
        Effect.gen(function*() {
          const file = path.join(dir, name)
          const info = yield* fs.stat(file)
          const text = yield* fs.readFileString(file)
          const lines = decodeLines(text)
          const first = lines.find((l) => l.type === "user" && promptText(l.message).trim() !== "")
          return [{
            id: name.slice(0, -".jsonl".length),
            file,
            modifiedAt: info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0,
            firstPrompt: first === undefined ? "" : promptText(first.message).trim().replace(/\s+/g, " "),
            messages: lines.length
          }]
        }).pipe(Effect.orElseSucceed(() => []))
    )
    return summaries.flat().filter((s) => s.messages > 0).sort((a, b) => b.modifiedAt - a.modifiedAt)
  })

/** The valid lines; a torn last line (a crash mid-write) is dropped. */
const decodeLines = (text: string): ReadonlyArray<TranscriptLine> =>
  text.split("\n").flatMap((line) => {
    if (line.trim() === "") return []
    const decoded = decodeLine(line)
    return Either.isRight(decoded) ? [decoded.right] : []
  })

/**
 * Why a resumed call has no result: the session ended while it ran.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTED_RESULT = "Interrupted: the session ended before this tool call finished; it may not have run."

/**
 * The conversation to send on resume: every `tool_use` of an assistant
 * message answered in the next user message (a synthetic error result for a
 * call interrupted mid-tool), consecutive messages of one role kept as they
 * were recorded.
 *
 * @since 0.1.0
 * @category reading
 */
export const repair = (messages: ReadonlyArray<Messages.Message>): ReadonlyArray<Messages.Message> => {
  const out: Array<Messages.Message> = []
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    out.push(message)
    if (message.role !== "assistant") continue
    const uses = Messages.toolUses(message)
    if (uses.length === 0) continue
    const next = messages[i + 1]
    const answered = new Set(
      next === undefined || next.role !== "user"
        ? []
        : Messages.blocks(next).flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))
    )
    const missing = uses.filter((u) => !answered.has(u.id))
    if (missing.length === 0) continue
    const synthetic = missing.map((u) => Messages.toolResult(u.id, INTERRUPTED_RESULT, true))
    if (next !== undefined && next.role === "user") {
      // Results first, in call order, then whatever else the message held.
      const blocks = Messages.blocks(next)
      const results = uses.map((u) =>
        blocks.find((b) => b.type === "tool_result" && b.tool_use_id === u.id) ??
          synthetic.find((s) => s.tool_use_id === u.id)!
      )
      out.push({ role: "user", content: [...results, ...blocks.filter((b) => b.type !== "tool_result")] })
      i++
    } else {
      out.push({ role: "user", content: synthetic })
    }
  }
  return out
}

const isResultsOf = (message: Messages.Message, ids: ReadonlySet<string>): boolean => {
  if (message.role !== "user") return false
  const results = Messages.blocks(message).filter((b) => b.type === "tool_result")
  return results.length > 0 && results.every((b) => b.type === "tool_result" && ids.has(b.tool_use_id))
}

/**
 * The conversation from a transcript's lines: the result lines that follow
 * an assistant message (one per tool result, as each completed, and the
 * whole results message when it differed) joined into one user message, its
 * results in call order, the later record of a result winning.
 *
 * @since 0.1.0
 * @category reading
 */
export const joinResults = (messages: ReadonlyArray<Messages.Message>): ReadonlyArray<Messages.Message> => {
  const out: Array<Messages.Message> = []
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    out.push(message)
    if (message.role !== "assistant") continue
    const uses = Messages.toolUses(message)
    const ids = new Set(uses.map((u) => u.id))
    let end = i + 1
    while (end < messages.length && isResultsOf(messages[end]!, ids)) end++
    if (end - i - 1 < 2) continue
    const lines = messages.slice(i + 1, end)
    const latest = new Map<string, Messages.ContentBlock>()
    for (const line of lines) {
      for (const block of Messages.blocks(line)) if (block.type === "tool_result") latest.set(block.tool_use_id, block)
    }
    out.push({
      role: "user",
      content: [
        ...uses.flatMap((u) => {
          const found = latest.get(u.id)
          return found === undefined ? [] : [found]
        }),
        ...lines.flatMap((line) => Messages.blocks(line).filter((b) => b.type !== "tool_result"))
      ]
    })
    i = end - 1
  }
  return out
}

/**
 * A recorded session read back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly id: string
  readonly file: string
  readonly messages: ReadonlyArray<Messages.Message>
  /** Whether `repair` added results the file lacks (the file is then rewritten on resume). */
  readonly repaired: boolean
}

/**
 * Read a session by id (bad input when there is none, naming where it looked).
 *
 * @since 0.1.0
 * @category reading
 */
export const load = (
  cwd: string,
  id: string
): Effect.Effect<Loaded, CliError.CliError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* directory(cwd)
    if (!isValidId(id)) return yield* Effect.fail(CliError.badInput(`--resume ${id}: not a session id`))
    const file = path.join(dir, `${id}.jsonl`)
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError(() =>
        CliError.badInput(
          `--resume ${id}: no such session in ${dir} (sessions are kept per working directory; \`switchyard --resume\` lists them)`
        )
      )
    )
    const lines = decodeLines(text)
    const broken = text.split("\n").filter((l) => l.trim() !== "").length - lines.length
    if (lines.length === 0 && broken > 0) {
      const first = decodeLine(text.split("\n")[0]!)
      const why = Either.isLeft(first) ? ParseResult.TreeFormatter.formatErrorSync(first.left).split("\n")[0] : ""
      return yield* Effect.fail(CliError.badInput(`${file}: not a session transcript (${why})`))
    }
    const joined = joinResults(lines.map((l) => l.message))
    const messages = repair(joined)
    const repaired = broken > 0 || JSON.stringify(messages) !== JSON.stringify(joined)
    return { id, file, messages, repaired }
  })

const lineOf = (context: ToolUseContext.ToolUseContext, message: Messages.Message): TranscriptLine => ({
  type: message.role,
  session_id: context.sessionId,
  cwd: context.cwd,
  timestamp: new Date().toISOString(),
  message
})

/**
 * Records a conversation. `record` takes every loop event: the assistant
 * message is appended when the response ends and each tool result when it
 * completes; the rest (the prompt, what a turn added that was not recorded
 * yet) when the turn starts or ends. `sync` appends the messages that joined
 * the context and are not recorded yet, one line each.
 *
 * @since 0.1.0
 * @category models
 */
export interface Recorder {
  readonly file: string
  readonly record: (event: QueryLoop.LoopEvent) => Effect.Effect<void>
  readonly sync: Effect.Effect<void>
}

/** The turn being recorded as it happens: its assistant message, written when the response ended, and its results. */
interface LiveTurn {
  readonly assistant: string
  readonly calls: ReadonlyArray<string>
  readonly results: Map<string, Messages.ToolResultBlock>
  assistantJoined: boolean
}

/**
 * A recorder for a session's context. `rewrite`: the file is first replaced
 * (atomically) by the context's current messages, for a resumed conversation
 * that was repaired; otherwise the messages already in the context are taken
 * as recorded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const recorder = (
  file: string,
  context: Ref.Ref<ToolUseContext.ToolUseContext>,
  options: { readonly rewrite: boolean }
): Effect.Effect<Recorder, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const initial = yield* Ref.get(context)
    let written = options.rewrite ? 0 : initial.messages.length
    let warned = false
    // One write per line: what was appended is in the file even if the process is killed next.
    const append = (message: Messages.Message) =>
      Effect.flatMap(Ref.get(context), (ctx) =>
        fs.writeFileString(file, `${JSON.stringify(lineOf(ctx, message))}\n`, { flag: "a" })).pipe(
          Effect.catchAll((error) =>
            Effect.sync(() => {
              // A transcript that cannot be written must not stop the session.
              if (!warned) {
                process.stderr.write(`switchyard: warning: cannot write the transcript ${file}: ${error.message}\n`)
              }
              warned = true
            })
          )
        )
    let live: LiveTurn | undefined
    // Results that completed while the response was still streaming wait for their assistant line.
    let early: Array<Messages.ToolResultBlock> = []
    const appendResult = (turn: LiveTurn, block: Messages.ToolResultBlock) => {
      turn.results.set(block.tool_use_id, block)
      return append({ role: "user", content: [block] })
    }
    /** Whether a message that joined the context is the live turn's, already in the file line by line. */
    const recordedLive = (message: Messages.Message): boolean => {
      if (live === undefined) {
        return false
      }
      if (!live.assistantJoined) {
        live.assistantJoined = message.role === "assistant" && JSON.stringify(message) === live.assistant
        // Without tool calls no results message follows.
        if (live.assistantJoined && live.calls.length === 0) {
          live = undefined
        }
        return live === undefined || live.assistantJoined
      }
      const turn = live
      live = undefined
      const results = turn.calls.flatMap((id) => {
        const block = turn.results.get(id)
        return block === undefined ? [] : [block]
      })
      return message.role === "user" && JSON.stringify(message) === JSON.stringify({ role: "user", content: results })
    }
    /**
     * Append the context's unrecorded messages up to an end. The events lag
     * behind the loop (the context may already hold later turns), so an
     * event records only up to its own message.
     */
    const syncUpTo = (end: (messages: ReadonlyArray<Messages.Message>) => number) =>
      Effect.gen(function*() {
        const ctx = yield* Ref.get(context)
        const upTo = Math.min(end(ctx.messages), ctx.messages.length)
        if (upTo <= written) {
          return
        }
        const fresh = ctx.messages.slice(written, upTo)
        written = upTo
        for (const message of fresh) {
          if (!recordedLive(message)) {
            yield* append(message)
          }
        }
      })
    const sync = syncUpTo((messages) =>
      messages.length
    )
    /** Through the message an event carries (the same object the context holds). */
    const syncThrough = (message: Messages.Message) =>
      syncUpTo((messages) => {
        const at = messages.indexOf(message, written)
        return at === -1 ? written : at + 1
      })
    /** The user messages before the turn's response: the prompt, a Stop hook's reason. */
    const syncPrompt = syncUpTo((messages) => {
      let end = written
      while (end < messages.length && messages[end]!.role === "user") end++
      return end
    })
    const record = (event: QueryLoop.LoopEvent): Effect.Effect<void> =>
      Effect.suspend(() => {
        switch (event._tag) {
          case "TurnStarted": {
            live = undefined
            early = []
            return syncPrompt
          }
          case "ResponseEnded": {
            if (event.message === undefined) return Effect.void
            const turn: LiveTurn = {
              assistant: JSON.stringify(event.message),
              calls: Messages.toolUses(event.message).map((u) => u.id),
              results: new Map(),
              assistantJoined: false
            }
            live = turn
            const waiting = early.filter((b) => turn.calls.includes(b.tool_use_id))
            early = []
            return Effect.zipRight(
              append(event.message),
              Effect.forEach(waiting, (block) => appendResult(turn, block), { discard: true })
            )
          }
          case "Tool": {
            if (!DispatchEvent.isResult(event.event)) return Effect.void
            const block = event.event.block
            if (live === undefined) {
              early.push(block)
              return Effect.void
            }
            return live.calls.includes(block.tool_use_id) && !live.results.has(block.tool_use_id)
              ? appendResult(live, block)
              : Effect.void
          }
          case "AssistantMessage":
          case "ToolResults":
            return syncThrough(event.message)
          case "Stopped":
            return Effect.tap(sync, () => {
              live = undefined
              early = []
            })
          default:
            return Effect.void
        }
      })
    yield* fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.ignore)
    if (options.rewrite) {
      const temp = `${file}.${process.pid}.tmp`
      yield* fs.writeFileString(temp, initial.messages.map((m) => `${JSON.stringify(lineOf(initial, m))}\n`).join(""))
        .pipe(
          Effect.zipRight(fs.rename(temp, file)),
          Effect.tap(() => Effect.sync(() => (written = initial.messages.length))),
          Effect.ignore
        )
    }
    return { file, record, sync }
  })
