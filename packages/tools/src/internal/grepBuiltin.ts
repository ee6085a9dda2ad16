/**
 * The built-in Grep engine, for machines without `rg`: a directory walk over
 * the `FileSystem` service with ripgrep's filtering rules, and JavaScript
 * regular expressions.
 *
 * The walk follows ripgrep's order of precedence for each entry below the
 * search root (the root itself is never judged: a root given inside an
 * ignored or hidden directory is searched):
 * 1. `--glob` overrides (the `glob` parameter);
 * 2. ignore files — `.rgignore`, then `.ignore`, then `.gitignore`, then
 *    `.git/info/exclude`. Each file's rules are matched by the `ignore`
 *    package (`GrepQuery.parseIgnoreFile`) against paths relative to the
 *    file's own directory, directories with a trailing slash; within each
 *    kind, the deepest file that says "ignored" or "whitelisted" decides.
 *    The search root's parent directories count too. `.gitignore` and
 *    `exclude` rules stop at the enclosing repository's root (a `.git`
 *    entry), and apply outside any repository (the ripgrep runner passes
 *    `--no-require-git`).
 *    Each file judges a path by itself, never by its parent directories
 *    (ripgrep's `Gitignore::matched`), since the walk never enters a
 *    directory that was excluded: so a deeper `!build/` re-includes what a
 *    higher `build/` excluded (what is inside is still judged by the higher
 *    rules, one path at a time), and for a root inside `node_modules` the
 *    rules above the root judge what is below it.
 * 3. the file type (`type`);
 * 4. hidden names (a leading `.`) are skipped unless something above
 *    whitelisted them.
 * Symlinked directories are not followed (like ripgrep); binary files (a NUL
 * byte) are skipped. One difference remains: the `FileSystem` service cannot
 * tell a link to a file from the file without an extra call per file, so
 * links to files are searched (ripgrep skips them).
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Files from "./files.js"
import * as GrepQuery from "./grepQuery.js"

type Rules = GrepQuery.Rules

interface Level {
  readonly dir: string
  readonly rgignore: Rules | undefined
  readonly ignore: Rules | undefined
  readonly gitignore: Rules | undefined
  readonly exclude: Rules | undefined
  readonly hasGit: boolean
}

type Match = GrepQuery.Match

const IGNORE_FILES = [".rgignore", ".ignore", ".gitignore"] as const

const CONCURRENCY = 16

/**
 * Compile the pattern for the built-in engine: Unicode-aware when the
 * pattern allows it (like ripgrep), plain otherwise.
 *
 * @internal
 */
export const compileRegex = (
  pattern: string,
  options: { readonly caseInsensitive: boolean; readonly multiline: boolean }
): Either.Either<RegExp, string> => {
  if (!options.multiline && /(^|[^\\])(\\\\)*(\n|\\n)/.test(pattern)) {
    return Either.left("the literal \"\\n\" is not allowed in a regex unless multiline is true")
  }
  const flags = `${options.multiline ? "gms" : ""}${options.caseInsensitive ? "i" : ""}`
  try {
    return Either.right(new RegExp(pattern, `${flags}u`))
  } catch {
    try {
      return Either.right(new RegExp(pattern, flags))
    } catch (error) {
      return Either.left(error instanceof Error ? error.message : String(error))
    }
  }
}

const test = (rules: Rules | undefined, relative: string, isDirectory: boolean): Match =>
  rules === undefined || relative === "" ? "none" : rules.match(relative, isDirectory)

/** ripgrep's `matched_ignore`: per kind, the deepest level that says anything decides; kinds in precedence order. */
const matchIgnoreFiles = (levels: ReadonlyArray<Level>, absolute: string, isDirectory: boolean): Match => {
  let custom: Match = "none"
  let dotIgnore: Match = "none"
  let git: Match = "none"
  let exclude: Match = "none"
  let sawGit = false
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!
    const relative = absolute.slice(level.dir.length).replace(/^\/+/, "")
    if (custom === "none") custom = test(level.rgignore, relative, isDirectory)
    if (dotIgnore === "none") dotIgnore = test(level.ignore, relative, isDirectory)
    if (!sawGit) {
      if (git === "none") git = test(level.gitignore, relative, isDirectory)
      if (exclude === "none") exclude = test(level.exclude, relative, isDirectory)
    }
    sawGit = sawGit || level.hasGit
  }
  return custom !== "none" ? custom : dotIgnore !== "none" ? dotIgnore : git !== "none" ? git : exclude
}

