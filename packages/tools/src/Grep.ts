/**
 * Grep: search file contents with a regular expression (Claude Code's `Grep`).
 *
 * Uses ripgrep when `rg` is on PATH (run through the platform `Command`
 * service), otherwise a built-in engine that walks the `FileSystem` service
 * with ripgrep's rules (`.gitignore`/`.ignore`/`.rgignore` including nested
 * ones, hidden and binary files skipped, `glob` and `type` filters) and
 * matches with JavaScript regular expressions. Both engines feed one
 * formatter, so they answer alike. `GrepEngine` forces one of them.
 *
 * Files are listed newest first (modification time, then path) in every
 * output mode.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as OverlayFileSystem from "@switchyard/core/OverlayFileSystem"
import * as Tool from "@switchyard/core/Tool"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Files from "./internal/files.js"
import * as Footprints from "./internal/footprints.js"
import * as GrepBuiltin from "./internal/grepBuiltin.js"
import * as GrepQuery from "./internal/grepQuery.js"
import * as GrepRipgrep from "./internal/grepRipgrep.js"

/**
 * Which engine Grep uses: `auto` (ripgrep when `rg` is on PATH, else
 * built-in), or one of them.
 *
 * @since 0.1.0
 * @category models
 */
export type Engine = "auto" | "ripgrep" | "builtin"

/**
 * The engine choice, `auto` unless provided (tests force `builtin`).
 *
 * @since 0.1.0
 * @category services
 */
