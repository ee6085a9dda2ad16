/**
 * Option grammars of the programs the shell analyser knows (issue 9, item 2):
 * which options take a value, which values are files read or written, which
 * options make the program write or run something, and which switch on
 * recursion — parsed the way getopt does it (combined short options, a
 * value attached or in the next word, long options by unambiguous prefix,
 * GNU argument permutation unless the program stops at its first operand).
 *
 * A grammar is written as two strings of space-separated entries, short
 * letters and long names, each followed by its kind:
 *
 * | suffix | meaning                                                              |
 * |--------|----------------------------------------------------------------------|
 * | (none) | a flag                                                               |
 * | `:`    | takes a value (attached or the next word)                            |
 * | `?`    | takes a value only when attached (`--color=auto`, `-w80`)            |
 * | `<`    | takes a value that is a file the program reads                       |
 * | `@`    | takes a value that is a file listing more files to read             |
 * | `%`    | takes a value that is the program's script or pattern               |
 * | `#`    | takes a value that is a file holding the script or pattern          |
 * | `*`    | a flag that makes the program descend into directory operands       |
 * | `!`    | writes or runs something: never read-only (flag or with a value)     |
 *
 * Anything not in the grammar is unknown, and an unknown option makes the
 * invocation not read-only: a real program would either reject it (harmless)
 * or do something this table does not describe.
 *
 * A word whose expansion is not one known literal (a glob, a brace or
 * parameter expansion, a `for`/`read` value, what `xargs` appends) is "any
 * word, options included" (issue 19, class 1): before `--` it may become any
 * option the real program has, and, unquoted, several words. So it is read
 * like an operand only when the grammar is `complete` (it lists every option
 * of the program, checked against `--help` by the test suite) and no option
 * writes or runs anything; otherwise the parse fails. What a word can become
 * is narrowed by how it is written: `src/*.ts` cannot become an option (it
 * starts with a literal `s`), `"$f"` is one word.
 *
 * @internal
 */

/** One word of a simple command after quote removal. */
export interface Word {
  readonly value: string
  /** The value depends on the environment or the filesystem (expansion, glob, brace expansion). */
  readonly dynamic: boolean
  /**
   * A dynamic word may expand to something starting with `-` (an option). Absent: it may.
   * False only when its expansion starts with a literal character other than `-` (`src/*.ts`, `"./$f"`).
   */
  readonly option?: boolean
  /**
   * A dynamic word may expand to no word or several (an unquoted glob or expansion, `"$@"`).
   * Absent: it may. False for a quoted expansion (`"$f"`), which is exactly one word.
   */
  readonly several?: boolean
}

/** Whether a word may turn out to be an option (or start one) once bash has expanded it. */
export const mayBeOption = (word: Word): boolean => word.dynamic ? word.option !== false : word.value.startsWith("-")

/** Whether a word may turn out to be no word or several once bash has expanded it. */
export const mayBeSeveral = (word: Word): boolean => word.dynamic && word.several !== false

/** What an option is. */
export type OptionKind =
  | "flag"
  | "value"
  | "attached"
  | "read"
  | "names"
  | "script"
  | "scriptFile"
  | "recursive"
  | "forbidden"

const SUFFIXES: Readonly<Record<string, OptionKind>> = {
  ":": "value",
  "?": "attached",
  "<": "read",
  "@": "names",
  "%": "script",
  "#": "scriptFile",
  "*": "recursive",
  "!": "forbidden"
}

/** A compiled option grammar. */
export interface Grammar {
  readonly short: ReadonlyMap<string, OptionKind>
  readonly long: ReadonlyMap<string, OptionKind>
  /** Options end at the first operand (POSIX), instead of GNU permutation. */
  readonly stopAtOperand: boolean
  /** `-NUM` is an option (`head -5`). */
  readonly numericShort: boolean
  /** Some option writes or runs: an unprovable word before `--` may become it. */
  readonly hasForbidden: boolean
  /**
   * Every option the program accepts is in the grammar, and none writes or runs anything: an
   * unprovable word before `--` can only be an option this table describes as harmless.
   */
  readonly harmless: boolean
  /** An option that takes a value may end a cluster (`-an5`); false for parsers that give it the next word anyway. */
  readonly valuesInClusters: boolean
  /** The grammar lists every option of the program (`--help` is checked against it in the tests). */
  readonly complete: boolean
}

const parseEntries = (spec: string): Map<string, OptionKind> => {
  const out = new Map<string, OptionKind>()
  for (const entry of spec.split(/\s+/)) {
    if (entry.length === 0) continue
    const last = entry[entry.length - 1]!
    const kind = SUFFIXES[last]
    if (kind === undefined) out.set(entry, "flag")
    else out.set(entry.slice(0, -1), kind)
  }
  return out
}

/** Compile a grammar from its short and long entry strings. */
export const grammar = (
  short: string,
  long: string = "",
  options: {
    readonly stopAtOperand?: boolean
    readonly numericShort?: boolean
    readonly valuesInClusters?: boolean
    /** The grammar lists every option of the program (the test suite checks it against `--help`). */
    readonly complete?: boolean
    /** Options the program's description handles that write (`sed -i`): not harmless. */
    readonly writes?: ReadonlyArray<string>
  } = {}
): Grammar => {
  const shortMap = parseEntries(short)
  const longMap = parseEntries(long)
  for (const key of shortMap.keys()) {
    if (key.length !== 1) throw new Error(`short option entry '${key}' must be one letter`)
  }
  const hasForbidden = [...shortMap.values(), ...longMap.values()].includes("forbidden")
  return {
    short: shortMap,
    long: longMap,
    stopAtOperand: options.stopAtOperand ?? false,
    numericShort: options.numericShort ?? false,
    valuesInClusters: options.valuesInClusters ?? true,
    hasForbidden,
    complete: options.complete ?? false,
    harmless: (options.complete ?? false) && !hasForbidden && (options.writes ?? []).length === 0
  }
}

