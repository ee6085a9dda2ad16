/**
 * Result mapping and large-result persistence (SPEC §4.10).
 *
 * Output longer than a tool's `maxResultSizeChars` is written in full to
 * `<state dir>/sessions/<session id>/tool-results/<tool_use_id>.txt` and the
 * model gets a preview — the first 2 000 and last 1 000 characters, the total
 * size and the path — so nothing is lost.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import * as Spill from "./internal/spill.js"
import * as StateDirectory from "./internal/stateDirectory.js"
import * as Interruption from "./Interruption.js"
import * as Messages from "./Messages.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const PREVIEW_HEAD_CHARS = 2_000
/**
 * @since 0.1.0
 * @category constants
 */
export const PREVIEW_TAIL_CHARS = 1_000
/**
 * MCP output limits are given in tokens; this many characters make a token.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHARS_PER_TOKEN = 4

/**
 * Where full results go.
 *
 * @since 0.1.0
 * @category services
 */
export class ResultStore extends Context.Tag("@switchyard/core/Results/ResultStore")<
  ResultStore,
  {
    /** Store the full text; returns where it is. */
    readonly persist: (sessionId: string, toolUseId: string, text: string) => Effect.Effect<string, unknown>
  }
>() {}

/**
 * The state directory: `$SWITCHYARD_HOME`, else `~/.switchyard` (home as
 * `Settings.homeDirectory` says).
 *
 * @since 0.1.0
 * @category config
 */
export const stateDirectory: Effect.Effect<string> = StateDirectory.stateDirectory

/**
 * A spill that failed (the directory could not be made, or the temp file
 * written, closed or renamed).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultStoreError extends Schema.TaggedError<ResultStoreError>()("ResultStoreError", {
  operation: Schema.Literal("mkdir", "open", "write", "close", "rename"),
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * A file-backed store under `directory` (atomic: temp file, then rename).
 *
 * Spilling is on the path of every large result, so it does little besides
 * the write (see `internal/spill.ts`): `node:fs` directly, one open, write and
 * close, a rename, and the directory made only when an open finds it missing.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDirectory = (directory: string): Layer.Layer<ResultStore> =>
  Layer.sync(ResultStore, () => {
    const spill = Spill.make()
    const safe = (segment: string) => segment.replace(/[^A-Za-z0-9_.-]/g, "_")
    return ResultStore.of({
      persist: (sessionId, toolUseId, text) =>
        Effect.async<string, ResultStoreError>((resume) => {
          const dir = NodePath.join(directory, "sessions", safe(sessionId), "tool-results")
          const file = `${dir}/${safe(toolUseId)}.txt`
          // Once started, a spill runs to its end (an interrupted caller just does not wait for it).
          spill(
            dir,
            file,
            text,
            (failure) =>
              resume(failure === undefined ? Effect.succeed(file) : Effect.fail(new ResultStoreError(failure)))
          )
        })
    })
  })

/**
 * The file-backed store in the state directory (SPEC §4.10).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ResultStore> = Layer.unwrapEffect(
  Effect.map(stateDirectory, layerDirectory)
)

/**
 * An in-memory store (tests, embedders without a filesystem). The returned
 * "path" is `memory://<session>/<id>`; `read` gets the text back.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ResultStore> = Layer.sync(ResultStore, () => {
  const files = new Map<string, string>()
  return ResultStore.of({
    persist: (sessionId, toolUseId, text) =>
      Effect.sync(() => {
        const key = `memory://${sessionId}/${toolUseId}`
        files.set(key, text)
        return key
      })
  })
})

/**
 * The preview the model gets for an output that was persisted.
 *
 * @since 0.1.0
 * @category formatting
 */
export const preview = (text: string, location: string): string => {
  const head = text.slice(0, PREVIEW_HEAD_CHARS)
  const tail = text.slice(-PREVIEW_TAIL_CHARS)
  const omitted = text.length - head.length - tail.length
  return [
    `<persisted-output>`,
    `Output too large (${text.length} characters). Full output saved to: ${location}`,
    `Read that file (with offset/limit) to see the rest.`,
    ``,
    head,
    ``,
    `... [${omitted} characters omitted] ...`,
    ``,
    tail,
    `</persisted-output>`
  ].join("\n")
}

const contentLength = (content: Messages.ToolResultContent): number =>
  typeof content === "string"
    ? content.length
    : content.reduce((n, block) => n + (block.type === "text" ? block.text.length : 0), 0)

/**
 * Whether content is within `maxChars` (what `limitSize` checks first), so a
 * caller can skip it for the common small result.
 *
 * @since 0.1.0
 * @category mapping
 */
export const fitsIn = (content: Messages.ToolResultContent, maxChars: number): boolean =>
  contentLength(content) <= maxChars

/**
 * Keep a result within `maxChars`: a longer one is persisted in full and
 * replaced by its preview. If persisting fails the preview says so (the head
 * and tail still reach the model).
 *
 * @since 0.1.0
 * @category mapping
 */
export const limitSize = (
  content: Messages.ToolResultContent,
  options: { readonly maxChars: number; readonly sessionId: string; readonly toolUseId: string }
): Effect.Effect<Messages.ToolResultContent, never, ResultStore> => {
  if (contentLength(content) <= options.maxChars) return Effect.succeed(content)
  const text = Messages.contentText(content)
  return ResultStore.pipe(
    Effect.flatMap((store) => store.persist(options.sessionId, options.toolUseId, text)),
    Effect.map((location) => preview(text, location)),
    Effect.catchAll((error) =>
      Effect.succeed(preview(text, `(not saved: ${error instanceof Error ? error.message : String(error)})`))
    ),
    Effect.map((previewText): Messages.ToolResultContent =>
      typeof content === "string"
        ? previewText
        // Keep non-text blocks (images, tool references); the text becomes the preview.
        : [Messages.text(previewText), ...content.filter((block) => block.type !== "text")]
    )
  )
}

/**
 * The synthetic result for a call that was interrupted or never started.
 *
 * @since 0.1.0
 * @category constructors
 */
export const interrupted = (toolUseId: string, reason: Interruption.InterruptReason): Messages.ToolResultBlock =>
  Messages.toolResult(toolUseId, Interruption.describe(reason), true)

/**
 * The `tool_result` content Claude Code gives the model when the user answers
 * "no" to a permission question.
 *
 * @since 0.1.0
 * @category constants
 */
export const REJECTED_BY_USER =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, " +
  "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

/**
 * The user message that answers an assistant turn: one `tool_result` per
 * `tool_use`, in call order. A call without a result gets a synthetic one, so
 * the pairing invariant (SPEC §5) holds even for a broken dispatch.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toUserMessage = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  results: ReadonlyMap<string, Messages.ToolResultBlock>,
  missing: Interruption.InterruptReason = "user_interrupt"
): Messages.Message => ({
  role: "user",
  content: calls.map((call) =>
    Option.getOrElse(Option.fromNullable(results.get(call.id)), () => interrupted(call.id, missing))
  )
})
