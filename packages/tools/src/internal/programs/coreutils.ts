/**
 * coreutils and friends that read their operands and write only standard
 * output (and the few whose extra operands are outputs: `uniq IN OUT`, `xxd IN OUT`).
 *
 * @internal
 */
import * as Options from "./options.js"
import {
  type Describe,
  fileReader,
  NO_PATHS,
  onlyFlags,
  optionPaths,
  Paths,
  reader,
  UNKNOWN,
  withGrammar
} from "./invocation.js"

const LS = Options.grammar(
  "a A b B c C d D f F g G h H i k l L m n N o p q Q r R* s S t T: u U v w: x X Z 1 I:",
  "all almost-all author escape block-size: ignore-backups color? directory dired classify? file-type format: " +
    "full-time group-directories-first no-group human-readable si dereference-command-line " +
    "dereference-command-line-symlink-to-dir hide: hyperlink? indicator-style: inode ignore: kibibytes literal " +
    "numeric-uid-gid quote-name quoting-style: reverse recursive* size sort: time: time-style: tabsize: width: " +
    "context zero dereference hide-control-chars show-control-chars help version",
  { complete: true }
)

const lsReader = reader(
  LS,
  // `-L` follows the links it meets into other trees; so do `--group-directories-first` (is a link a
  // directory?) and `--color` (is it an orphan?), measured with strace; `--hyperlink` resolves every entry's
  // real path, reading the links on the way of their targets (the oracle's review).
  {
    operands: "files",
    content: false,
    recursive: "always",
    defaultCwd: "always",
    proven: true,
    unprovenWith: ["L", "dereference", "group-directories-first", "color", "hyperlink"]
  }
)

/** An option value argmatch would read as one of `names` (it takes unambiguous abbreviations). */
const means = (word: Options.Word, ...names: ReadonlyArray<string>) =>
  word.value.length > 0 && names.some((name) => name.startsWith(word.value))

/**
 * `ls`: in the long format, an indicator of the file type (`-F`, `--file-type`, `--indicator-style=classify`)
 * is the type of a link's target, which ls `stat`s wherever it is (`ls -lF` looks up `link-up`'s
 * `../outside`: the oracle's review): not proven then.
 */
export const ls: Describe = withGrammar(LS, (args) => {
  const described = lsReader(args)
  const parsed = Options.parse(LS, args)
  if (!parsed.ok || !described.pathsKnown) return described
  const long = Options.has(parsed, "l", "g", "o", "n", "numeric-uid-gid", "full-time") ||
    Options.valuesOf(parsed, "format").some((word) => means(word, "long", "verbose"))
  const types = Options.has(parsed, "F", "classify", "file-type") ||
    Options.valuesOf(parsed, "indicator-style").some((word) => means(word, "classify", "file-type"))
  return long && types ? { ...described, pathsKnown: false } : described
})

export const cat = reader(
  Options.grammar(
    "A b e E n s t T u v",
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version",
    { complete: true }
  ),
  { operands: "files", proven: true }
)

export const head = reader(
  Options.grammar("c: n: q v z", "bytes: lines: quiet silent verbose zero-terminated help version", {
    numericShort: true,
    complete: true
  }),
  { operands: "files", proven: true }
)

export const tail = reader(
  Options.grammar(
    "c: f F n: q s: v z",
    "bytes: follow? lines: max-unchanged-stats: pid: quiet silent retry sleep-interval: verbose zero-terminated " +
      "debug help version",
    { numericShort: true, complete: true }
  ),
  { operands: "files", proven: true }
)

export const wc = reader(
  Options.grammar(
    "c m l L w",
    "bytes chars lines files0-from@ max-line-length words total: debug help version",
    { complete: true }
  ),
  { operands: "files", proven: true }
)

export const stat = reader(
  Options.grammar("c: f L t Z", "dereference file-system format: printf: terse cached: help version", {
    complete: true
  }),
  { operands: "files", content: false, proven: true }
)

