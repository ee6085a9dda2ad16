/**
 * Glob's ripgrep engine: `rg --files` lists the tree (without `.gitignore`,
 * hidden files included, links followed) much faster than a walk through the
 * `FileSystem` service. Each listed path is matched as it arrives, by the rule
 * `tinyglobby` applies in the walk (see `matcher`), and a match is statted
 * right away for Glob's mtime sort, so the stats overlap rg's own walk. A
 * plain pattern is also passed to rg as `--glob` to shorten the listing (rg's
 * globs match a superset of what picomatch matches for those patterns; the
 * exact match is still ours).
 *
 * It declines (`Unsupported`) what it cannot answer alike: patterns that
 * climb out of the search directory, and trees with a link loop (the walk
 * descends into a loop once, rg not at all).
 *
 * rg is spawned with `node:child_process` rather than the platform `Command`:
 * the listing is the whole cost of a Glob, and the `Command` streams cost more
 * than rg itself on a large tree.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { posix } from "node:path"
import picomatch from "picomatch"
import { isDynamicPattern } from "tinyglobby"

/**
 * Why the ripgrep engine did not answer: Glob then walks the tree instead.
 *
 * @internal
 */
export type RipgrepFailure =
  | { readonly _tag: "NotInstalled" }
  | { readonly _tag: "Unsupported"; readonly reason: string }
  | { readonly _tag: "Failed"; readonly message: string }

/**
 * A match: its absolute path and its mtime (ms) as `FileSystem.stat` gives
 * it, 0 when the stat failed.
 *
 * @internal
 */
export interface Dated {
  readonly file: string
  readonly mtime: number
}

/** Patterns rg's `--glob` matches at least as widely as picomatch: no extglobs, classes, escapes or negation. */
const PLAIN = /^[A-Za-z0-9._\-/*?{},]+$/

/**
 * Whether this engine can answer a (relative) pattern exactly.
 *
 * @internal
 */
export const supports = (pattern: string): boolean =>
  pattern !== "" && !pattern.startsWith("/") && !pattern.split("/").includes("..")

/**
 * The rg command line for listing under the working directory.
 *
 * @internal
 */
export const args = (pattern: string): ReadonlyArray<string> => {
  const out = ["--no-config", "--files", "--no-ignore", "--hidden", "--follow", "--null"]
  // A trailing `**` also matches its directory's name as a file in picomatch (`src/**` matches a file `src`), not in rg;
  // a trailing slash is dropped by tinyglobby, but makes an rg glob match directories only.
  const last = pattern.at(-1)
  if (
    PLAIN.test(pattern) && !pattern.startsWith("!") && !pattern.startsWith("./") && !pattern.endsWith("**") &&
    last !== "/"
  ) {
    out.push("--glob", pattern)
  }
  out.push("--", ".")
  return out
}

/** The options `tinyglobby` gives picomatch for Glob's call (dot files only when named, case-sensitive). */
const MATCH_OPTIONS: picomatch.PicomatchOptions = {
  nobrace: false,
  nocase: false,
  noextglob: false,
  noglobstar: false,
  posix: true
}

/**
 * `picomatch(glob, options)` without its per-call result object: picomatch's
 * matcher accepts a non-empty input equal to the glob's text or matched by
 * its regex (with these options it neither rewrites the input nor ignores
 * any). Each listed path meets this once or more, so the object was most of
 * the matching cost.
 *
 * @internal
 */
export const compile = (glob: string): (input: string) => boolean => {
  const regex = picomatch.makeRe(glob, MATCH_OPTIONS)
  return (input) => input !== "" && (input === glob || regex.test(input))
}

/** `tinyglobby`'s split of a pattern into path segments. */
const splitPattern = (pattern: string): ReadonlyArray<string> => {
  const parts = picomatch.scan(pattern, { parts: true }).parts
  return parts !== undefined && parts.length > 0 ? parts : [pattern]
}

/** A relative pattern as `tinyglobby` normalizes it: one trailing slash dropped, then POSIX `normalize`. */
const normalizeRelative = (pattern: string): string =>
  posix.normalize(pattern.endsWith("/") ? pattern.slice(0, -1) : pattern)

/**
 * Which listed paths the walk would report, decided per path: `tinyglobby`'s
 * rule, written out because its matcher is not exported. The walk starts at
 * the pattern's static prefix (its `root`), skips a directory under it whose
 * path fails the partial matcher (segment by segment, a `**` or a segment
 * holding a `/` accepting the rest), and reports a file when the whole
 * matcher accepts its path. The engine-equivalence test checks this against
 * the walk on generated trees and patterns.
 *
 * @internal
 */
export const matcher = (pattern: string): (relativePath: string) => boolean => {
  // A leading `!` (not an extglob's) makes tinyglobby take the pattern as an exclusion, leaving nothing to match.
  if (pattern.startsWith("!") && pattern[1] !== "(") return () => false
  const normalized = normalizeRelative(pattern)
  const whole = compile(normalized)
  const parts = splitPattern(normalized)
  const partMatchers = parts.map(compile)
  // The static directories the walk starts from (tinyglobby's common path for one pattern).
  const prefix: Array<string> = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part === "**" && parts[i + 1] === undefined) {
      prefix.pop()
      break
    }
    if (i === parts.length - 1 || isDynamicPattern(part)) break
    // The walk's root is a path: tinyglobby drops the pattern's escaping backslashes from it.
    prefix.push(part.replace(/\\/g, ""))
  }
  const partial = (directory: ReadonlyArray<string>): boolean => {
    const count = Math.min(directory.length, parts.length)
    let j = 0
    while (j < count) {
      const part = parts[j]!
      if (part.includes("/")) return true
      if (!partMatchers[j]!(directory[j]!)) break
      if (part === "**") return true
      j++
    }
    return j === directory.length
  }
  // Directories are shared by many files: each is judged once. The value is the directory's depth when the walk
  // reaches it (at or under its root, or on the way there), -1 when it does not.
  const directories = new Map<string, number>([["", 0]])
  const depthOf = (directory: string): number => {
    const known = directories.get(directory)
    if (known !== undefined) return known
    const slash = directory.lastIndexOf("/")
    const parent = depthOf(slash === -1 ? "" : directory.slice(0, slash))
    let depth = -1
    if (parent !== -1) {
      const name = directory.slice(slash + 1)
      if (parent < prefix.length) {
        if (name === prefix[parent]) depth = parent + 1
      } else if (partial(directory.split("/"))) {
        depth = parent + 1
      }
    }
    directories.set(directory, depth)
    return depth
  }
  // rg lists a directory's files together: the last directory's verdict is reused without a lookup.
  let lastDirectory: string | undefined
  let lastVerdict = false
  return (relativePath) => {
    if (!whole(relativePath)) return false
    const slash = relativePath.lastIndexOf("/")
    const directory = slash === -1 ? "" : relativePath.slice(0, slash)
    if (directory !== lastDirectory) {
      lastDirectory = directory
      lastVerdict = depthOf(directory) >= prefix.length
    }
    return lastVerdict
  }
}

