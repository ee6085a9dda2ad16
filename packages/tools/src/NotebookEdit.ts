/**
 * NotebookEdit: replace, insert or delete one cell of a Jupyter notebook
 * (Claude Code's `NotebookEdit`).
 *
 * The notebook is edited as JSON and written back in its own style: the same
 * indentation (Jupyter writes one space), key order, source representation
 * (a list of lines or one string) and final newline, so everything outside the
 * edited cell stays byte-for-byte as it was. Like Edit, the notebook must have
 * been Read and be unchanged since; the write is atomic.
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
import { randomBytes } from "node:crypto"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const NotebookEditInput = Schema.Struct({
  notebook_path: Schema.String.annotations({
    description: "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"
  }),
  cell_id: Schema.optional(Schema.String).annotations({
    description: "The ID of the cell to edit. With edit_mode insert, the new cell goes after this cell, " +
      "or at the beginning when omitted"
  }),
  new_source: Schema.String.annotations({ description: "The new source for the cell" }),
  cell_type: Schema.optional(Schema.Literal("code", "markdown")).annotations({
    description: "The type of the cell (code or markdown). Defaults to the current type; required for insert"
  }),
  edit_mode: Schema.optional(Schema.Literal("replace", "insert", "delete")).annotations({
    description: "The kind of edit: replace (default), insert or delete"
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type NotebookEditInput = Schema.Schema.Type<typeof NotebookEditInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface NotebookEditOutput {
  readonly notebookPath: string
  readonly editMode: "replace" | "insert" | "delete"
  readonly cellId: string
  readonly cellType: string
}

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }
type Cell = { [key: string]: Json }

// Only the parts the edit relies on are checked; everything else passes through untouched.
const NotebookShape = Schema.Struct({
  cells: Schema.Array(Schema.Struct({ cell_type: Schema.String })),
  nbformat: Schema.optional(Schema.Number),
  nbformat_minor: Schema.optional(Schema.Number)
})

const isValidShape = Schema.is(NotebookShape)

interface Layout {
  readonly indent: string
  readonly finalNewline: boolean
}

/** The indentation of the first nested line (Jupyter: one space), or none for a one-line file. */
const layoutOf = (text: string): Layout => {
  const match = /^\{\r?\n([ \t]+)"/.exec(text)
  return { indent: match?.[1] ?? "", finalNewline: text.endsWith("\n") }
}

const serialize = (notebook: Json, layout: Layout): string =>
  JSON.stringify(notebook, null, layout.indent === "" ? undefined : layout.indent) + (layout.finalNewline ? "\n" : "")

/** Jupyter stores source as a list of lines, each keeping its `\n`. */
const sourceLike = (
  text: string,
  asList: boolean
): Json => (asList ? text.split(/(?<=\n)/).filter((line) => line !== "") : text)

const sortedKeys = (cell: Cell): Cell => Object.fromEntries(Object.entries(cell).sort(([a], [b]) => (a < b ? -1 : 1)))

const describeCell = (cell: Cell, index: number): string =>
  typeof cell["id"] === "string" ? cell["id"] : `cell-${index}`

const findCell = (cells: ReadonlyArray<Cell>, cellId: string): number => {
  const byId = cells.findIndex((cell) => cell["id"] === cellId)
  if (byId !== -1) return byId
  // Claude Code also accepts `cell-N` (0-based) for notebooks without cell ids.
  const indexed = /^cell-(\d+)$/.exec(cellId)
  if (indexed !== null) {
    const index = Number(indexed[1])
    return index < cells.length ? index : -1
  }
  return -1
}

interface Plan {
  readonly text: string
  readonly output: NotebookEditOutput
}

const plan = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  target: Files.Target,
  context: ToolUseContext.ToolUseContext,
  input: NotebookEditInput
): Effect.Effect<Plan, Files.FileToolError> =>
  Effect.gen(function*() {
    const failWith = (reason: Files.FileErrorReason, message: string) =>
      Effect.fail(Files.fail(target, reason, message))
    if (Files.extensionOf(target.path) !== "ipynb") {
      return yield* failWith(
        "InvalidInput",
        `${target.path} is not a Jupyter notebook (.ipynb file). Use Edit instead.`
      )
    }
    const info = yield* Files.statOption(fs, target)
    if (Option.isNone(info)) return yield* Effect.flip(Files.notFound(fs, path, target))
    yield* Files.requireRegularFile(target, info.value)
    const bytes = yield* fs.readFile(target.path).pipe(Effect.mapError(Files.mapPlatformError(target, "read")))
    yield* Files.checkUnchangedSinceRead(fs, target, context, info.value, { requireFullRead: false, bytes })

    const text = Files.decode(bytes)
    const parsed = Either.try(() => JSON.parse(text) as Json)
    if (Either.isLeft(parsed)) {
      return yield* failWith("InvalidNotebook", `Notebook ${target.path} is not valid JSON: ${String(parsed.left)}`)
    }
    const notebook = parsed.right
    if (!isValidShape(notebook) || typeof notebook !== "object" || notebook === null || Array.isArray(notebook)) {
      return yield* failWith("InvalidNotebook", `Notebook ${target.path} has no valid "cells" list.`)
    }
    // The shape check passed; the cells are mutable JSON objects.
    const cells = notebook.cells as unknown as Array<Cell>
    const mode = input.edit_mode ?? "replace"

    let index = -1
    if (input.cell_id !== undefined) {
      index = findCell(cells, input.cell_id)
      if (index === -1) {
        const known = cells.slice(0, 10).map(describeCell).join(", ")
        return yield* failWith(
          "CellNotFound",
          `Cell with ID "${input.cell_id}" not found in notebook ${target.path}.` +
            (cells.length > 0 ? ` Cells: ${known}${cells.length > 10 ? ", …" : ""}` : " The notebook has no cells.")
        )
      }
    } else if (mode !== "insert") {
      return yield* failWith("InvalidInput", `cell_id is required for edit_mode "${mode}".`)
    }

    const sourceAsList = cells.length === 0 || cells.some((cell) => Array.isArray(cell["source"]))
    let output: NotebookEditOutput
    if (mode === "insert") {
      if (input.cell_type === undefined) {
        return yield* failWith("InvalidInput", "cell_type is required when edit_mode is \"insert\".")
      }
      const withIds = (notebook.nbformat ?? 4) > 4 ||
        ((notebook.nbformat ?? 4) === 4 && (notebook.nbformat_minor ?? 0) >= 5)
      const id = randomBytes(4).toString("hex")
      // Keys in the sorted order Jupyter writes.
      const cell: Cell = input.cell_type === "code"
        ? {
          cell_type: "code",
          execution_count: null,
          ...(withIds ? { id } : {}),
          metadata: {},
          outputs: [],
          source: sourceLike(input.new_source, sourceAsList)
        }
        : {
          cell_type: "markdown",
          ...(withIds ? { id } : {}),
          metadata: {},
          source: sourceLike(input.new_source, sourceAsList)
        }
      const at = index + 1
      cells.splice(at, 0, cell)
      output = {
        notebookPath: target.path,
        editMode: "insert",
        cellId: withIds ? id : `cell-${at}`,
        cellType: input.cell_type
      }
    } else if (mode === "delete") {
      const [removed] = cells.splice(index, 1)
      output = {
        notebookPath: target.path,
        editMode: "delete",
        cellId: describeCell(removed!, index),
        cellType: String(removed!["cell_type"])
      }
    } else {
      const cell = cells[index]!
      const type = input.cell_type ?? String(cell["cell_type"])
      const changedType = type !== cell["cell_type"]
      cell["source"] = sourceLike(
        input.new_source,
        Array.isArray(cell["source"]) || (cell["source"] === undefined && sourceAsList)
      )
      if (type === "code") {
        // The old outputs belong to the old source.
        cell["execution_count"] = null
        cell["outputs"] = []
      } else {
        delete cell["execution_count"]
        delete cell["outputs"]
      }
      cell["cell_type"] = type
      if (changedType) cells[index] = sortedKeys(cell)
      output = { notebookPath: target.path, editMode: "replace", cellId: describeCell(cell, index), cellType: type }
    }
    return { text: serialize(notebook, layoutOf(text)), output }
  })

