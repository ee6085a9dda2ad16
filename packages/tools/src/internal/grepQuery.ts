/**
 * What both Grep engines share: the query, the file types, the result model
 * and the output format; and, for the built-in engine, ripgrep's reading of
 * ignore files, `--glob`s and type globs. Both engines produce `FileResult`s;
 * one formatter turns them into what the model reads, so the two engines give
 * the same text for the same tree.
 *
 * Gitignore matching is the `ignore` package's. ripgrep compiles the same
 * syntax with its globset crate, which adds `{a,b}` alternation (nested
 * groups since ripgrep 15): the alternatives are expanded here before the
 * lines reach `ignore`. In the few corners where globset and git read a glob
 * differently, the built-in engine reads it as git does: POSIX classes
 * (`[[:digit:]]`), which ripgrep does not know, and a `\` inside a class,
 * which ripgrep takes literally.
 *
 * @internal
 */
import * as Either from "effect/Either"
import ignore from "ignore"

/** @internal */
export type OutputMode = "files_with_matches" | "content" | "count"

/** @internal */
export interface Query {
  readonly pattern: string
  /** Absolute path of the directory or file searched. */
  readonly root: string
  readonly rootIsFile: boolean
  /** Globs from the `glob` parameter, each as ripgrep's `--glob` takes it (`!` negates). */
  readonly globs: ReadonlyArray<string>
  readonly type: string | undefined
  readonly caseInsensitive: boolean
  readonly multiline: boolean
  readonly mode: OutputMode
  readonly before: number
  readonly after: number
}

/** @internal */
export interface ResultLine {
  readonly number: number
  readonly text: string
  readonly match: boolean
}

/** @internal */
export interface FileResult {
  /** Absolute path. */
  readonly path: string
  /** Lines that are part of a match. */
  readonly matchedLines: number
  /** Match and context lines in line order (content mode only). */
  readonly lines: ReadonlyArray<ResultLine>
}

/**
 * File types as ripgrep 14 defines them. Both engines use this table (the
 * ripgrep runner passes it with `--type-add`), so a type means the same files
 * whatever ripgrep version is installed.
 *
 * @internal
 */
export const FILE_TYPES: Readonly<Record<string, ReadonlyArray<string>>> = {
  asm: ["*.S", "*.asm", "*.s"],
  c: ["*.[chH]", "*.[chH].in", "*.cats"],
  clojure: ["*.clj", "*.cljc", "*.cljs", "*.cljx"],
  cmake: ["*.cmake", "CMakeLists.txt"],
  config: ["*.cfg", "*.conf", "*.config", "*.ini"],
  cpp: [
    "*.[ChH]",
    "*.[ChH].in",
    "*.[ch]pp",
    "*.[ch]pp.in",
    "*.[ch]xx",
    "*.[ch]xx.in",
    "*.cc",
    "*.cc.in",
    "*.hh",
    "*.hh.in",
    "*.inl"
  ],
  cs: ["*.cs"],
  csharp: ["*.cs"],
  css: ["*.css", "*.scss"],
  csv: ["*.csv"],
  dart: ["*.dart"],
  docker: ["*Dockerfile*"],
  elixir: ["*.eex", "*.ex", "*.exs", "*.heex", "*.leex", "*.livemd"],
  erlang: ["*.erl", "*.hrl"],
  go: ["*.go"],
  gradle: ["*.gradle", "*.gradle.kts"],
  graphql: ["*.graphql", "*.graphqls"],
  haskell: ["*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"],
  html: ["*.ejs", "*.htm", "*.html"],
  java: ["*.java", "*.jsp", "*.jspx", "*.properties"],
  js: ["*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"],
  json: ["*.json", "composer.lock", "*.sarif"],
  jsonl: ["*.jsonl"],
  kotlin: ["*.kt", "*.kts"],
  less: ["*.less"],
  lock: ["*.lock", "package-lock.json"],
  lua: ["*.lua"],
  make: [
    "*.mak",
    "*.mk",
    "[Gg][Nn][Uu]makefile",
    "[Mm]akefile",
    "[Gg][Nn][Uu]makefile.am",
    "[Mm]akefile.am",
    "[Gg][Nn][Uu]makefile.in",
    "[Mm]akefile.in"
  ],
  markdown: ["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"],
  md: ["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"],
  nix: ["*.nix"],
  objc: ["*.h", "*.m"],
  ocaml: ["*.ml", "*.mli", "*.mll", "*.mly"],
  perl: ["*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"],
  php: ["*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"],
  protobuf: ["*.proto"],
  py: ["*.py", "*.pyi"],
  python: ["*.py", "*.pyi"],
  r: ["*.R", "*.r", "*.Rmd", "*.Rnw"],
  rst: ["*.rst"],
  ruby: ["*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"],
  rust: ["*.rs"],
  sass: ["*.sass", "*.scss"],
  scala: ["*.sbt", "*.scala"],
  sh: [
    "*.bash",
    "*.bashrc",
    "*.csh",
    "*.cshrc",
    "*.ksh",
    "*.kshrc",
    "*.sh",
    "*.tcsh",
    "*.zsh",
    ".bash_login",
    ".bash_logout",
    ".bash_profile",
    ".bashrc",
    ".cshrc",
    ".kshrc",
    ".login",
    ".logout",
    ".profile",
    ".tcshrc",
    ".zlogin",
    ".zlogout",
    ".zprofile",
    ".zshenv",
    ".zshrc"
  ],
  sql: ["*.psql", "*.sql"],
  svelte: ["*.svelte"],
  svg: ["*.svg"],
  swift: ["*.swift"],
  tex: ["*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"],
  tf: ["*.tf", "*.tfvars"],
  toml: ["*.toml", "Cargo.lock"],
  ts: ["*.cts", "*.mts", "*.ts", "*.tsx"],
  typescript: ["*.cts", "*.mts", "*.ts", "*.tsx"],
  txt: ["*.txt"],
  vim: ["*.vim", ".vimrc", ".gvimrc", "vimrc", "gvimrc"],
  vue: ["*.vue"],
  xml: ["*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"],
  yaml: ["*.yaml", "*.yml"],
  zig: ["*.zig"]
}