const loadLevel = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  dir: string,
  names: ReadonlyArray<string>
): Effect.Effect<Level> =>
  Effect.gen(function*() {
    const read = (name: string) =>
      names.includes(name)
        ? fs.readFileString(path.join(dir, name)).pipe(
          Effect.map((text): Rules | undefined => GrepQuery.parseIgnoreFile(text)),
          Effect.orElseSucceed(() => undefined)
        )
        : Effect.succeed(undefined)
    const [rgignore, dotIgnore, gitignore] = yield* Effect.forEach(IGNORE_FILES, read)
    const hasGit = names.includes(".git")
    const exclude = hasGit
      ? yield* fs.readFileString(path.join(dir, ".git", "info", "exclude")).pipe(
        Effect.map((text): Rules | undefined => GrepQuery.parseIgnoreFile(text)),
        Effect.orElseSucceed(() => undefined)
      )
      : undefined
    return { dir, rgignore, ignore: dotIgnore, gitignore, exclude, hasGit }
  })

/** The ignore files of the search root's parent directories (ripgrep reads them too). */
const parentLevels = (fs: FileSystem.FileSystem, path: Path.Path, root: string): Effect.Effect<Array<Level>> =>
  Effect.gen(function*() {
    const parents: Array<string> = []
    let current = path.dirname(root)
    for (;;) {
      parents.unshift(current)
      const up = path.dirname(current)
      if (up === current) break
      current = up
    }
    return yield* Effect.forEach(parents, (dir) =>
      fs.readDirectory(dir).pipe(
        Effect.orElseSucceed((): Array<string> => []),
        Effect.flatMap((names) => loadLevel(fs, path, dir, names))
      ))
  })

interface Candidate {
  readonly path: string
}

/**
 * The files ripgrep would search under `root`, walking through the
 * `FileSystem` service.
 */
const walk = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  query: GrepQuery.Query,
  overrides: GrepQuery.Overrides | undefined
): Effect.Effect<ReadonlyArray<Candidate>> =>
  Effect.gen(function*() {
    const isType = query.type === undefined ? undefined : GrepQuery.typeMatcher(query.type)
    const files: Array<Candidate> = []
    const root = query.root

    const visit = (dir: string, levels: ReadonlyArray<Level>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): Array<string> => []))
        const here = [...levels, yield* loadLevel(fs, path, dir, names)]
        const subdirectories: Array<string> = []
        yield* Effect.forEach(names, (name) =>
          Effect.gen(function*() {
            const absolute = path.join(dir, name)
            const info = yield* Effect.option(fs.stat(absolute))
            if (Option.isNone(info)) return
            const isDirectory = info.value.type === "Directory"
            if (!isDirectory && info.value.type !== "File") return
            if (!included(absolute, name, isDirectory, here)) return
            if (isDirectory) {
              // Links to directories are not followed (ripgrep's default).
              if (yield* Effect.isSuccess(fs.readLink(absolute))) return
              subdirectories.push(absolute)
            } else {
              files.push({ path: absolute })
            }
          }), { concurrency: CONCURRENCY, discard: true })
        yield* Effect.forEach(subdirectories, (sub) => visit(sub, here), { concurrency: CONCURRENCY, discard: true })
      })

    const included = (absolute: string, name: string, isDirectory: boolean, levels: ReadonlyArray<Level>): boolean => {
      if (overrides !== undefined) {
        const verdict = GrepQuery.overrideVerdict(overrides, absolute.slice(root.length + 1), isDirectory)
        if (verdict === "include") return true
        if (verdict === "exclude") return false
      }
      let whitelisted = false
      const ignored = matchIgnoreFiles(levels, absolute, isDirectory)
      if (ignored === "ignore") return false
      if (ignored === "whitelist") whitelisted = true
      if (isType !== undefined && !isDirectory) {
        if (!isType(name)) return false
        whitelisted = true
      }
      return whitelisted || !name.startsWith(".")
    }

    yield* visit(root, yield* parentLevels(fs, path, root))
    return files
  })

