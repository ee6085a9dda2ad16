/**
 * The operands of `test`, `[` and `[[ ]]` that bash evaluates (issue 9,
 * class 1; issue 23's "one test-operand module"): the operands of `-eq` and
 * friends are arithmetic, and the operand of `-v`/`-R` is a variable name
 * whose subscript is arithmetic — where `a[$(cmd)]` runs `cmd`, even from a
 * single-quoted word. Only literal numbers and plain names are read-only
 * there. Used by the `test`/`[` description and by the analyser's `[[ ]]`.
 *
 * @internal
 */
import * as Options from "./options.js"

/** Binary operators whose operands bash evaluates as arithmetic. */
export const ARITHMETIC_OPERATORS: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])

/** Unary operators whose operand is a variable name (a subscript in it is evaluated). */
export const NAME_OPERATORS: ReadonlySet<string> = new Set(["-v", "-R"])

/** A literal integer, as bash's arithmetic reads it (surrounding blanks are ignored). */
export const isLiteralNumber = (text: string): boolean => /^[ \t]*[+-]?[0-9]+[ \t]*$/.test(text)

/** A variable name without a subscript. */
export const isPlainName = (text: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(text)

/** Whether an operand of `operator` is one bash would evaluate as code-capable arithmetic or a subscript. */
export const evaluatesOperand = (operator: string, operand: string): boolean =>
  ARITHMETIC_OPERATORS.has(operator) ? !isLiteralNumber(operand) : NAME_OPERATORS.has(operator) && !isPlainName(operand)

/** Binary operators whose operands are strings or files, never evaluated. */
const PLAIN_BINARY = new Set(["=", "==", "!=", "<", ">", "-nt", "-ot", "-ef"])

/** Unary operators whose operand is a file (its metadata is read; `-t` takes a descriptor). */
export const FILE_OPERATORS: ReadonlySet<string> = new Set([
  "-a",
  "-b",
  "-c",
  "-d",
  "-e",
  "-f",
  "-g",
  "-G",
  "-h",
  "-k",
  "-L",
  "-N",
  "-O",
  "-p",
  "-r",
  "-s",
  "-S",
  "-u",
  "-w",
  "-x"
])

/** Binary operators comparing two files. */
export const FILE_COMPARISONS: ReadonlySet<string> = new Set(["-nt", "-ot", "-ef"])

/**
 * Whether `test`/`[` with these words (without the closing `]`) may evaluate a
 * value as arithmetic or a subscript (issue 19, class 2): a literal operand of
 * `-eq` and friends that is not a number, or of `-v`/`-R` that is not a plain
 * name; or a word not known until run time that may become such an operator or
 * operand — any word that may be several words, and any that may start with
 * `-` where bash's argument-count rules do not make it a plain operand
 * (`test "$x"`, `test -f "$x"`, `test "$x" = y` are plain).
 */
export const evaluatesAtRunTime = (words: ReadonlyArray<Options.Word>): boolean => {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word.dynamic) {
      if (Options.mayBeSeveral(word)) return true
      if (Options.mayBeOption(word) && !plainOperandPosition(words, i)) return true
      continue
    }
    if (ARITHMETIC_OPERATORS.has(word.value)) {
      for (const operand of [words[i - 1], words[i + 1]]) {
        if (operand !== undefined && (operand.dynamic || evaluatesOperand(word.value, operand.value))) return true
      }
    }
    if (NAME_OPERATORS.has(word.value)) {
      const operand = words[i + 1]
      if (operand !== undefined && (operand.dynamic || evaluatesOperand(word.value, operand.value))) return true
    }
  }
  return false
}

/** Word `i` is an operand whatever it turns out to be: alone, after a literal unary operator, or beside a plain binary one. */
const plainOperandPosition = (words: ReadonlyArray<Options.Word>, i: number): boolean => {
  if (words.length === 1) return true
  const literal = (word: Options.Word | undefined) => word !== undefined && !word.dynamic
  if (words.length === 2 && i === 1) {
    const operator = words[0]!
    return literal(operator) && operator.value.startsWith("-") && !NAME_OPERATORS.has(operator.value)
  }
  if (words.length === 3 && i !== 1) {
    const operator = words[1]!
    return literal(operator) && PLAIN_BINARY.has(operator.value)
  }
  return false
}
