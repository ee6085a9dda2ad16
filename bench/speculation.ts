/**
 * Issue 12: speculation. The overlay's read / stat / write cost against the
 * plain Node FileSystem (goal: ≤ 1.2× for reads of unwritten paths), accept of
 * 1 000 changed files, and the headline — the time from "user accepts" to
 * "result shown" for a replayed 3-turn task, with and without speculation.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import {
  OverlayFileSystem,
  QueryLoop,
  Registry,
  ReplayModel,
  Results,
  Speculation,
  ToolUseContext
} from "@switchyard/core"
import * as Builtins from "@switchyard/tools/Builtins"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fmt, record, timeEffect } from "./harness.js"

const SUITE = "speculation"
const FILES = 200

const tempDir = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const makeTree = () => {
  const root = tempDir("bench-overlay-")
  for (let d = 0; d < 10; d++) {
    fs.mkdirSync(path.join(root, `dir${d}`))
    for (let f = 0; f < FILES / 10; f++) {
      fs.writeFileSync(path.join(root, `dir${d}`, `file${f}.txt`), `content ${d} ${f}\n`.repeat(20))
    }
  }
  return root
}

const files = (root: string) =>
  Array.from({ length: FILES }, (_, i) => path.join(root, `dir${i % 10}`, `file${Math.floor(i / 10)}.txt`))

const each = (paths: ReadonlyArray<string>, f: (p: string) => Effect.Effect<unknown, unknown>) =>
  Effect.forEach(paths, f, { discard: true })

const transcript: ReplayModel.Transcript = {
  turns: [
    {
      blocks: [
        { block: { type: "text", text: "Reading the notes." }, delayMs: 400 },
        { block: { type: "tool_use", id: "t1", name: "Read", input: { file_path: "notes.txt" } } }
      ]
    },
    {
      blocks: [
        { block: { type: "text", text: "Adding the entry." }, delayMs: 400 },
        {
          block: {
            type: "tool_use",
            id: "t2",
            name: "Write",
            input: { file_path: "shopping.txt", content: "- buy milk\n" }
          }
        }
      ]
    },
    { blocks: [{ block: { type: "text", text: "Done: shopping.txt lists the milk." }, delayMs: 400 }] }
  ]
}

const toolsLayer = Builtins.layer().pipe(Layer.provideMerge(Registry.layer()), Layer.provide(FetchHttpClient.layer))
const environment = Layer.mergeAll(Results.layerMemory, ShellCommand.layer).pipe(Layer.provideMerge(NodeContext.layer))

const project = () => {
  const root = tempDir("bench-spec-")
  fs.writeFileSync(path.join(root, "notes.txt"), "remember the milk\n")
  return root
}

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const root = makeTree()
  const paths = files(root)
  const state = tempDir("bench-overlay-state-")

  const measure = Effect.scoped(Effect.gen(function*() {
    const plain = yield* FileSystem.FileSystem
    const empty = yield* OverlayFileSystem.make({ cwd: root, directory: path.join(state, "empty") })
    const written = yield* OverlayFileSystem.make({ cwd: root, directory: path.join(state, "written") })
    // An overlay with writes elsewhere: reads of unwritten paths must still fall through cheaply.
    for (let i = 0; i < 20; i++) yield* written.fileSystem.writeFileString(path.join(root, `new${i}.txt`), "x")
    const reads = {
      plain: yield* Effect.promise(() => timeEffect(each(paths, plain.readFile), { samples: 7 })),
      empty: yield* Effect.promise(() => timeEffect(each(paths, empty.fileSystem.readFile), { samples: 7 })),
      written: yield* Effect.promise(() => timeEffect(each(paths, written.fileSystem.readFile), { samples: 7 }))
    }
    const stats = {
      plain: yield* Effect.promise(() => timeEffect(each(paths, plain.stat), { samples: 7 })),
      empty: yield* Effect.promise(() => timeEffect(each(paths, empty.fileSystem.stat), { samples: 7 })),
      written: yield* Effect.promise(() => timeEffect(each(paths, written.fileSystem.stat), { samples: 7 }))
    }
    const copy = tempDir("bench-overlay-copy-")
    fs.cpSync(root, copy, { recursive: true })
    const copyPaths = files(copy)
    const data = new TextEncoder().encode("changed\n")
    const writes = {
      plain: yield* Effect.promise(() => timeEffect(each(copyPaths, (p) => plain.writeFile(p, data)), { samples: 5 })),
      overlay: yield* Effect.promise(() =>
        timeEffect(each(paths, (p) => written.fileSystem.writeFile(p, data)), { samples: 5 })
      )
    }
    return { reads, stats, writes }
  })).pipe(Effect.provide(NodeContext.layer))
  const { reads, stats, writes } = await Effect.runPromise(measure)
  record(SUITE, `readFile ×${FILES}, unwritten paths: plain Node FileSystem`, `${fmt(reads.plain)} ms`)
  record(
    SUITE,
    `readFile ×${FILES}, unwritten paths: empty overlay`,
    `${fmt(reads.empty)} ms`,
    `${fmt(reads.empty / reads.plain)}× (goal ≤ 1.2)`
  )
  record(
    SUITE,
    `readFile ×${FILES}, unwritten paths: overlay with writes`,
    `${fmt(reads.written)} ms`,
    `${fmt(reads.written / reads.plain)}×`
  )
  record(
    SUITE,
    `stat ×${FILES}: plain / empty overlay / overlay with writes`,
    `${fmt(stats.plain)} / ${fmt(stats.empty)} / ${fmt(stats.written)} ms`,
    `${fmt(stats.empty / stats.plain)}× / ${fmt(stats.written / stats.plain)}×`
  )
  record(
    SUITE,
    `writeFile ×${FILES}: plain / overlay (copy-on-write)`,
    `${fmt(writes.plain)} / ${fmt(writes.overlay)} ms`,
    `${fmt(writes.overlay / writes.plain)}×`
  )

  // Accept of 1 000 changed files: each through a temp file and a rename.
  const acceptTree = tempDir("bench-accept-")
  for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(acceptTree, `f${i}.txt`), "before\n")
  const acceptMs = await Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const overlay = yield* OverlayFileSystem.make({ cwd: acceptTree, directory: path.join(state, "accept") })
      for (let i = 0; i < 1000; i++) {
        yield* overlay.fileSystem.writeFileString(path.join(acceptTree, `f${i}.txt`), "after\n")
      }
      const start = performance.now()
      const result = yield* overlay.apply
      const ms = performance.now() - start
      if (result.applied.length !== 1000) {
        throw new Error(`accept applied ${result.applied.length} files`)
      }
      return ms
    })).pipe(Effect.provide(NodeContext.layer))
  )
  record(SUITE, "accept of 1 000 changed files", `${fmt(acceptMs)} ms`, `${fmt(acceptMs / 1000, 3)} ms per file`)

  // The headline: accept → result, for a replayed 3-turn task (400 ms of model time per turn).
  const context = (cwd: string) =>
    ToolUseContext.make({ cwd, permissions: { mode: "acceptEdits", rules: [], additionalDirectories: [] } })
  const without = await Effect.runPromise(
    Effect.gen(function*() {
      const cwd = project()
      const start = performance.now()
      yield* QueryLoop.run("Add the milk to the shopping list", context(cwd), {}).pipe(Stream.runDrain)
      return performance.now() - start
    }).pipe(
      Effect.provide(Layer.mergeAll(toolsLayer, ReplayModel.layer(transcript)).pipe(Layer.provideMerge(environment)))
    )
  )
  const withSpeculation = await Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const cwd = project()
      const speculation = yield* Speculation.start("Add the milk to the shopping list", context(cwd), {
        tools: toolsLayer,
        directory: path.join(state, "headline")
      })
      // The user reads the suggestion while it runs; then accepts.
      yield* speculation.await
      const start = performance.now()
      const accepted = yield* speculation.accept
      return { ms: performance.now() - start, saved: accepted.timeSavedMs }
    })).pipe(Effect.provide(Layer.merge(ReplayModel.layer(transcript), environment)))
  )
  record(
    SUITE,
    "accept → result, 3-turn replayed task, without speculation",
    `${fmt(without, 0)} ms`,
    "the loop runs after the user accepts"
  )
  record(
    SUITE,
    "accept → result, 3-turn replayed task, with speculation",
    `${fmt(withSpeculation.ms, 1)} ms`,
    `time saved ${withSpeculation.saved} ms (${
      fmt(without / Math.max(withSpeculation.ms, 0.001), 0)
    }× faster to the result)`
  )
  for (const dir of [root, state, acceptTree]) fs.rmSync(dir, { recursive: true, force: true })
}
