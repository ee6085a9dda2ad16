/**
 * The file-backed result store (Results.layerDirectory): what is read back is
 * exactly what was persisted, for any text (non-ASCII, surrogate pairs, long),
 * with many spills in flight sharing the reused encode buffers, and when the
 * directory disappears between spills; a reader never sees half a file, and
 * a failed spill leaves no temp file behind.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Results } from "@switchyard/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"

const store = (directory: string) => Results.layerDirectory(directory).pipe(Layer.provide(NodeContext.layer))

const texts = FastCheck.array(
  FastCheck.oneof(
    FastCheck.string({ unit: "grapheme", maxLength: 200 }),
    FastCheck.string({ unit: "binary", maxLength: 200 }),
    // Longer than the first buffer, so encoding grows it.
    FastCheck.tuple(
      FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 8 }),
      FastCheck.integer({ min: 10_000, max: 40_000 })
    )
      .map(([unit, times]) => unit.repeat(times))
  ),
  { minLength: 1, maxLength: 12 }
)

describe("Results.layerDirectory", () => {
  it.scoped.prop(
    "reads back exactly what was persisted, with spills in flight together",
    [texts],
    ([list]) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped()
        const files = yield* Effect.flatMap(
          Results.ResultStore,
          (results) => Effect.forEach(list, (text, i) => results.persist("s", `toolu_${i}`, text), { concurrency: 6 })
        ).pipe(
          Effect.provide(store(directory))
        )
        for (const [i, file] of files.entries()) {
          expect(file).toBe(`${directory}/sessions/s/tool-results/toolu_${i}.txt`)
          // Lone surrogates cannot be encoded; UTF-8 gets U+FFFD for them, as TextEncoder.encode gives.
          const written = Buffer.from(yield* fs.readFile(file))
          expect(written.equals(Buffer.from(new TextEncoder().encode(list[i]!))), `text ${i}`).toBe(true)
        }
        expect((yield* fs.readDirectory(`${directory}/sessions/s/tool-results`)).sort()).toEqual(
          list.map((_, i) => `toolu_${i}.txt`).sort()
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    { fastCheck: { numRuns: 25 } }
  )

  it.scoped("makes the directory again when it was removed between spills", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped()
      const results = yield* Effect.provide(Results.ResultStore, store(directory))
      const first = yield* results.persist("s", "a", "one")
      yield* fs.remove(`${directory}/sessions`, { recursive: true })
      const second = yield* results.persist("s", "b", "two")
      expect(yield* fs.readFileString(second)).toBe("two")
      expect(yield* fs.exists(first)).toBe(false)
      // Session and id are made safe for a file name.
      const odd = yield* results.persist("../x", "a/b", "three")
      expect(odd).toBe(`${directory}/sessions/.._x/tool-results/a_b.txt`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a store that cannot write fails the persist (limitSize then says not saved)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped()
      yield* fs.writeFileString(`${directory}/sessions`, "a file where the directory should be")
      const results = yield* Effect.provide(Results.ResultStore, store(directory))
      const failed = yield* Effect.flip(results.persist("s", "a", "x"))
      expect(failed).toBeDefined()
      const limited = yield* Results.limitSize("y".repeat(200), { maxChars: 10, sessionId: "s", toolUseId: "b" }).pipe(
        Effect.provideService(Results.ResultStore, results)
      )
      expect(limited).toContain("(not saved:")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a reader polling the final path sees a whole version or nothing, never part of one", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped()
      const results = yield* Effect.provide(Results.ResultStore, store(directory))
      const file = `${directory}/sessions/s/tool-results/same.txt`
      // Large enough that a write is not one page; each version is one repeated letter.
      const versions = ["a", "b", "c", "d", "e", "f"].map((letter) => letter.repeat(2_000_000))
      const done = yield* Deferred.make<void>()
      const reader = yield* Effect.fork(Effect.gen(function*() {
        const seen: Array<string> = []
        while (!(yield* Deferred.isDone(done))) {
          const read = yield* Effect.option(fs.readFileString(file))
          if (read._tag === "Some") seen.push(read.value)
        }
        return seen
      }))
      yield* Effect.forEach(versions, (text) => results.persist("s", "same", text), { concurrency: 3 })
      yield* Deferred.succeed(done, undefined)
      const seen = yield* Fiber.join(reader)
      for (const read of seen) expect(versions.includes(read), `a read of ${read.length} characters`).toBe(true)
      expect(versions).toContain(yield* fs.readFileString(file))
      expect(yield* fs.readDirectory(`${directory}/sessions/s/tool-results`)).toEqual(["same.txt"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a spill whose rename fails says so and leaves no temp file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped()
      const results = yield* Effect.provide(Results.ResultStore, store(directory))
      const tools = `${directory}/sessions/s/tool-results`
      // A non-empty directory where the file should go: the rename cannot replace it.
      yield* fs.makeDirectory(`${tools}/busy.txt/inside`, { recursive: true })
      const failed = yield* Effect.flip(results.persist("s", "busy", "text"))
      expect(failed).toBeInstanceOf(Results.ResultStoreError)
      expect(failed).toMatchObject({ _tag: "ResultStoreError", operation: "rename", path: `${tools}/busy.txt` })
      expect(yield* fs.readDirectory(tools)).toEqual(["busy.txt"])
      expect(yield* fs.readDirectory(`${tools}/busy.txt`)).toEqual(["inside"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
