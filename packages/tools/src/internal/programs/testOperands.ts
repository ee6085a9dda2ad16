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
