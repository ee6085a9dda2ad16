/**
 * Paths as the kernel resolves them (path_resolution(7)): component by
 * component, a symbolic link followed before the `..` after it — so
 * `LINK/../x` is the `x` beside LINK's target, not the `x` beside LINK. Every
 * place a path is judged (permission rules, footprints) or opened (the file
 * tools) goes through these, never through a lexical `path.resolve` first.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/realPaths.js"

/**
 * What an absolute path denotes through `fs`, links followed as the kernel
 * follows them; a path that does not exist yet is its deepest existing
 * ancestor's real path plus the rest (a dangling link: its target's).
 *
 * @since 0.1.0
 * @category resolution
 */
export const resolve = (fs: FileSystem.FileSystem, path: Path.Path, absolute: string): Effect.Effect<string> =>
  internal.resolve(internal.fromFileSystem(fs), path, absolute)

/**
 * The path the kernel opens for `absolute`, spelled without `.` or `..`: the
 * prefix before the last `..` resolved, the rest as written (so the same file
 * read as `d/../a` and written as `a` has one name, and `LINK/../a` names the
 * file next to LINK's target).
 *
 * @since 0.1.0
 * @category resolution
 */
export const normalize = (fs: FileSystem.FileSystem, path: Path.Path, absolute: string): Effect.Effect<string> =>
  internal.normalize(internal.fromFileSystem(fs), path, absolute)

/**
 * An absolute path for `value` against `cwd` (`~` and `~/…` against `home`),
 * joined without removing `..`: what `resolve` and `normalize` take.
 *
 * @since 0.1.0
 * @category resolution
 */
export const join = (cwd: string, home: string, value: string): string => {
  const expanded = value === "~" ? home : value.startsWith("~/") ? `${home}/${value.slice(2)}` : value
  return expanded.startsWith("/") ? expanded : `${cwd.replace(/\/+$/, "")}/${expanded}`
}

/**
 * Whether `absolute` reaches a process-relative name — `/proc/self`,
 * `/proc/thread-self`, `/proc/<pid>` — as written or through a symbolic link
 * on the way (`l -> /proc/self/cwd`). Such a path means something else in the
 * process that opens it (a command's, not this one's), so it cannot be
 * resolved here for another process. The standard streams (`/dev/stdin`,
 * `/dev/stderr`) do not count.
 *
 * @since 0.1.0
 * @category resolution
 */
export const reachesProcess = (fs: FileSystem.FileSystem, path: Path.Path, absolute: string): Effect.Effect<boolean> =>
  internal.reachesProcess(internal.fromFileSystem(fs), path, absolute)
