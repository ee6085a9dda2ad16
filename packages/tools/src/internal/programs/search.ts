/**
 * The searchers: `grep` (and `egrep`, `fgrep`), `rg` and `find`.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, NO_PATHS, Paths, reader, UNKNOWN, withGrammar } from "./invocation.js"

export const GREP = Options.grammar(
  "E F G P e% f# i y w x z s v V b H h n l L o q c r* R* m: A: B: C: a I d: D: T U u Z",
  "extended-regexp fixed-strings basic-regexp perl-regexp regexp% file# ignore-case no-ignore-case word-regexp " +
    "line-regexp null-data no-messages invert-match version help max-count: byte-offset line-number " +
    "no-line-number line-buffered with-filename no-filename label: only-matching quiet silent binary-files: text " +
    "directories: devices: recursive* dereference-recursive* include: exclude: exclude-from< exclude-dir: " +
    "files-without-match files-with-matches count initial-tab null before-context: after-context: context: " +
    "group-separator: no-group-separator color? colour? binary unix-byte-offsets",
  { numericShort: true, complete: true }
)

export const grep: Describe = withGrammar(GREP, (args) => {
  const parsed = Options.parse(GREP, args)
  // `-d recurse` is `-r`.
  const recurse = Options.valuesOf(parsed, "d", "directories").some((word) => "recurse".startsWith(word.value))
  return reader(GREP, {
    operands: "patternThenFiles",
    recursive: recurse ? "always" : "option",
    defaultCwd: "recursive",
    // `-R` follows the links it meets into other trees.
    proven: true,
    unprovenWith: ["R", "dereference-recursive"]
  })(args)
})

export const RG = Options.grammar(
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
    "sort-files no-sort-files ignore ignore-dot ignore-exclude ignore-files ignore-global ignore-messages " +
    "ignore-parent ignore-vcs messages pcre2-unicode require-git print0 no-pre",
  { complete: true }
)

export const rg: Describe = withGrammar(RG, (args) => {
  const parsed = Options.parse(RG, args)
  if (!parsed.ok) return UNKNOWN
  if (Options.has(parsed, "type-list", "version", "V", "help", "h", "pcre2-version", "generate")) return NO_PATHS
  // `--files` takes no pattern and reads only names.
  const files = Options.has(parsed, "files")
  // Not proven: rg also reads the ignore files of every parent directory, and its config file.
  return reader(RG, {
    operands: files ? "files" : "patternThenFiles",
    content: !files,
    recursive: "always",
    defaultCwd: "always"
  })(args)
})

export const FIND_FORBIDDEN = new Set([
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls"
])

/** Primaries whose argument is a file find reads the metadata of (issue 20: `find` predicates that name files). */
const FIND_FILE_PRIMARIES = new Set(["-newer", "-anewer", "-cnewer", "-samefile"])

/**
 * Primaries that follow every link they meet (`stat`/`access`, not `lstat`), wherever it points: `-xtype`
 * the type of its target, `-readable`/`-writable`/`-executable` (`access(2)`), `-printf`'s `%Y` (found by
 * the oracle: `find . -xtype d` looks up `link-up`'s target outside the tree).
 */
const FIND_FOLLOWING_PRIMARIES = new Set(["-xtype", "-readable", "-writable", "-executable"])

/**
 * find's primaries look like options, so every word must be static: a glob could become `-delete`.
 * Proven complete unless it follows links (`-L`, `-follow`, the primaries above): then it reads wherever
 * they point.
 */
export const find: Describe = (args) => {
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
    // A lone `-` is a starting point, as find reads it (found by the oracle, seed 4242).
    if ((value.startsWith("-") && value !== "-") || value === "(" || value === "!" || value === ",") break
    paths.read(args[i], true, false)
    roots++
  }
  if (roots === 0) paths.read({ value: ".", dynamic: false }, true, false)
  // Primaries that read a file's contents, its metadata or a list of names.
  let follows = args.slice(0, i).some((arg) => arg.value === "-L")
  for (; i < args.length; i++) {
    const value = args[i]!.value
    if (value === "-files0-from") {
      paths.read(args[i + 1], false, true)
      paths.names(args[i + 1])
    } else if (FIND_FILE_PRIMARIES.has(value) || /^-newer[aBcm][aBcm]$/.test(value)) {
      // `-newerXt` compares with a time string, not a file.
      paths.read(args[i + 1], false, false)
      i++
    } else if (value === "-follow" || FIND_FOLLOWING_PRIMARIES.has(value)) follows = true
    else if (value === "-printf" && /%[-+ #0-9.]*Y/.test(args[i + 1]?.value ?? "")) follows = true
  }
  return paths.done(true, { proven: !follows })
}
