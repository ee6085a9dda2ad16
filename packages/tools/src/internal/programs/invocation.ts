/**
 * The shape of a program description: what one invocation does (`Invocation`),
 * the collector of its paths (`Paths`) and the builders most descriptions are
 * made with (`reader`, `fileReader`, `onlyFlags`).
 *
 * @internal
 */
import type * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Options from "./options.js"

export type { Word } from "./options.js"
type Word = Options.Word
type PathUse = ShellAnalysis.PathUse

/** What the table knows about one invocation. */
export interface Invocation {
  readonly readOnly: boolean
  readonly reads: ReadonlyArray<PathUse>
  readonly writes: ReadonlyArray<PathUse>
  /**
   * Every path it touches is in `reads`/`writes`: its description says its path lists are proven
   * complete (the default is not), and no path is a glob, expansion or list file.
   */
  readonly pathsKnown: boolean
  /** A path argument could not be resolved (a glob, an expansion, a list of names); not set for unknown programs. */
  readonly unresolvedPaths: boolean
  /** Those path words as written; a list of names is `<names in FILE>`. */
  readonly unresolvedWords: ReadonlyArray<string>
  /** Its only effect is writing `writes` (no program run, no other file): `mkdir`, `rm`, `sed -i` with a plain script… */
  readonly onlyWritesPaths: boolean
}

export const UNKNOWN: Invocation = {
  readOnly: false,
  reads: [],
  writes: [],
  pathsKnown: false,
  unresolvedPaths: false,
  unresolvedWords: [],
  onlyWritesPaths: false
}
export const NO_PATHS: Invocation = {
  readOnly: true,
  reads: [],
  writes: [],
  pathsKnown: true,
  unresolvedPaths: false,
  unresolvedWords: [],
  onlyWritesPaths: false
}
export const notReadOnly = (invocation: Invocation): Invocation => ({ ...invocation, readOnly: false })

export interface Describe {
  (args: ReadonlyArray<Word>): Invocation
  /** The option grammar it parses with, when it has one (the execution oracle generates from it). */
  readonly grammar?: Options.Grammar
}

export const withGrammar = (g: Options.Grammar, describe: (args: ReadonlyArray<Word>) => Invocation): Describe =>
  Object.assign(describe, { grammar: g })

/** Collects the paths of one invocation. */
export class Paths {
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

  /**
   * A path relative to the repository the command runs in (`ShellAnalysis.PathUse.anchor`): for
   * footprints only; the permission rules judge the paths as written.
   */
  anchored(
    anchor: "repository" | "gitDirectory",
    path: string,
    access: { readonly read?: boolean; readonly write?: boolean }
  ): void {
    const use = { path, subtree: path === ".", content: true, anchor }
    if (access.read === true) this.reads.push(use)
    if (access.write === true) this.writes.push(use)
  }

  /** A path renamed (`mv` sources): written as a whole, and a barrier if it is a symbolic link. */
  move(word: Word | undefined): void {
    this.add(this.writes, word, true, true, true)
  }

  private add(list: Array<PathUse>, word: Word | undefined, subtree: boolean, content: boolean, moves = false): void {
    if (word === undefined) return
    if (word.dynamic) {
      this.known = false
      this.unresolved.push(word.value)
      return
    }
    // `-` is a file named `-` for many programs (`mkdir -`, `rev -`, `readlink -`; found by the oracle, seed
    // 4242) and standard input or output for others: declared as the path, which is sound for both.
    list.push(moves ? { path: word.value, subtree, content, moves } : { path: word.value, subtree, content })
  }

  /**
   * The invocation: `proven` when the description knows these are all the paths the program
   * touches (issue 20: a footprint is trusted only when proven complete; the default is not).
   */
  done(readOnly: boolean, verdict: { readonly onlyWritesPaths?: boolean; readonly proven?: boolean } = {}): Invocation {
    return {
      readOnly,
      reads: this.reads,
      writes: this.writes,
      pathsKnown: this.known && (verdict.proven ?? false),
      unresolvedPaths: !this.known,
      unresolvedWords: this.unresolved,
      onlyWritesPaths: verdict.onlyWritesPaths ?? false
    }
  }
}

/** Reads the values of `read`, `names` and `scriptFile` options; `names` makes the paths unknown. */
export const optionPaths = (parsed: Options.ParsedArguments, paths: Paths): void => {
  for (const option of parsed.options) {
    if (option.kind === "read" || option.kind === "scriptFile") paths.read(option.value, false, true)
    else if (option.kind === "names") {
      paths.read(option.value, false, true)
      paths.names(option.value)
    }
  }
}

