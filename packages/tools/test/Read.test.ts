import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ToolUseContext } from "@switchyard/core"
import * as Read from "@switchyard/tools/Read"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import {
  allKeys,
  denyingFileSystem,
  dispatch,
  expectPlainObjectSchema,
  isRoot,
  makeContext,
  tempDir,
  toolsLayer
} from "./fixtures/toolHarness.js"

const lines = (n: number, make: (i: number) => string = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => make(i + 1)).join("\n") + "\n"

describe("Read", () => {
  describe("output", () => {
    it.scoped("numbers lines cat -n style: right-aligned number, tab, line", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/a.txt`, "alpha\n\tbeta\r\ngamma")
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/a.txt` })
        expect(result.status).toBe("success")
        expect(result.text).toBe("     1\talpha\n     2\t\tbeta\n     3\tgamma")
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("reads 2000 lines by default and says how to read on", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/long.txt`, lines(2500))
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: "long.txt" })
        const out = result.text.split("\n")
        expect(out[0]).toBe("     1\tline 1")
        expect(out[1999]).toBe("  2000\tline 2000")
        expect(out[2000]).toContain("Showing lines 1-2000 of 2500")
        expect(out).toHaveLength(2001)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("offset is a 1-based line and limit a line count", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/f.txt`, lines(10))
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/f.txt`, offset: 4, limit: 2 })
        expect(result.text.split("\n").slice(0, 2)).toEqual(["     4\tline 4", "     5\tline 5"])
        expect(result.text).toContain("Showing lines 4-5 of 10")
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("cuts lines over 2000 characters", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/wide.txt`, "x".repeat(5000) + "\nshort\n")
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/wide.txt` })
        const [first, second] = result.text.split("\n")
        expect(first).toBe(`     1\t${"x".repeat(2000)}... [line truncated: 5000 characters]`)
        expect(second).toBe("     2\tshort")
        // The model did not see the whole line: the read counts as partial.
        const state = (yield* Ref.get(ctx)).fileState.get(`${dir}/wide.txt`)
        expect(state?.partial).toBe(true)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("an empty file gets a note, and an offset past the end says how long the file is", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/empty.txt`, "")
        yield* fs.writeFileString(`${dir}/three.txt`, lines(3))
        const ctx = yield* makeContext(dir)
        const empty = yield* dispatch(ctx, "Read", { file_path: `${dir}/empty.txt` })
        expect(empty.status).toBe("success")
        expect(empty.text).toContain("exists but its contents are empty")
        const past = yield* dispatch(ctx, "Read", { file_path: `${dir}/three.txt`, offset: 10 })
        expect(past.text).toContain("shorter than the provided offset (10). The file has 3 lines")
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("returns the first 2000 lines of a 10 MB file and counts all its lines", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const line = "0123456789".repeat(4).slice(0, 39) + "\n" // 40 bytes: 2000 numbered lines fit the output cap
        const count = Math.ceil((10 * 1024 * 1024) / line.length)
        yield* fs.writeFileString(`${dir}/big.txt`, line.repeat(count))
        const ctx = yield* makeContext(dir)
        const output = yield* Read.Read.call({ file_path: `${dir}/big.txt` }, {
          toolUseId: "t",
          context: yield* Ref.get(ctx),
          progress: () => Effect.void,
          modifyContext: (modifier) => Ref.update(ctx, modifier)
        }) as Effect.Effect<Read.ReadOutput, unknown, FileSystem.FileSystem>
        expect(output._tag).toBe("Text")
        if (output._tag !== "Text") return
        expect(output.numLines).toBe(2000)
        expect(output.totalLines).toBe(count)
        expect(output.text.length).toBeLessThanOrEqual(Read.MAX_OUTPUT_CHARS + 200)
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("stays within MAX_OUTPUT_CHARS, cutting at a line and saying where to continue", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/dense.txt`, lines(2000, () => "y".repeat(1000)))
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/dense.txt` })
        expect(result.text.length).toBeLessThanOrEqual(Read.MAX_OUTPUT_CHARS + 200)
        expect(result.text).toMatch(/Output cut at line (\d+) of 2000 .* Continue with offset \d+/)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("returns a PNG as an image block", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const png = Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "base64"
        )
        yield* fs.writeFile(`${dir}/dot.png`, png)
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/dot.png` })
        expect(result.status).toBe("success")
        expect(result.content).toEqual([
          { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } }
        ])
      }).pipe(Effect.provide(toolsLayer(Read.layer))))
  })

  describe("file state", () => {
    it.scoped("records mtime, sha256 and partial for the absolute path", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.makeDirectory(`${dir}/sub`)
        yield* fs.writeFileString(`${dir}/sub/a.txt`, "hello\n")
        const ctx = yield* makeContext(dir)
        yield* dispatch(ctx, "Read", { file_path: "sub/a.txt" })
        const info = yield* fs.stat(`${dir}/sub/a.txt`)
        const state = (yield* Ref.get(ctx)).fileState.get(`${dir}/sub/a.txt`)
        expect(state).toEqual({
          mtimeMs: info.mtime._tag === "Some" ? info.mtime.value.getTime() : -1,
          // sha256("hello\n")
          hash: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
          partial: false
        })
        yield* dispatch(ctx, "Read", { file_path: `${dir}/sub/a.txt`, offset: 2 })
        expect((yield* Ref.get(ctx)).fileState.get(`${dir}/sub/a.txt`)?.partial).toBe(true)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it("hooks and permissions see an absolute path (`..` kept: only the kernel knows it); call keeps the input", () => {
      const context = ToolUseContext.make({ cwd: "/work/project" })
      expect(Read.Read.backfillObservableInput!({ file_path: "src/./../a.ts" }, context)).toEqual({
        file_path: "/work/project/src/../a.ts"
      })
      expect(Read.Read.backfillObservableInput!({ file_path: "/abs/b.ts", limit: 3 }, context)).toEqual({
        file_path: "/abs/b.ts",
        limit: 3
      })
    })

    it("is concurrency-safe and read-only", () => {
      const context = ToolUseContext.make({ cwd: "/" })
      expect(Read.Read.isConcurrencySafe({ file_path: "/x" }, context)).toBe(true)
      expect(Read.Read.isReadOnly({ file_path: "/x" }, context)).toBe(true)
    })
  })

  describe("errors", () => {
    it.scoped("a missing file: File does not exist, with close names from the same directory", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/config.json`, "{}")
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/config.yaml` })
        expect(result.status).toBe("error")
        expect(result.text).toContain(`File does not exist: ${dir}/config.yaml`)
        expect(result.text).toContain(`Did you mean ${dir}/config.json?`)
        const plain = yield* dispatch(ctx, "Read", { file_path: `${dir}/nothing-like-it` })
        expect(plain.text).toBe(`File does not exist: ${dir}/nothing-like-it`)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("a directory is refused, naming the path", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: dir })
        expect(result.status).toBe("error")
        expect(result.text).toContain(`${dir} is a directory, not a file`)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("a path under a file (ENOTDIR) is a clear error", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/plain`, "x")
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/plain/child.txt` })
        expect(result.status).toBe("error")
        expect(result.text).toContain(`${dir}/plain/child.txt`)
        expect(result.text).toMatch(/not a directory/i)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped.skipIf(isRoot)(
      "permission denied (chmod 000; skipped as root, where chmod does not deny reads)",
      () =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const dir = yield* tempDir
          yield* fs.writeFileString(`${dir}/secret.txt`, "x")
          yield* fs.chmod(`${dir}/secret.txt`, 0o000)
          const ctx = yield* makeContext(dir)
          const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/secret.txt` })
          expect(result.status).toBe("error")
          expect(result.text).toBe(`Error: Permission denied: cannot read ${dir}/secret.txt`)
        }).pipe(Effect.provide(toolsLayer(Read.layer)))
    )

    // Runs as root too: the FileSystem service underneath denies the read, as a real EACCES would.
    it.scoped("permission denied reported by the FileSystem service", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/secret.txt`, "x")
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/secret.txt` })
        expect(result.status).toBe("error")
        expect(result.text).toBe(`Error: Permission denied: cannot read ${dir}/secret.txt`)
        expect((yield* Ref.get(ctx)).fileState.size).toBe(0)
      }).pipe(Effect.provide(toolsLayer(Read.layer.pipe(Layer.provide(denyingFileSystem((path) =>
        path.endsWith("/secret.txt")
      )))))))

    it.scoped("binary files are refused: NUL bytes, or a known binary extension", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFile(`${dir}/blob.dat2`, new Uint8Array([104, 105, 0, 1, 2, 3]))
        yield* fs.writeFileString(`${dir}/archive.zip`, "looks like text")
        const ctx = yield* makeContext(dir)
        const nul = yield* dispatch(ctx, "Read", { file_path: `${dir}/blob.dat2` })
        expect(nul.status).toBe("error")
        expect(nul.text).toContain(`${dir}/blob.dat2 is a binary file`)
        const zip = yield* dispatch(ctx, "Read", { file_path: `${dir}/archive.zip` })
        expect(zip.text).toContain(`${dir}/archive.zip is a binary file`)
      }).pipe(Effect.provide(toolsLayer(Read.layer))))

    it.scoped("invalid input names the parameter", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const ctx = yield* makeContext(dir)
        const result = yield* dispatch(ctx, "Read", { file_path: `${dir}/a`, offset: -1 })
        expect(result.status).toBe("error")
        expect(result.text).toContain("InputValidationError")
        expect(result.text).toContain("offset")
      }).pipe(Effect.provide(toolsLayer(Read.layer))))
  })

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(Read.Read)
    expect(schema.required).toEqual(["file_path"])
    expect(Object.keys(schema.properties ?? {})).toEqual(["file_path", "offset", "limit"])
    expect(allKeys(schema)).not.toContain("$ref")
  })
})
