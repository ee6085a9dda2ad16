/**
 * The ripgrep engine: runs `rg` through the platform `Command` service and
 * reads its output into `FileResult`s.
 *
 * Flags that make ripgrep's choices explicit, so the built-in engine can give
 * the same answer: `--no-config` (no user config file), `--no-require-git`
 * (`.gitignore` files count outside git repositories too), `--no-ignore-global`
 * (the user's global excludes file is machine state), and our own file-type
 * table via `--type-add` (ripgrep's table changes between versions).
 *
 * @internal
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as GrepQuery from "./grepQuery.js"

/**
 * Why the ripgrep engine could not answer. `NotInstalled` lets the automatic
 * engine fall back to the built-in one.
 *
 * @internal
 */
export type RipgrepFailure =
  | { readonly _tag: "NotInstalled" }
  | { readonly _tag: "Failed"; readonly message: string }

const RgText = Schema.Union(Schema.Struct({ text: Schema.String }), Schema.Struct({ bytes: Schema.String }))

const RgEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("begin"), data: Schema.Struct({ path: RgText }) }),
  Schema.Struct({
    type: Schema.Literal("match", "context"),
    data: Schema.Struct({ path: RgText, lines: RgText, line_number: Schema.NullOr(Schema.Number) })
  }),
  Schema.Struct({
    type: Schema.Literal("end"),
    data: Schema.Struct({ path: RgText, stats: Schema.Struct({ matched_lines: Schema.Number }) })
  }),
  Schema.Struct({ type: Schema.Literal("summary") })
)

const decodeEvent = Schema.decodeUnknownEither(Schema.parseJson(RgEvent))

const textOf = (value: typeof RgText.Type): string =>
  "text" in value ? value.text : Buffer.from(value.bytes, "base64").toString("utf8")

/**
 * The command line for a query.
 *
 * @internal
 */
export const args = (query: GrepQuery.Query): ReadonlyArray<string> => {
  const out: Array<string> = ["--no-config", "--no-require-git", "--no-ignore-global", "--color", "never"]
  if (query.caseInsensitive) out.push("--ignore-case")
  if (query.multiline) out.push("--multiline", "--multiline-dotall")
  for (const glob of query.globs) out.push("--glob", glob)
  if (query.type !== undefined) {
    const globs = GrepQuery.FILE_TYPES[query.type]
    if (globs !== undefined) {
      out.push("--type-clear", query.type)
      for (const glob of globs) out.push("--type-add", `${query.type}:${glob}`)
    }
    out.push("--type", query.type)
  }
  if (query.mode === "files_with_matches") {
    out.push("--files-with-matches", "--null")
  } else if (query.mode === "count" && !query.multiline) {
    out.push("--count", "--with-filename", "--null")
  } else {
    // Content, and counts in multiline mode (where `--count` counts match groups, not lines).
    out.push("--json")
    if (query.mode === "content") {
      if (query.before > 0) out.push("--before-context", String(query.before))
      if (query.after > 0) out.push("--after-context", String(query.after))
    }
  }
  out.push("--regexp", query.pattern, "--", query.root)
  return out
}

// Warnings that do not make the search a failure: unreadable files, and rg 13's
// "No files were searched" (its exit code 2 when a filter left nothing).
const isBenign = (line: string): boolean =>
  line === "" ||
  /\(os error \d+\)$/.test(line) ||
  line.startsWith("No files were searched") ||
  line.startsWith("Running with --debug")

const parseNullSeparated = (stdout: string, mode: GrepQuery.OutputMode): Array<GrepQuery.FileResult> => {
  if (mode === "files_with_matches") {
    return stdout.split("\0").filter((path) => path !== "" && path !== "\n").map((path) => ({
      path: path.replace(/^\n/, ""),
      matchedLines: 1,
      lines: []
    }))
  }
  const results: Array<GrepQuery.FileResult> = []
  for (const line of stdout.split("\n")) {
    const nul = line.lastIndexOf("\0")
    if (nul === -1) continue
    results.push({ path: line.slice(0, nul), matchedLines: Number(line.slice(nul + 1)), lines: [] })
  }
  return results
}

/** Reads `--json` events into results; a match event may hold several lines (multiline). */
class JsonReader {
  private readonly files = new Map<string, { matchedLines: number; lines: Array<GrepQuery.ResultLine> }>()
  constructor(private readonly keepLines: boolean) {}
  line(raw: string): void {
    if (raw === "") return
    const decoded = decodeEvent(raw)
    if (Either.isLeft(decoded)) return
    const event = decoded.right
    if (event.type === "summary") return
    const path = textOf(event.data.path)
    let file = this.files.get(path)
    if (file === undefined) {
      file = { matchedLines: 0, lines: [] }
      this.files.set(path, file)
    }
    if (event.type === "end") {
      file.matchedLines = event.data.stats.matched_lines
    } else if ((event.type === "match" || event.type === "context") && this.keepLines) {
      const text = textOf(event.data.lines)
      const parts = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
      const first = event.data.line_number ?? 0
      parts.forEach((part, i) => file.lines.push({ number: first + i, text: part, match: event.type === "match" }))
    }
  }
  results(): Array<GrepQuery.FileResult> {
    return [...this.files].filter(([, file]) => file.matchedLines > 0).map(([path, file]) => ({
      path,
      matchedLines: file.matchedLines,
      lines: file.lines
    }))
  }
}

const isNotInstalled = (error: PlatformError.PlatformError) =>
  error._tag === "SystemError" && error.module === "Command" && error.method === "spawn" && error.reason === "NotFound"

/**
 * Run ripgrep for a query. Interrupting the fiber kills the process (the
 * command's scope closes).
 *
 * @internal
 */
export const search = (
  query: GrepQuery.Query,
  cwd: string
): Effect.Effect<ReadonlyArray<GrepQuery.FileResult>, RipgrepFailure, CommandExecutor.CommandExecutor> =>
  Effect.scoped(
    Effect.gen(function*() {
      const command = Command.make("rg", ...args(query)).pipe(Command.workingDirectory(cwd))
      const process = yield* Command.start(command)
      const json = query.mode === "content" || (query.mode === "count" && query.multiline)
      const reader = new JsonReader(query.mode === "content")
      const stdoutChunks: Array<string> = []
      const stdout = process.stdout.pipe(
        Stream.decodeText(),
        json
          ? (text) => Stream.runForEach(Stream.splitLines(text), (line) => Effect.sync(() => reader.line(line)))
          : (text) => Stream.runForEach(text, (chunk) => Effect.sync(() => void stdoutChunks.push(chunk)))
      )
      const stderr = process.stderr.pipe(Stream.decodeText(), Stream.mkString)
      const [, errors, exitCode] = yield* Effect.all([stdout, stderr, process.exitCode], { concurrency: "unbounded" })
      const results = json ? reader.results() : parseNullSeparated(stdoutChunks.join(""), query.mode)
      if (exitCode === 2 && results.length === 0) {
        const problems = errors.split("\n").filter((line) => !isBenign(line))
        if (problems.length > 0) {
          return yield* Effect.fail<RipgrepFailure>({ _tag: "Failed", message: problems.join("\n") })
        }
      }
      return results
    })
  ).pipe(
    Effect.catchTag("SystemError", (error): Effect.Effect<never, RipgrepFailure> =>
      Effect.fail(isNotInstalled(error) ? { _tag: "NotInstalled" } : { _tag: "Failed", message: error.message })),
    Effect.catchTag("BadArgument", (error) =>
      Effect.fail<RipgrepFailure>({ _tag: "Failed", message: error.message }))
  )
