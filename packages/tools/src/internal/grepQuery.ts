/**
 * What both Grep engines share: the query, the file types, ripgrep's glob
 * semantics (for `glob` and `type` in the built-in engine), the result model
 * and the output format. Both engines produce `FileResult`s; one formatter
 * turns them into what the model reads, so the two engines give the same
 * text for the same tree.
 *
 * @internal
 */

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
  cpp: ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh",
    "*.hh.in", "*.inl"],
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
  make: ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am",
    "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in"],
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
  sh: ["*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login",
    ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc",
    ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc"],
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

/** @internal */
export interface CompiledGlob {
  readonly regex: RegExp
  /** `!glob`: re-includes in an ignore file; excludes as a `--glob` override. */
  readonly negated: boolean
  /** `dir/`: matches directories only. */
  readonly directoryOnly: boolean
}

/**
 * Compile one gitignore line the way ripgrep's `ignore` crate does
 * (`GitignoreBuilder::add_line`), for ignore files and for `--glob`
 * overrides alike: `!` negates (`\!`, `\#` escape), a trailing `/` matches
 * directories only, a slash anywhere else anchors the glob at its base
 * directory, no slash matches the name at any depth (`**/` prefix), and a
 * trailing `/**` matches what is inside but not the directory itself. In the
 * glob, `*` and `?` stop at `/`, `**` crosses directories, `{a,b}`, `[a-z]`,
 * `[!a]` and `\x` work as usual. `undefined` for comments and blank lines.
 *
 * @internal
 */
export const compileGlob = (line: string): CompiledGlob | undefined => {
  if (line.startsWith("#")) return undefined
  let pattern = line.endsWith("\\ ") ? line : line.trimEnd()
  if (pattern === "") return undefined
  let negated = false
  let anchored = false
  if (pattern.startsWith("\\!") || pattern.startsWith("\\#")) {
    pattern = pattern.slice(1)
  } else {
    if (pattern.startsWith("!")) {
      negated = true
      pattern = pattern.slice(1)
    }
    if (pattern.startsWith("/")) {
      pattern = pattern.slice(1)
      anchored = true
    }
  }
  let directoryOnly = false
  if (pattern.endsWith("/")) {
    directoryOnly = true
    pattern = pattern.slice(0, -1)
    if (pattern.endsWith("\\")) pattern = pattern.slice(0, -1)
  }
  if (!anchored && !pattern.includes("/") && !pattern.startsWith("**/")) pattern = `**/${pattern}`
  if (pattern.endsWith("/**")) pattern = `${pattern}/*`
  return { regex: new RegExp(`^${globBody(pattern)}$`), negated, directoryOnly }
}

/**
 * The rules of an ignore file (`.gitignore`, `.ignore`, `.rgignore`), in order.
 * Lines that do not compile are skipped, as ripgrep does.
 *
 * @internal
 */
export const parseIgnoreFile = (text: string): ReadonlyArray<CompiledGlob> =>
  text.split(/\r?\n/).flatMap((line) => {
    try {
      const compiled = compileGlob(line)
      return compiled === undefined ? [] : [compiled]
    } catch {
      return []
    }
  })

/**
 * How an ignore file's rules judge one path (relative to the file's
 * directory): the last matching rule decides, a negated one whitelists. Only
 * the path itself is tested, not its parents (as ripgrep's
 * `Gitignore::matched`): a walk never reaches below an ignored directory, and
 * a deeper ignore file may re-include what a higher one excluded.
 *
 * @internal
 */
export const matchIgnoreRules = (
  rules: ReadonlyArray<CompiledGlob>,
  relative: string,
  isDirectory: boolean
): "ignore" | "whitelist" | "none" => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (rule.directoryOnly && !isDirectory) continue
    if (rule.regex.test(relative)) return rule.negated ? "whitelist" : "ignore"
  }
  return "none"
}

const escapeRegExp = (char: string) => (/[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char)

const globBody = (pattern: string): string => {
  let out = ""
  let i = 0
  let braceDepth = 0
  while (i < pattern.length) {
    const char = pattern[i]!
    if (char === "*") {
      if (pattern[i + 1] === "*") {
        const atStart = i === 0 || pattern[i - 1] === "/"
        const atEnd = i + 2 === pattern.length || pattern[i + 2] === "/"
        if (atStart && atEnd) {
          if (i + 2 === pattern.length) {
            // Trailing `**`: everything below (gitignore `dir/**`), or everything at the very start.
            out += ".*"
            i += 2
          } else {
            // `**/`: zero or more directories.
            out += "(?:.*/)?"
            i += 3
          }
          continue
        }
        // `a**b` is two stars, which is one star.
        out += "[^/]*"
        i += 2
        continue
      }
      out += "[^/]*"
      i++
    } else if (char === "?") {
      out += "[^/]"
      i++
    } else if (char === "[") {
      const close = pattern.indexOf("]", i + 2)
      if (close === -1) {
        out += "\\["
        i++
        continue
      }
      let body = pattern.slice(i + 1, close)
      if (body.startsWith("!") || body.startsWith("^")) body = `^${body.slice(1)}`
      out += `[${body.replace(/\\/g, "\\\\")}]`
      i = close + 1
    } else if (char === "{") {
      braceDepth++
      out += "(?:"
      i++
    } else if (char === "}" && braceDepth > 0) {
      braceDepth--
      out += ")"
      i++
    } else if (char === "," && braceDepth > 0) {
      out += "|"
      i++
    } else if (char === "\\" && i + 1 < pattern.length) {
      out += escapeRegExp(pattern[i + 1]!)
      i += 2
    } else {
      out += escapeRegExp(char)
      i++
    }
  }
  if (braceDepth > 0) throw new Error(`unclosed alternate group in glob '${pattern}'`)
  return out
}

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
export const overrideVerdict = (
  globs: ReadonlyArray<CompiledGlob>,
  relative: string,
  isDirectory: boolean
): Verdict => {
  const match = matchIgnoreRules(globs, relative, isDirectory)
  // A plain glob is an ignore rule turned around (ripgrep inverts the gitignore match).
  if (match === "ignore") return "include"
  if (match === "whitelist") return "exclude"
  if (!isDirectory && globs.some((glob) => !glob.negated)) return "exclude"
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
  const compiled = globs.flatMap((glob) => compileGlob(glob) ?? [])
  return (name) => compiled.some((glob) => glob.regex.test(name))
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
  const end = options.headLimit === undefined || options.headLimit === 0 ? items.length : options.offset + options.headLimit
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
