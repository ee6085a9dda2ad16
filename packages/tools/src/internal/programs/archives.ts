/**
 * Archives and compressors: `tar -t`, `unzip -l`, `zcat`, `gzip`.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, NO_PATHS, optionPaths, Paths, UNKNOWN, withGrammar, type Word } from "./invocation.js"

export const TAR = Options.grammar(
  "t f< v z j J Z a h O C: w! x! c! r! u! A! d!",
  "list file< verbose gzip gunzip ungzip bzip2 xz lzma lzip lzop zstd auto-compress dereference to-stdout " +
    "wildcards no-wildcards anchored no-anchored exclude: numeric-owner full-time utc force-local quiet " +
    "directory: help version"
)

/** `tar -t`: listing only. An archive name with `:` is a remote host (rsh) unless `--force-local`. */
export const tar: Describe = withGrammar(TAR, (args) => {
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
  return paths.done(true, { proven: true })
})

export const unzip: Describe = (args) => {
  const parsed = Options.parse(Options.grammar("l v t q z"), args)
  if (!parsed.ok || !Options.has(parsed, "l", "v", "t", "z")) return UNKNOWN
  const paths = new Paths()
  // The archive; later operands are member names.
  paths.read(parsed.operands[0], false, true)
  return paths.done(true, { proven: true })
}

/** The suffixes gzip recognises on a compressed name, and what `-d` makes of them. */
const GZIP_SUFFIXES: ReadonlyArray<readonly [string, string]> = [
  [".gz", ""],
  ["-gz", ""],
  [".z", ""],
  ["-z", ""],
  ["_z", ""],
  [".Z", ""],
  [".tgz", ".tar"],
  [".taz", ".tar"]
]

/**
 * The names gzip opens for an operand it decompresses: the name itself when it
 * has a known suffix, else each name with a suffix added (`zcat data` tries
 * `data.gz`, `data.z`, …), and what it writes back (the name without the suffix).
 */
const compressedNames = (value: string): ReadonlyArray<{ readonly input: string; readonly output: string }> => {
  const known = GZIP_SUFFIXES.find(([suffix]) => value.endsWith(suffix) && value.length > suffix.length)
  if (known !== undefined) return [{ input: value, output: value.slice(0, -known[0].length) + known[1] }]
  return [
    { input: value, output: value },
    ...GZIP_SUFFIXES.map(([suffix]) => ({ input: value + suffix, output: value }))
  ]
}

const GZIP = Options.grammar(
  "c d l t v q n N k f r S: 1 2 3 4 5 6 7 8 9",
  "stdout to-stdout decompress uncompress list test verbose quiet no-name name keep force recursive suffix: fast " +
    "best synchronous rsyncable help version"
)

/**
 * `gzip` (issue 20: compressors remove their input and create another name):
 * with `-c`, `-l` or `-t` it only reads; otherwise each operand is replaced
 * by its compressed (`F.gz`) or decompressed (`F` from `F.gz`) name — both
 * written, the input removed unless `-k`. Proven for literal operands without
 * `-r` (a tree of new names), `-S` (another suffix) or, decompressing, `-N`
 * (the name stored in the file); `zcat` reads the names `gzip -d` would.
 */
export const gzip: Describe = withGrammar(GZIP, (args) => {
  const parsed = Options.parse(GZIP, args)
  if (!parsed.ok) return UNKNOWN
  if (Options.has(parsed, "help", "version")) return NO_PATHS
  const paths = new Paths()
  const decompress = Options.has(parsed, "d", "decompress", "uncompress")
  // `-d -N` names the output after the name stored in the compressed file (`gzip -dN x.gz` writes `data.txt`).
  const storedName = decompress && Options.has(parsed, "N", "name")
  const proven = !Options.has(parsed, "r", "recursive", "S", "suffix")
  if (Options.has(parsed, "c", "stdout", "to-stdout", "l", "list", "t", "test")) {
    for (const operand of parsed.operands) {
      if (!decompress && !Options.has(parsed, "l", "list", "t", "test")) paths.read(operand, false, true)
      else {for (const name of operand.dynamic ? [{ input: operand.value }] : compressedNames(operand.value)) {
          paths.read({ value: name.input, dynamic: operand.dynamic }, false, true)
        }}
    }
    return paths.done(true, { proven })
  }
  for (const operand of parsed.operands) {
    if (operand.dynamic) {
      paths.write(operand, true)
      continue
    }
    const names = decompress
      ? compressedNames(operand.value)
      : [{ input: operand.value, output: `${operand.value}.gz` }]
    for (const name of names) {
      paths.write({ value: name.input, dynamic: false }, false)
      paths.write({ value: name.output, dynamic: false }, false)
    }
  }
  return paths.done(false, { proven: proven && !storedName })
})

/** `zcat`: `gzip -dc`. */
export const zcat: Describe = (args) => gzip([{ value: "-dc", dynamic: false }, ...args])
