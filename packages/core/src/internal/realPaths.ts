/**
 * Real paths for permission checks: what a path denotes once symbolic links
 * are followed, so that a link inside the working directory to a denied file,
 * a denied directory or a place outside is judged by its target.
 *
 * A path that does not exist yet (a file about to be written) is judged by its
 * deepest existing ancestor's real path plus the rest; a dangling link by its
 * target, resolved the same way. Used for the file tools' paths here and for
 * Bash path arguments in `bashRules`.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import type * as PermissionRules from "../PermissionRules.js"

/** Links followed by hand (dangling ones) before giving up, as the kernel's `ELOOP` limit. */
const MAX_LINKS = 40

/**
 * The real path of an absolute path; for a missing path, its deepest existing
 * ancestor's real path joined with the rest; a dangling link is followed to
 * its target. A link loop resolves to the path as given (opening it fails).
 *
 * @internal
 */
export const resolve = (fs: FileSystem.FileSystem, path: Path.Path, absolute: string): Effect.Effect<string> => {
  const go = (current: string, links: number): Effect.Effect<string> =>
    fs.realPath(current).pipe(
      Effect.catchAll(() =>
        links >= MAX_LINKS
          ? Effect.succeed(current)
          : fs.readLink(current).pipe(
            // A dangling link: what writing through it would create.
            Effect.flatMap((target) => go(path.resolve(path.dirname(current), target), links + 1)),
            Effect.catchAll(() => {
              const parent = path.dirname(current)
              if (parent === current) return Effect.succeed(current)
              return Effect.map(go(parent, links), (real) => path.join(real, path.basename(current)))
            })
          )
      )
    )
  return go(path.resolve(absolute), 0)
}

const isWithin = (path: Path.Path, dir: string, candidate: string): string | undefined => {
  if (candidate === dir) return ""
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
  return candidate.startsWith(prefix) ? candidate.slice(prefix.length) : undefined
}

/**
 * Resolve a path and spell its real path through the directories given.
 *
 * @internal
 */
export const resolvePath = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  absolute: string,
  directories: ReadonlyArray<string>
): Effect.Effect<PermissionRules.ResolvedPath> =>
  Effect.gen(function*() {
    const lexical = path.resolve(absolute)
    const real = yield* resolve(fs, path, lexical)
    const forms = new Set([real])
    for (const dir of new Set(directories)) {
      const realDir = yield* resolve(fs, path, dir)
      if (realDir === dir) continue
      const rest = isWithin(path, realDir, real)
      if (rest !== undefined) forms.add(rest === "" ? dir : path.join(dir, rest))
    }
    return { lexical, real: Array.from(forms) }
  })

/**
 * A resolver that follows no links (no filesystem at hand): the path is what
 * it denotes.
 *
 * @internal
 */
export const lexicalOnly = (absolute: string, path: Path.Path): PermissionRules.ResolvedPath => {
  const lexical = path.resolve(absolute)
  return { lexical, real: [lexical] }
}