/**
 * The NotebookEdit tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const NotebookEdit = Tool.make("NotebookEdit", {
  description: [
    "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb).",
    "- The notebook must have been read with the Read tool first; the edit fails if it changed since.",
    "- cell_id names the cell (its id, or cell-N for the N-th cell, 0-based).",
    "- edit_mode insert adds a cell of cell_type after cell_id (or at the beginning); delete removes the cell.",
    "- Replacing a code cell clears its outputs and execution count."
  ].join("\n"),
  input: NotebookEditInput,
  backfillObservableInput: Files.absolutize("notebook_path"),
  footprint: (input, context) => Footprints.editsFile(input.notebook_path, context),
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const notebookPath = yield* Files.kernelPath(fs, path, context.cwd, input.notebook_path)
      yield* plan(fs, path, { tool: "NotebookEdit", parameter: "notebook_path", path: notebookPath }, context, input)
    }).pipe(Effect.mapError(Files.toToolError)),
  call: (input, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const notebookPath = yield* Files.kernelPath(fs, path, ctx.context.cwd, input.notebook_path)
      const target: Files.Target = { tool: "NotebookEdit", parameter: "notebook_path", path: notebookPath }
      // Again right before writing: the notebook may have changed since validation.
      const planned = yield* plan(fs, path, target, ctx.context, input)
      const state = yield* Files.writeAtomic(fs, path, target, Files.encode(planned.text))
      yield* ctx.modifyContext(ToolUseContext.setFileState(notebookPath, state))
      return planned.output
    }),
  mapResult: (output) => {
    switch (output.editMode) {
      case "insert":
        return `Inserted ${output.cellType} cell ${output.cellId} in ${output.notebookPath}`
      case "delete":
        return `Deleted cell ${output.cellId} from ${output.notebookPath}`
      case "replace":
        return `Updated cell ${output.cellId} in ${output.notebookPath}`
    }
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(NotebookEdit)
