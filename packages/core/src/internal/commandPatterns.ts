/**
 * Compiled matchers for the specifier of a `Bash(…)` rule: command patterns,
 * the wrappers stripped before matching and the textual forms a simple
 * command is compared in. Each is compiled once per rule (see `ruleIndex`).
 */

import * as ShellAnalysis from "../ShellAnalysis.js"

/** @internal */
export type CommandMatcher = (command: string) => boolean

const escapeRegExp = (text: string): string => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

/** Collapse runs of whitespace: candidates are compared in this normal form. */
export const normalizeSpaces = (text: string): string => text.trim().replace(/\s+/g, " ")

/**
 * Compile a Bash specifier:
 * - `prefix:*` (legacy): `prefix` alone or followed by a space;
 * - a single trailing ` *` (`ls *`): the word boundary rule — `ls` and
 *   `ls -la`, never `lsof`;
 * - `*` anywhere else: any run of characters;
 * - otherwise the exact command.
 *
 * @internal
 */
export const compileCommandPattern = (specifier: string): CommandMatcher => {
  const spec = normalizeSpaces(specifier)
  if (spec.endsWith(":*")) {
    const prefix = spec.slice(0, -2).trimEnd()
    const withSpace = `${prefix} `
    return (command) => command === prefix || command.startsWith(withSpace)
  }
  const stars = spec.split("*").length - 1
  if (stars === 0) return (command) => command === spec
  if (stars === 1 && spec.endsWith(" *")) {
    const prefix = spec.slice(0, -2)
    const withSpace = `${prefix} `
    return (command) => command === prefix || command.startsWith(withSpace)
  }
  const regex = new RegExp(`^${spec.split("*").map(escapeRegExp).join(".*")}$`, "s")
  return (command) => regex.test(command)
}

/**
 * The process wrappers stripped before matching (Claude Code strips
 * `timeout`, `time`, `nice`, `nohup`, `stdbuf` and bare `xargs`; `command`,
 * `env` and `exec` run their argument just the same, so they are stripped
 * too). Each entry consumes the wrapper's own options and returns the index of
 * the wrapped command, `undefined` when the shape is not recognised, or
 * `NOT_A_WRAPPER` when this use runs nothing (`command -v x`).
 */
const NOT_A_WRAPPER = -1

const wrappers: Record<string, (argv: ReadonlyArray<string>) => number | undefined> = {
  timeout: (argv) => {
    let i = 1
    while (i < argv.length) {
      const word = argv[i]!
      if (word === "-s" || word === "-k" || word === "--signal" || word === "--kill-after") i += 2
      else if (/^--(signal|kill-after)=/.test(word) || /^-[sk]\S+$/.test(word)) i += 1
      else if (word === "--preserve-status" || word === "--foreground" || word === "-v" || word === "--verbose") i += 1
      else if (word === "--") i += 1
      else break
    }
    return argv[i] !== undefined && /^\d+(\.\d+)?[smhd]?$/.test(argv[i]!) ? i + 1 : undefined
  },
  time: (argv) => {
    let i = 1
    while (argv[i] === "-p" || argv[i] === "-v" || argv[i] === "--portability" || argv[i] === "--verbose") i += 1
    return i
  },
  nice: (argv) => {
    const word = argv[1]
    if (word === "-n" || word === "--adjustment") return 3
    if (word !== undefined && (/^-n-?\d+$/.test(word) || /^--adjustment=-?\d+$/.test(word) || /^-\d+$/.test(word))) {
      return 2
    }
    return word !== undefined && word.startsWith("-") ? undefined : 1
  },
  nohup: (argv) => (argv[1] === "--" ? 2 : 1),
  command: (argv) => {
    let i = 1
    while (argv[i] === "-p" || argv[i] === "--") i += 1
    // `command -v x` asks where x is; it does not run x.
    if (argv[i] === "-v" || argv[i] === "-V") return NOT_A_WRAPPER
    return argv[i] !== undefined && argv[i]!.startsWith("-") ? undefined : i
  },
  xargs: (argv) => (argv[1] !== undefined && argv[1].startsWith("-") ? undefined : 1),
  stdbuf: (argv) => {
    let i = 1
    while (i < argv.length) {
      const word = argv[i]!
      if (word === "-i" || word === "-o" || word === "-e") i += 2
      else if (/^-[ioe]\S+$/.test(word) || /^--(input|output|error)=/.test(word)) i += 1
      else break
    }
    return i
  },
  env: (argv) => {
    let i = 1
    while (argv[i] !== undefined && isAssignment(argv[i]!)) i += 1
    return argv[i] !== undefined && argv[i]!.startsWith("-") ? undefined : i
  },
  exec: (argv) => (argv[1] !== undefined && argv[1].startsWith("-") ? undefined : 1),
  builtin: () => 1,
  // Programs that run the rest of their arguments as a command after options of their own (some
  // with a value first: `flock FILE cmd`, `chroot DIR cmd`): for deny rules every tail is tried.
  ...Object.fromEntries(
    [
      "coproc",
      "setsid",
      "flock",
      "unshare",
      "chrt",
      "ionice",
      "taskset",
      "nsenter",
      "prlimit",
      "sudo",
      "doas",
      "chroot",
      "watch",
      "runuser",
      "su",
      "systemd-run",
      "firejail",
      "catchsegv",
      "strace",
      "ltrace",
      "valgrind",
      "faketime"
    ]
      .map((name) => [name, (): number | undefined => undefined])
  )
}

