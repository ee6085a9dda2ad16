/**
 * Shell builtins the table knows: `test`/`[`, `printf`, `command`, `read`.
 *
 * @internal
 */
import { type Describe, NO_PATHS, UNKNOWN } from "./invocation.js"
import * as TestOperands from "./testOperands.js"

/**
 * `test`/`[`: bash evaluates the operands of `-eq` and friends and the name of
 * `-v` as arithmetic and subscripts, where `a[$(cmd)]` runs `cmd`; only
 * literal numbers and plain names are read-only.
 */
export const test = (closing: boolean): Describe => (args) => {
  const words = closing ? args.slice(0, -1) : args
  if (closing && (args.length === 0 || args[args.length - 1]!.value !== "]" || args[args.length - 1]!.dynamic)) {
    return UNKNOWN
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word.dynamic) continue
    if (TestOperands.ARITHMETIC_OPERATORS.has(word.value)) {
      const left = words[i - 1]
      const right = words[i + 1]
      if (left === undefined || right === undefined) continue
      if (
        left.dynamic || right.dynamic || TestOperands.evaluatesOperand(word.value, left.value) ||
        TestOperands.evaluatesOperand(word.value, right.value)
      ) return UNKNOWN
    }
    if (TestOperands.NAME_OPERATORS.has(word.value)) {
      const operand = words[i + 1]
      if (operand !== undefined && (operand.dynamic || TestOperands.evaluatesOperand(word.value, operand.value))) {
        return UNKNOWN
      }
    }
  }
  // Unprovable operands might become `-v` or `-eq` at run time.
  return words.some((word) => word.dynamic) && words.length > 1 ? UNKNOWN : NO_PATHS
}

export const printf: Describe = (args) => {
  // `printf -v var` assigns a variable (a subscript in its name is evaluated); options are only read before the format.
  const first = args[0]
  if (first === undefined) return NO_PATHS
  return !first.dynamic && !first.value.startsWith("-v") ? NO_PATHS : UNKNOWN
}

export const commandBuiltin: Describe = (args) => {
  // `command -v name` only looks names up; `command name` would run it.
  const first = args[0]
  if (first === undefined || first.dynamic || (first.value !== "-v" && first.value !== "-V")) return UNKNOWN
  return args.slice(1).every((arg) =>
      !arg.dynamic && (!arg.value.startsWith("-") || arg.value === "-v" || arg.value === "-V")
    )
    ? NO_PATHS
    : UNKNOWN
}

export const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/

// `read` assigns shell variables; lowercase names cannot clobber the exported
// environment (PATH, GIT_PAGER, LD_PRELOAD, …) that later commands inherit.
// A subscript in a name (`a[$(cmd)]`) is evaluated, so names must be plain.
export const read: Describe = (args) => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return UNKNOWN
    const value = arg.value
    if (["-r", "-s", "-e"].includes(value)) continue
    if (["-d", "-p"].includes(value)) {
      if (args[i + 1]?.dynamic !== false) return UNKNOWN
      i++
      continue
    }
    if (["-n", "-N", "-t", "-u"].includes(value)) {
      const count = args[++i]
      if (count === undefined || count.dynamic || !/^[0-9]+(\.[0-9]+)?$/.test(count.value)) return UNKNOWN
      continue
    }
    if (value === "-a") {
      const name = args[++i]
      if (name === undefined || name.dynamic || !LOWERCASE_NAME.test(name.value)) return UNKNOWN
      continue
    }
    if (!LOWERCASE_NAME.test(value)) return UNKNOWN
  }
  return NO_PATHS
}
