/**
 * The program table: for each program the analyser knows, whether an
 * invocation is read-only and which paths it reads and writes (issue 3,
 * "Read-only shell commands"; issue 9, items 1, 2, 3, 8 and 12; issue 15's
 * footprint).
 *
 * Every program is parsed with its real option grammar (`shellOptions.ts`):
 * an option the grammar does not know, or one that writes or runs something,
 * makes the invocation not read-only. An argument whose value the parser
 * could not prove (an expansion, a glob) might become any option at run
 * time — `find . *` with a file named `-delete` in the directory — so
 * programs with such options reject it unless it comes after `--`, and its
 * path is unresolved.
 *
 * Decisions worth knowing:
 * - Only bare command names: `./ls` or `/tmp/ls` may be anything.
 * - `git`: no global options except `--no-pager`, `--no-optional-locks` and
 *   the pathspec switches; `-c`, `-C`, `--git-dir`, `--work-tree` are refused
 *   (they can point git at a configuration that runs programs). `git branch`
 *   and `git tag` take names only with an option that switches to listing
 *   (`--list`, `--contains`, …); `--sort`, `--format`, `--column`, `-v` do
 *   not (`git branch --sort=x name` creates `name`).
 * - `sed` with a script of selecting, printing and text commands; `s`
 *   without the `w`/`e` flags; no `-i`, `-f`, `w`, `W`, `r`, `R`, `e`
 *   (`-i` with such a script only edits its files: `onlyWritesPaths`).
 * - `awk` only with a program that has no `|`, `>`, `system`, `getline`,
 *   `close`, `fflush` or `@` (gawk's includes and indirect calls).
 * - `test`/`[`: the operands of arithmetic comparisons must be literal
 *   numbers and the operand of `-v`/`-R` a plain name — bash evaluates
 *   `a[$(cmd)]` there.
 * - `less`, `more` and `man` are interactive (pagers can run shell commands)
 *   and are not read-only.
 * - `xargs` is read-only only with plain batching options and a read-only
 *   command that stays read-only whatever arguments it is given; the names it
 *   feeds are unresolved paths.
 *
 * @internal
 */
import * as Options from "./shellOptions.js"

export type { Word } from "./shellOptions.js"
type Word = Options.Word

/** A path a command reads or writes, as written (relative to the command's working directory). */
export interface PathUse {
  readonly path: string
  /** The whole tree under the path (recursive readers, `rm -r`). */
  readonly subtree: boolean
  /** File contents (not only names and metadata) are read or written. */
  readonly content: boolean
}

/** What the table knows about one invocation. */
export interface Invocation {
  readonly readOnly: boolean
  readonly reads: ReadonlyArray<PathUse>
  readonly writes: ReadonlyArray<PathUse>
  /** Every path it touches is in `reads`/`writes` (no glob, expansion, list file or unknown program). */
  readonly pathsKnown: boolean
  /** A path argument could not be resolved (a glob, an expansion, a list of names); not set for unknown programs. */
  readonly unresolvedPaths: boolean
  /** Those path words as written; a list of names is `<names in FILE>`. */
  readonly unresolvedWords: ReadonlyArray<string>
  /** Its only effect is writing `writes` (no program run, no other file): `mkdir`, `rm`, `sed -i` with a plain script… */
  readonly onlyWritesPaths: boolean
}

const UNKNOWN: Invocation = {
  readOnly: false,
  reads: [],
  writes: [],
  pathsKnown: false,
  unresolvedPaths: false,
  unresolvedWords: [],
  onlyWritesPaths: false
}
const NO_PATHS: Invocation = {
  readOnly: true,
  reads: [],
  writes: [],
  pathsKnown: true,
  unresolvedPaths: false,
  unresolvedWords: [],
  onlyWritesPaths: false
}
const notReadOnly = (invocation: Invocation): Invocation => ({ ...invocation, readOnly: false })

interface Describe {
  (args: ReadonlyArray<Word>): Invocation
  /** The option grammar it parses with, when it has one (the execution oracle generates from it). */
  readonly grammar?: Options.Grammar
}

const withGrammar = (g: Options.Grammar, describe: (args: ReadonlyArray<Word>) => Invocation): Describe =>
  Object.assign(describe, { grammar: g })

/** Collects the paths of one invocation. */
class Paths {
  readonly reads: Array<PathUse> = []
  readonly writes: Array<PathUse> = []
  readonly unresolved: Array<string> = []
  known = true

  /** Some file this reads lists more names to read. */
  names(word: Word | undefined): void {
    this.known = false
    this.unresolved.push(`<names in ${word?.value ?? "standard input"}>`)
  }

  read(word: Word | undefined, subtree: boolean, content: boolean): void {
    this.add(this.reads, word, subtree, content)
  }

  write(word: Word | undefined, subtree: boolean): void {
    this.add(this.writes, word, subtree, true)
  }

  private add(list: Array<PathUse>, word: Word | undefined, subtree: boolean, content: boolean): void {
    if (word === undefined) return
    if (word.dynamic) {
      this.known = false
      this.unresolved.push(word.value)
      return
    }
    // `-` is standard input or output.
    if (word.value === "-") return
    list.push({ path: word.value, subtree, content })
  }

  done(readOnly: boolean, onlyWritesPaths = false): Invocation {
    return {
      readOnly,
      reads: this.reads,
      writes: this.writes,
      pathsKnown: this.known,
      unresolvedPaths: !this.known,
      unresolvedWords: this.unresolved,
      onlyWritesPaths
    }
  }
}

/** Reads the values of `read`, `names` and `scriptFile` options; `names` makes the paths unknown. */
const optionPaths = (parsed: Options.ParsedArguments, paths: Paths): void => {
  for (const option of parsed.options) {
    if (option.kind === "read" || option.kind === "scriptFile") paths.read(option.value, false, true)
    else if (option.kind === "names") {
      paths.read(option.value, false, true)
      paths.names(option.value)
    }
  }
}

interface ReaderSpec {
  /** Operands: all files, the first a pattern or script unless an option gave one, or none are paths. */
  readonly operands: "files" | "patternThenFiles" | "none"
  /** Contents are read (`cat`), or only names and metadata (`ls`, `stat`). */
  readonly content?: boolean
  /** Directory operands are descended into: always, or with a `recursive` option. */
  readonly recursive?: "always" | "option"
  /** With no file operand, the working directory is read (recursive readers, `ls`). */
  readonly defaultCwd?: "always" | "recursive"
  /** More file operands than this: the rest are outputs. */
  readonly maxFiles?: number
  /** Further conditions on the parsed arguments. */
  readonly check?: (parsed: Options.ParsedArguments) => boolean
}

/** A program that reads its operands and writes nothing but standard output. */
const reader = (g: Options.Grammar, spec: ReaderSpec): Describe => withGrammar(g, (args) => {
  const parsed = Options.parse(g, args)
  if (!parsed.ok) return UNKNOWN
  const paths = new Paths()
  optionPaths(parsed, paths)
  let operands = parsed.operands
  if (spec.operands === "none") operands = []
  const scriptGiven = parsed.options.some((option) => option.kind === "script" || option.kind === "scriptFile")
  if (spec.operands === "patternThenFiles" && !scriptGiven) operands = operands.slice(1)
  const recursive = spec.recursive === "always" ||
    (spec.recursive === "option" && parsed.options.some((option) => option.kind === "recursive"))
  const content = spec.content ?? true
  for (const operand of operands) paths.read(operand, recursive, content)
  if (operands.length === 0 && (spec.defaultCwd === "always" || (spec.defaultCwd === "recursive" && recursive))) {
    paths.read({ value: ".", dynamic: false }, true, content)
  }
  const fits = spec.maxFiles === undefined || operands.length <= spec.maxFiles
  return paths.done(fits && (spec.check?.(parsed) ?? true))
})