/** @internal */
export const isAssignment = (word: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)

/**
 * A `VAR=value` that may change what the command runs or loads: anything but
 * the short allow-list of harmless variables (locale, colours, …). A command
 * with one is never matched by an allow rule for the bare command.
 *
 * @internal
 */
export const isDangerousAssignment = (word: string): boolean =>
  isAssignment(word) && !ShellAnalysis.isHarmlessAssignment(word)

/**
 * What a simple command is, for matching: the words with leading assignments
 * and wrappers removed, and every textual form a rule may be compared with.
 *
 * @internal
 */
export interface CommandForms {
  /** The command words without assignments and wrappers. */
  readonly argv: ReadonlyArray<string>
  /** Forms a deny or ask rule is matched against (any match counts). */
  readonly denyForms: ReadonlyArray<string>
  /** Forms an allow rule is matched against (any match counts; all denote the same program call). */
  readonly allowForms: ReadonlyArray<string>
  /**
   * A leading or wrapper assignment (`PATH=… cmd`, `env HOME=… git …`) outside the harmless list:
   * it may change which program runs or what it loads.
   */
  readonly dangerousAssignment: boolean
}

/**
 * Build the matching forms of one simple command.
 *
 * @internal
 */
export const commandForms = (
  text: string,
  argv: ReadonlyArray<string>,
  assignments: ReadonlyArray<string>
): CommandForms => {
  const written = normalizeSpaces(text)
  let start = 0
  while (start < argv.length && isAssignment(argv[start]!)) start += 1
  let dangerous = [...assignments, ...argv.slice(0, start)].some(isDangerousAssignment)
  // The command as written with quotes removed; the analyser may keep assignments out of argv.
  const full = [...assignments, ...argv].join(" ")
  const denyForms = new Set<string>([written, full])
  const allowForms = new Set<string>([written, full])
  let words = argv.slice(start)
  let uncertain = false
  for (let guard = 0; guard < 16 && words.length > 0; guard++) {
    denyForms.add(words.join(" "))
    if (!dangerous) allowForms.add(words.join(" "))
    const unwrap = wrappers[words[0]!]
    if (unwrap === undefined) break
    const next = unwrap(words)
    if (next === NOT_A_WRAPPER) break
    if (next === undefined) {
      uncertain = true
      break
    }
    // `env A=1 cmd` sets variables too; a wrapped command may be followed by more assignments.
    if (words.slice(1, next).some(isDangerousAssignment)) dangerous = true
    // `nice -n 5 -- rm`, `stdbuf -o0 -- rm`, `time -- rm`: `--` ends the wrapper's options (issue 19, class 9).
    let rest = words[next] === "--" ? words.slice(next + 1) : words.slice(next)
    while (rest.length > 0 && isAssignment(rest[0]!)) {
      if (isDangerousAssignment(rest[0]!)) dangerous = true
      rest = rest.slice(1)
    }
    words = rest
  }
  if (words.length > 0) {
    denyForms.add(words.join(" "))
    if (!dangerous && !uncertain) allowForms.add(words.join(" "))
  }
  if (uncertain) {
    // A wrapper whose options we cannot read: for deny rules, try every tail.
    for (let i = 1; i < words.length; i++) denyForms.add(words.slice(i).join(" "))
  }
  denyForms.delete("")
  allowForms.delete("")
  return {
    argv: words,
    denyForms: Array.from(denyForms),
    allowForms: Array.from(allowForms),
    dangerousAssignment: dangerous
  }
}

/**
 * Split a command naively into words, dropping quote characters: only used
 * when no analyser could parse the command, for deny matching.
 *
 * @internal
 */
export const naiveWords = (text: string): ReadonlyArray<string> =>
  text
    .split(/\s+/)
    .map((word) => word.replace(/["']/g, ""))
    .filter((word) => word.length > 0)