/** One option occurrence, with its value when it takes one. */
export interface OptionUse {
  /** The letter or the full long name. */
  readonly name: string
  readonly kind: OptionKind
  readonly value: Word | undefined
}

/** The result of parsing a command's words with its grammar. */
export interface ParsedArguments {
  /** False when a word is not an option the grammar knows or may become one. */
  readonly ok: boolean
  readonly options: ReadonlyArray<OptionUse>
  readonly operands: ReadonlyArray<Word>
}

const FAILED: ParsedArguments = { ok: false, options: [], operands: [] }

/** The long option a (possibly abbreviated) name denotes, as getopt_long resolves it. */
const resolveLong = (long: ReadonlyMap<string, OptionKind>, name: string): string | undefined => {
  if (long.has(name)) return name
  if (name.length === 0) return undefined
  const matches = [...long.keys()].filter((option) => option.startsWith(name))
  return matches.length === 1 ? matches[0] : undefined
}

const takesValue = (kind: OptionKind) =>
  kind === "value" || kind === "read" || kind === "names" || kind === "script" || kind === "scriptFile"

/**
 * Parse words with a grammar. A forbidden option fails the parse; so does an
 * unknown one, and an unprovable word before `--` that may become an option
 * unless the grammar is `harmless` (then it is read like an operand). With
 * `stopAtOperand`, only a word that is surely one operand ends the options:
 * an unquoted expansion may expand to nothing.
 */
export const parse = (
  g: Grammar,
  args: ReadonlyArray<Word>,
  /** Read every unprovable word as an operand (for writers, which are never read-only anyway). */
  mode: { readonly dynamicOperands?: boolean } = {}
): ParsedArguments => {
  const options: Array<OptionUse> = []
  const operands: Array<Word> = []
  let endOfOptions = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (endOfOptions) {
      operands.push(arg)
      continue
    }
    if (arg.dynamic) {
      // It may become any option the program has; only a harmless grammar reads it like an operand.
      if (mayBeOption(arg) && !g.harmless && mode.dynamicOperands !== true) return FAILED
      operands.push(arg)
      if (g.stopAtOperand && !mayBeOption(arg) && !mayBeSeveral(arg)) endOfOptions = true
      continue
    }
    const value = arg.value
    if (value === "--") {
      endOfOptions = true
      continue
    }
    if (value.startsWith("--")) {
      const body = value.slice(2)
      const eq = body.indexOf("=")
      const name = resolveLong(g.long, eq === -1 ? body : body.slice(0, eq))
      if (name === undefined) return FAILED
      const kind = g.long.get(name)!
      if (kind === "forbidden") return FAILED
      if (takesValue(kind)) {
        const optionValue = eq === -1 ? args[++i] : { value: body.slice(eq + 1), dynamic: false }
        if (optionValue === undefined) return FAILED
        options.push({ name, kind, value: optionValue })
      } else if (kind === "attached") {
        options.push({ name, kind, value: eq === -1 ? undefined : { value: body.slice(eq + 1), dynamic: false } })
      } else {
        if (eq !== -1) return FAILED
        options.push({ name, kind, value: undefined })
      }
      continue
    }
    if (value.startsWith("-") && value.length > 1) {
      if (g.numericShort && /^-[0-9]+[a-zA-Z]*$/.test(value)) {
        options.push({ name: "NUM", kind: "value", value: { value: value.slice(1), dynamic: false } })
        continue
      }
      const letters = value.slice(1)
      for (let j = 0; j < letters.length; j++) {
        const letter = letters[j]!
        const kind = g.short.get(letter)
        if (kind === undefined || kind === "forbidden") return FAILED
        if (takesValue(kind)) {
          if (!g.valuesInClusters && letters.length > 1) return FAILED
          const rest = letters.slice(j + 1)
          const optionValue = rest.length > 0 ? { value: rest, dynamic: false } : args[++i]
          if (optionValue === undefined) return FAILED
          options.push({ name: letter, kind, value: optionValue })
          break
        }
        if (kind === "attached") {
          const rest = letters.slice(j + 1)
          options.push({ name: letter, kind, value: rest.length > 0 ? { value: rest, dynamic: false } : undefined })
          break
        }
        options.push({ name: letter, kind, value: undefined })
      }
      continue
    }
    operands.push(arg)
    if (g.stopAtOperand) endOfOptions = true
  }
  return { ok: true, options, operands }
}

/** Whether an option of this name (letter or long name) was given. */
export const has = (parsed: ParsedArguments, ...names: ReadonlyArray<string>): boolean =>
  parsed.options.some((option) => names.includes(option.name))

/** The values of the options of these names. */
export const valuesOf = (parsed: ParsedArguments, ...names: ReadonlyArray<string>): ReadonlyArray<Word> =>
  parsed.options.flatMap((option) => (names.includes(option.name) && option.value !== undefined ? [option.value] : []))
