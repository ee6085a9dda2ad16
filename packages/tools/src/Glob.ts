/**
 * Glob: files whose paths match a glob pattern, newest first (Claude Code's
 * `Glob`).
 *
 * Matching is `tinyglobby`'s (picomatch globs: `**`, `{a,b}`, `[abc]`, …; a
 * directory walk that prunes what the pattern cannot reach). Two engines list
 * the tree (see `GlobEngine`): `rg --files` when it is on PATH and the
 * filesystem is the disk's (its listing matched by the same rule, and only
 * the matches statted, for the sort, while rg still runs),
 * else a walk whose directory reads go through the `FileSystem` service via
 * `tinyglobby`'s `fs` option, so no `node:fs` is touched. Like Claude Code's Glob, `.gitignore` is not
 * consulted; hidden files match only when the pattern names them (`.github/**`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as OverlayFileSystem from "@switchyard/core/OverlayFileSystem"
import * as Tool from "@switchyard/core/Tool"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { glob, isDynamicPattern } from "tinyglobby"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"
import * as FsAdapter from "./internal/fsAdapter.js"
import * as GlobRipgrep from "./internal/globRipgrep.js"
import * as RealPathCache from "./internal/realPathCache.js"

/**
 * The most paths one Glob returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESULTS = 100

/**
 * @since 0.1.0
 * @category constants
 */
export const TRUNCATED_NOTE = "(Results are truncated. Consider using a more specific path or pattern.)"

/**
 * @since 0.1.0
 * @category schemas
 */
export const GlobInput = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The glob pattern to match files against, e.g. \"**/*.ts\"" }),
  path: Schema.optional(Schema.String).annotations({
    description: "The directory to search in. Omit it to search the current working directory " +
      "(do not pass \"undefined\" or \"null\")."
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type GlobInput = Schema.Schema.Type<typeof GlobInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface GlobOutput {
  /** Absolute paths, newest first. */
  readonly filenames: ReadonlyArray<string>
  readonly numFiles: number
  readonly truncated: boolean
}

/**
 * How Glob lists the tree: `ripgrep` (`rg --files`, then the same matcher),
 * `walk` (through the `FileSystem` service), or `auto`: ripgrep when the
 * program's filesystem is the real one and `rg` is on PATH, else the walk.
 *
 * @since 0.1.0
 * @category models
 */
export type Engine = "auto" | "ripgrep" | "walk"

/**
 * Forces a Glob engine (tests, benchmarks, a filesystem overlay).
 *
 * @since 0.1.0
 * @category services
 */
export class GlobEngine extends Context.Reference<GlobEngine>()("@switchyard/tools/Glob/GlobEngine", {
  defaultValue: (): Engine => "auto"
}) {}

/**
 * The one place that decides the engine. `rg` reads the disk directly, so it
 * is not used under a speculation overlay with writes (SPEC §4.12): the walk
 * goes through the overlay's `FileSystem` and sees its edits.
 */
const chooseEngine: Effect.Effect<"ripgrep" | "walk"> = Effect.zipWith(
  GlobEngine,
  OverlayFileSystem.hasWrites,
  (engine, overlaid) => engine === "walk" || overlaid ? "walk" : "ripgrep"
)

/**
 * A search failed before it ran: its directory is missing or not a directory.
 *
 * @since 0.1.0
 * @category errors
 */
export class GlobError extends Schema.TaggedError<GlobError>()("GlobError", {
  parameter: Schema.String,
  path: Schema.String,
  message: Schema.String
}) {}

// Models sometimes spell an omitted optional as a string.
const resolveSearchDirectory = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  context: ToolUseContext.ToolUseContext,
  given: string | undefined
): Effect.Effect<string, GlobError> =>
  Effect.gen(function*() {
    const directory = yield* Files.resolveSearchPath(fs, path, context.cwd, given)
    const info = yield* Effect.option(fs.stat(directory))
    if (Option.isNone(info)) {
      return yield* new GlobError({
        parameter: "path",
        path: directory,
        message: `Directory does not exist: ${directory}`
      })
    }
    if (info.value.type !== "Directory") {
      return yield* new GlobError({
        parameter: "path",
        path: directory,
        message: `Path is not a directory: ${directory}`
      })
    }
    return directory
  })

/**
 * Where a pattern searches (SPEC §4.13, issue 20 item 2): an absolute pattern
 * (`/etc/*.conf`) or one that climbs with `..` (`../../etc/*.conf`) searches
 * from its longest static directory prefix, `base` — relative to the search
 * directory, `..` kept — with `rest` matched below it. Any other pattern
 * searches the directory itself (`base` is `undefined`). A `..` after a
 * wildcard could climb anywhere: the base is then `/`.
 */
export const patternBase = (pattern: string): { readonly base: string | undefined; readonly rest: string } => {
  const segments = pattern.split("/")
  const absolute = pattern.startsWith("/")
  const first = absolute ? 1 : 0
  let staticEnd = first
  while (staticEnd < segments.length - 1 && !isDynamicPattern(segments[staticEnd]!)) staticEnd++
  const climbs = segments.includes("..")
  if (!absolute && !climbs) return { base: undefined, rest: pattern }
  if (segments.slice(staticEnd).includes("..")) return { base: "/", rest: pattern }
  const lead = segments.slice(first, staticEnd).join("/")
  return { base: absolute ? `/${lead}` : lead === "" ? "." : lead, rest: segments.slice(staticEnd).join("/") }
}

/** The search root of a call: its `path` (or cwd) joined with the pattern's base, as the kernel resolves it. */
const splitPattern = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  pattern: string,
  directory: string
): Effect.Effect<{ cwd: string; pattern: string }> => {
  const { base, rest } = patternBase(pattern)
  if (base === undefined) return Effect.succeed({ cwd: directory, pattern })
  return Effect.map(Files.kernelPath(fs, path, directory, base), (cwd) => ({ cwd, pattern: rest }))
}