/** A program whose operands are not paths and that has no options that write. */
const noPaths: Describe = () => NO_PATHS

// --- coreutils and friends --------------------------------------------------

const ls = reader(
  Options.grammar(
    "a A b B c C d D f F g G h H i k l L m n N o p q Q r R* s S t T: u U v w: x X Z 1 I:",
    "all almost-all author escape block-size: ignore-backups color? directory dired classify? file-type format: " +
      "full-time group-directories-first no-group human-readable si dereference-command-line " +
      "dereference-command-line-symlink-to-dir hide: hyperlink? indicator-style: inode ignore: kibibytes literal " +
      "numeric-uid-gid quote-name quoting-style: reverse recursive* size sort: time: time-style: tabsize: width: " +
      "context zero help version"
  ),
  { operands: "files", content: false, recursive: "always", defaultCwd: "always" }
)

const cat = reader(
  Options.grammar(
    "A b e E n s t T u v",
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version"
  ),
  { operands: "files" }
)

const head = reader(
  Options.grammar("c: n: q v z", "bytes: lines: quiet silent verbose zero-terminated help version", {
    numericShort: true
  }),
  { operands: "files" }
)

const tail = reader(
  Options.grammar(
    "c: f F n: q s: v z",
    "bytes: follow? lines: max-unchanged-stats: pid: quiet silent retry sleep-interval: verbose zero-terminated " +
      "debug help version",
    { numericShort: true }
  ),
  { operands: "files" }
)

const wc = reader(
  Options.grammar("c m l L w", "bytes chars lines files0-from@ max-line-length words total: debug help version"),
  { operands: "files" }
)

const GREP = Options.grammar(
  "E F G P e% f# i y w x z s v V b H h n l L o q c r* R* m: A: B: C: a I d: D: T U u Z",
  "extended-regexp fixed-strings basic-regexp perl-regexp regexp% file# ignore-case no-ignore-case word-regexp " +
    "line-regexp null-data no-messages invert-match version help max-count: byte-offset line-number " +
    "no-line-number line-buffered with-filename no-filename label: only-matching quiet silent binary-files: text " +
    "directories: devices: recursive* dereference-recursive* include: exclude: exclude-from< exclude-dir: " +
    "files-without-match files-with-matches count initial-tab null before-context: after-context: context: " +
    "group-separator: no-group-separator color? colour? binary unix-byte-offsets",
  { numericShort: true }
)

const grep: Describe = withGrammar(GREP, (args) => {
  const parsed = Options.parse(GREP, args)
  // `-d recurse` is `-r`.
  const recurse = Options.valuesOf(parsed, "d", "directories").some((word) => "recurse".startsWith(word.value))
  return reader(GREP, {
    operands: "patternThenFiles",
    recursive: recurse ? "always" : "option",
    defaultCwd: "recursive"
  })(args)
})

const RG = Options.grammar(
  "A: B: C: c d: E: e% f# F g: H h i I j: L l M: m: N n o p P q r: S s T: t: u U V v w x z 0 a b",
  "after-context: before-context: context: count count-matches case-sensitive color: colors: column no-column " +
    "context-separator: no-context-separator debug trace dfa-size-limit: encoding: no-encoding engine: " +
    "field-context-separator: field-match-separator: file# files files-with-matches files-without-match " +
    "fixed-strings no-fixed-strings follow no-follow glob: iglob: glob-case-insensitive no-glob-case-insensitive " +
    "heading no-heading hidden no-hidden ignore-case ignore-file< ignore-file-case-insensitive " +
    "no-ignore-file-case-insensitive include-zero no-include-zero invert-match no-invert-match json no-json " +
    "line-buffered no-line-buffered line-number no-line-number line-regexp max-columns: max-columns-preview " +
    "no-max-columns-preview max-count: max-depth: max-filesize: mmap no-mmap multiline no-multiline " +
    "multiline-dotall no-multiline-dotall no-config no-ignore no-ignore-dot no-ignore-exclude no-ignore-files " +
    "no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-messages no-pcre2-unicode " +
    "no-require-git null null-data one-file-system no-one-file-system only-matching passthru path-separator: pcre2 " +
    "no-pcre2 pcre2-version pre! pre-glob! pretty quiet regex-size-limit: regexp% replace: search-zip " +
    "no-search-zip smart-case sort: sortr: stats no-stats stop-on-nonmatch text no-text threads: trim no-trim " +
    "type: type-not: type-add: type-clear: type-list unrestricted vimgrep with-filename no-filename word-regexp " +
    "auto-hybrid-regex no-auto-hybrid-regex binary no-binary block-buffered no-block-buffered byte-offset " +
    "no-byte-offset crlf no-crlf hyperlink-format: hostname-bin! help version no-unicode unicode generate: " +
    "sort-files no-sort-files"
)

const rg: Describe = withGrammar(RG, (args) => {
  const parsed = Options.parse(RG, args)
  if (!parsed.ok) return UNKNOWN
  if (Options.has(parsed, "type-list", "version", "V", "help", "h", "pcre2-version", "generate")) return NO_PATHS
  // `--files` takes no pattern and reads only names.
  const files = Options.has(parsed, "files")
  return reader(RG, {
    operands: files ? "files" : "patternThenFiles",
    content: !files,
    recursive: "always",
    defaultCwd: "always"
  })(args)
})

const FIND_FORBIDDEN = new Set([
  "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"
])

/** find's primaries look like options, so every word must be static: a glob could become `-delete`. */
const find: Describe = (args) => {
  if (args.some((arg) => arg.dynamic || FIND_FORBIDDEN.has(arg.value))) return UNKNOWN
  const paths = new Paths()
  let i = 0
  // Leading options: -H -L -P, -D debugopts, -Olevel.
  while (i < args.length) {
    const value = args[i]!.value
    if (value === "-H" || value === "-L" || value === "-P" || /^-O\d$/.test(value)) i++
    else if (value === "-D") i += 2
    else if (value === "--") {
      i++
      break
    } else break
  }
  let roots = 0
  for (; i < args.length; i++) {
    const value = args[i]!.value
    if (value.startsWith("-") || value === "(" || value === "!" || value === ",") break
    paths.read(args[i], true, false)
    roots++
  }
  if (roots === 0) paths.read({ value: ".", dynamic: false }, true, false)
  // Primaries that read a file's contents or a list of names.
  for (; i < args.length; i++) {
    const value = args[i]!.value
    if (value === "-files0-from") {
      paths.read(args[i + 1], false, true)
      paths.names(args[i + 1])
    }
  }
  return paths.done(true)
}

const stat = reader(
  Options.grammar("c: f L t Z", "dereference file-system format: printf: terse cached: help version"),
  { operands: "files", content: false }
)

const realpath = reader(
  Options.grammar(
    "e m L P q s z",
    "canonicalize-existing canonicalize-missing logical physical quiet relative-to: relative-base: strip " +
      "no-symlinks zero help version"
  ),
  { operands: "files", content: false }
)

const readlink = reader(
  Options.grammar(
    "f e m n q s v z",
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero help version"
  ),
  { operands: "files", content: false }
)

const du = reader(
  Options.grammar(
    "0 a A B: b c D d: H h k L l m P S s t: X< x",
    "null all apparent-size block-size: bytes total dereference-args max-depth: human-readable inodes si " +
      "dereference count-links separate-dirs summarize threshold: time? time-style: exclude-from< exclude: " +
      "one-file-system no-dereference files0-from@ help version"
  ),
  { operands: "files", content: false, recursive: "always", defaultCwd: "always" }
)

const df = reader(
  Options.grammar(
    "a B: h H i k l P t: T x: v",
    "all block-size: human-readable si inodes local no-sync output? portability print-type sync total type: " +
      "exclude-type: help version"
  ),
  { operands: "files", content: false }
)

const cut = reader(
  Options.grammar(
    "b: c: d: f: n s z",
    "bytes: characters: delimiter: fields: complement only-delimited output-delimiter: zero-terminated help version"
  ),
  { operands: "files" }
)

