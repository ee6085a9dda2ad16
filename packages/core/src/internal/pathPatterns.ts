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
  /**
   * The leads a rule relative to `base` must have to match the path: its relative form lower-cased, cut at
   * each `/` (`src`, `src/a`, `src/a/b.ts`); `undefined` when it is not inside `base`.
   */
  readonly leadsUnder: (base: string) => ReadonlyArray<string> | undefined
}

interface Relative {
  readonly relative: string | undefined
  leads: ReadonlyArray<string> | undefined
}

/** @internal */
export const makePathProbe = (absolute: string, directory: boolean, sep: string): PathProbe => {
  // The last directory asked about at hand (rules of one list share a few, met one after another); the
  // others in a table made when a second one is asked about.
  let lastBase: string | undefined
  let last: Relative | undefined
  let memo: Map<string, Relative> | undefined
  const relativeOf = (base: string): Relative => {
    if (base === lastBase) return last!
    let known = memo?.get(base)
    if (known === undefined) {
      // Both are resolved absolute paths, so "inside" is a prefix test.
      const prefix = base.endsWith(sep) ? base : base + sep
      const relative = absolute === base
        ? ""
        : absolute.startsWith(prefix)
        ? absolute.slice(prefix.length)
        : undefined
      known = {
        relative: relative === undefined || sep === "/" ? relative : relative.split(sep).join("/"),
        leads: undefined
      }
    }
    if (lastBase !== undefined) (memo ??= new Map()).set(lastBase, last!)
    lastBase = base
    last = known
    return known
  }
  return {
    absolute,
    directory,
    relativeTo: (base) => relativeOf(base).relative,
    leadsUnder: (base) => {
      const known = relativeOf(base)
      if (known.relative === undefined) return undefined
      if (known.leads === undefined) {
        // The same strings every time: a table lookup hashes each of them once.
        const folded = known.relative.toLowerCase()
        const leads: Array<string> = []
        for (let end = folded.indexOf("/");; end = folded.indexOf("/", end + 1)) {
          leads.push(end === -1 ? folded : folded.slice(0, end))
          if (end === -1) break
        }
        known.leads = leads
      }
      return known.leads
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

const patternCharacters = /[\\*?[\]]/

/**
 * Escape a literal path for use in a gitignore pattern.
 *
 * @internal
 */
export const escapePathPattern = (literal: string): string =>
  // Most paths have nothing to escape: they are returned as they are, without the two replacements.
  !patternCharacters.test(literal) && !literal.endsWith(" ")
    ? literal
    : literal.replace(/[\\*?[\]]/g, "\\$&").replace(/ $/, "\\ ")
