/**
 * Shell builtins the table knows: `test`/`[`, `printf`, `command`, `read`.
 *
 * @internal
 */
import { type Describe, NO_PATHS, Paths, UNKNOWN } from "./invocation.js"
import * as TestOperands from "./testOperands.js"

/**
 * `test`/`[`: read-only unless bash may evaluate an operand as arithmetic or a
 * subscript, where `a[$(cmd)]` runs `cmd` (`testOperands.ts`). The files its
 * operators name are read (their metadata: issue 20, a footprint that names
 * them); proven complete.
 */
export const test = (closing: boolean): Describe => (args) => {
  const words = closing ? args.slice(0, -1) : args
  if (closing && (args.length === 0 || args[args.length - 1]!.value !== "]" || args[args.length - 1]!.dynamic)) {
    return UNKNOWN
  }
  if (TestOperands.evaluatesAtRunTime(words)) return UNKNOWN
  const paths = new Paths()
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word.dynamic) continue
    if (
      TestOperands.FILE_OPERATORS.has(word.value) && i + 1 < words.length &&
      (i === 0 || ["!", "-a", "-o", "("].includes(words[i - 1]!.value))
    ) {
      paths.read(words[i + 1], false, false)
    } else if (TestOperands.FILE_COMPARISONS.has(word.value) && i > 0 && i + 1 < words.length) {
      paths.read(words[i - 1], false, false)
      paths.read(words[i + 1], false, false)
    }
  }
  return paths.done(true, { proven: true })
}

/**
 * `which`, `type`, `whereis`, `command -v`: they look names up on PATH, but a
 * name with a `/` is a path whose metadata they read (issue 20).
 */
export const lookup = (skipFlags: boolean): Describe => (args) => {
  const paths = new Paths()
  for (const arg of args) {
    if (skipFlags && !arg.dynamic && arg.value.startsWith("-")) continue
    if (arg.dynamic || arg.value.includes("/")) paths.read(arg, false, false)
  }
  return paths.done(true, { proven: true })
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
    ? lookup(true)(args.slice(1))
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