/** The mtime `FileSystem.stat` reports (its `Date`'s milliseconds), 0 when the file cannot be statted. */
const mtimeOf = (file: string): number => {
  try {
    const info = fs.statSync(file, { throwIfNoEntry: false })
    return info === undefined ? 0 : info.mtime.getTime()
  } catch {
    return 0
  }
}

const LOOP = "File system loop found"
/** rg's error text kept for a failure message; the rest is dropped. */
const MAX_ERROR_CHARS = 16 * 1024

/**
 * The absolute paths under `cwd` matching the relative `pattern`, as the walk
 * would find them, with their mtimes. Interrupting the fiber kills rg.
 *
 * @internal
 */
export const search = (pattern: string, cwd: string): Effect.Effect<Array<Dated>, RipgrepFailure> =>
  Effect.suspend(() => {
    if (!supports(pattern)) return Effect.fail<RipgrepFailure>({ _tag: "Unsupported", reason: "pattern" })
    const matches = matcher(pattern)
    const base = cwd === "/" ? "" : cwd
    return Effect.async<Array<Dated>, RipgrepFailure>((resume) => {
      const found: Array<Dated> = []
      let listed = 0
      let pending: Buffer | undefined
      let errors = ""
      let loop = false
      let settled = false
      const child = spawn("rg", args(pattern), { cwd, stdio: ["ignore", "pipe", "pipe"] })
      const settle = (result: Effect.Effect<Array<Dated>, RipgrepFailure>) => {
        if (settled) return
        settled = true
        resume(result)
      }
      child.stdout.on("data", (chunk: Buffer) => {
        const bytes = pending === undefined ? chunk : Buffer.concat([pending, chunk])
        let start = 0
        let end = bytes.indexOf(0, start)
        while (end !== -1) {
          listed++
          const name = bytes.toString("utf8", start + (bytes[start] === 46 && bytes[start + 1] === 47 ? 2 : 0), end)
          if (matches(name)) {
            const file = `${base}/${name}`
            found.push({ file, mtime: mtimeOf(file) })
          }
          start = end + 1
          end = bytes.indexOf(0, start)
        }
        pending = start < bytes.length ? bytes.subarray(start) : undefined
      })
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (text: string) => {
        // The loop message may straddle two chunks: look at the end of the previous one too.
        if (!loop && (errors.slice(-LOOP.length) + text).includes(LOOP)) loop = true
        if (errors.length < MAX_ERROR_CHARS) errors += text.slice(0, MAX_ERROR_CHARS - errors.length)
      })
      child.on(
        "error",
        (error: NodeJS.ErrnoException) =>
          settle(
            Effect.fail(error.code === "ENOENT" ? { _tag: "NotInstalled" } : { _tag: "Failed", message: error.message })
          )
      )
      child.on("close", (exitCode) => {
        if (loop) return settle(Effect.fail({ _tag: "Unsupported", reason: "link loop" }))
        // 1 is "nothing listed"; 2 with a listing is unreadable entries, which the walk skips too.
        if (exitCode === 2 && listed === 0 && !/\(os error \d+\)/.test(errors)) {
          return settle(Effect.fail({ _tag: "Failed", message: errors.trim() }))
        }
        if (exitCode !== 0 && exitCode !== 1 && exitCode !== 2) {
          return settle(Effect.fail({ _tag: "Failed", message: `rg exited with ${exitCode}: ${errors.trim()}` }))
        }
        settle(Effect.succeed(found))
      })
      return Effect.sync(() => {
        settled = true
        child.kill("SIGKILL")
      })
    })
  })