export interface ReaderSpec {
  /** Operands: all files, the first a pattern or script unless an option gave one, or none are paths. */
  readonly operands: "files" | "patternThenFiles" | "none"
  /** Contents are read (`cat`), or only names and metadata (`ls`, `stat`). */
  readonly content?: boolean
  /** Directory operands are descended into: always, or with a `recursive` option. */
  readonly recursive?: "always" | "option"
  /** With no file operand, the working directory is read (recursive readers, `ls`). */
  readonly defaultCwd?: "always" | "recursive"
  /** More file operands than this are refused (the program stops with "extra operand"). */
  readonly maxFiles?: number
  /** Operands after the first this many are files it writes (`uniq IN OUT`): never read-only. */
  readonly outputAfter?: number
  /** An operand `@FILE` is a response file: FILE is read, and its words are more options and files. */
  readonly responseFiles?: boolean
  /**
   * Its reads are every path it touches (issue 20), unless one of `unprovenWith` is given (options
   * that follow links out of a tree it reads, or write temporary files somewhere).
   */
  readonly proven?: boolean
  readonly unprovenWith?: ReadonlyArray<string>
  /** Further conditions on the parsed arguments. */
  readonly check?: (parsed: Options.ParsedArguments) => boolean
}

/** A program that reads its operands and writes nothing but standard output. */
export const reader = (g: Options.Grammar, spec: ReaderSpec): Describe =>
  withGrammar(g, (args) => {
    const parsed = Options.parse(g, args)
    if (!parsed.ok) return UNKNOWN
    const paths = new Paths()
    optionPaths(parsed, paths)
    let operands = parsed.operands
    if (spec.operands === "none") operands = []
    const scriptGiven = parsed.options.some((option) => option.kind === "script" || option.kind === "scriptFile")
    const recursive = spec.recursive === "always" ||
      (spec.recursive === "option" && parsed.options.some((option) => option.kind === "recursive"))
    const content = spec.content ?? true
    if (spec.operands === "patternThenFiles" && !scriptGiven) {
      // A pattern word that may expand to several words puts files after the pattern.
      const pattern = operands[0]
      if (pattern !== undefined && Options.mayBeSeveral(pattern)) paths.read(pattern, recursive, content)
      operands = operands.slice(1)
    }
    // More words than one operand each may stand for: an unquoted expansion may be any number of files.
    const unbounded = operands.some(Options.mayBeSeveral)
    const inputs = spec.outputAfter === undefined ? operands : operands.slice(0, spec.outputAfter)
    for (const operand of inputs) {
      if (spec.responseFiles === true && !operand.dynamic && operand.value.startsWith("@")) {
        const file = { value: operand.value.slice(1), dynamic: false }
        paths.read(file, false, true)
        paths.names(file)
      } else paths.read(operand, recursive, content)
    }
    for (const output of spec.outputAfter === undefined ? [] : operands.slice(spec.outputAfter)) {
      paths.write(output, false)
    }
    if (operands.length === 0 && (spec.defaultCwd === "always" || (spec.defaultCwd === "recursive" && recursive))) {
      paths.read({ value: ".", dynamic: false }, true, content)
    }
    const fits = (spec.maxFiles === undefined || (operands.length <= spec.maxFiles && !unbounded)) &&
      (spec.outputAfter === undefined || (operands.length <= spec.outputAfter && !unbounded))
    const proven = (spec.proven ?? false) && !Options.has(parsed, ...(spec.unprovenWith ?? []))
    return paths.done(fits && (spec.check?.(parsed) ?? true), { proven })
  })

/** A program whose operands are not paths and that has no options that write. */
export const noPaths: Describe = () => NO_PATHS

export const mergePaths = (invocation: Invocation, paths: Paths): Invocation => ({
  ...invocation,
  reads: [...paths.reads, ...invocation.reads],
  pathsKnown: invocation.pathsKnown && paths.known,
  unresolvedPaths: invocation.unresolvedPaths || !paths.known,
  unresolvedWords: [...paths.unresolved, ...invocation.unresolvedWords]
})

/**
 * A reader of file operands with the grammar `short`/`long` (plus `--help`
 * and `--version`); `complete` when the grammar lists every option of the
 * program (checked against its `--help` in the tests).
 */
export const fileReader = (
  short: string,
  long: string,
  spec: Partial<ReaderSpec> = {},
  options: { readonly numericShort?: boolean; readonly complete?: boolean } = {}
): Describe =>
  reader(Options.grammar(short, `${long} help version`, options), { operands: "files", proven: true, ...spec })

/** Every word is a static option from `allowed` (flags only, no operands). */
export const onlyFlags = (allowed: ReadonlyArray<string>): Describe => (args) =>
  args.every((arg) => !arg.dynamic && allowed.includes(arg.value)) ? NO_PATHS : UNKNOWN