// It reads every link on the way to the real path, wherever they are: not proven.
export const realpath = reader(
  Options.grammar(
    "e m L P q s z",
    "canonicalize-existing canonicalize-missing logical physical quiet relative-to: relative-base: strip " +
      "no-symlinks zero help version",
    { complete: true }
  ),
  { operands: "files", content: false }
)

export const readlink = reader(
  Options.grammar(
    "f e m n q s v z",
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero help version",
    { complete: true }
  ),
  // `-f`, `-e`, `-m` read every link on the way, wherever they are.
  {
    operands: "files",
    content: false,
    proven: true,
    unprovenWith: ["f", "e", "m", "canonicalize", "canonicalize-existing", "canonicalize-missing"]
  }
)

export const du = reader(
  Options.grammar(
    "0 a A B: b c D d: H h k L l m P S s t: X< x",
    "null all apparent-size block-size: bytes total dereference-args max-depth: human-readable inodes si " +
      "dereference count-links separate-dirs summarize threshold: time? time-style: exclude-from< exclude: " +
      "one-file-system no-dereference files0-from@ help version",
    { complete: true }
  ),
  {
    operands: "files",
    content: false,
    recursive: "always",
    defaultCwd: "always",
    proven: true,
    unprovenWith: ["L", "dereference"]
  }
)

export const df = reader(
  Options.grammar(
    "a B: h H i k l P t: T x: v",
    "all block-size: human-readable si inodes local no-sync output? portability print-type sync total type: " +
      "exclude-type: help version",
    { complete: true }
  ),
  // Not proven: df reads every link on the way to its operands' mount points.
  { operands: "files", content: false }
)

export const cut = reader(
  Options.grammar(
    "b: c: d: f: n s z",
    "bytes: characters: delimiter: fields: complement only-delimited output-delimiter: zero-terminated help version",
    { complete: true }
  ),
  { operands: "files", proven: true }
)

const TR = Options.grammar("c C d s t", "complement delete squeeze-repeats truncate-set1 help version", {
  complete: true
})
export const tr: Describe = (args) => (Options.parse(TR, args).ok ? NO_PATHS : UNKNOWN)

export const diff = reader(
  Options.grammar(
    "a b B c C: d D: e E f F: H i I: l n N p P q r* s S: t T u U: v w W: x: X< y Z",
    "normal brief report-identical-files context? unified? ed rcs side-by-side left-column " +
      "suppress-common-lines show-c-function show-function-line: label: expand-tabs initial-tab tabsize: " +
      "suppress-blank-empty paginate new-file unidirectional-new-file text recursive* no-dereference exclude: " +
      "exclude-from< starting-file: from-file< to-file< ignore-case ignore-tab-expansion ignore-trailing-space " +
      "ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines: minimal horizon-lines: " +
      "speed-large-files strip-trailing-cr width: color? palette: line-format: old-line-format: new-line-format: " +
      "unchanged-line-format: old-group-format: new-group-format: unchanged-group-format: changed-group-format: " +
      "ifdef: ignore-file-name-case no-ignore-file-name-case help version",
    { numericShort: true, complete: true }
  ),
  // `-r` follows the links it meets (GNU diff without `--no-dereference`).
  { operands: "files", recursive: "option", proven: true, unprovenWith: ["r", "recursive"] }
)

const CMP = Options.grammar("b i: l n: s v", "print-bytes ignore-initial: verbose bytes: quiet silent help version", {
  complete: true
})
export const cmp: Describe = (args) => {
  const parsed = Options.parse(CMP, args)
  if (!parsed.ok || parsed.operands.length > 4) return UNKNOWN
  const paths = new Paths()
  // The third and fourth operands are byte offsets.
  for (const operand of parsed.operands.slice(0, 2)) paths.read(operand, false, true)
  return paths.done(true, { proven: true })
}

export const comm = reader(
  Options.grammar("1 2 3 z", "check-order nocheck-order output-delimiter: total zero-terminated help version", {
    complete: true
  }),
  { operands: "files", proven: true }
)

const complete = { complete: true } as const
const numeric = { numericShort: true, complete: true } as const

