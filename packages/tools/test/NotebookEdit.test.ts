import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ToolUseContext } from "@switchyard/core"
import * as NotebookEdit from "@switchyard/tools/NotebookEdit"
import * as Read from "@switchyard/tools/Read"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { dispatch, expectPlainObjectSchema, makeContext, tempDir, toolsLayer } from "./fixtures/toolHarness.js"

const Tools = toolsLayer(Layer.mergeAll(Read.layer, NotebookEdit.layer))

// As Jupyter writes it: one-space indent, sorted keys, sources as lists of lines, a final newline.
const NOTEBOOK = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\\n",
    "Some text é"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {
    "tags": []
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "2\\n"
     ]
    }
   ],
   "source": [
    "print(1 + 1)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

const setup = (content = NOTEBOOK) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* tempDir
    const file = `${dir}/nb.ipynb`
    yield* fs.writeFileString(file, content)
    const past = new Date(Date.now() - 60_000)
    yield* fs.utimes(file, past, past)
    const ctx = yield* makeContext(dir)
    expect((yield* dispatch(ctx, "Read", { file_path: file })).status).toBe("success")
    return { dir, file, ctx }
  })

const cellsOf = (text: string) => (JSON.parse(text) as { cells: Array<Record<string, unknown>> }).cells

describe("NotebookEdit", () => {
  it.scoped("replaces a code cell's source, clears its outputs, and leaves every other byte as it was", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* setup()
      const result = yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: file,
        cell_id: "calc",
        new_source: "x = 2\nprint(x)"
      })
      expect(result).toMatchObject({ status: "success", text: `Updated cell calc in ${file}` })
      const expected = NOTEBOOK.replace(
        `   "execution_count": 3,`,
        `   "execution_count": null,`
      ).replace(
        `   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "2\\n"
     ]
    }
   ],
   "source": [
    "print(1 + 1)"
   ]`,
        `   "outputs": [],
   "source": [
    "x = 2\\n",
    "print(x)"
   ]`
      )
      expect(yield* fs.readFileString(file)).toBe(expected)
    }).pipe(Effect.provide(Tools)))

  it.scoped("inserts after a cell, or at the start without cell_id, with a new nbformat cell id", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* setup()
      const after = yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: file,
        cell_id: "intro",
        new_source: "## Section",
        cell_type: "markdown",
        edit_mode: "insert"
      })
      expect(after.status).toBe("success")
      const first = yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: file,
        new_source: "import os\n",
        cell_type: "code",
        edit_mode: "insert"
      })
      expect(first.text).toMatch(/^Inserted code cell [0-9a-f]{8} in /)
      const cells = cellsOf(yield* fs.readFileString(file))
      expect(cells.map((cell) => cell["id"])).toEqual([
        expect.stringMatching(/^[0-9a-f]{8}$/),
        "intro",
        expect.any(String),
        "calc"
      ])
      expect(cells[0]).toEqual({
        cell_type: "code",
        execution_count: null,
        id: cells[0]!["id"],
        metadata: {},
        outputs: [],
        source: ["import os\n"]
      })
      expect(cells[2]).toMatchObject({ cell_type: "markdown", metadata: {}, source: ["## Section"] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("deletes a cell; cell-N addresses a cell by position", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* setup()
      const result = yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: file,
        cell_id: "cell-0",
        new_source: "",
        edit_mode: "delete"
      })
      expect(result.text).toBe(`Deleted cell intro from ${file}`)
      expect(cellsOf(yield* fs.readFileString(file)).map((cell) => cell["id"])).toEqual(["calc"])
    }).pipe(Effect.provide(Tools)))

  it.scoped("changing a cell's type to markdown drops outputs and execution_count", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* setup()
      yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: file,
        cell_id: "calc",
        new_source: "now *prose*",
        cell_type: "markdown"
      })
      expect(cellsOf(yield* fs.readFileString(file))[1]).toEqual({
        cell_type: "markdown",
        id: "calc",
        metadata: { tags: [] },
        source: ["now *prose*"]
      })
    }).pipe(Effect.provide(Tools)))

  it.scoped("keeps a minified notebook minified and string sources as strings", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const minified = JSON.stringify({
        cells: [{ cell_type: "code", source: "a = 1", metadata: {}, outputs: [], execution_count: null }],
        metadata: {},
        nbformat: 4,
        nbformat_minor: 2
      })
      const { ctx, file } = yield* setup(minified)
      yield* dispatch(ctx, "NotebookEdit", { notebook_path: file, cell_id: "cell-0", new_source: "a = 2" })
      expect(yield* fs.readFileString(file)).toBe(minified.replace("a = 1", "a = 2"))
    }).pipe(Effect.provide(Tools)))

  it.scoped("a missing cell is an error listing the cells; nothing is written", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* setup()
      const result = yield* dispatch(ctx, "NotebookEdit", { notebook_path: file, cell_id: "nope", new_source: "x" })
      expect(result.status).toBe("error")
      expect(result.text).toBe(`Cell with ID "nope" not found in notebook ${file}. Cells: intro, calc`)
      expect(yield* fs.readFileString(file)).toBe(NOTEBOOK)
    }).pipe(Effect.provide(Tools)))

  it.scoped("invalid notebook JSON is an error naming the file", () =>
    Effect.gen(function*() {
      const { ctx, file } = yield* setup("{ not json")
      const result = yield* dispatch(ctx, "NotebookEdit", { notebook_path: file, cell_id: "a", new_source: "x" })
      expect(result.status).toBe("error")
      expect(result.text).toContain(`Notebook ${file} is not valid JSON`)
    }).pipe(Effect.provide(Tools)))

  it.scoped("insert needs cell_type; replace needs cell_id", () =>
    Effect.gen(function*() {
      const { ctx, file } = yield* setup()
      const insert = yield* dispatch(ctx, "NotebookEdit", { notebook_path: file, new_source: "x", edit_mode: "insert" })
      expect(insert.text).toBe("cell_type is required when edit_mode is \"insert\".")
      const replace = yield* dispatch(ctx, "NotebookEdit", { notebook_path: file, new_source: "x" })
      expect(replace.text).toBe("cell_id is required for edit_mode \"replace\".")
    }).pipe(Effect.provide(Tools)))

  it.scoped("requires a prior Read, refuses a stale read, a missing notebook and a non-notebook", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const ctx = yield* makeContext(dir)
      yield* fs.writeFileString(`${dir}/unread.ipynb`, NOTEBOOK)
      const unread = yield* dispatch(ctx, "NotebookEdit", {
        notebook_path: `${dir}/unread.ipynb`,
        cell_id: "calc",
        new_source: "x"
      })
      expect(unread.text).toBe("File has not been read yet. Read it first before writing to it.")
      const missing = yield* dispatch(ctx, "NotebookEdit", { notebook_path: `${dir}/gone.ipynb`, new_source: "x" })
      expect(missing.text).toContain(`File does not exist: ${dir}/gone.ipynb`)
      const notNotebook = yield* dispatch(ctx, "NotebookEdit", { notebook_path: `${dir}/a.py`, new_source: "x" })
      expect(notNotebook.text).toContain("is not a Jupyter notebook")

      const { ctx: readCtx, file } = yield* setup()
      yield* fs.writeFileString(file, NOTEBOOK.replace("print(1 + 1)", "print(3)"))
      const stale = yield* dispatch(readCtx, "NotebookEdit", { notebook_path: file, cell_id: "calc", new_source: "x" })
      expect(stale.status).toBe("error")
      expect(stale.text).toContain(`modified since read, either by the user or by a linter: ${file}`)
    }).pipe(Effect.provide(Tools)))

  it("is not concurrency-safe", () => {
    const input = { notebook_path: "/a.ipynb", new_source: "" }
    expect(NotebookEdit.NotebookEdit.isConcurrencySafe(input, ToolUseContext.make({ cwd: "/" }))).toBe(false)
  })

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(NotebookEdit.NotebookEdit)
    expect(schema.required).toEqual(["notebook_path", "new_source"])
    expect(Object.keys(schema.properties ?? {})).toEqual([
      "notebook_path",
      "cell_id",
      "new_source",
      "cell_type",
      "edit_mode"
    ])
  })
})