const tr: Describe = (args) => {
  const parsed = Options.parse(
    Options.grammar("c C d s t", "complement delete squeeze-repeats truncate-set1 help version"),
    args
  )
  return parsed.ok ? NO_PATHS : UNKNOWN
}

const diff = reader(
  Options.grammar(
    "a b B c C: d D: e E f F: H i I: l n N p P q r* s S: t T u U: v w W: x: X< y Z",
    "normal brief report-identical-files context? unified? ed rcs side-by-side left-column " +
      "suppress-common-lines show-c-function show-function-line: label: expand-tabs initial-tab tabsize: " +
      "suppress-blank-empty paginate new-file unidirectional-new-file text recursive* no-dereference exclude: " +
      "exclude-from< starting-file: from-file< to-file< ignore-case ignore-tab-expansion ignore-trailing-space " +
      "ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines: minimal horizon-lines: " +
      "speed-large-files strip-trailing-cr width: color? palette: line-format: old-line-format: new-line-format: " +
      "unchanged-line-format: old-group-format: new-group-format: unchanged-group-format: changed-group-format: " +
      "ifdef: help version",
    { numericShort: true }
  ),
  { operands: "files", recursive: "option" }
)

const cmp: Describe = (args) => {
  const parsed = Options.parse(
    Options.grammar("b i: l n: s", "print-bytes ignore-initial: verbose bytes: quiet silent help version"),
    args
  )
  if (!parsed.ok || parsed.operands.length > 4) return UNKNOWN
  const paths = new Paths()
  // The third and fourth operands are byte offsets.
  for (const operand of parsed.operands.slice(0, 2)) paths.read(operand, false, true)
  return paths.done(true)
}

const comm = reader(
  Options.grammar("1 2 3 z", "check-order nocheck-order output-delimiter: total zero-terminated help version"),
  { operands: "files" }
)

const JQ = Options.grammar(
  "c n r j a s e S C M t h R L: f# V 0",
  "compact-output null-input raw-output raw-output0 join-output ascii-output slurp exit-status sort-keys " +
    "color-output monochrome-output tab indent: unbuffered stream stream-errors seq raw-input from-file# help " +
    "version build-configuration"
)

/** jq's options that take two words (`--arg name value`). */
const JQ_PAIRS: Readonly<Record<string, boolean>> = {
  "--arg": false,
  "--argjson": false,
  "--slurpfile": true,
  "--rawfile": true
}

/** jq loads modules and data files (`import "x" as $d`) from its library path: which files cannot be known statically. */
const JQ_MODULES = /\b(?:import|include|modulemeta)\b/

const jq: Describe = withGrammar(JQ, (args) => {
  const rest: Array<Word> = []
  const paths = new Paths()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (
      !arg.dynamic &&
      (JQ_MODULES.test(arg.value) || /^-(?!-)[A-Za-z]*[fL]|^--library-path|^--from-file/.test(arg.value))
    ) paths.names({ value: "jq modules", dynamic: false })
    if (arg.dynamic) {
      rest.push(arg)
      continue
    }
    const pair = JQ_PAIRS[arg.value]
    if (pair !== undefined) {
      if (args[i + 2] === undefined) return UNKNOWN
      if (pair) paths.read(args[i + 2], false, true)
      i += 2
      continue
    }
    // Everything after `--args`/`--jsonargs` is a positional value, not a file.
    if (arg.value === "--args" || arg.value === "--jsonargs") {
      const described = reader(JQ, { operands: "patternThenFiles", maxFiles: 0 })(rest)
      return described.readOnly ? mergePaths(described, paths) : UNKNOWN
    }
    rest.push(arg)
  }
  const described = reader(JQ, { operands: "patternThenFiles" })(rest)
  return described.readOnly ? mergePaths(described, paths) : UNKNOWN
})

const mergePaths = (invocation: Invocation, paths: Paths): Invocation => ({
  ...invocation,
  reads: [...paths.reads, ...invocation.reads],
  pathsKnown: invocation.pathsKnown && paths.known,
  unresolvedPaths: invocation.unresolvedPaths || !paths.known,
  unresolvedWords: [...paths.unresolved, ...invocation.unresolvedWords]
})

const ARITHMETIC_OPERATORS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
const LITERAL_NUMBER = /^[ \t]*[+-]?[0-9]+[ \t]*$/
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * `test`/`[`: bash evaluates the operands of `-eq` and friends and the name of
 * `-v` as arithmetic and subscripts, where `a[$(cmd)]` runs `cmd`; only
 * literal numbers and plain names are read-only.
 */
const test = (closing: boolean): Describe => (args) => {
  const words = closing ? args.slice(0, -1) : args
  if (closing && (args.length === 0 || args[args.length - 1]!.value !== "]" || args[args.length - 1]!.dynamic)) {
    return UNKNOWN
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word.dynamic) continue
    if (ARITHMETIC_OPERATORS.has(word.value)) {
      const left = words[i - 1]
      const right = words[i + 1]
      if (left === undefined || right === undefined) continue
      if (left.dynamic || right.dynamic || !LITERAL_NUMBER.test(left.value) || !LITERAL_NUMBER.test(right.value)) {
        return UNKNOWN
      }
    }
    if (word.value === "-v" || word.value === "-R") {
      const operand = words[i + 1]
      if (operand !== undefined && (operand.dynamic || !PLAIN_NAME.test(operand.value))) return UNKNOWN
    }
  }
  // Unprovable operands might become `-v` or `-eq` at run time.
  return words.some((word) => word.dynamic) && words.length > 1 ? UNKNOWN : NO_PATHS
}

const fileReader = (short: string, long: string, spec: Partial<ReaderSpec> = {}, numericShort = false): Describe =>
  reader(Options.grammar(short, `${long} help version`, { numericShort }), { operands: "files", ...spec })

const tac = fileReader("b r s:", "before regex separator:")
const nl = fileReader(
  "b: d: f: h: i: l: n: p s: v: w:",
  "body-numbering: section-delimiter: footer-numbering: header-numbering: line-increment: join-blank-lines: " +
    "number-format: no-renumber number-separator: starting-line-number: number-width:"
)
const od = fileReader(
  "A: b c d D e F f H i I j: l L N: o O s S: t: v w? x X",
  "address-radix: endian: skip-bytes: read-bytes: strings? format: output-duplicates width? traditional"
)
const hexdump = fileReader("b c C d e% f# L? n: o s: v x", "length: skip: no-squeezing color?")
const checksum = (extra = ""): Describe => (args) => {
  const described = fileReader(
    `b c t w z ${extra}`,
    "binary check text tag untagged zero ignore-missing quiet status strict warn length: algorithm: base64 raw debug"
  )(args)
  // `-c` reads the files a checksum list names.
  const parsed = Options.parse(Options.grammar(`b c t w z ${extra}`, "check length: algorithm:"), args)
  return parsed.ok && Options.has(parsed, "c", "check")
    ? { ...described, pathsKnown: false, unresolvedPaths: true, unresolvedWords: ["<names in the checksum lists>"] }
    : described
}
const base64 = fileReader("d i w:", "decode ignore-garbage wrap:", { maxFiles: 1 })
const column = fileReader(
  "c: d E: H: i: J l: L n: N: o: O: p: r: R: s: t T: W: x",
  "columns: table-noheadings table-column: table-columns: table-columns-limit: table-empty-lines table-hide: json " +
    "keep-empty-lines table-name: table-order: output-separator: table-right: tree: tree-id: tree-parent: " +
    "separator: table table-truncate: table-noextreme: table-wrap: fillrows"
)
const fold = fileReader("b s w:", "bytes spaces width:", {}, true)
const expand = fileReader("i t:", "initial tabs:", {}, true)
const unexpand = fileReader("a t:", "all first-only tabs:", {}, true)
const rev = fileReader("", "")
const paste = fileReader("d: s z", "delimiters: serial zero-terminated")
const join = fileReader("a: e: i j: o: t: v: z 1: 2:", "ignore-case check-order nocheck-order header zero-terminated", {
  maxFiles: 2
})
const strings = fileReader(
  "a d f n: t: e: o T: w s: h v",
  "all data print-file-name bytes: radix: encoding: target: include-all-whitespace output-separator: unicode:",
  {},
  true
)
const fmt = fileReader("c p: s t u w: g:", "crown-margin prefix: split-only tagged-paragraph uniform-spacing width: goal:", {}, true)
const look: Describe = (args) => {
  const parsed = Options.parse(Options.grammar("a b d f t:", "alternative alphanum ignore-case terminate: help version"), args)
  if (!parsed.ok || parsed.operands.length > 2) return UNKNOWN
  const paths = new Paths()
  paths.read(parsed.operands[1], false, true)
  return paths.done(true)
}