export const tac = fileReader("b r s:", "before regex separator:", {}, complete)
export const nl = fileReader(
  "b: d: f: h: i: l: n: p s: v: w:",
  "body-numbering: section-delimiter: footer-numbering: header-numbering: line-increment: join-blank-lines: " +
    "number-format: no-renumber number-separator: starting-line-number: number-width:",
  {},
  complete
)
export const od = fileReader(
  "A: a b c d D e F f H i I j: l L N: o O s S: t: v w? x X",
  "address-radix: endian: skip-bytes: read-bytes: strings? format: output-duplicates width? traditional",
  {},
  complete
)
// util-linux hexdump; `-e`/`-f` give a format, not a program.
export const hexdump = fileReader(
  "b c C d e% f# h L? n: o s: v V x",
  "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex format% format-file# " +
    "length: skip: no-squeezing color?",
  {},
  complete
)
const CHECKSUM_LONG =
  "binary check text tag untagged zero ignore-missing quiet status strict warn length: algorithm: base64 raw debug"
export const checksum = (extra = ""): Describe => {
  const describe = fileReader(`b c t w z ${extra}`, CHECKSUM_LONG, {}, complete)
  const g = Options.grammar(`b c t w z ${extra}`, `${CHECKSUM_LONG} help version`)
  return (args) => {
    const described = describe(args)
    // `-c` reads the files a checksum list names.
    const parsed = Options.parse(g, args)
    return parsed.ok && Options.has(parsed, "c", "check")
      ? { ...described, pathsKnown: false, unresolvedPaths: true, unresolvedWords: ["<names in the checksum lists>"] }
      : described
  }
}
// `base64 IN OUT` is an error (extra operand), not a write; more than one file is refused anyway.
export const base64 = fileReader("d i w:", "decode ignore-garbage wrap:", { maxFiles: 1 }, complete)
export const column = fileReader(
  "c: d e E: h H: i: J l: L n: N: o: O: p: r: R: s: t T: V W: x",
  "columns: table-noheadings table-column: table-columns: table-columns-limit: table-empty-lines table-hide: json " +
    "keep-empty-lines table-name: table-order: output-separator: table-right: tree: tree-id: tree-parent: " +
    "separator: table table-truncate: table-noextreme: table-wrap: fillrows table-header-repeat output-width:",
  {},
  complete
)
export const fold = fileReader("b s w:", "bytes spaces width:", {}, numeric)
export const expand = fileReader("i t:", "initial tabs:", {}, numeric)
export const unexpand = fileReader("a t:", "all first-only tabs:", {}, numeric)
export const rev = fileReader("h V", "", {}, complete)
export const paste = fileReader("d: s z", "delimiters: serial zero-terminated", {}, complete)
export const join = fileReader(
  "a: e: i j: o: t: v: z 1: 2:",
  "ignore-case check-order nocheck-order header zero-terminated",
  { maxFiles: 2 },
  complete
)
// binutils strings: an operand `@FILE` is a response file, whose words are read as more options and files.
export const strings = fileReader(
  "a d f n: t: e: o T: w s: h v U: V",
  "all data print-file-name bytes: radix: encoding: target: include-all-whitespace output-separator: unicode:",
  { responseFiles: true },
  numeric
)
export const fmt = fileReader(
  "c p: s t u w: g:",
  "crown-margin prefix: split-only tagged-paragraph uniform-spacing width: goal:",
  {},
  numeric
)
const LOOK = Options.grammar("a b d f h t: V", "alternative alphanum ignore-case terminate: help version", {
  complete: true
})
export const look: Describe = (args) => {
  const parsed = Options.parse(LOOK, args)
  if (!parsed.ok || parsed.operands.length > 2) return UNKNOWN
  const paths = new Paths()
  paths.read(parsed.operands[1], false, true)
  return paths.done(true, { proven: true })
}

