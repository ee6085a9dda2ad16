import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Batches, DispatchEvent, Execution, Footprint, Messages, StreamingExecutor } from "@switchyard/core"
import * as Edit from "@switchyard/tools/Edit"
import * as Glob from "@switchyard/tools/Glob"
import * as Read from "@switchyard/tools/Read"
import * as Write from "@switchyard/tools/Write"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { makeContext, tempDir, toolsLayer } from "./fixtures/toolHarness.js"

const FileTools = toolsLayer(Layer.mergeAll(Read.layer, Write.layer, Edit.layer, Glob.layer))

const footprintOf = (env: Execution.Environment, name: string, input: unknown) =>
  Effect.flatMap(Ref.get(env.context), (context) =>
    Effect.map(
      Batches.classify(Messages.toolUse("x", name, input), env, context, "footprints"),
      (c) => c.footprint
    ))

describe("built-in footprints (SPEC §4.13)", () => {
  it.scoped("Read reads its file, Edit and Write read and write theirs, Glob reads its root's subtree", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const env = yield* Execution.makeEnvironment(yield* makeContext(dir))
      expect(yield* footprintOf(env, "Read", { file_path: "a.txt" })).toEqual({ reads: [`${dir}/a.txt`] })
      expect(yield* footprintOf(env, "Edit", { file_path: `${dir}/a.txt`, old_string: "x", new_string: "y" }))
        .toEqual({ reads: [`${dir}/a.txt`], writes: [`${dir}/a.txt`] })
      expect(yield* footprintOf(env, "Write", { file_path: "new/dir/b.txt", content: "" }))
        .toEqual({ reads: [`${dir}/new/dir/b.txt`], writes: [`${dir}/new/dir/b.txt`] })
      expect(yield* footprintOf(env, "Glob", { pattern: "**/*.ts" })).toEqual({ reads: [`${dir}/**`] })
      // Undecodable input fails closed.
      expect(yield* footprintOf(env, "Read", { file_path: 42 })).toEqual(Footprint.writesEverything)
    }).pipe(Effect.provide(FileTools)))

  it.scoped("symlinks: two paths that resolve to the same file conflict, and the later call waits", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fs.makeDirectory(`${dir}/real`)
      yield* fs.writeFileString(`${dir}/real/a.txt`, "one\n")
      yield* fs.symlink(`${dir}/real`, `${dir}/link`)
      const env = yield* Execution.makeEnvironment(yield* makeContext(dir))
      const viaLink = yield* footprintOf(env, "Write", { file_path: `${dir}/link/a.txt`, content: "two\n" })
      const direct = yield* footprintOf(env, "Read", { file_path: `${dir}/real/a.txt` })
      expect(viaLink.writes).toEqual([`${dir}/real/a.txt`])
      expect(Footprint.conflict(viaLink, direct)).toBe(`writes ${dir}/real/a.txt`)
      // Through the executor: the Read of the real path sees the Write through the link, as
      // in the sequential run; an unrelated Read never waits.
      const events = yield* Stream.runCollect(StreamingExecutor.runAll([
        Messages.toolUse("r0", "Read", { file_path: `${dir}/link/a.txt` }),
        Messages.toolUse("w", "Write", { file_path: `${dir}/link/a.txt`, content: "two\n" }),
        Messages.toolUse("r", "Read", { file_path: `${dir}/real/a.txt` }),
        Messages.toolUse("other", "Read", { file_path: `${dir}/elsewhere.txt` })
      ], env))
      const started = Chunk.toArray(events).filter(DispatchEvent.isStarted)
      for (const wait of started.flatMap((e) => e.waitedFor ?? [])) expect(wait.reason).toContain(`${dir}/real/a.txt`)
      expect(started.find((e) => e.toolUseId === "other")!.waitedFor).toBeUndefined()
      const results = Chunk.toArray(events).filter(DispatchEvent.isResult)
      expect(Messages.contentText(results.find((r) => r.toolUseId === "r0")!.block.content)).toContain("one")
      expect(results.find((r) => r.toolUseId === "w")!.status).toBe("success")
      expect(Messages.contentText(results.find((r) => r.toolUseId === "r")!.block.content)).toContain("two")
    }).pipe(Effect.provide(FileTools)))
})
