/**
 * Read: a text file with `cat -n` line numbers (Claude Code's `Read`), or an
 * image as an image block. Records the file's mtime and content hash in the
 * context's file-state cache, which Write, Edit and NotebookEdit check before
 * changing the file.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"

/**
 * Lines returned when no `limit` is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_LIMIT = 2000

/**
 * Characters of one line shown before it is cut.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_CHARS = 2000

/**
 * The most characters one Read returns (about 25 000 tokens); a longer range
 * is cut at a line boundary with a note saying where to continue.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_OUTPUT_CHARS = 100_000

/**
 * The largest image returned as an image block (the API accepts 5 MB of
 * base64, which is 3.75 MB of bytes).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_IMAGE_BYTES = 3_750_000

const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp"
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ReadInput = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "The absolute path to the file to read (a relative path is resolved against the working directory)"
  }),
  offset: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description:
      "The line number to start reading from (1-based; 0 also starts at the first line). Only provide if the file is too large to read at once"
  }),
  limit: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "The number of lines to read. Only provide if the file is too large to read at once"
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type ReadInput = Schema.Schema.Type<typeof ReadInput>

/**
 * @since 0.1.0
 * @category models
 */
export type ReadOutput =
  | {
    readonly _tag: "Text"
    readonly filePath: string
    /** The numbered lines, plus notes (empty file, cut output, offset past the end). */
    readonly text: string
    readonly startLine: number
    readonly numLines: number
    readonly totalLines: number
  }
  | {
    readonly _tag: "Image"
    readonly filePath: string
    readonly mediaType: string
    readonly base64: string
    readonly bytes: number
  }

/**
 * Format lines `cat -n` style: the line number right-aligned in six columns,
 * a tab, the line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const numberLine = (lineNumber: number, line: string): string => `${String(lineNumber).padStart(6)}\t${line}`

interface Window {
  readonly lines: ReadonlyArray<string>
  readonly totalLines: number
  /** Whether a line was cut at `MAX_LINE_CHARS` or the output at `MAX_OUTPUT_CHARS`. */
  readonly cut: boolean
  readonly cutAtOutputLimit: boolean
}

/**
 * Decode only the requested lines: line boundaries are found on the bytes
 * (`indexOf` of `\n`), and only the window between them is decoded. The rest
 * of the file is scanned for newlines to count its lines, never decoded.
 */
const lineWindow = (bytes: Uint8Array, start: number, limit: number): Window => {
  const lines: Array<string> = []
  let lineIndex = 0
  let position = 0
  let outputChars = 0
  let cut = false
  let cutAtOutputLimit = false
  const length = bytes.length
  // A final line without a newline counts; an empty remainder after the last newline does not.
  while (position < length) {
    const newline = bytes.indexOf(10, position)
    const end = newline === -1 ? length : newline
    if (lineIndex >= start && lines.length < limit && !cutAtOutputLimit) {
      let line = Files.decode(bytes.subarray(position, end))
      if (lineIndex === 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1)
      if (line.endsWith("\r")) line = line.slice(0, -1)
      if (line.length > MAX_LINE_CHARS) {
        line = `${line.slice(0, MAX_LINE_CHARS)}... [line truncated: ${line.length} characters]`
        cut = true
      }
      const formatted = numberLine(lineIndex + 1, line)
      if (outputChars + formatted.length + 1 > MAX_OUTPUT_CHARS && lines.length > 0) {
        cutAtOutputLimit = true
      } else {
        lines.push(formatted)
        outputChars += formatted.length + 1
      }
    }
    lineIndex++
    if (newline === -1) break
    position = newline + 1
  }
  return { lines, totalLines: lineIndex, cut, cutAtOutputLimit }
}

