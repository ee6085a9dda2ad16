/**
 * Write: create a file, or overwrite one that was Read in full in this
 * conversation and has not changed since (Claude Code's `Write`). The write is
 * atomic and creates missing parent directories; the new content's state is
 * recorded, so a later Edit in the same turn needs no new Read.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const WriteInput = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "The absolute path to the file to write (must be absolute, not relative)"
  }),
  content: Schema.String.annotations({ description: "The content to write to the file" })
})

/**
 * @since 0.1.0
 * @category models
 */
export type WriteInput = Schema.Schema.Type<typeof WriteInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface WriteOutput {
  readonly type: "create" | "update"
  readonly filePath: string
  readonly bytes: number
}

/**
 * The checks before a write, run by `validateInput` and again right before
 * writing: a directory is refused; an existing file must have been read in
 * full (a partial Read does not license replacing what the model never saw)
 * and be unchanged since.
 */
const checkTarget = (
  fs: FileSystem.FileSystem,
  target: Files.Target,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<"create" | "update", Files.FileToolError> =>
  Effect.gen(function*() {
    const info = yield* Files.statOption(fs, target)
    if (Option.isNone(info)) return "create" as const
    yield* Files.requireRegularFile(target, info.value)
    yield* Files.checkUnchangedSinceRead(fs, target, context, info.value, { requireFullRead: true })
    return "update" as const
  })

/**
 * The Write tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Write = Tool.make("Write", {
  description: [
    "Writes a file to the local filesystem, replacing it if it exists.",
    "- An existing file must have been read with the Read tool first, in full; the write fails if the file changed since.",
    "- Missing parent directories are created. The write is atomic.",
    "- Prefer Edit for changing part of an existing file."
  ].join("\n"),
  input: WriteInput,
  backfillObservableInput: Files.absolutize("file_path"),
  footprint: (input, context) => Footprints.editsFile(input.file_path, context),
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const filePath = yield* Files.kernelPath(fs, path, context.cwd, input.file_path)
      yield* checkTarget(fs, { tool: "Write", parameter: "file_path", path: filePath }, context)
    }).pipe(Effect.mapError(Files.toToolError)),
  call: (input, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const filePath = yield* Files.kernelPath(fs, path, ctx.context.cwd, input.file_path)
      const target: Files.Target = { tool: "Write", parameter: "file_path", path: filePath }
      // Again, right before writing: the file may have changed since validation.
      const type = yield* checkTarget(fs, target, ctx.context)
      const bytes = Files.encode(input.content)
      const state = yield* Files.writeAtomic(fs, path, target, bytes)
      yield* ctx.modifyContext(ToolUseContext.setFileState(filePath, state))
      const output: WriteOutput = { type, filePath, bytes: bytes.length }
      return output
    }),
  mapResult: (output) =>
    output.type === "create"
      ? `File created successfully at: ${output.filePath}`
      : `The file ${output.filePath} has been updated (${output.bytes} bytes written).`
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(Write)