/** 1-based line numbers of the lines that are part of a match. */
const matchedLineNumbers = (
  text: string,
  lines: ReadonlyArray<string>,
  lineStarts: ReadonlyArray<number>,
  regex: RegExp,
  multiline: boolean
): Array<number> => {
  if (!multiline) {
    const matched: Array<number> = []
    for (let i = 0; i < lines.length; i++) {
      if (regex.test(lines[i]!)) matched.push(i + 1)
    }
    return matched
  }
  const lineOf = (offset: number) => {
    let low = 0
    let high = lineStarts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if (lineStarts[mid]! <= offset) low = mid
      else high = mid - 1
    }
    return low + 1
  }
  const matched = new Set<number>()
  regex.lastIndex = 0
  for (;;) {
    const match = regex.exec(text)
    // A match at the very end (after the last line) is past every line, as ripgrep counts it.
    if (match === null || match.index >= text.length) break
    const end = match.index + match[0].length
    const first = lineOf(match.index)
    const last = end > match.index ? lineOf(end - 1) : first
    for (let line = first; line <= last; line++) matched.add(line)
    if (match[0].length === 0) regex.lastIndex++
  }
  return [...matched].sort((a, b) => a - b)
}

const searchFile = (
  fs: FileSystem.FileSystem,
  file: string,
  query: GrepQuery.Query,
  regex: RegExp,
  prefilter: RegExp | undefined
): Effect.Effect<Option.Option<GrepQuery.FileResult>> =>
  Effect.gen(function*() {
    const bytes = yield* Effect.option(fs.readFile(file))
    if (Option.isNone(bytes) || bytes.value.indexOf(0) !== -1) return Option.none()
    const text = Files.decode(bytes.value)
    if (prefilter !== undefined && !prefilter.test(text)) return Option.none()
    const lines = text.split("\n")
    if (lines[lines.length - 1] === "") lines.pop()
    const lineStarts: Array<number> = []
    if (query.multiline) {
      let offset = 0
      for (const line of lines) {
        lineStarts.push(offset)
        offset += line.length + 1
      }
    }
    const matched = matchedLineNumbers(text, lines, lineStarts, regex, query.multiline)
    if (matched.length === 0) return Option.none()
    return Option.some({
      path: file,
      matchedLines: matched.length,
      lines: query.mode === "content"
        ? GrepQuery.withContext(matched, (n) => lines[n - 1] ?? "", lines.length, query.before, query.after)
        : []
    })
  })

/**
 * Search like ripgrep. Fails with the reason when the pattern does not
 * compile or the type is unknown.
 *
 * @internal
 */
export const search = (
  query: GrepQuery.Query
): Effect.Effect<ReadonlyArray<GrepQuery.FileResult>, string, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const regex = compileRegex(query.pattern, query)
    if (Either.isLeft(regex)) return yield* Effect.fail(`regex parse error: ${regex.left}`)
    if (query.type !== undefined && GrepQuery.FILE_TYPES[query.type] === undefined) {
      return yield* Effect.fail(`unrecognized file type: ${query.type}`)
    }
    const overrides = query.globs.length === 0 ? Either.right(undefined) : GrepQuery.compileOverrides(query.globs)
    if (Either.isLeft(overrides)) return yield* Effect.fail(overrides.left)
    // One scan of the whole text rejects most files at native speed; per-line matching then runs only on files that
    // can match. (A negative lookaround can match in a line alone but not in the whole text, so it gets no prefilter.)
    const prefilter = query.multiline || /\(\?<?!/.test(query.pattern)
      ? undefined
      : new RegExp(regex.right.source, `${regex.right.flags.replace("g", "")}m`)
    const files = query.rootIsFile ? [{ path: query.root }] : yield* walk(fs, path, query, overrides.right)
    const results = yield* Effect.forEach(
      files,
      (file) => searchFile(fs, file.path, query, regex.right, prefilter),
      { concurrency: CONCURRENCY }
    )
    return results.flatMap((result) => Option.isSome(result) ? [result.value] : [])
  })