export class GrepEngine extends Context.Reference<GrepEngine>()("@switchyard/tools/Grep/GrepEngine", {
  defaultValue: (): Engine => "auto"
}) {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const GrepInput = Schema.Struct({
  pattern: Schema.String.annotations({
    description: "The regular expression to search for in file contents (ripgrep syntax)"
  }),
  path: Schema.optional(Schema.String).annotations({
    description: "File or directory to search in. Defaults to the current working directory."
  }),
  glob: Schema.optional(Schema.String).annotations({
    description: "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\"), like rg --glob"
  }),
  output_mode: Schema.optional(Schema.Literal("content", "files_with_matches", "count")).annotations({
    description: "\"content\" shows matching lines, \"files_with_matches\" shows file paths (default), " +
      "\"count\" shows match counts"
  }),
  "-B": Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Lines to show before each match (rg -B). Requires output_mode \"content\""
  }),
  "-A": Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Lines to show after each match (rg -A). Requires output_mode \"content\""
  }),
  "-C": Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Lines to show before and after each match (rg -C). Requires output_mode \"content\""
  }),
  "-n": Schema.optional(Schema.Boolean).annotations({
    description: "Show line numbers (rg -n). Requires output_mode \"content\". Defaults to true"
  }),
  "-i": Schema.optional(Schema.Boolean).annotations({ description: "Case insensitive search (rg -i)" }),
  type: Schema.optional(Schema.String).annotations({
    description: "File type to search (rg --type), e.g. js, ts, py, rust, go, java, md, json"
  }),
  head_limit: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Show only the first N lines/entries of the output (0 or absent: all)"
  }),
  offset: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Skip the first N lines/entries of the output before head_limit applies"
  }),
  multiline: Schema.optional(Schema.Boolean).annotations({
    description: "Let patterns span lines and . match newlines (rg -U --multiline-dotall). Default false"
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type GrepInput = Schema.Schema.Type<typeof GrepInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface GrepOutput {
  readonly mode: GrepQuery.OutputMode
  readonly engine: "ripgrep" | "builtin"
  readonly numFiles: number
  readonly text: string
}

/**
 * A search that could not run: an invalid pattern, glob or type, or a
 * missing path. Names the parameter.
 *
 * @since 0.1.0
 * @category errors
 */
export class GrepError extends Schema.TaggedError<GrepError>()("GrepError", {
  parameter: Schema.String,
  message: Schema.String
}) {}

const resolveRoot = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  context: ToolUseContext.ToolUseContext,
  given: string | undefined
): Effect.Effect<{ readonly root: string; readonly isFile: boolean }, GrepError> =>
  Effect.gen(function*() {
    const root = yield* Files.resolveSearchPath(fs, path, context.cwd, given)
    const info = yield* Effect.option(fs.stat(root))
    if (Option.isNone(info)) {
      return yield* new GrepError({ parameter: "path", message: `Path does not exist: ${root}` })
    }
    return { root, isFile: info.value.type !== "Directory" }
  })

/** One error shape for both engines (the built-in engine words its failures like ripgrep). */
const describeFailure = (input: GrepInput, message: string): GrepError => {
  if (message.includes("regex parse error") || message.includes("not allowed in a regex")) {
    const detail = message.replace(/^regex parse error:\s*/, "").trim()
    return new GrepError({ parameter: "pattern", message: `Invalid regular expression "${input.pattern}": ${detail}` })
  }
  if (message.includes("unrecognized file type")) {
    return new GrepError({
      parameter: "type",
      message: `Unknown file type "${input.type}". Known types: ${Object.keys(GrepQuery.FILE_TYPES).join(", ")}`
    })
  }
  if (message.includes("error parsing glob")) {
    return new GrepError({ parameter: "glob", message: `Invalid glob "${input.glob}": ${message}` })
  }
  return new GrepError({ parameter: "pattern", message: `Search for "${input.pattern}" failed: ${message}` })
}

const run = (
  engine: Engine,
  query: GrepQuery.Query,
  input: GrepInput,
  /** Read-denied paths as negated globs: ripgrep never opens them (results are filtered as well). */
  exclusions: ReadonlyArray<string>
): Effect.Effect<
  { readonly engine: "ripgrep" | "builtin"; readonly results: ReadonlyArray<GrepQuery.FileResult> },
  GrepError,
  FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
> => {
  const builtin = GrepBuiltin.search(query).pipe(
    Effect.map((results) => ({ engine: "builtin" as const, results })),
    Effect.mapError((message) => describeFailure(input, message))
  )
  if (engine === "builtin") return builtin
  const cwd = query.rootIsFile ? query.root.slice(0, query.root.lastIndexOf("/")) || "/" : query.root
  // After the user's globs, so they win over an include glob (ripgrep: the last matching glob decides).
  const excluded = { ...query, globs: [...query.globs, ...exclusions.map((pattern) => `!${pattern}`)] }
  return GrepRipgrep.search(excluded, cwd).pipe(
    Effect.map((results) => ({ engine: "ripgrep" as const, results })),
    Effect.catchAll((failure) => {
      if (failure._tag === "Failed") return Effect.fail(describeFailure(input, failure.message))
      if (engine === "auto") return builtin
      return Effect.fail(new GrepError({ parameter: "pattern", message: "ripgrep (rg) is not on PATH" }))
    })
  )
}

/**
 * The Grep tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Grep = Tool.make("Grep", {
  description: [
    "A powerful search tool built on ripgrep.",
    "- Supports full regex syntax (e.g. \"log.*Error\", \"function\\s+\\w+\"); escape literal braces (\"interface\\{\\}\").",
    "- Filter files with glob (e.g. \"*.js\", \"**/*.tsx\") or type (e.g. \"js\", \"py\", \"rust\").",
    "- output_mode: \"files_with_matches\" (default) lists paths, \"content\" shows matching lines, \"count\" counts.",
    "- Respects .gitignore; skips hidden and binary files.",
    "- Patterns match within single lines; set multiline: true for patterns that span lines."
  ].join("\n"),
  input: GrepInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  interruptBehavior: "cancel",
  maxResultSizeChars: 20_000,
  backfillObservableInput: Files.backfillSearchPath,
  footprint: (input, context) => Footprints.searches(input.path, context),
  validateInput: (input, context) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      yield* resolveRoot(fs, path, context, input.path)
    }).pipe(Effect.mapError((error) => new Tool.ToolError({ message: error.message }))),
  call: (input, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { isFile, root } = yield* resolveRoot(fs, path, ctx.context, input.path)
      const mode = input.output_mode ?? "files_with_matches"
      const context = input["-C"] ?? 0
      const query: GrepQuery.Query = {
        pattern: input.pattern,
        root,
        rootIsFile: isFile,
        globs: GrepQuery.splitGlobParameter(input.glob),
        type: input.type,
        caseInsensitive: input["-i"] ?? false,
        multiline: input.multiline ?? false,
        mode,
        before: input["-B"] ?? context,
        after: input["-A"] ?? context
      }
      const searchDir = isFile ? path.dirname(root) : root
      const exclusions = yield* Files.readDeniedGlobs("Grep", ctx.context, searchDir)
      // Under a speculation overlay with writes, ripgrep would read the real tree and miss them.
      const overlaid = yield* OverlayFileSystem.hasWrites
      const { engine, results: found } = yield* run(overlaid ? "builtin" : yield* GrepEngine, query, input, exclusions)
      // Files a Read deny rule covers are not searched results, whichever engine found them.
      const denied = yield* Files.readDeniedFilter("Grep", ctx.context)
      const results = yield* Files.withoutDenied(found, (result) => result.path, denied)
      const dated = yield* Effect.forEach(
        results,
        (result) =>
          fs.stat(result.path).pipe(
            Effect.map((info) => ({ result, mtime: Files.mtimeMs(info) })),
            Effect.orElseSucceed(() => ({ result, mtime: 0 }))
          ),
        { concurrency: 16 }
      )
      dated.sort((a, b) =>
        b.mtime - a.mtime || (a.result.path < b.result.path ? -1 : a.result.path > b.result.path ? 1 : 0)
      )
      const text = GrepQuery.format(dated.map((entry) => entry.result), {
        mode,
        lineNumbers: input["-n"] ?? true,
        context: mode === "content" && (query.before > 0 || query.after > 0),
        headLimit: input.head_limit,
        offset: input.offset ?? 0
      })
      const output: GrepOutput = { mode, engine, numFiles: results.length, text }
      return output
    }),
  mapResult: (output) => output.text
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(Grep)