/**
 * Split the `glob` parameter like Claude Code's Grep: on whitespace, and on
 * commas outside braces (`*.{ts,tsx}` stays one glob).
 *
 * @internal
 */
export const splitGlobParameter = (glob: string | undefined): ReadonlyArray<string> => {
  if (glob === undefined) return []
  const globs: Array<string> = []
  for (const raw of glob.split(/\s+/)) {
    if (raw === "") continue
    if (raw.includes("{") && raw.includes("}")) globs.push(raw)
    else globs.push(...raw.split(",").filter((part) => part !== ""))
  }
  return globs
}

/**
 * What one set of rules says about a path: the last rule that matches it
 * decides; a `!` rule whitelists.
 *
 * @internal
 */
export type Match = "ignore" | "whitelist" | "none"

/**
 * The rules of one ignore file, or the `glob` parameter's globs, matched by
 * the `ignore` package.
 *
 * @internal
 */
export interface Rules {
  /**
   * The verdict on one path (relative to the rules' directory,
   * `/`-separated) by itself, as ripgrep's `Gitignore::matched` gives it:
   * what the rules say about the path's parent directories does not count.
   */
  readonly match: (relative: string, isDirectory: boolean) => Match
}

// ripgrep matches ignore files, globs and types case-sensitively; `ignore` defaults to case-insensitive.
const IGNORE_OPTIONS = { ignorecase: false }

const makeRules = (lines: ReadonlyArray<string>): Rules => {
  // `ignore` also counts a path as ignored when its rules ignore one of its parent directories: that is how git
  // reads one .gitignore. ripgrep judges every path by itself, because its walk has already decided each parent
  // directory across all the ignore files (a deeper `!build/` re-includes what a higher `build/` excluded; an
  // explicitly given root is searched even inside an ignored directory). So paths `depth` segments deep are
  // tested against the rules followed by `!/*/`, `!/*/*/`, ... (`depth - 1` of them): those un-ignore every
  // shallower directory and never match the path itself.
  const byDepth: Array<ignore.Ignore> = []
  byDepth[1] = ignore(IGNORE_OPTIONS).add(lines)
  const atDepth = (depth: number): ignore.Ignore => {
    let rules = byDepth[depth]
    if (rules === undefined) {
      rules = ignore(IGNORE_OPTIONS).add(atDepth(depth - 1)).add(`!/${"*/".repeat(depth - 1)}`)
      byDepth[depth] = rules
    }
    return rules
  }
  return {
    match: (relative, isDirectory) => {
      let depth = 1
      for (let slash = relative.indexOf("/"); slash !== -1; slash = relative.indexOf("/", slash + 1)) depth++
      const result = atDepth(depth).test(isDirectory ? `${relative}/` : relative)
      return result.ignored ? "ignore" : result.unignored ? "whitelist" : "none"
    }
  }
}

/** Where the `[...]` class opened at `start` closes (its first member may be `]`, as in globset), or -1. */
const classEnd = (glob: string, start: number): number => {
  const first = glob[start + 1] === "!" || glob[start + 1] === "^" ? start + 2 : start + 1
  return glob.indexOf("]", first + 1)
}

/**
 * Every glob that `{a,b}` alternation (nested groups too) stands for, as
 * globset reads it: `\` escapes, classes keep their braces and commas,
 * empty alternatives match nothing.
 */