const sort = reader(
  Options.grammar(
    "b d f g h i M m n R r V c C k: o! s S: t: T: u z",
    "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort human-numeric-sort " +
      "ignore-nonprinting month-sort numeric-sort random-sort random-source< reverse sort: version-sort check? " +
      "batch-size: compress-program! debug files0-from@ key: merge output! stable buffer-size: field-separator: " +
      "temporary-directory: parallel: unique zero-terminated help version"
  ),
  { operands: "files" }
)

// `uniq INPUT OUTPUT` writes OUTPUT.
const uniq = reader(
  Options.grammar(
    "c d D f: i s: u w: z",
    "count repeated all-repeated? skip-fields: ignore-case skip-chars: unique zero-terminated check-chars: group? " +
      "help version"
  ),
  { operands: "files", maxFiles: 1 }
)

// `tree -o file` writes; `-R` with `-H` writes an index into every directory.
const tree = reader(
  Options.grammar(
    "a d l f x L: R! P: I: q N Q p u g s h D r t c U v F i A S n C X J o! H: T:",
    "help version noreport charset: filelimit: dirsfirst filesfirst timefmt: si du prune sort: gitignore " +
      "gitfile< info infofile< matchdirs metafirst ignore-case nolinks hintro: houtro: fflinks noreport",
    // tree's own parser gives `-L` the next word even inside a cluster (`-Lo 2 out`).
    { valuesInClusters: false }
  ),
  { operands: "files", content: false, recursive: "always", defaultCwd: "always" }
)

// `file -C` compiles a magic file into the current directory.
const file = reader(
  Options.grammar(
    "b c C! d E e: F: f@ h i k l L m< n N p P: r s S v z Z 0",
    "brief checking-printout compile! exclude: exclude-quiet: extension mime mime-type mime-encoding files-from@ " +
      "keep-going list no-dereference dereference magic-file< no-buffer no-pad preserve-date raw special-files " +
      "separator: uncompress uncompress-noreport print0 parameter: apple debug help version"
  ),
  { operands: "files" }
)

/**
 * xxd is not getopt: each option is its own word (`-as` is `-a`, not `-a -s`),
 * options end at the first operand, and `xxd INPUT OUTPUT` writes OUTPUT. So
 * only whole words from its list are options, and at most one operand.
 */
const XXD_FLAGS = new Set([
  "-a", "-autoskip", "-b", "-bits", "-C", "-capitalize", "-E", "-EBCDIC", "-e", "-h", "-help", "-i", "-include", "-p",
  "-ps", "-postscript", "-plain", "-r", "-revert", "-u", "-uppercase", "-d", "-v", "-version"
])
const XXD_VALUES = new Set(["-c", "-cols", "-g", "-groupsize", "-l", "-len", "-n", "-name", "-o", "-s", "-seek", "-R"])

const xxd: Describe = (args) => {
  const paths = new Paths()
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return UNKNOWN
    if (arg.value === "--") {
      i++
      break
    }
    if (!arg.value.startsWith("-") || arg.value === "-") break
    if (XXD_FLAGS.has(arg.value)) continue
    if (XXD_VALUES.has(arg.value) && args[i + 1] !== undefined && !args[i + 1]!.dynamic) {
      i++
      continue
    }
    return UNKNOWN
  }
  const operands = args.slice(i)
  if (operands.length > 1) return UNKNOWN
  paths.read(operands[0], false, true)
  return paths.done(true)
}

const date: Describe = (args) => {
  const parsed = Options.parse(
    Options.grammar(
      "d: f< I? r< R s! u",
      "date: debug file< iso-8601? resolution reference< rfc-email rfc-3339: set! universal utc help version"
    ),
    args
  )
  // `date MMDDhhmm` sets the clock; only one `+FORMAT` operand is read-only.
  if (!parsed.ok || parsed.operands.length > 1) return UNKNOWN
  if (parsed.operands.some((word) => word.dynamic || !word.value.startsWith("+"))) return UNKNOWN
  const paths = new Paths()
  optionPaths(parsed, paths)
  return paths.done(true)
}

/** Every word is a static option from `allowed` (flags only, no operands). */
const onlyFlags = (allowed: ReadonlyArray<string>): Describe => (args) =>
  args.every((arg) => !arg.dynamic && allowed.includes(arg.value)) ? NO_PATHS : UNKNOWN

const env = onlyFlags(["-0", "--null"])

const hostname = onlyFlags([
  "-f", "--fqdn", "--long", "-s", "--short", "-i", "--ip-address", "-I", "--all-ip-addresses",
  "-d", "--domain", "-A", "--all-fqdns", "-a", "--alias", "-y", "--yp", "--nis"
])

const printf: Describe = (args) => {
  // `printf -v var` assigns a variable (a subscript in its name is evaluated); options are only read before the format.
  const first = args[0]
  if (first === undefined) return NO_PATHS
  return !first.dynamic && !first.value.startsWith("-v") ? NO_PATHS : UNKNOWN
}

const commandBuiltin: Describe = (args) => {
  // `command -v name` only looks names up; `command name` would run it.
  const first = args[0]
  if (first === undefined || first.dynamic || (first.value !== "-v" && first.value !== "-V")) return UNKNOWN
  return args.slice(1).every((arg) =>
      !arg.dynamic && (!arg.value.startsWith("-") || arg.value === "-v" || arg.value === "-V")
    )
    ? NO_PATHS
    : UNKNOWN
}

const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/

// `read` assigns shell variables; lowercase names cannot clobber the exported
// environment (PATH, GIT_PAGER, LD_PRELOAD, …) that later commands inherit.
// A subscript in a name (`a[$(cmd)]`) is evaluated, so names must be plain.
const read: Describe = (args) => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return UNKNOWN
    const value = arg.value
    if (["-r", "-s", "-e"].includes(value)) continue
    if (["-d", "-p"].includes(value)) {
      if (args[i + 1]?.dynamic !== false) return UNKNOWN
      i++
      continue
    }
    if (["-n", "-N", "-t", "-u"].includes(value)) {
      const count = args[++i]
      if (count === undefined || count.dynamic || !/^[0-9]+(\.[0-9]+)?$/.test(count.value)) return UNKNOWN
      continue
    }
    if (value === "-a") {
      const name = args[++i]
      if (name === undefined || name.dynamic || !LOWERCASE_NAME.test(name.value)) return UNKNOWN
      continue
    }
    if (!LOWERCASE_NAME.test(value)) return UNKNOWN
  }
  return NO_PATHS
}

// --- sed -------------------------------------------------------------------

const SED = Options.grammar(
  "n e% f# i? l: E r s u z b",
  "quiet silent expression% file# in-place? line-length: null-data zero-terminated regexp-extended separate " +
    "sandbox debug posix unbuffered follow-symlinks binary help version"
)

