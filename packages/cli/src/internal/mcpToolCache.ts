/**
 * The MCP tool names last seen in a directory, so that completion scripts
 * can offer them without starting a server (`tools list --cached`). Kept in
 * `<state dir>/mcp-tools-cache.json` as `{"<dir>": {"<server>": [names]}}`,
 * rewritten (atomically) only when a server's list changed.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const Cache = Schema.Record({
  key: Schema.String,
  value: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
})
type Cache = typeof Cache.Type

const decode = Schema.decodeUnknownOption(Schema.parseJson(Cache))

const file = (stateDir: string, path: Path.Path) => path.join(stateDir, "mcp-tools-cache.json")

const readAll = (stateDir: string): Effect.Effect<Cache, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const text = yield* fs.readFileString(file(stateDir, path)).pipe(Effect.option)
    return Option.getOrElse(Option.flatMap(text, decode), (): Cache => ({}))
  })

/** The cached tool names of the servers of `dir`, by server. */
export const read = (
  stateDir: string,
  dir: string
): Effect.Effect<Readonly<Record<string, ReadonlyArray<string>>>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.map(readAll(stateDir), (cache) => cache[dir] ?? {})

/** Record the tool names of the servers that connected in `dir` (a failure to write is ignored). */
export const write = (
  stateDir: string,
  dir: string,
  servers: Readonly<Record<string, ReadonlyArray<string>>>
): Effect.Effect<void, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const cache = yield* readAll(stateDir)
    const next = { ...cache[dir], ...servers }
    if (JSON.stringify(next) === JSON.stringify(cache[dir] ?? {})) return
    const target = file(stateDir, path)
    const temp = `${target}.${crypto.randomUUID()}.tmp`
    yield* fs.makeDirectory(stateDir, { recursive: true })
    yield* fs.writeFileString(temp, `${JSON.stringify({ ...cache, [dir]: next })}\n`)
    yield* fs.rename(temp, target).pipe(Effect.tapError(() => fs.remove(temp).pipe(Effect.ignore)))
  }).pipe(Effect.ignore)