const readText = (filePath: string, bytes: Uint8Array, offset: number | undefined, limit: number | undefined) => {
  const startLine = Math.max(1, offset ?? 1)
  const window = lineWindow(bytes, startLine - 1, limit ?? DEFAULT_LIMIT)
  const shownEnd = startLine + window.lines.length - 1
  const notes: Array<string> = []
  if (window.totalLines === 0) {
    notes.push(`<system-reminder>Warning: the file ${filePath} exists but its contents are empty.</system-reminder>`)
  } else if (window.lines.length === 0) {
    notes.push(
      `<system-reminder>Warning: the file exists but is shorter than the provided offset (${startLine}). ` +
        `The file has ${window.totalLines} lines.</system-reminder>`
    )
  } else if (window.cutAtOutputLimit) {
    notes.push(
      `(Output cut at line ${shownEnd} of ${window.totalLines} to stay within ${MAX_OUTPUT_CHARS} characters. ` +
        `Continue with offset ${shownEnd + 1}.)`
    )
  } else if (shownEnd < window.totalLines) {
    notes.push(
      `(Showing lines ${startLine}-${shownEnd} of ${window.totalLines}. Use offset and limit to read more.)`
    )
  }
  const text = [...window.lines, ...notes].join("\n")
  const partial = startLine > 1 || shownEnd < window.totalLines || window.cut
  const output: ReadOutput = {
    _tag: "Text",
    filePath,
    text,
    startLine,
    numLines: window.lines.length,
    totalLines: window.totalLines
  }
  return { output, partial }
}

const readTarget = (path: string): Files.Target => ({ tool: "Read", parameter: "file_path", path })

/**
 * The Read tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Read = Tool.make("Read", {
  description: [
    "Reads a file from the local filesystem.",
    "- file_path should be an absolute path; a relative path is resolved against the working directory.",
    `- By default reads up to ${DEFAULT_LIMIT} lines from the start; use offset (1-based line) and limit for long files.`,
    `- Lines longer than ${MAX_LINE_CHARS} characters are cut.`,
    "- Output is cat -n style: line number, tab, line.",
    "- Images (PNG, JPEG, GIF, WebP) are returned as images; other binary files are refused.",
    "- Reading a file is required before Write overwrites it or Edit changes it."
  ].join("\n"),
  input: ReadInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  // The output bounds itself (MAX_OUTPUT_CHARS); persisting a Read result to a file to be Read again would loop.
  maxResultSizeChars: Number.POSITIVE_INFINITY,
  userFacingName: () => "Read",
  backfillObservableInput: Files.absolutize("file_path"),
  footprint: (input, context) => Footprints.readsFile(input.file_path, context),
  // The file exists and is a regular file (SPEC §4.4 step 2); `call` meets the same errors if that changes meanwhile.
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const target = readTarget(yield* Files.kernelPath(fs, path, context.cwd, input.file_path))
      const info = yield* Files.statOption(fs, target)
      if (Option.isNone(info)) return yield* Effect.flip(Files.notFound(fs, path, target))
      yield* Files.requireRegularFile(target, info.value)
    }).pipe(Effect.mapError(Files.toToolError)),
  call: (input, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const filePath = yield* Files.kernelPath(fs, path, ctx.context.cwd, input.file_path)
      const target = readTarget(filePath)
      const info = yield* Files.statOption(fs, target)
      if (Option.isNone(info)) return yield* Effect.flip(Files.notFound(fs, path, target))
      yield* Files.requireRegularFile(target, info.value)

      const mediaType = IMAGE_TYPES[Files.extensionOf(filePath)]
      if (mediaType !== undefined) {
        if (Number(info.value.size) > MAX_IMAGE_BYTES) {
          return yield* Effect.fail(
            Files.fail(
              target,
              "TooLarge",
              `Image ${filePath} is ${info.value.size} bytes; images up to ${MAX_IMAGE_BYTES} bytes can be read.`
            )
          )
        }
        const bytes = yield* fs.readFile(filePath).pipe(Effect.mapError(Files.mapPlatformError(target, "read")))
        yield* ctx.modifyContext(ToolUseContext.setFileState(filePath, Files.fileState(info.value, bytes, false)))
        const output: ReadOutput = {
          _tag: "Image",
          filePath,
          mediaType,
          base64: Buffer.from(bytes).toString("base64"),
          bytes: bytes.length
        }
        return output
      }

      const bytes = yield* fs.readFile(filePath).pipe(Effect.mapError(Files.mapPlatformError(target, "read")))
      if (Files.isBinary(filePath, bytes)) {
        return yield* Effect.fail(
          Files.fail(
            target,
            "Binary",
            `${filePath} is a binary file (${bytes.length} bytes) and cannot be read as text.`
          )
        )
      }
      const { output, partial } = readText(filePath, bytes, input.offset, input.limit)
      yield* ctx.modifyContext(ToolUseContext.setFileState(filePath, Files.fileState(info.value, bytes, partial)))
      return output
    }),
  mapResult: (output): Messages.ToolResultContent =>
    output._tag === "Text"
      ? output.text
      : [{ type: "image", source: { type: "base64", media_type: output.mediaType, data: output.base64 } }]
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(Read)
