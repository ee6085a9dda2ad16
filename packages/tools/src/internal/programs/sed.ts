/**
 * `sed`: its script scanner (printing, plain edits, or neither) and `-i`.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, optionPaths, Paths, UNKNOWN, withGrammar, type Word } from "./invocation.js"

export const SED = Options.grammar(
  "n e% f# i? l: E r s u z b",
  "quiet silent expression% file# in-place? line-length: null-data zero-terminated regexp-extended separate " +
    "sandbox debug posix unbuffered follow-symlinks binary help version",
  // `-i` edits files: an unprovable word before the script may be it (issue 19, class 1).
  { complete: true, writes: ["i", "in-place"] }
)

export const sed: Describe = withGrammar(SED, (args) => {
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
  // A script with `w`, `W`, `r`, `R` or `e` touches files (or runs commands) its operands do not name:
  // its paths are not proven (issue 20).
  if (Options.has(parsed, "i", "in-place")) {
    const suffix = Options.valuesOf(parsed, "i", "in-place")[0]
    for (const operand of operands) {
      paths.write(operand, false)
      // `-iSUFFIX` renames the original to a backup name before writing (issue 19, class 8).
      if (suffix !== undefined && suffix.value.length > 0) paths.write(backupName(operand, suffix), false)
    }
    if (operands.length === 0) paths.names(undefined)
    return paths.done(false, { onlyWritesPaths: plain, proven: plain })
  }
  for (const operand of operands) paths.read(operand, false, true)
  // Without `-i` sed writes only standard output: any script without `e w W r R` only prints.
  return paths.done(plain, { proven: plain })
})

/**
 * The name GNU sed renames a file to before editing it in place: the name
 * with the suffix appended, or, when the suffix has `*`, the suffix with each
 * `*` replaced by the name as given (`-i'bak/*'`, `-i'.en*'` on `v` is
 * `.env`), relative to the working directory (checked against sed 4.9).
 */
export const backupName = (operand: Word, suffix: Word): Word => ({
  value: suffix.value.includes("*") ? suffix.value.replaceAll("*", operand.value) : operand.value + suffix.value,
  dynamic: operand.dynamic || suffix.dynamic
})

export interface SedScan {
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
export const scanSedScript = (script: string, allowEdits: boolean): SedScan => {
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
