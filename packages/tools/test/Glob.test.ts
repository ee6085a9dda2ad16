import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ToolUseContext } from "@switchyard/core"
import * as Glob from "@switchyard/tools/Glob"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import {
  dispatch,
  expectPlainObjectSchema,
  hangingFileSystem,
  makeContext,
  tempDir,
  hiding,
  toolsLayer
} from "./fixtures/toolHarness.js"

/** Write files with increasing mtimes: the last one is the newest. */
const writeAged = (dir: string, names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const base = Date.now() - 1_000_000
    for (const [i, name] of names.entries()) {
      const file = `${dir}/${name}`
      yield* fs.makeDirectory(file.slice(0, file.lastIndexOf("/")), { recursive: true })
      yield* fs.writeFileString(file, name)
      const at = new Date(base + i * 1000)
      yield* fs.utimes(file, at, at)
    }
  })

describe("Glob", () => {
  it.scoped("matches with a real glob library and sorts newest first", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeAged(dir, ["src/b.ts", "src/deep/c.ts", "a.ts", "src/readme.md", "src/x.tsx"])
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Glob", { pattern: "**/*.ts" })
      expect(result.status).toBe("success")
      expect(result.text.split("\n")).toEqual([`${dir}/a.ts`, `${dir}/src/deep/c.ts`, `${dir}/src/b.ts`])
      const braces = yield* dispatch(ctx, "Glob", { pattern: "src/*.{md,tsx}" })
      expect(braces.text.split("\n")).toEqual([`${dir}/src/x.tsx`, `${dir}/src/readme.md`])
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("searches the given path, relative to the working directory, and absolute patterns", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeAged(dir, ["src/b.ts", "lib/c.ts"])
      const ctx = yield* makeContext(dir)
      const scoped = yield* dispatch(ctx, "Glob", { pattern: "*.ts", path: "lib" })
      expect(scoped.text).toBe(`${dir}/lib/c.ts`)
      const absolute = yield* dispatch(ctx, "Glob", { pattern: `${dir}/src/**/*.ts` })
      expect(absolute.text).toBe(`${dir}/src/b.ts`)
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("a glob matching nothing: No files found", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeAged(dir, ["a.ts"])
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Glob", { pattern: "**/*.rs" })
      expect(result).toMatchObject({ status: "success", text: "No files found" })
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("returns the newest 100 with a note when there are more", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const names = Array.from({ length: 130 }, (_, i) => `f${String(i).padStart(3, "0")}.txt`)
      yield* writeAged(dir, names)
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Glob", { pattern: "*.txt" })
      const out = result.text.split("\n")
      expect(out).toHaveLength(Glob.MAX_RESULTS + 1)
      expect(out[0]).toBe(`${dir}/f129.txt`)
      expect(out[99]).toBe(`${dir}/f030.txt`)
      expect(out[100]).toBe(Glob.TRUNCATED_NOTE)
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("hidden files match only when the pattern names them; .gitignore is not consulted", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* writeAged(dir, [".github/ci.yml", "app.yml", "build/out.yml"])
      yield* fs.writeFileString(`${dir}/.gitignore`, "build/\n")
      const ctx = yield* makeContext(dir)
      const all = yield* dispatch(ctx, "Glob", { pattern: "**/*.yml" })
      expect(all.text.split("\n")).toEqual([`${dir}/build/out.yml`, `${dir}/app.yml`])
      const hidden = yield* dispatch(ctx, "Glob", { pattern: ".github/*.yml" })
      expect(hidden.text).toBe(`${dir}/.github/ci.yml`)
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("a symlink loop does not hang the walk", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* writeAged(dir, ["a/one.txt"])
      yield* fs.symlink(dir, `${dir}/a/loop`)
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Glob", { pattern: "**/*.txt" })
      expect(result.status).toBe("success")
      expect(result.text).toContain(`${dir}/a/one.txt`)
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("a missing directory or a file as path is an error naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeAged(dir, ["a.ts"])
      const ctx = yield* makeContext(dir)
      const missing = yield* dispatch(ctx, "Glob", { pattern: "*", path: `${dir}/nope` })
      expect(missing).toMatchObject({ status: "error", text: `Directory does not exist: ${dir}/nope` })
      const file = yield* dispatch(ctx, "Glob", { pattern: "*", path: `${dir}/a.ts` })
      expect(file).toMatchObject({ status: "error", text: `Path is not a directory: ${dir}/a.ts` })
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  // The walk goes through the FileSystem service: a filesystem that hides a name hides it from Glob.
  it.scoped("walks through the FileSystem service, not node:fs", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeAged(dir, ["visible.ts", "hidden-by-fs.ts"])
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Glob", { pattern: "*.ts" })
      expect(result.text).toBe(`${dir}/visible.ts`)
    }).pipe(
      Effect.provide(toolsLayer(Glob.layer.pipe(Layer.provide(hiding("hidden-by-fs.ts"))))),
      Effect.provideService(Glob.GlobEngine, "walk")
    ))

  it.scopedLive("interrupting a Glob stops its filesystem calls: nothing is left running", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.makeDirectory(`${dir}/hang`)
      const signals = { started: yield* Deferred.make<void>(), interrupted: yield* Deferred.make<void>() }
      const ctx = yield* makeContext(dir)
      const call = yield* dispatch(ctx, "Glob", { pattern: "**/*" }).pipe(
        Effect.provide(toolsLayer(Glob.layer.pipe(Layer.provide(hangingFileSystem(signals))))),
        Effect.provideService(Glob.GlobEngine, "walk"),
        Effect.fork
      )
      yield* Deferred.await(signals.started).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "not started" })
      )
      yield* Fiber.interrupt(call)
      yield* Deferred.await(signals.interrupted).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "leaked" })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it("is concurrency-safe, read-only, and cancelled by a new message", () => {
    const context = ToolUseContext.make({ cwd: "/" })
    expect(Glob.Glob.isConcurrencySafe({ pattern: "*" }, context)).toBe(true)
    expect(Glob.Glob.isReadOnly({ pattern: "*" }, context)).toBe(true)
    expect(Glob.Glob.interruptBehavior).toBe("cancel")
    expect(Glob.Glob.backfillObservableInput!({ pattern: "*" }, ToolUseContext.make({ cwd: "/w" }))).toEqual({
      pattern: "*",
      path: "/w"
    })
  })

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(Glob.Glob)
    expect(schema.required).toEqual(["pattern"])
  })
})