const expandBraces = (glob: string): Either.Either<ReadonlyArray<string>, string> => {
  let open = -1
  let depth = 0
  const commas: Array<number> = []
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]
    if (char === "\\") {
      i++
    } else if (char === "[") {
      const end = classEnd(glob, i)
      if (end !== -1) i = end
    } else if (char === "{") {
      if (depth++ === 0) open = i
    } else if (char === "," && depth === 1) {
      commas.push(i)
    } else if (char === "}") {
      if (depth === 0) return Either.left("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
      if (--depth > 0) continue
      const bounds = [open, ...commas, i]
      const alternatives = bounds.slice(1).map((end, k) => glob.slice(bounds[k]! + 1, end)).filter((alt) => alt !== "")
      return Either.map(
        Either.all(
          (alternatives.length > 0 ? alternatives : [""]).map((alternative) =>
            expandBraces(`${glob.slice(0, open)}${alternative}${glob.slice(i + 1)}`)
          )
        ),
        (expanded) => expanded.flat()
      )
    }
  }
  return depth > 0
    ? Either.left("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
    : Either.right([glob])
}

const hasInnerSlash = (glob: string) => glob.replace(/\/$/, "").includes("/")

/**
 * One line of gitignore syntax as ripgrep reads it before compiling its glob
 * (`GitignoreBuilder::add_line`), turned into lines `ignore` takes the same
 * way: trailing whitespace is trimmed unless escaped (`\ `), and `{a,b}`
 * alternation, which ripgrep supports and git does not, becomes one line per
 * alternative, anchored like the whole line (a slash before its end anchors
 * it at its directory).
 */
const readLine = (raw: string): Either.Either<ReadonlyArray<string>, string> => {
  const line = raw.endsWith("\\ ") ? raw : raw.trimEnd()
  if (line.startsWith("#") || (!line.includes("{") && !line.includes("}"))) return Either.right([line])
  let head = ""
  let body = line
  if (!body.startsWith("\\!") && !body.startsWith("\\#")) {
    if (body.startsWith("!")) {
      head = "!"
      body = body.slice(1)
    }
    if (body.startsWith("/")) {
      head += "/"
      body = body.slice(1)
    }
  }
  const anchor = !head.endsWith("/") && hasInnerSlash(body)
  return Either.map(
    expandBraces(body),
    (globs) =>
      globs.filter((glob) => glob !== "").map((glob) =>
        anchor && !hasInnerSlash(glob)
          ? `${head}/${glob}`
          // An alternative must not turn into a comment or a negation.
          : head === "" && (glob.startsWith("!") || glob.startsWith("#"))
          ? `\\${glob}`
          : `${head}${glob}`
      )
  )
}

/**
 * The rules of an ignore file (`.gitignore`, `.ignore`, `.rgignore`,
 * `.git/info/exclude`). Lines ripgrep cannot compile are skipped, as ripgrep
 * does.
 *
 * @internal
 */
export const parseIgnoreFile = (text: string): Rules =>
  makeRules(text.split(/\r?\n/).flatMap((line) => Either.getOrElse(readLine(line), () => [])))

/** @internal */
export interface Overrides {
  readonly rules: Rules
  /** Whether any glob includes (is not `!`-negated): then files no glob matches are excluded. */
  readonly includes: boolean
}

/** ripgrep's errors for a `--glob` beyond unbalanced braces. */
const globError = (glob: string): string | undefined => {
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === "\\") {
      if (++i === glob.length) return "dangling '\\'"
    } else if (glob[i] === "[") {
      const end = classEnd(glob, i)
      if (end === -1) return "unclosed character class; missing ']'"
      i = end
    }
  }
  return undefined
}

/**
 * The `glob` parameter's globs as ripgrep's `--glob` overrides: each is a
 * gitignore line, inverted (a plain glob includes, `!glob` excludes). Fails
 * with ripgrep's message for a glob it refuses. (The walk matches them
 * against paths below the search root; ripgrep matches them below its
 * working directory, which differs for a glob with a slash when `path` is a
 * subdirectory.)
 *
 * @internal
 */
export const compileOverrides = (globs: ReadonlyArray<string>): Either.Either<Overrides, string> =>
  Either.map(
    Either.all(globs.map((glob) =>
      Either.flatMap(readLine(glob), (lines) => {
        const error = globError(glob)
        return error === undefined ? Either.right(lines) : Either.left(error)
      }).pipe(Either.mapLeft((error) => `error parsing glob '${glob}': ${error}`))
    )),
    (read) => {
      const lines = read.flat()
      const includes = lines.some((line) => line !== "" && !line.startsWith("!") && !line.startsWith("#"))
      return { rules: makeRules(lines), includes }
    }
  )