const sed: Describe = withGrammar(SED, (args) => {
  const parsed = Options.parse(SED, args)
  if (!parsed.ok) return UNKNOWN
  const scripts: Array<Word> = [...Options.valuesOf(parsed, "e", "expression")]
  const fromFile = Options.has(parsed, "f", "file")
  let operands = parsed.operands
  if (scripts.length === 0 && !fromFile) {
    const script = operands[0]
    if (script === undefined) return UNKNOWN
    scripts.push(script)
    operands = operands.slice(1)
  }
  const plain = !fromFile && scripts.every((script) => !script.dynamic && isPlainSedScript(script.value))
  const paths = new Paths()
  optionPaths(parsed, paths)
  if (Options.has(parsed, "i", "in-place")) {
    for (const operand of operands) paths.write(operand, false)
    if (operands.length === 0) paths.names(undefined)
    return paths.done(false, plain)
  }
  for (const operand of operands) paths.read(operand, false, true)
  // Without `-i` sed writes only standard output: any script without `e w W r R` only prints.
  return paths.done(plain)
})

interface SedScan {
  /** Every command is one the scanner knows. */
  readonly parsed: boolean
  /** Only selecting and printing commands. */
  readonly printing: boolean
}

/**
 * Scan a sed script: addresses, `{}` blocks and commands. `printing` when it
 * only has `p P = l n N d D q Q h H g G x z F` and `s`/`y` without the `w`
 * and `e` flags; `parsed` is false for `e`, `w`, `W`, `r`, `R`, `s///w`,
 * `s///e` and everything the scanner does not know (labels, branches,
 * comments, `a`, `i`, `c`, which are refused rather than parsed).
 */
const scanSedScript = (script: string, allowEdits: boolean): SedScan => {
  const refused: SedScan = { parsed: false, printing: false }
  let printing = true
  let i = 0
  let depth = 0
  const peek = () => script[i]
  const skip = (chars: string) => {
    while (i < script.length && chars.includes(script[i]!)) i++
  }
  // Read up to the next unescaped delimiter; false when it never comes.
  const delimited = (delimiter: string): boolean => {
    while (i < script.length) {
      const c = script[i]!
      if (c === "\\") {
        i += 2
        continue
      }
      if (c === "\n") return false
      i++
      if (c === delimiter) return true
    }
    return false
  }
  const regexAddress = (): boolean => {
    let delimiter = "/"
    if (peek() === "\\") {
      delimiter = script[i + 1] ?? ""
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false
      i += 2
    } else i++
    if (!delimited(delimiter)) return false
    skip("IM")
    return true
  }
  const address = (second: boolean): boolean | undefined => {
    const c = peek()
    if (c === undefined) return undefined
    if (/[0-9]/.test(c)) {
      skip("0123456789")
      if (peek() === "~") {
        i++
        skip("0123456789")
      }
      return true
    }
    if (c === "$") {
      i++
      return true
    }
    if (c === "/" || c === "\\") return regexAddress()
    if (second && (c === "+" || c === "~")) {
      i++
      skip("0123456789")
      return true
    }
    return undefined
  }
  const endOfCommand = (): boolean => {
    skip(" \t")
    const c = peek()
    return c === undefined || c === ";" || c === "\n" || c === "}"
  }
  while (true) {
    skip(" \t\n;")
    const c = peek()
    if (c === undefined) return depth === 0 ? { parsed: true, printing } : refused
    if (c === "}") {
      if (depth === 0) return refused
      depth--
      i++
      continue
    }
    const first = address(false)
    if (first === false) return refused
    if (first === true) {
      skip(" \t")
      if (peek() === ",") {
        i++
        skip(" \t")
        if (address(true) !== true) return refused
      }
    }
    skip(" \t")
    if (peek() === "!") {
      i++
      skip(" \t")
    }
    const command = peek()
    if (command === undefined) return refused
    i++
    if (command === "{") {
      depth++
      continue
    }
    if ("pP=nNdDhHgGxzF".includes(command)) {
      if (!endOfCommand()) return refused
      continue
    }
    if (command === "l" || command === "q" || command === "Q") {
      skip(" \t")
      skip("0123456789")
      if (!endOfCommand()) return refused
      continue
    }
    if (command === "s" || command === "y") {
      const delimiter = peek()
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return refused
      i++
      if (!delimited(delimiter) || !delimited(delimiter)) return refused
      if (command === "s") skip("gpiImM0123456789")
      if (!endOfCommand()) return refused
      continue
    }
    if (allowEdits && (command === "a" || command === "i" || command === "c")) {
      // One-line GNU form: the text runs to the end of the line.
      printing = false
      while (i < script.length && script[i] !== "\n") {
        if (script[i] === "\\") i++
        i++
      }
      continue
    }
    return refused
  }
}

/**
 * Whether a sed script only selects and prints (see `scanSedScript`).
 */
export const isPrintingSedScript = (script: string): boolean => {
  const scan = scanSedScript(script, false)
  return scan.parsed && scan.printing
}

/**
 * Whether a sed script edits only the text it is given: no `e`, `w`, `W`,
 * `r`, `R` and no `e`/`w` flags of `s` (issue 9, item 3) — what `sed -i` may
 * run under acceptEdits.
 */
export const isPlainSedScript = (script: string): boolean => scanSedScript(script, true).parsed

// --- awk -------------------------------------------------------------------

const AWK = Options.grammar("F: v:", "field-separator: assign:", { stopAtOperand: true })

