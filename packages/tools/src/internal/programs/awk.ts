/**
 * `awk` (`gawk`, `mawk`) with a program that can only print.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, Paths, UNKNOWN, withGrammar } from "./invocation.js"

export const AWK = Options.grammar("F: v:", "field-separator: assign:", { stopAtOperand: true })

/** An awk program that can only print: no pipes, redirections, `system`, `getline`, gawk's `@` forms. */
export const isPrintingAwkProgram = (program: string): boolean =>
  !/[|>@`]/.test(program) && !/\b(system|getline|close|fflush)\b/.test(program)

export const awk: Describe = withGrammar(AWK, (args) => {
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
  return paths.done(true, { proven: true })
})
