/**
 * Edit and MultiEdit: exact string replacement in a file that was Read and has
 * not changed since (Claude Code's `Edit` and `MultiEdit`).
 *
 * `old_string` must occur exactly once unless `replace_all`; an empty
 * `old_string` creates a file that does not exist yet. MultiEdit applies its
 * edits in order to an in-memory copy and writes only if every edit applies.
 * The business rules run in `validateInput` (SPEC §4.4 step 2) and again right
 * before the atomic write, since the file may change in between. The result
 * shows a short unified diff; the new content's state is recorded.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Edits from "./internal/edits.js"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"

const oldString = Schema.String.annotations({ description: "The text to replace" })
const newString = Schema.String.annotations({
  description: "The text to replace it with (must be different from old_string)"
})
const replaceAll = Schema.optional(Schema.Boolean).annotations({
  description: "Replace all occurrences of old_string (default false)"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const EditInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path to the file to modify" }),
  old_string: oldString,
  new_string: newString,
  replace_all: replaceAll
})

/**
 * @since 0.1.0
 * @category models
 */
export type EditInput = Schema.Schema.Type<typeof EditInput>

/**
 * @since 0.1.0
 * @category schemas
 */
export const MultiEditInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path to the file to modify" }),
  edits: Schema.Array(
    Schema.Struct({ old_string: oldString, new_string: newString, replace_all: replaceAll })
  ).pipe(Schema.minItems(1)).annotations({
    description: "Edits to apply in order, each to the result of the previous one; all of them or none are applied"
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type MultiEditInput = Schema.Schema.Type<typeof MultiEditInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface EditOutput {
  readonly type: "create" | "update"
  readonly filePath: string
  readonly edits: number
  readonly replaceAll: boolean
  readonly diff: string
}

interface Plan {
  readonly type: "create" | "update"
  readonly before: string
  readonly after: string
}

/**
 * Everything an edit must satisfy, against the file as it is now: it exists
 * (unless the first edit creates it), is a regular text file, was Read and is
 * unchanged since, and every edit applies.
 */
const plan = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  target: Files.Target,
  context: ToolUseContext.ToolUseContext,
  edits: ReadonlyArray<Edits.EditSpec>,
  label: (index: number) => string
): Effect.Effect<Plan, Files.FileToolError> =>
  Effect.gen(function*() {
    const info = yield* Files.statOption(fs, target)
    let original: string | undefined
    if (Option.isNone(info)) {
      if (edits[0]?.old_string !== "") {
        const error = yield* Files.notFound(fs, path, target)
        return yield* Effect.fail(
          Files.fail(target, "NotFound", `${error.message}\nTo create it, use an empty old_string.`)
        )
      }
    } else {
      yield* Files.requireRegularFile(target, info.value)
      if (Files.extensionOf(target.path) === "ipynb") {
        return yield* Effect.fail(
          Files.fail(target, "InvalidInput", `${target.path} is a Jupyter notebook. Use NotebookEdit to edit it.`)
        )
      }
      const bytes = yield* fs.readFile(target.path).pipe(Effect.mapError(Files.mapPlatformError(target, "read")))
      if (Files.isBinary(target.path, bytes)) {
        return yield* Effect.fail(Files.fail(target, "Binary", `${target.path} is a binary file and cannot be edited.`))
      }
      // An empty file may be filled without reading it first: there is nothing to overlook.
      if (bytes.length > 0) {
        yield* Files.checkUnchangedSinceRead(fs, target, context, info.value, { requireFullRead: false, bytes })
      }
      original = Files.decode(bytes)
    }
    const applied = Edits.applyEdits(original, edits, label)
    if (Either.isLeft(applied)) {
      const failure = applied.left
      return yield* Effect.fail(Files.fail(target, failure.reason, `${failure.message}\nFile: ${target.path}`))
    }
    return { type: original === undefined ? "create" : "update", before: original ?? "", after: applied.right }
  })

const run = (
  toolName: "Edit" | "MultiEdit",
  filePath: string,
  edits: ReadonlyArray<Edits.EditSpec>,
  label: (index: number) => string,
  ctx: Tool.CallContext<unknown>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = yield* Files.kernelPath(fs, path, ctx.context.cwd, filePath)
    const target: Files.Target = { tool: toolName, parameter: "file_path", path: absolute }
    // Recheck right before writing: the file may have changed since validateInput.
    const planned = yield* plan(fs, path, target, ctx.context, edits, label)
    const state = yield* Files.writeAtomic(fs, path, target, Files.encode(planned.after))
    yield* ctx.modifyContext(ToolUseContext.setFileState(absolute, state))
    const output: EditOutput = {
      type: planned.type,
      filePath: absolute,
      edits: edits.length,
      replaceAll: edits.some((edit) => edit.replace_all === true),
      diff: Edits.diffSnippet(absolute, planned.before, planned.after)
    }
    return output
  })

const validate = (
  toolName: "Edit" | "MultiEdit",
  filePath: string,
  edits: ReadonlyArray<Edits.EditSpec>,
  label: (index: number) => string,
  context: ToolUseContext.ToolUseContext
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = yield* Files.kernelPath(fs, path, context.cwd, filePath)
    yield* plan(fs, path, { tool: toolName, parameter: "file_path", path: absolute }, context, edits, label)
  }).pipe(Effect.mapError(Files.toToolError))

const mapResult = (output: EditOutput): string => {
  const head = output.type === "create"
    ? `File created successfully at: ${output.filePath}`
    : output.edits > 1
    ? `Applied ${output.edits} edits to ${output.filePath}.`
    : `The file ${output.filePath} has been updated${output.replaceAll ? " (all occurrences replaced)" : ""}.`
  return output.diff === "" ? head : `${head} Here's the diff:\n${output.diff}`
}

const single = () => ""
const numbered = (index: number) => `Edit ${index + 1}: `

/**
 * The Edit tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Edit = Tool.make("Edit", {
  description: [
    "Performs an exact string replacement in a file.",
    "- The file must have been read with the Read tool first; the edit fails if it changed since.",
    "- old_string must occur exactly once, unless replace_all is true; give more surrounding context to make it unique.",
    "- Preserve the exact indentation of the text as Read shows it after the line-number tab.",
    "- An empty old_string creates a new file with new_string as its content."
  ].join("\n"),
  input: EditInput,
  backfillObservableInput: Files.absolutize("file_path"),
  footprint: (input, context) => Footprints.editsFile(input.file_path, context),
  validateInput: (input, context) => validate("Edit", input.file_path, [input], single, context),
  call: (input, ctx) => run("Edit", input.file_path, [input], single, ctx),
  mapResult
})

/**
 * The MultiEdit tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const MultiEdit = Tool.make("MultiEdit", {
  description: [
    "Makes several exact string replacements in one file, in order; either all of them apply or none.",
    "- Each edit applies to the result of the previous ones; the rules of Edit hold for each.",
    "- The file must have been read with the Read tool first (unless the first edit creates it with an empty old_string)."
  ].join("\n"),
  input: MultiEditInput,
  backfillObservableInput: Files.absolutize("file_path"),
  footprint: (input, context) => Footprints.editsFile(input.file_path, context),
  validateInput: (input, context) => validate("MultiEdit", input.file_path, input.edits, numbered, context),
  call: (input, ctx) => run("MultiEdit", input.file_path, input.edits, numbered, ctx),
  mapResult
})

/**
 * Provides Edit.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(Edit)

/**
 * Provides MultiEdit.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMultiEdit = Tool.layer(MultiEdit)
