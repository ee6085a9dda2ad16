import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Hooks, Messages, ToolUseContext } from "@switchyard/core"
import * as Edit from "@switchyard/tools/Edit"
import * as Read from "@switchyard/tools/Read"
import * as Write from "@switchyard/tools/Write"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import {
  denyingFileSystem,
  dispatch,
  expectPlainObjectSchema,
  isRoot,
  makeContext,
  runTurn,
  tempDir,
  toolsLayer
} from "./fixtures/toolHarness.js"

const FileTools = toolsLayer(Layer.mergeAll(Read.layer, Write.layer, Edit.layer))

/** Set a file's mtime to a given time in the past, so a later change is visible. */
const age = (path: string, seconds: number) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => {
    const at = new Date(Date.now() - seconds * 1000)
    return fs.utimes(path, at, at)
  })

describe("Write", () => {
  it.scoped("creates a new file and its parent directories without a Read", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Write", { file_path: "deep/er/new.txt", content: "fresh\n" })
      expect(result.status).toBe("success")
      expect(result.text).toBe(`File created successfully at: ${dir}/deep/er/new.txt`)
      expect(yield* fs.readFileString(`${dir}/deep/er/new.txt`)).toBe("fresh\n")
      // No temporary file is left behind.
      expect(yield* fs.readDirectory(`${dir}/deep/er`)).toEqual(["new.txt"])
    }).pipe(Effect.provide(FileTools)))

  it.scoped("records the written state, so an Edit in the same turn needs no Read", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const ctx = yield* makeContext(dir)
      const results = yield* runTurn(ctx, [
        Messages.toolUse("w", "Write", { file_path: `${dir}/a.txt`, content: "one two\n" }),
        Messages.toolUse("e", "Edit", { file_path: `${dir}/a.txt`, old_string: "two", new_string: "three" })
      ])
      expect(results.get("w")?.status).toBe("success")
      expect(results.get("e")?.status).toBe("success")
      expect(yield* fs.readFileString(`${dir}/a.txt`)).toBe("one three\n")
      expect((yield* Ref.get(ctx)).fileState.get(`${dir}/a.txt`)?.partial).toBe(false)
    }).pipe(Effect.provide(FileTools)))

  it.scoped("overwriting a file that was not Read is refused", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/keep.txt`, "precious\n")
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/keep.txt`, content: "gone\n" })
      expect(result.status).toBe("error")
      expect(result.text).toBe("File has not been read yet. Read it first before writing to it.")
      expect(yield* fs.readFileString(`${dir}/keep.txt`)).toBe("precious\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a Read followed by a Write of the same file in one streaming turn succeeds", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/f.txt`, "old\n")
      const ctx = yield* makeContext(dir)
      const results = yield* runTurn(ctx, [
        Messages.toolUse("r", "Read", { file_path: `${dir}/f.txt` }),
        Messages.toolUse("w", "Write", { file_path: `${dir}/f.txt`, content: "new\n" })
      ])
      expect(results.get("r")?.text).toBe("     1\told")
      expect(results.get("w")).toMatchObject({
        status: "success",
        text: `The file ${dir}/f.txt has been updated (4 bytes written).`
      })
      expect(yield* fs.readFileString(`${dir}/f.txt`)).toBe("new\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a partial Read does not license an overwrite", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/f.txt`, "1\n2\n3\n")
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: `${dir}/f.txt`, limit: 1 })
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/f.txt`, content: "x\n" })
      expect(result.status).toBe("error")
      expect(result.text).toContain(`${dir}/f.txt was only read in part`)
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a file changed on disk since it was Read is refused (stale read), naming the file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/f.txt`, "v1\n")
      yield* age(`${dir}/f.txt`, 60)
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: `${dir}/f.txt` })
      yield* fs.writeFileString(`${dir}/f.txt`, "v2 by someone else\n")
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/f.txt`, content: "mine\n" })
      expect(result.status).toBe("error")
      expect(result.text).toContain(
        `File has been modified since read, either by the user or by a linter: ${dir}/f.txt`
      )
      expect(yield* fs.readFileString(`${dir}/f.txt`)).toBe("v2 by someone else\n")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a touched file with the same content is not stale (the hash decides when the mtime moved)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/f.txt`, "same\n")
      yield* age(`${dir}/f.txt`, 60)
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: `${dir}/f.txt` })
      yield* age(`${dir}/f.txt`, 10)
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/f.txt`, content: "changed\n" })
      expect(result.status).toBe("success")
    }).pipe(Effect.provide(FileTools)))

  it.scoped("the checks run again at call time: a change after validation is caught", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const file = `${dir}/race.txt`
      yield* fs.writeFileString(file, "before\n")
      yield* age(file, 60)
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: file })
      const seen: Array<unknown> = []
      // A PreToolUse hook runs after validateInput and before call: it changes the file in between.
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: (event) => event === "PreToolUse",
        preToolUse: (request) =>
          fs.writeFileString(file, "changed by a hook\n").pipe(
            Effect.orDie,
            Effect.tap(() => Effect.sync(() => seen.push(request.input))),
            Effect.as(Hooks.emptyPreToolUse)
          )
      }
      const result = yield* dispatch(ctx, "Write", { file_path: "race.txt", content: "mine\n" }).pipe(
        Effect.provideService(Hooks.Hooks, hooks)
      )
      expect(result.status).toBe("error")
      expect(result.text).toContain(`File has been modified since read`)
      expect(yield* fs.readFileString(file)).toBe("changed by a hook\n")
      // The hook saw the absolute path (backfillObservableInput), the model wrote a relative one.
      expect(seen).toEqual([{ file_path: file, content: "mine\n" }])
    }).pipe(Effect.provide(FileTools)))

  it.scoped("keeps the permissions of the file it replaces, and writes through a symlink", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/script.sh`, "echo 1\n")
      yield* fs.chmod(`${dir}/script.sh`, 0o750)
      yield* fs.symlink(`${dir}/script.sh`, `${dir}/link.sh`)
      const ctx = yield* makeContext(dir)
      yield* dispatch(ctx, "Read", { file_path: `${dir}/link.sh` })
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/link.sh`, content: "echo 2\n" })
      expect(result.status).toBe("success")
      expect(((yield* fs.stat(`${dir}/script.sh`)).mode & 0o777).toString(8)).toBe("750")
      expect(yield* fs.readLink(`${dir}/link.sh`)).toBe(`${dir}/script.sh`)
      expect(yield* fs.readFileString(`${dir}/script.sh`)).toBe("echo 2\n")
      expect((yield* fs.readDirectory(dir)).sort()).toEqual(["link.sh", "script.sh"])
    }).pipe(Effect.provide(FileTools)))

  it.scoped("a directory, or a path under a file, is a clear error", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.writeFileString(`${dir}/plain`, "x")
      const ctx = yield* makeContext(dir)
      const onDir = yield* dispatch(ctx, "Write", { file_path: dir, content: "x" })
      expect(onDir.status).toBe("error")
      expect(onDir.text).toContain(`${dir} is a directory, not a file`)
      const underFile = yield* dispatch(ctx, "Write", { file_path: `${dir}/plain/child.txt`, content: "x" })
      expect(underFile.status).toBe("error")
      expect(underFile.text).toContain(`${dir}/plain/child.txt`)
    }).pipe(Effect.provide(FileTools)))

  it.scoped.skipIf(isRoot)(
    "permission denied by the OS (read-only directory; skipped as root)",
    () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.makeDirectory(`${dir}/locked`)
        yield* fs.chmod(`${dir}/locked`, 0o555)
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/locked/a.txt`, content: "x" })
        yield* fs.chmod(`${dir}/locked`, 0o755)
        expect(result).toMatchObject({
          status: "error",
          text: `Error: Permission denied: cannot write ${dir}/locked/a.txt`
        })
      }).pipe(Effect.provide(FileTools))
  )

  it.scoped("permission denied reported by the FileSystem service leaves nothing behind", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.makeDirectory(`${dir}/locked`)
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Write", { file_path: `${dir}/locked/a.txt`, content: "x" })
      expect(result).toMatchObject({
        status: "error",
        text: `Error: Permission denied: cannot write ${dir}/locked/a.txt`
      })
      expect(yield* fs.readDirectory(`${dir}/locked`)).toEqual([])
      expect((yield* Ref.get(ctx)).fileState.size).toBe(0)
    }).pipe(
      Effect.provide(
        toolsLayer(Write.layer.pipe(Layer.provide(denyingFileSystem((path) => path.includes("/locked/")))))
      )
    ))

  it("is neither concurrency-safe nor read-only", () => {
    const context = ToolUseContext.make({ cwd: "/" })
    expect(Write.Write.isConcurrencySafe({ file_path: "/x", content: "" }, context)).toBe(false)
    expect(Write.Write.isReadOnly({ file_path: "/x", content: "" }, context)).toBe(false)
  })

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(Write.Write)
    expect(schema.required).toEqual(["file_path", "content"])
  })
})