export const sort = reader(
  Options.grammar(
    "b d f g h i M m n R r V c C k: o! s S: t: T: u z",
    "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort human-numeric-sort " +
      "ignore-nonprinting month-sort numeric-sort random-sort random-source< reverse sort: version-sort check? " +
      "batch-size: compress-program! debug files0-from@ key: merge output! stable buffer-size: field-separator: " +
      "temporary-directory: parallel: unique zero-terminated help version",
    { complete: true }
  ),
  // `-T DIR` puts temporary files there.
  { operands: "files", proven: true, unprovenWith: ["T", "temporary-directory"] }
)

// `uniq INPUT OUTPUT` writes OUTPUT (issue 20: an output operand is a write, never a read).
export const uniq = reader(
  Options.grammar(
    "c d D f: i s: u w: z",
    "count repeated all-repeated? skip-fields: ignore-case skip-chars: unique zero-terminated check-chars: group? " +
      "help version",
    { complete: true }
  ),
  { operands: "files", outputAfter: 1, proven: true }
)

// `tree -o file` writes; `-R` with `-H` writes an index into every directory.
export const tree = reader(
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
export const file = reader(
  Options.grammar(
    "b c C! d E e: F: f@ h i k l L m< n N p P: r s S v z Z 0",
    "brief checking-printout compile! exclude: exclude-quiet: extension mime mime-type mime-encoding files-from@ " +
      "keep-going list no-dereference dereference magic-file< no-buffer no-pad preserve-date raw special-files " +
      "separator: uncompress uncompress-noreport print0 parameter: apple debug no-sandbox help version",
    { complete: true }
  ),
  // `-m LIST` reads each file of the colon-separated list and its compiled `FILE.mgc`; `-p` puts each file's
  // access time back after reading it (utimensat: a write to the file's metadata).
  { operands: "files", proven: true, unprovenWith: ["m", "magic-file", "p", "preserve-date"] }
)

/**
 * xxd is not getopt: each option is its own word (`-as` is `-a`, not `-a -s`),
 * options end at the first operand, and `xxd INPUT OUTPUT` writes OUTPUT. So
 * only whole words from its list are options, and at most one operand.
 */
export const XXD_FLAGS = new Set([
  "-a",
  "-autoskip",
  "-b",
  "-bits",
  "-C",
  "-capitalize",
  "-E",
  "-EBCDIC",
  "-e",
  "-h",
  "-help",
  "-i",
  "-include",
  "-p",
  "-ps",
  "-postscript",
  "-plain",
  "-r",
  "-revert",
  "-u",
  "-uppercase",
  "-d",
  "-v",
  "-version"
])
export const XXD_VALUES = new Set([
  "-c",
  "-cols",
  "-g",
  "-groupsize",
  "-l",
  "-len",
  "-n",
  "-name",
  "-o",
  "-s",
  "-seek",
  "-R"
])

export const xxd: Describe = (args) => {
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
  return paths.done(true, { proven: true })
}

export const date: Describe = (args) => {
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
  return paths.done(true, { proven: true })
}

export const env = onlyFlags(["-0", "--null"])

/**
 * `getconf NAME [PATH]`, `getconf -a [PATH]` (glibc): a path operand is looked up (`pathconf`, which
 * `statfs`es it: found by the oracle's review). `-v SPEC` names a specification, not a file.
 */
export const getconf: Describe = (args) => {
  let i = 0
  let all = false
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic || arg.value === "--") break
    if (arg.value === "-a") all = true
    else if (arg.value === "-v") i++
    else if (!arg.value.startsWith("-v")) break
  }
  const paths = new Paths()
  const operands = args.slice(args[i]?.value === "--" && !args[i]!.dynamic ? i + 1 : i)
  for (const operand of operands.slice(all ? 0 : 1)) paths.read(operand, false, false)
  return paths.done(true, { proven: true })
}

export const hostname = onlyFlags([
  "-f",
  "--fqdn",
  "--long",
  "-s",
  "--short",
  "-i",
  "--ip-address",
  "-I",
  "--all-ip-addresses",
  "-d",
  "--domain",
  "-A",
  "--all-fqdns",
  "-a",
  "--alias",
  "-y",
  "--yp",
  "--nis"
])
