/**
 * Archives and compressors: `tar -t`, `unzip -l`, `zcat`, `gzip`.
 *
 * @internal
 */
import * as Options from "./options.js"
import {
  type Describe,
  fileReader,
  NO_PATHS,
  notReadOnly,
  optionPaths,
  Paths,
  UNKNOWN,
  withGrammar,
  type Word
} from "./invocation.js"

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

export const zcat = fileReader("f l q v t", "force list quiet verbose test")

export const gzip: Describe = (args) => {
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