/** @internal */
export type Verdict = "include" | "exclude" | "none"

/**
 * ripgrep's override rule for `--glob`s: the last glob that matches decides
 * (a plain glob includes, `!glob` excludes); a file that matches none is
 * excluded when any plain glob was given. Directories are only ever excluded
 * by a match. `relative` is the path below the search root, `/`-separated.
 *
 * @internal
 */
export const overrideVerdict = (overrides: Overrides, relative: string, isDirectory: boolean): Verdict => {
  const match = overrides.rules.match(relative, isDirectory)
  // A plain glob is an ignore rule turned around (ripgrep inverts the gitignore match).
  if (match === "ignore") return "include"
  if (match === "whitelist") return "exclude"
  if (!isDirectory && overrides.includes) return "exclude"
  return "none"
}

/**
 * Whether a file's name is of the type (ripgrep matches type globs against
 * the file name only).
 *
 * @internal
 */
export const typeMatcher = (type: string): ((name: string) => boolean) | undefined => {
  const globs = FILE_TYPES[type]
  if (globs === undefined) return undefined
  const rules = ignore(IGNORE_OPTIONS).add(globs)
  return (name) => rules.ignores(name)
}

/**
 * The most characters of one line shown in content mode.
 *
 * @internal
 */
export const MAX_LINE_CHARS = 500

const displayLine = (text: string): string => {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}... [line truncated]` : line
}

/** @internal */
export interface FormatOptions {
  readonly mode: OutputMode
  readonly lineNumbers: boolean
  readonly context: boolean
  readonly headLimit: number | undefined
  readonly offset: number
}

const paginate = <A>(items: ReadonlyArray<A>, options: FormatOptions) => {
  const end = options.headLimit === undefined || options.headLimit === 0
    ? items.length
    : options.offset + options.headLimit
  const page = items.slice(options.offset, end)
  const limited = options.offset > 0 || end < items.length
  return { page, limited }
}

const paginationNote = (options: FormatOptions) =>
  `[Showing results with pagination = limit: ${options.headLimit ?? "none"}, offset: ${options.offset}]`

/**
 * The text the model reads. `files` are already in output order.
 *
 * @internal
 */
export const format = (files: ReadonlyArray<FileResult>, options: FormatOptions): string => {
  switch (options.mode) {
    case "files_with_matches": {
      if (files.length === 0) return "No files found"
      const { page, limited } = paginate(files.map((file) => file.path), options)
      const head = `Found ${files.length} file${files.length === 1 ? "" : "s"}`
      return limited
        ? `${head} ${paginationNote(options)}\n${page.join("\n")}`
        : `${head}\n${page.join("\n")}`
    }
    case "count": {
      if (files.length === 0) return "No matches found"
      const { page, limited } = paginate(files.map((file) => `${file.path}:${file.matchedLines}`), options)
      const total = files.reduce((sum, file) => sum + file.matchedLines, 0)
      const summary = `Found ${total} total ${total === 1 ? "occurrence" : "occurrences"} across ${files.length} ` +
        `file${files.length === 1 ? "" : "s"}.`
      return [page.join("\n"), "", limited ? `${summary} ${paginationNote(options)}` : summary].join("\n")
    }
    case "content": {
      const out: Array<string> = []
      for (const file of files) {
        let previous: number | undefined
        for (const line of file.lines) {
          // ripgrep's separator between non-adjacent groups (and between files) when context is shown.
          if (options.context && out.length > 0 && (previous === undefined || line.number !== previous + 1)) {
            out.push("--")
          }
          const separator = line.match ? ":" : "-"
          out.push(
            options.lineNumbers
              ? `${file.path}${separator}${line.number}${separator}${displayLine(line.text)}`
              : `${file.path}${separator}${displayLine(line.text)}`
          )
          previous = line.number
        }
      }
      if (out.length === 0) return "No matches found"
      const { page, limited } = paginate(out, options)
      return limited ? `${page.join("\n")}\n\n${paginationNote(options)}` : page.join("\n")
    }
  }
}

/**
 * The lines to show for these matched line numbers (sorted, 1-based), with
 * `before`/`after` lines of context, merged where they overlap.
 *
 * @internal
 */
export const withContext = (
  matched: ReadonlyArray<number>,
  lineText: (lineNumber: number) => string,
  totalLines: number,
  before: number,
  after: number
): ReadonlyArray<ResultLine> => {
  const isMatch = new Set(matched)
  const lines: Array<ResultLine> = []
  let next = 1
  for (const number of matched) {
    const from = Math.max(next, number - before, 1)
    const to = Math.min(number + after, totalLines)
    for (let n = from; n <= to; n++) lines.push({ number: n, text: lineText(n), match: isMatch.has(n) })
    next = Math.max(next, to + 1)
  }
  return lines
}