/** What the permission check and the footprint see: the directory the pattern searches. */
const searchRoot = (input: { readonly pattern: string; readonly path?: string | undefined }): string | undefined => {
  const { base } = patternBase(input.pattern)
  const given = Files.givenSearchPath(input.path)
  if (base === undefined) return given
  if (base.startsWith("/")) return base
  return given === undefined ? base : `${given.replace(/\/+$/, "")}/${base}`
}

/**
 * The walk engine: tinyglobby over the `FileSystem` service. It keeps every
 * entry's mtime; a match it has none for is statted.
 */
const walk = (
  fs: FileSystem.FileSystem,
  pattern: string,
  search: { readonly cwd: string; readonly pattern: string },
  directory: string
): Effect.Effect<ReadonlyArray<GlobRipgrep.Dated>, GlobError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<FileSystem.FileSystem>()
    const adapter = FsAdapter.make(runtime)
    // Interrupting the call aborts the walk (the signal) and the filesystem calls still in flight (close).
    const matches = yield* Effect.tryPromise({
      try: (signal) =>
        glob(search.pattern, {
          cwd: search.cwd,
          absolute: true,
          onlyFiles: true,
          expandDirectories: false,
          fs: adapter.fs,
          signal
        }),
      catch: (cause) =>
        new GlobError({
          parameter: "pattern",
          path: directory,
          message: `Invalid glob pattern "${pattern}": ${cause instanceof Error ? cause.message : String(cause)}`
        })
    }).pipe(Effect.ensuring(adapter.close))
    return yield* Effect.forEach(
      matches,
      (file) => {
        const known = adapter.mtimes.get(file)
        if (known !== undefined) return Effect.succeed({ file, mtime: known })
        return fs.stat(file).pipe(
          Effect.map((info) => ({ file, mtime: Files.mtimeMs(info) })),
          Effect.orElseSucceed(() => ({ file, mtime: 0 }))
        )
      },
      { concurrency: 32 }
    )
  })

/**
 * The Glob tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Glob = Tool.make("Glob", {
  description: [
    "Fast file pattern matching for any codebase size.",
    "- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\".",
    `- Returns matching absolute file paths sorted by modification time, newest first (at most ${MAX_RESULTS}).`,
    "- Use it to find files by name; use Grep to search their contents."
  ].join("\n"),
  input: GlobInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  interruptBehavior: "cancel",
  backfillObservableInput: Files.backfillSearchPath,
  // An absolute or `..` pattern is judged by the directory it searches, as `path` is.
  getPath: searchRoot,
  footprint: (input, context) => Footprints.searches(searchRoot(input), context),
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      yield* resolveSearchDirectory(fs, path, context, input.path)
    }).pipe(Effect.mapError((error) => new Tool.ToolError({ message: error.message }))),
  call: (input, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = yield* resolveSearchDirectory(fs, path, ctx.context, input.path)
      const search = yield* splitPattern(fs, path, input.pattern, directory)
      const viaRipgrep = (yield* chooseEngine) === "ripgrep"
        ? yield* Effect.option(GlobRipgrep.search(search.pattern, search.cwd))
        : Option.none()
      // Whatever rg could not answer (not installed, a link loop, a bad pattern) the walk answers.
      const found = Option.isSome(viaRipgrep) ? viaRipgrep.value : yield* walk(fs, input.pattern, search, directory)
      // Paths a Read deny rule covers are left out, whichever engine found them.
      const denied = yield* Files.readDeniedFilter("Glob", ctx.context).pipe(
        Effect.provideService(FileSystem.FileSystem, RealPathCache.make(fs, { onDisk: Option.isSome(viaRipgrep) }))
      )
      const dated = [...yield* Files.withoutDenied(found, (entry) => entry.file, denied)]
      dated.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
      const output: GlobOutput = {
        filenames: dated.slice(0, MAX_RESULTS).map((entry) => entry.file),
        numFiles: dated.length,
        truncated: dated.length > MAX_RESULTS
      }
      return output
    }),
  mapResult: (output) => {
    if (output.filenames.length === 0) return "No files found"
    return output.truncated ? [...output.filenames, TRUNCATED_NOTE].join("\n") : output.filenames.join("\n")
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(Glob)
