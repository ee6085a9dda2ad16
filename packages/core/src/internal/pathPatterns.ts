/**
 * Compiled matchers for the specifier of a `Read(…)`/`Edit(…)` rule:
 * gitignore-style path patterns with Claude Code's four anchors.
 */
import type * as Path from "@effect/platform/Path"
import ignore from "ignore"

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
  /** The literal leading segments of an anchored pattern (`secrets` of `./secrets/**`): everything it matches is below them. */
  readonly prefix: ReadonlyArray<string>
  /** `prefix` joined with `/` and lower-cased (the matcher ignores case): a quick test before the matcher. */
  readonly lead: string
  /** The gitignore pattern relative to its directory (`/secrets/**`, `*.pem`): a leading `/` anchors it there. */
  readonly gitignore: string
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
  // A slash inside (not only at the end) anchors a gitignore pattern too.
  const segments = spec.replace(/\/+$/, "").split("/")
  const literal = anchored || segments.length > 1 ? segments.slice(0, -1) : []
  const stop = literal.findIndex((segment) => /[*?[\]\\!]/.test(segment) || segment === "")
  const prefix = stop === -1 ? literal : literal.slice(0, stop)
  return {
    anchor,
    up,
    prefix,
    lead: prefix.join("/").toLowerCase(),
    gitignore: pattern,
    matcher: ignore().add(pattern)
  }
}

/**
 * The directory a compiled pattern is relative to.
 *
 * @internal
 */
export const baseOf = (pattern: PathPattern, root: string, bases: PathBases): string => {
  let base = pattern.anchor === "absolute"
    ? bases.path.sep
    : pattern.anchor === "home"
    ? bases.home
    : pattern.anchor === "root"
    ? root
    : bases.cwd
  for (let i = 0; i < pattern.up; i++) base = bases.path.dirname(base)
  return base
}

/**
 * The pattern as a gitignore pattern relative to `directory` (for ripgrep's
 * `--glob !…`), when it can be written so: the pattern's directory is
 * `directory` or inside it, or the pattern is unanchored and its directory
 * contains `directory`. `undefined` otherwise.
 *
 * @internal
 */
export const relativeTo = (
  pattern: PathPattern,
  base: string,
  directory: string,
  bases: PathBases
): string | undefined => {
  const sep = bases.path.sep
  const anchored = pattern.gitignore.startsWith("/")
  if (base === directory) return pattern.gitignore
  const inside = base.startsWith(directory.endsWith(sep) ? directory : directory + sep)
  if (inside) {
    const sub = base.slice(directory.length).replace(/^[/\\]+/, "").split(sep).join("/")
    const escaped = sub.replace(/[\\*?[\]!{}]/g, "\\$&")
    return anchored ? `/${escaped}${pattern.gitignore}` : `/${escaped}/**/${pattern.gitignore}`
  }
  const contains = directory.startsWith(base.endsWith(sep) ? base : base + sep)
  return contains && !anchored ? pattern.gitignore : undefined
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
  const relative = probe.relativeTo(baseOf(pattern, root, bases))
  if (relative === undefined) return false
  // Everything the pattern matches is below its literal lead: a path elsewhere is not matched (the
  // cheap test that lets a decision go through a thousand rules).
  const lead = pattern.lead
  if (lead !== "") {
    const folded = relative.toLowerCase()
    if (folded !== lead && !folded.startsWith(`${lead}/`)) return false
  }
  if (relative !== "" && pattern.matcher.ignores(relative)) return true
  return probe.directory && pattern.matcher.ignores(relative === "" ? PROBE : `${relative}/${PROBE}`)
}

/**
 * Escape a literal path for use in a gitignore pattern.
 *
 * @internal
 */
export const escapePathPattern = (literal: string): string => literal.replace(/[\\*?[\]]/g, "\\$&").replace(/ $/, "\\ ")
