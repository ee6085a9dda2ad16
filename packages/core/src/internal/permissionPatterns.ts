/**
 * Compiled matchers for the specifier part of a permission rule: Bash command
 * patterns, gitignore-style path patterns with Claude Code's four anchors, and
 * `domain:` patterns. Each is compiled once per rule (see `PermissionRules`).
 */
import type * as Path from "@effect/platform/Path"
import ignore from "ignore"

// ---------------------------------------------------------------------------
// Bash command patterns
// ---------------------------------------------------------------------------

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
  exec: (argv) => (argv[1] !== undefined && argv[1].startsWith("-") ? undefined : 1)
}

/** @internal */
export const isAssignment = (word: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)

/**
 * Variables that change which program runs or what it loads: a command that
 * sets one is never matched by an allow rule for the bare command.
 */
const dangerousVariable = new RegExp(
  "^(" + [
    "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "LD_\\w*", "DYLD_\\w*",
    "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT",
    "RUBYLIB", "GIT_\\w*", "EDITOR", "VISUAL", "PAGER", "LESSOPEN", "BROWSER"
  ].join("|") + ")="
)

/** @internal */
export const isDangerousAssignment = (word: string): boolean => dangerousVariable.test(word)

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
    let rest = words.slice(next)
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
  return { argv: words, denyForms: Array.from(denyForms), allowForms: Array.from(allowForms) }
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

// ---------------------------------------------------------------------------
// Path patterns
// ---------------------------------------------------------------------------

/** @internal */
export type PathAnchor = "absolute" | "home" | "root" | "cwd"

/**
 * A compiled path specifier: the directory it is relative to and a gitignore
 * matcher for paths relative to that directory.
 *
 * @internal
 */
export interface PathPattern {
  readonly anchor: PathAnchor
  /** How many `../` led the pattern (relative to cwd). */
  readonly up: number
  readonly matcher: ReturnType<typeof ignore>
}

/**
 * Compile a Read/Edit specifier (gitignore syntax, Claude Code anchors):
 * `//abs`, `~/x` (home), `/x` (the rule's project root), `./x` or `x` (cwd).
 * A pattern without a slash (`*.env`) matches at any depth below its
 * directory, as in a `.gitignore`.
 *
 * @internal
 */
export const compilePathPattern = (specifier: string): PathPattern => {
  let spec = specifier.trim()
  let anchor: PathAnchor = "cwd"
  let up = 0
  let anchored = true
  if (spec.startsWith("//")) {
    anchor = "absolute"
    spec = spec.slice(2)
  } else if (spec === "~" || spec.startsWith("~/")) {
    anchor = "home"
    spec = spec.slice(2)
  } else if (spec.startsWith("/")) {
    anchor = "root"
    spec = spec.slice(1)
  } else if (spec === "." || spec.startsWith("./") || spec === ".." || spec.startsWith("../")) {
    while (spec === "." || spec.startsWith("./") || spec === ".." || spec.startsWith("../")) {
      if (spec.startsWith("..")) up += 1
      spec = spec.slice(spec.startsWith("..") ? 3 : 2)
    }
  } else {
    anchored = false
  }
  // An empty rest (`~`, `//`, `.`) covers everything below the directory.
  const pattern = spec === "" ? "**" : anchored ? `/${spec}` : spec
  return { anchor, up, matcher: ignore().add(pattern) }
}

/** The directories path patterns are relative to. @internal */
export interface PathBases {
  readonly cwd: string
  readonly home: string
  readonly path: Path.Path
}

// A name no pattern mentions: a directory is covered when everything inside it is.
const PROBE = "__switchyard_any_entry__"

/**
 * The path of one call, with its relative forms memoised: a call is checked
 * against many rules, most of them relative to the same few directories.
 *
 * @internal
 */
export interface PathProbe {
  readonly absolute: string
  /** A directory a tool searches (Glob, Grep): it matches when the directory itself or every entry inside it does. */
  readonly directory: boolean
  /** The path relative to a directory in `/` form, or `undefined` when it is not inside it. */
  readonly relativeTo: (base: string) => string | undefined
}

/** @internal */
export const makePathProbe = (absolute: string, directory: boolean, sep: string): PathProbe => {
  const memo = new Map<string, string | undefined>()
  return {
    absolute,
    directory,
    relativeTo: (base) => {
      if (memo.has(base)) return memo.get(base)
      // Both are resolved absolute paths, so "inside" is a prefix test.
      const prefix = base.endsWith(sep) ? base : base + sep
      const relative = absolute === base
        ? ""
        : absolute.startsWith(prefix)
        ? absolute.slice(prefix.length)
        : undefined
      const posix = relative === undefined || sep === "/" ? relative : relative.split(sep).join("/")
      memo.set(base, posix)
      return posix
    }
  }
}

/**
 * Whether a call's path matches a compiled path pattern.
 *
 * @internal
 */
export const matchPathPattern = (
  pattern: PathPattern,
  probe: PathProbe,
  /** The rule's project root (`/x` patterns). */
  root: string,
  bases: PathBases
): boolean => {
  let base = pattern.anchor === "absolute"
    ? bases.path.sep
    : pattern.anchor === "home"
    ? bases.home
    : pattern.anchor === "root"
    ? root
    : bases.cwd
  for (let i = 0; i < pattern.up; i++) base = bases.path.dirname(base)
  const relative = probe.relativeTo(base)
  if (relative === undefined) return false
  if (relative !== "" && pattern.matcher.ignores(relative)) return true
  return probe.directory && pattern.matcher.ignores(relative === "" ? PROBE : `${relative}/${PROBE}`)
}

/**
 * Escape a literal path for use in a gitignore pattern.
 *
 * @internal
 */
export const escapePathPattern = (literal: string): string =>
  literal.replace(/[\\*?[\]]/g, "\\$&").replace(/ $/, "\\ ")

// ---------------------------------------------------------------------------
// Domains
// ---------------------------------------------------------------------------

/**
 * `domain:example.com` matches that host exactly (case-insensitive), as
 * Claude Code does; `domain:*.example.com` matches its subdomains (not the
 * apex). Any other specifier matches nothing. The matcher takes the host
 * (see `hostOf`).
 *
 * @internal
 */
export const compileDomainPattern = (specifier: string): (host: string) => boolean => {
  const spec = specifier.trim()
  if (!spec.startsWith("domain:")) return () => false
  const domain = spec.slice("domain:".length).trim().toLowerCase()
  const wildcard = domain.startsWith("*.")
  const suffix = wildcard ? domain.slice(1) : ""
  return (host) => (wildcard ? host.endsWith(suffix) && host.length > suffix.length : host === domain)
}

/** @internal */
export const hostOf = (url: string): string | undefined => {
  try {
    const host = new URL(url).hostname.toLowerCase()
    return host.endsWith(".") ? host.slice(0, -1) : host
  } catch {
    return undefined
  }
}