/** An awk program that can only print: no pipes, redirections, `system`, `getline`, gawk's `@` forms. */
export const isPrintingAwkProgram = (program: string): boolean =>
  !/[|>@`]/.test(program) && !/\b(system|getline|close|fflush)\b/.test(program)

const awk: Describe = withGrammar(AWK, (args) => {
  const parsed = Options.parse(AWK, args)
  if (!parsed.ok) return UNKNOWN
  const [program, ...operands] = parsed.operands
  if (program === undefined || program.dynamic || !isPrintingAwkProgram(program.value)) return UNKNOWN
  const paths = new Paths()
  // A program that sets `ARGV`/`ARGC` reads files no operand names.
  if (/\bARG[VC]\b/.test(program.value)) paths.names({ value: "ARGV", dynamic: false })
  for (const operand of operands) {
    // `name=value` operands assign, they are not files.
    if (!operand.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(operand.value)) continue
    paths.read(operand, false, true)
  }
  return paths.done(true)
})

// --- archives ----------------------------------------------------------------

const TAR = Options.grammar(
  "t f< v z j J Z a h O C: w! x! c! r! u! A! d!",
  "list file< verbose gzip gunzip ungzip bzip2 xz lzma lzip lzop zstd auto-compress dereference to-stdout " +
    "wildcards no-wildcards anchored no-anchored exclude: numeric-owner full-time utc force-local quiet " +
    "directory: help version"
)

/** `tar -t`: listing only. An archive name with `:` is a remote host (rsh) unless `--force-local`. */
const tar: Describe = withGrammar(TAR, (args) => {
  const first = args[0]
  let words = args
  if (first !== undefined && !first.dynamic && !first.value.startsWith("-") && first.value.length > 0) {
    // The old form: the first word's letters are options without a dash, and the ones that
    // take a value take the following words in order (`tar tfC x.tar dir`).
    const expanded: Array<Word> = []
    let next = 1
    for (const letter of first.value) {
      expanded.push({ value: `-${letter}`, dynamic: false })
      const kind = TAR.short.get(letter)
      if (kind !== undefined && kind !== "flag" && kind !== "forbidden" && kind !== "recursive") {
        const value = args[next++]
        if (value === undefined) return UNKNOWN
        expanded.push(value)
      }
    }
    words = [...expanded, ...args.slice(next)]
  }
  const parsed = Options.parse(TAR, words)
  if (!parsed.ok) return UNKNOWN
  if (Options.has(parsed, "help", "version")) return NO_PATHS
  if (!Options.has(parsed, "t", "list")) return UNKNOWN
  const archives = Options.valuesOf(parsed, "f", "file")
  if (!Options.has(parsed, "force-local") && archives.some((word) => word.dynamic || word.value.includes(":"))) {
    return UNKNOWN
  }
  const paths = new Paths()
  optionPaths(parsed, paths)
  return paths.done(true)
})

const unzip: Describe = (args) => {
  const parsed = Options.parse(Options.grammar("l v t q z"), args)
  if (!parsed.ok || !Options.has(parsed, "l", "v", "t", "z")) return UNKNOWN
  const paths = new Paths()
  // The archive; later operands are member names.
  paths.read(parsed.operands[0], false, true)
  return paths.done(true)
}

const zcat = fileReader("f l q v t", "force list quiet verbose test")

const gzip: Describe = (args) => {
  const described = fileReader(
    "c d l t v q n N k f r 1 2 3 4 5 6 7 8 9",
    "stdout to-stdout decompress uncompress list test verbose quiet no-name name keep force recursive fast best"
  )(args)
  const parsed = Options.parse(Options.grammar("c d l t v q n N k f r 1 2 3 4 5 6 7 8 9", "stdout to-stdout list test"), args)
  // Without `-c`, `-l` or `-t` gzip replaces its operands.
  return parsed.ok && Options.has(parsed, "c", "stdout", "to-stdout", "l", "list", "t", "test")
    ? described
    : notReadOnly(described)
}

// --- version queries ---------------------------------------------------------

/** Programs whose `--version` (alone) prints a version and does nothing else. */
const VERSION_ONLY: ReadonlyArray<string> = [
  "node", "npm", "npx", "yarn", "pnpm", "python", "python3", "pip", "pip3", "ruby", "gem", "rustc", "cargo",
  "gcc", "g++", "cc", "clang", "make", "cmake", "tsc", "deno", "bun", "perl", "php", "bash", "curl", "wget",
  "docker", "kubectl", "terraform", "java", "javac", "mvn", "gradle", "dotnet", "swift", "go", "awk", "gawk",
  "mawk", "sed", "tar", "gzip", "unzip", "tmux", "vim", "less", "man", "ssh", "rsync", "zip", "bwrap"
]

const versionQuery = (args: ReadonlyArray<Word>): boolean =>
  args.length === 1 && !args[0]!.dynamic && args[0]!.value === "--version"

// --- git -------------------------------------------------------------------

const GIT_GLOBAL_FLAGS: ReadonlyArray<string> = [
  "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
  "--icase-pathspecs", "--no-replace-objects"
]

// Options that write files, run external programs or open a pager, whatever the subcommand.
const GIT_FORBIDDEN_LONG: ReadonlyArray<string> = [
  "output", "ext-diff", "exec", "open-files-in-pager", "upload-pack", "receive-pack", "edit", "config", "textconv"
]

const isLongOption = (value: string) => value.startsWith("--") && value.length > 2
const longName = (value: string) => {
  const body = value.slice(2)
  const eq = body.indexOf("=")
  return eq === -1 ? body : body.slice(0, eq)
}
/** git accepts any unambiguous prefix of a long option. */
const abbreviates = (name: string, option: string) => name.length > 0 && option.startsWith(name)

type GitCheck = (args: ReadonlyArray<Word>, paths: Paths) => boolean

/**
 * git's revision and diff options are too many for a grammar; a scan that
 * rejects unprovable words before `--`, forbidden long options (by prefix)
 * and the given short letters, and hands the operands on.
 */
const gitOptions = (
  spec: {
    readonly forbiddenShort?: string
    readonly operands?: (operands: ReadonlyArray<Word>, paths: Paths) => void
    /**
     * The command prints file contents from the repository (a patch, a blob, matches): without
     * pathspecs after `--`, any of them — a revision operand (`HEAD`, `v1.2`, `origin/main`) cannot
     * be told from a path statically — so the whole tree's contents count as read.
     */
    readonly content?: (options: ReadonlyArray<string>) => boolean
  } = {}
): GitCheck =>
(args, paths) => {
  const operands: Array<Word> = []
  const options: Array<string> = []
  let endOfOptions = false
  let pathspecs = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (endOfOptions) {
      operands.push(arg)
      pathspecs++
      continue
    }
    if (arg.dynamic) return false
    const value = arg.value
    if (isLongOption(value) && GIT_FORBIDDEN_LONG.some((option) => abbreviates(longName(value), option))) return false
    if (value.startsWith("-") && !value.startsWith("--") && [...value.slice(1)].some((l) => (spec.forbiddenShort ?? "").includes(l))) {
      return false
    }
    // Options whose value is a file git reads: `blame --contents FILE`.
    if (isLongOption(value) && longName(value).length >= 4 && abbreviates(longName(value), "contents")) {
      const file = value.includes("=") ? { value: value.slice(value.indexOf("=") + 1), dynamic: false } : args[++i]
      if (file === undefined) return false
      paths.read(file, false, true)
      continue
    }
    if (value === "--") endOfOptions = true
    else if (value.startsWith("-")) options.push(value)
    else operands.push(arg)
  }
  spec.operands?.(operands, paths)
  // Pathspecs after `--`, or only `rev:path` operands, name every file whose contents it prints.
  const narrowed = pathspecs > 0 || (operands.length > 0 && operands.every((operand) => operand.value.includes(":")))
  if (spec.content?.(options) === true && !narrowed) paths.read({ value: ".", dynamic: false }, true, true)
  return true
}

/** Options of `git log` and friends that print patches (file contents) instead of only commits. */
const GIT_PATCH_OPTION = /^(-[pu]|--patch.*|-U\d*|--unified.*|--cc|-c|--word-diff.*|--color-words.*|--binary|-L.*|--full-diff|--raw)$/

const printsPatch = (options: ReadonlyArray<string>) => options.some((option) => GIT_PATCH_OPTION.test(option))
const always = () => true

/** `rev:path` reads `path`'s contents at that revision; other operands may be paths too. */
const revisionPaths = (operands: ReadonlyArray<Word>, paths: Paths): void => {
  for (const operand of operands) {
    // `:N:path` names a path at index stage N.
    const staged = /^:[0-3]:/.exec(operand.value)
    const colon = staged === null ? operand.value.indexOf(":") : staged[0].length - 1
    if (operand.dynamic) paths.read(operand, false, true)
    else if (colon !== -1) {
      // A tree-ish (`HEAD:secrets`) prints what is below it; `HEAD:` is the root.
      const path = operand.value.slice(colon + 1).replace(/^\.\//, "")
      paths.read({ value: path.length > 0 ? path : ".", dynamic: false }, true, true)
    } else paths.read(operand, false, true)
  }
}

/** Trees searched whole: a `rev:path` tree-ish is its path (`HEAD:` the root). */
const contentPaths = (operands: ReadonlyArray<Word>, paths: Paths): void => {
  for (const operand of operands) {
    const staged = /^:[0-3]:/.exec(operand.value)
    const colon = operand.dynamic ? -1 : staged === null ? operand.value.indexOf(":") : staged[0].length - 1
    if (colon === -1) paths.read(operand, true, true)
    else paths.read({ value: operand.value.slice(colon + 1).replace(/^\.\//, "") || ".", dynamic: false }, true, true)
  }
}

const isCommitValue = (word: Word | undefined) => word !== undefined && !word.dynamic && !word.value.startsWith("-")

/**
 * `git branch`/`git tag` listing: flags from a list; names only when an
 * option switched to list mode (checked against git 2.39: `--sort`,
 * `--format`, `--column`, `-v`, `-i` with a name create it).
 */
const gitListing = (
  listFlags: ReadonlyArray<string>,
  flags: ReadonlyArray<string>,
  listingValueFlags: ReadonlyArray<string>,
  valueFlags: ReadonlyArray<string>,
  listingPattern: RegExp
): GitCheck =>
(args) => {
  let listing = false
  let names = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    const value = arg.value
    const name = value.includes("=") ? value.slice(0, value.indexOf("=")) : value
    if (listFlags.includes(value) || listingPattern.test(value)) listing = true
    else if (listingValueFlags.includes(name)) {
      // These imply listing; a following commit is their value, a following option is an option.
      listing = true
      if (!value.includes("=") && isCommitValue(args[i + 1])) i++
    } else if (valueFlags.includes(name)) {
      if (!value.includes("=")) {
        if (args[i + 1] === undefined || args[i + 1]!.dynamic) return false
        i++
      }
    } else if (flags.includes(name) || /^-v+$/.test(value)) continue
    else if (value.startsWith("-")) return false
    else names++
  }
  return names === 0 || listing
}

const gitBranch = gitListing(
  // `-l` meant `--create-reflog` before git 2.19, so it does not switch to listing.
  ["--list"],
  [
    "-l", "-a", "--all", "-r", "--remotes", "--verbose", "--show-current", "--color", "--no-color", "--column",
    "--no-column", "-i", "--ignore-case", "--abbrev", "--no-abbrev"
  ],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"],
  ["--sort", "--format"],
  /^$/
)

const gitTag = gitListing(
  ["-l", "--list"],
  ["--column", "--no-column", "-i", "--ignore-case", "--color", "--no-color"],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"],
  ["--sort", "--format"],
  /^-n[0-9]*$/
)

const gitRemote: GitCheck = (args) => {
  if (args.some((arg) => arg.dynamic)) return false
  const values = args.map((arg) => arg.value)
  if (values.every((value) => value === "-v" || value === "--verbose")) return true
  if (values[0] === "get-url") {
    const rest = values.slice(1)
    return rest.filter((value) => !value.startsWith("-")).length === 1 &&
      rest.every((value) => !value.startsWith("-") || value === "--all" || value === "--push")
  }
  return false
}

const gitConfig: GitCheck = (args) => {
  if (args.some((arg) => arg.dynamic)) return false
  const values = args.map((arg) => arg.value)
  const modes = ["--get", "--get-all", "--get-regexp", "--list", "-l"]
  const flags = [
    "--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope", "--name-only", "-z", "--null",
    "--includes", "--no-includes", "--type=bool", "--type=int", "--type=path", "--bool", "--int", "--path"
  ]
  if (!values.some((value) => modes.includes(value))) return false
  return values.every((value) => modes.includes(value) || flags.includes(value) || !value.startsWith("-"))
}

const firstIs = (allowed: ReadonlyArray<string>, then: GitCheck): GitCheck => (args, paths) => {
  const first = args[0]
  if (first === undefined) return true
  return !first.dynamic && allowed.includes(first.value) && then(args.slice(1), paths)
}

const GIT_SUBCOMMANDS: Readonly<Record<string, GitCheck>> = {
  status: gitOptions(),
  log: gitOptions({ operands: revisionPaths, content: printsPatch }),
  show: gitOptions({ operands: revisionPaths, content: always }),
  diff: gitOptions({ operands: revisionPaths, content: always }),
  shortlog: gitOptions(),
  whatchanged: gitOptions({ operands: revisionPaths, content: printsPatch }),
  blame: gitOptions({ operands: revisionPaths }),
  annotate: gitOptions({ operands: revisionPaths }),
  "rev-parse": gitOptions(),
  "rev-list": gitOptions(),
  "ls-files": gitOptions(),
  "ls-tree": gitOptions(),
  // `--batch*` reads object names (`HEAD:secrets/key`) from standard input.
  "cat-file": gitOptions({ operands: revisionPaths, content: (options) => options.some((o) => o.startsWith("--batch")) }),
  describe: gitOptions(),
  "merge-base": gitOptions(),
  "show-ref": gitOptions(),
  "name-rev": gitOptions(),
  "for-each-ref": gitOptions(),
  grep: gitOptions({
    forbiddenShort: "O",
    operands: (operands, paths) => contentPaths(operands.slice(1), paths),
    // The pattern, then revisions or paths: only pathspecs after `--` narrow the search.
    content: always
  }),
  branch: gitBranch,
  tag: gitTag,
  remote: gitRemote,
  config: gitConfig,
  stash: (args, paths) => args.length > 0 && firstIs(["list", "show"], gitOptions({ content: printsPatch }))(args, paths),
  reflog: firstIs(["show"], gitOptions({ content: printsPatch }))
}

const git: Describe = (args) => {
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return UNKNOWN
    if (!arg.value.startsWith("-")) break
    if (arg.value === "--version") return args.length === 1 ? NO_PATHS : UNKNOWN
    if (!GIT_GLOBAL_FLAGS.includes(arg.value)) return UNKNOWN
  }
  const subcommand = args[i]
  if (subcommand === undefined || !Object.hasOwn(GIT_SUBCOMMANDS, subcommand.value)) return UNKNOWN
  const paths = new Paths()
  // Every git command reads the repository and the work tree's names.
  paths.read({ value: ".", dynamic: false }, true, false)
  const check = GIT_SUBCOMMANDS[subcommand.value]!
  return check(args.slice(i + 1), paths) ? paths.done(true) : UNKNOWN
}

// --- xargs -----------------------------------------------------------------

const XARGS = Options.grammar(
  "0 a< d: E: e? I: i? L: l? n: P: p! r s: t x o!",
  "null arg-file< delimiter: eof? replace? max-lines? max-args: max-procs: interactive! no-run-if-empty " +
    "max-chars: show-limits verbose exit open-tty! process-slot-var! help version",
  { stopAtOperand: true }
)

/** The input words xargs appends, unknown by nature. */
const UNKNOWN_WORD: Word = { value: "", dynamic: true }

const xargs: Describe = withGrammar(XARGS, (args) => {
  const parsed = Options.parse(XARGS, args)
  if (!parsed.ok) return UNKNOWN
  const paths = new Paths()
  optionPaths(parsed, paths)
  const [command, ...rest] = parsed.operands
  // Without a command xargs runs `echo`.
  if (command === undefined) return paths.done(true)
  if (command.dynamic) return UNKNOWN
  // With `-I`/`-i` every word holding the replacement string becomes input.
  const replace = Options.has(parsed, "I", "i", "replace")
    ? (Options.valuesOf(parsed, "I", "i", "replace")[0]?.value ?? "{}")
    : undefined
  const inner = rest.map((word) => (replace !== undefined && word.value.includes(replace) ? UNKNOWN_WORD : word))
  const described = describeInvocation(command.value, [...inner, UNKNOWN_WORD])
  return {
    readOnly: described.readOnly,
    reads: [...paths.reads, ...described.reads],
    writes: described.writes,
    pathsKnown: false,
    unresolvedPaths: true,
    unresolvedWords: [...paths.unresolved, ...described.unresolvedWords.filter((word) => word !== ""), "<names xargs reads>"],
    onlyWritesPaths: false
  }
})

// --- programs that write (for the footprint and acceptEdits) ----------------

const writer = (
  g: Options.Grammar,
  shape: (parsed: Options.ParsedArguments, paths: Paths) => void,
  onlyWrites = true
): Describe =>
  withGrammar(g, (args) => {
    const parsed = Options.parse(g, args)
    if (!parsed.ok) return UNKNOWN
    const paths = new Paths()
    optionPaths(parsed, paths)
    shape(parsed, paths)
    return paths.done(false, onlyWrites)
  })

const writeOperands = (subtree: (parsed: Options.ParsedArguments) => boolean) =>
(parsed: Options.ParsedArguments, paths: Paths) => {
  const recursive = subtree(parsed)
  for (const operand of parsed.operands) paths.write(operand, recursive)
}

const mkdir = writer(Options.grammar("m: p v Z", "mode: parents verbose context? help version"), writeOperands(() => false))
const touch = writer(
  Options.grammar("a c d: f h m r< t:", "time: date: no-create no-dereference reference< help version"),
  writeOperands(() => false)
)
const rm = writer(
  Options.grammar("f i I r R d v", "force interactive? one-file-system no-preserve-root preserve-root? recursive dir verbose help version"),
  writeOperands((parsed) => Options.has(parsed, "r", "R", "recursive"))
)
const rmdir = writer(
  Options.grammar("p v", "ignore-fail-on-non-empty parents verbose help version"),
  writeOperands(() => false)
)
const COPY = "b f i n S: t: T u v"
const COPY_LONG = "backup? force interactive no-clobber suffix: target-directory: no-target-directory update? verbose " +
  "strip-trailing-slashes exchange debug help version"
/** `cp`/`mv`/`ln`: sources then a destination (or `-t DIR`). */
const transfer = (sources: "read" | "write" | "none", recursive: (parsed: Options.ParsedArguments) => boolean) =>
(parsed: Options.ParsedArguments, paths: Paths) => {
  const target = Options.valuesOf(parsed, "t", "target-directory")
  const operands = parsed.operands
  const sourceWords = target.length > 0 ? operands : operands.slice(0, -1)
  const destination = target.length > 0 ? target[0] : operands[operands.length - 1]
  const subtree = recursive(parsed)
  for (const source of sourceWords) {
    if (sources === "read") paths.read(source, subtree, true)
    if (sources === "write") paths.write(source, true)
  }
  paths.write(destination, true)
}
const mv = writer(Options.grammar(COPY + " Z", COPY_LONG + " context"), transfer("write", () => true))
const cp = writer(
  Options.grammar(`${COPY} a d H l L P p r R s x Z`, `${COPY_LONG} archive attributes-only copy-contents dereference ` +
    "link no-dereference preserve? no-preserve: parents recursive reflink? remove-destination sparse: " +
    "symbolic-link one-file-system context? keep-directory-symlink"),
  transfer("read", (parsed) => Options.has(parsed, "a", "r", "R", "recursive", "archive"))
)
const ln = writer(
  Options.grammar("b d F f i L n P r s S: t: T v", "backup? directory force interactive logical no-dereference " +
    "physical relative symbolic suffix: target-directory: no-target-directory verbose help version"),
  // A hard link is a second name for the source's contents, which no rule on the source's path
  // sees later: its sources count as read. A symbolic link is judged by its target when used.
  (parsed, paths) =>
    transfer(Options.has(parsed, "s", "symbolic") ? "none" : "read", () => false)(parsed, paths)
)
const tee = writer(
  Options.grammar("a i p", "append ignore-interrupts output-error? help version"),
  writeOperands(() => false)
)
const truncate = writer(
  Options.grammar("c o r< s:", "no-create io-blocks reference< size: help version"),
  writeOperands(() => false)
)
const dd: Describe = (args) => {
  const paths = new Paths()
  for (const arg of args) {
    if (arg.dynamic) return UNKNOWN
    if (arg.value.startsWith("if=")) paths.read({ value: arg.value.slice(3), dynamic: false }, false, true)
    else if (arg.value.startsWith("of=")) paths.write({ value: arg.value.slice(3), dynamic: false }, false)
    else if (!/^(bs|ibs|obs|cbs|count|skip|seek|iseek|oseek|conv|iflag|oflag|status)=/.test(arg.value)) return UNKNOWN
  }
  return paths.done(false, true)
}
const chmodLike = writer(
  Options.grammar("c f v R", "changes silent quiet verbose recursive reference< dereference no-dereference " +
    "preserve-root no-preserve-root from: help version"),
  (parsed, paths) => {
    const recursive = Options.has(parsed, "R", "recursive")
    // The first operand is the mode or owner, unless `--reference` gave it.
    const operands = Options.has(parsed, "reference") ? parsed.operands : parsed.operands.slice(1)
    for (const operand of operands) paths.write(operand, recursive)
  },
  false
)

// --- the table -------------------------------------------------------------

const NO_PATH_PROGRAMS: ReadonlyArray<string> = [
  "pwd", "echo", "which", "whereis", "type", "whoami", "id", "groups", "uname", "sleep", "true", "false", ":",
  "basename", "dirname", "seq", "nproc", "free", "uptime", "ps", "pgrep", "tty", "locale", "arch", "printenv",
  "expr", "getconf", "lsb_release", "numfmt"
]

const READ_ONLY: ReadonlyMap<string, Describe> = new Map<string, Describe>([
  ...NO_PATH_PROGRAMS.map((name): [string, Describe] => [name, noPaths]),
  ["ls", ls], ["cat", cat], ["head", head], ["tail", tail], ["wc", wc], ["grep", grep], ["egrep", grep],
  ["fgrep", grep], ["rg", rg], ["find", find], ["stat", stat], ["realpath", realpath], ["readlink", readlink],
  ["du", du], ["df", df], ["cut", cut], ["tr", tr], ["diff", diff], ["cmp", cmp], ["comm", comm], ["jq", jq],
  ["test", test(false)], ["[", test(true)], ["tac", tac], ["nl", nl], ["od", od], ["hexdump", hexdump],
  ["md5sum", checksum()], ["sha1sum", checksum()], ["sha224sum", checksum()], ["sha256sum", checksum()],
  ["sha384sum", checksum()], ["sha512sum", checksum()], ["b2sum", checksum("l:")], ["cksum", checksum("a: l:")],
  ["base64", base64], ["base32", base64], ["column", column], ["fold", fold], ["expand", expand],
  ["unexpand", unexpand], ["rev", rev], ["paste", paste], ["join", join], ["strings", strings], ["fmt", fmt],
  ["look", look], ["sort", sort], ["uniq", uniq], ["tree", tree], ["file", file], ["xxd", xxd], ["date", date],
  ["env", env], ["hostname", hostname], ["printf", printf], ["command", commandBuiltin], ["read", read],
  ["sed", sed], ["awk", awk], ["gawk", awk], ["mawk", awk], ["tar", tar], ["unzip", unzip], ["zcat", zcat],
  ["gzip", gzip], ["git", git], ["xargs", xargs]
])

const WRITERS: ReadonlyMap<string, Describe> = new Map<string, Describe>([
  ["mkdir", mkdir], ["touch", touch], ["rm", rm], ["rmdir", rmdir], ["mv", mv], ["cp", cp], ["ln", ln],
  ["tee", tee], ["truncate", truncate], ["dd", dd], ["chmod", chmodLike], ["chown", chmodLike], ["chgrp", chmodLike]
])

/** The names on the read-only list (each still subject to its argument check). */
export const readOnlyCommandNames: ReadonlyArray<string> = [...READ_ONLY.keys()]

/** The option grammar a program on the list is parsed with, if it has one. */
export const grammarOf = (name: string): Options.Grammar | undefined => READ_ONLY.get(name)?.grammar

/**
 * What running `name` with these arguments does: whether it is read-only and
 * which paths it reads and writes. Only bare, static names are looked up;
 * anything else is unknown.
 */
export const describeInvocation = (name: string, args: ReadonlyArray<Word>): Invocation => {
  if (name.includes("/")) return UNKNOWN
  if (VERSION_ONLY.includes(name) && versionQuery(args)) return NO_PATHS
  if (name === "go" && args.length === 1 && !args[0]!.dynamic && args[0]!.value === "version") return NO_PATHS
  if (name === "cd" || name === "pushd" || name === "popd") {
    // Read-only, but every later relative path depends on where it went.
    return { ...NO_PATHS, pathsKnown: false }
  }
  const describe = READ_ONLY.get(name) ?? WRITERS.get(name)
  return describe === undefined ? UNKNOWN : describe(args)
}

/** Whether running `name` with these arguments cannot change anything. */
export const isReadOnlyInvocation = (name: string, args: ReadonlyArray<Word>): boolean =>
  describeInvocation(name, args).readOnly
