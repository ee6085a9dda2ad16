import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Hooks, Messages } from "@switchyard/core"
import * as Edit from "@switchyard/tools/Edit"
import * as Read from "@switchyard/tools/Read"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import {
  allKeys,
  denyingFileSystem,
  dispatch,
  expectPlainObjectSchema,
  makeContext,
  runBatches,
  tempDir,
  toolsLayer
} from "./fixtures/toolHarness.js"

const FileTools = toolsLayer(Layer.mergeAll(Read.layer, Edit.layer, Edit.layerMultiEdit))

/** A temp dir with `name` holding `content`, already Read in the returned context. */
const readFile = (name: string, content: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* tempDir
    const file = `${dir}/${name}`
    yield* fs.writeFileString(file, content)
    const past = new Date(Date.now() - 60_000)
    yield* fs.utimes(file, past, past)
    const ctx = yield* makeContext(dir)
    const read = yield* dispatch(ctx, "Read", { file_path: file })
    expect(read.status).toBe("success")
    return { dir, file, ctx }
  })

describe("Edit", () => {
  it.scoped("replaces the one occurrence and shows a diff", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.ts", "const a = 1\nconst b = 2\nconst c = 3\n")
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "b = 2", new_string: "b = 20" })
      expect(result.status).toBe("success")
      expect(result.text).toBe(
        `The file ${file} has been updated. Here's the diff:\n` +
          "@@ -1,3 +1,3 @@\n const a = 1\n-const b = 2\n+const b = 20\n const c = 3"
      )
      expect(yield* fs.readFileString(file)).toBe("const a = 1\nconst b = 20\nconst c = 3\n")
      // The new content is recorded: a second edit needs no new Read.
      const again = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "c = 3", new_string: "c = 30" })
      expect(again.status).toBe("success")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("requires a prior Read", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/a.txt`, "x\n")
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Edit", { file_path: `${dir}/a.txt`, old_string: "x", new_string: "y" })
      expect(result.status).toBe("error")
      expect(result.text).toBe("File has not been read yet. Read it first before writing to it.")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a partial Read is enough to edit", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/a.txt`, "1\n2\n3\n")
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: `${dir}/a.txt`, offset: 3, limit: 1 })
      const result = yield* dispatch(ctx, "Edit", { file_path: `${dir}/a.txt`, old_string: "3", new_string: "three" })
      expect(result.status).toBe("success")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("refuses a stale read, naming the file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "hello world\n")
      yield* fs.writeFileString(file, "hello there world\n")
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "world", new_string: "moon" })
      expect(result.status).toBe("error")
      expect(result.text).toContain(`File has been modified since read, either by the user or by a linter: ${file}`)
      expect(yield* fs.readFileString(file)).toBe("hello there world\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a non-unique old_string is refused with the number of occurrences", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "x = 1\nx = 1\nx = 1\n")
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "x = 1", new_string: "x = 2" })
      expect(result.status).toBe("error")
      expect(result.text).toContain("Found 3 matches of the string to replace, but replace_all is false")
      expect(result.text).toContain(`File: ${file}`)
      expect(yield* fs.readFileString(file)).toBe("x = 1\nx = 1\nx = 1\n")
      const all = yield* dispatch(ctx, "Edit", {
        file_path: file,
        old_string: "x = 1",
        new_string: "x = 2",
        replace_all: true
      })
      expect(all.status).toBe("success")
      expect(all.text).toContain("(all occurrences replaced)")
      expect(yield* fs.readFileString(file)).toBe("x = 2\nx = 2\nx = 2\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("an old_string that does not occur, or equals new_string, is an error", () =>
    Effect.gen(function*() {
      const { ctx, file } = yield* readFile("a.txt", "abc\n")
      const missing = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "xyz", new_string: "q" })
      expect(missing.status).toBe("error")
      expect(missing.text).toContain("String to replace not found in file.\nString: xyz")
      const same = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "abc", new_string: "abc" })
      expect(same.text).toContain("No changes to make: old_string and new_string are exactly the same.")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("an empty old_string creates a file that does not exist, and only then", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, dir, file } = yield* readFile("exists.txt", "content\n")
      const created = yield* dispatch(ctx, "Edit", {
        file_path: `${dir}/new/file.txt`,
        old_string: "",
        new_string: "hi\n"
      })
      expect(created.status).toBe("success")
      expect(created.text).toContain(`File created successfully at: ${dir}/new/file.txt`)
      expect(yield* fs.readFileString(`${dir}/new/file.txt`)).toBe("hi\n")
      const clobber = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "", new_string: "x" })
      expect(clobber.status).toBe("error")
      expect(clobber.text).toContain("Cannot create new file - file already exists.")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a missing file, a directory and a path under a file are clear errors", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/plain`, "x")
      const ctx = yield* makeContext(dir)
      const missing = yield* dispatch(ctx, "Edit", { file_path: `${dir}/nope.txt`, old_string: "a", new_string: "b" })
      expect(missing.status).toBe("error")
      expect(missing.text).toContain(`File does not exist: ${dir}/nope.txt`)
      const directory = yield* dispatch(ctx, "Edit", { file_path: dir, old_string: "a", new_string: "b" })
      expect(directory.text).toContain(`${dir} is a directory, not a file`)
      const under = yield* dispatch(ctx, "Edit", { file_path: `${dir}/plain/x`, old_string: "a", new_string: "b" })
      expect(under.status).toBe("error")
      expect(under.text).toContain(`${dir}/plain/x`)
    }).pipe(Effect.provide(FileTools)))

  it.scoped("keeps CRLF line endings when old_string is written with LF", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("win.txt", "one\r\ntwo\r\nthree\r\n")
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "one\ntwo", new_string: "1\n2" })
      expect(result.status).toBe("success")
      expect(yield* fs.readFileString(file)).toBe("1\r\n2\r\nthree\r\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("new_string is literal: $& and $1 are not replacement patterns", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "price\n")
      yield* dispatch(ctx, "Edit", { file_path: file, old_string: "price", new_string: "$& costs $1" })
      expect(yield* fs.readFileString(file)).toBe("$& costs $1\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("notebooks are left to NotebookEdit", () =>
    Effect.gen(function*() {
      const { ctx, file } = yield* readFile("n.ipynb", "{\"cells\": []}\n")
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "cells", new_string: "x" })
      expect(result.status).toBe("error")
      expect(result.text).toContain("Use NotebookEdit")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("the checks run again right before writing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "alpha\n")
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: (event) => event === "PreToolUse",
        preToolUse: () => fs.writeFileString(file, "beta\n").pipe(Effect.orDie, Effect.as(Hooks.emptyPreToolUse))
      }
      const result = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "alpha", new_string: "gamma" }).pipe(
        Effect.provideService(Hooks.Hooks, hooks)
      )
      expect(result.status).toBe("error")
      expect(result.text).toContain(`modified since read`)
      expect(yield* fs.readFileString(file)).toBe("beta\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("Read then Edit of the same file in one batch run succeeds (context applied between serial calls)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/a.txt`, "red\n")
      const ctx = yield* makeContext(dir)
      const results = yield* runBatches(ctx, [
        Messages.toolUse("r", "Read", { file_path: `${dir}/a.txt` }),
        Messages.toolUse("e", "Edit", { file_path: `${dir}/a.txt`, old_string: "red", new_string: "blue" })
      ])
      expect(results.get("e")?.status).toBe("success")
      expect(yield* fs.readFileString(`${dir}/a.txt`)).toBe("blue\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("permission denied on read or write is an error naming the file; the file is unchanged", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, dir, file } = yield* readFile("a.txt", "abc\n")
      yield* fs.writeFileString(`${dir}/unreadable.txt`, "abc\n")
      const write = yield* dispatch(ctx, "Edit", { file_path: file, old_string: "abc", new_string: "xyz" })
      expect(write).toMatchObject({ status: "error", text: `Error: Permission denied: cannot write ${file}` })
      expect(yield* fs.readFileString(file)).toBe("abc\n")
      const read = yield* dispatch(ctx, "Edit", {
        file_path: `${dir}/unreadable.txt`,
        old_string: "a",
        new_string: "b"
      })
      expect(read).toMatchObject({ status: "error", text: `Permission denied: cannot read ${dir}/unreadable.txt` })
    }).pipe(
      Effect.provide(toolsLayer(
        Layer.mergeAll(Read.layer, Edit.layer).pipe(
          Layer.provide(denyingFileSystem((path) => /\/\.a\.txt\.[0-9a-f]+\.tmp$|unreadable/.test(path)))
        )
      ))
    ))

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(Edit.Edit)
    expect(schema.required).toEqual(["file_path", "old_string", "new_string"])
  })
})

describe("MultiEdit", () => {
  it.scoped("applies edits in order, each to the result of the previous", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "a b c\n")
      const result = yield* dispatch(ctx, "MultiEdit", {
        file_path: file,
        edits: [
          { old_string: "a", new_string: "x" },
          { old_string: "x b", new_string: "y" },
          { old_string: "c", new_string: "z", replace_all: true }
        ]
      })
      expect(result.status).toBe("success")
      expect(result.text).toContain(`Applied 3 edits to ${file}.`)
      expect(yield* fs.readFileString(file)).toBe("y z\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("is all-or-nothing: a failing edit leaves the file untouched and is named", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { ctx, file } = yield* readFile("a.txt", "one two two\n")
      const result = yield* dispatch(ctx, "MultiEdit", {
        file_path: file,
        edits: [
          { old_string: "one", new_string: "1" },
          { old_string: "two", new_string: "2" }
        ]
      })
      expect(result.status).toBe("error")
      expect(result.text).toContain("Edit 2: Found 2 matches of the string to replace")
      expect(yield* fs.readFileString(file)).toBe("one two two\n")
      const state = (yield* Ref.get(ctx)).fileState.get(file)
      expect(state?.partial).toBe(false)
    }).pipe(Effect.provide(FileTools)))

  it.scoped("creates a file when the first edit has an empty old_string", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "MultiEdit", {
        file_path: "made.txt",
        edits: [
          { old_string: "", new_string: "hello world\n" },
          { old_string: "world", new_string: "there" }
        ]
      })
      expect(result.status).toBe("success")
      expect(yield* fs.readFileString(`${dir}/made.txt`)).toBe("hello there\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("an empty edits array is an input error", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "MultiEdit", { file_path: `${dir}/a`, edits: [] })
      expect(result.status).toBe("error")
      expect(result.text).toContain("InputValidationError")
      expect(result.text).toContain("edits")
    }).pipe(Effect.provide(FileTools)))

  it("sends a plain inlined object schema with the edit items inlined", () => {
    const schema = expectPlainObjectSchema(Edit.MultiEdit)
    expect(schema.required).toEqual(["file_path", "edits"])
    const edits = (schema.properties as Record<string, { items?: { properties?: object } }>)["edits"]
    expect(Object.keys(edits?.items?.properties ?? {})).toEqual(["old_string", "new_string", "replace_all"])
    expect(allKeys(schema)).not.toContain("$ref")
  })
})
