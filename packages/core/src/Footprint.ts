/**
 * Footprints (SPEC §4.13): the resources a call reads and writes, so that the
 * streaming executor can run calls that touch different things in parallel
 * and still end in the state of the sequential run.
 *
 * A resource is one of:
 * - an absolute path, canonical (symlinks resolved); it stands for the path
 *   and everything under it, so `mkdir /r/d` conflicts with a Read of `/r/d/x`;
 * - a subtree `"<abs dir>/**"` (the same as the directory's path);
 * - a named resource: `"net"`, `"todos"`, or a kind and a name
 *   (`"mcp:<server>"`, `"inode:<device>:<inode>"`);
 * - `"*"`: everything.
 *
 * Anything else (a relative path such as `"build"` or `"src/a.ts"`, an empty
 * string) is read as `"*"`: a footprint that cannot be understood fails
 * closed.
 *
 * A footprint is trusted only when it is proven complete: a declaration whose
 * lists are what the declarer could see, not all it may touch, says
 * `complete: false` and is scheduled as writing `*` (a barrier). A tool's
 * `footprint` function is its author's claim of completeness; the Bash tool
 * says `complete: false` whenever the shell analysis cannot prove its path
 * lists complete.
 *
 * Existing files with other hard links are keyed by device and inode as well
 * as by path (`inode(...)`), so two names of one file meet. Any directory may
 * hold another name of such a file, so an access of one also touches `*` in
 * its mode (a read of it waits for every earlier write; a write of it is a
 * barrier). Files with one name and directories are keyed by path alone.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export type Resource = string

/**
 * What one call reads and writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Footprint {
  readonly reads?: ReadonlyArray<Resource> | undefined
  readonly writes?: ReadonlyArray<Resource> | undefined
  /**
   * `false`: the lists are not proven to be everything the call may touch, so
   * it is scheduled as writing `*`. Absent or `true`: the declarer vouches
   * for them.
   */
  readonly complete?: boolean | undefined
}

/**
 * Which schedule the streaming executor follows: the chapter's greedy
 * partition (every unsafe call a barrier) or footprints (a call waits only
 * for the earlier calls it conflicts with).
 *
 * @since 0.1.0
 * @category models
 */
export const Scheduling = Schema.Literal("greedy", "footprints")

/**
 * @since 0.1.0
 * @category models
 */
export type Scheduling = typeof Scheduling.Type

/**
 * @since 0.1.0
 * @category constants
 */
export const everything: Resource = "*"

/**
 * The network, for fetches.
 *
 * @since 0.1.0
 * @category constants
 */
export const net: Resource = "net"

/**
 * The session's todo list.
 *
 * @since 0.1.0
 * @category constants
 */
export const todos: Resource = "todos"

/**
 * An existing file by its identity: the device and inode it lives on, shared
 * by all its hard links.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inode = (device: number | bigint, ino: number | bigint): Resource => `inode:${device}:${ino}`

/**
 * An MCP server's state.
 *
 * @since 0.1.0
 * @category constructors
 */
export const mcp = (server: string): Resource => `mcp:${server}`

/**
 * A directory and everything under it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const subtree = (dir: string): Resource => `${dir.replace(/\/+$/, "")}/**`

/**
 * The fail-closed footprint of a concurrency-safe call without a declaration.
 *
 * @since 0.1.0
 * @category constants
 */
export const readsEverything: Footprint = { reads: [everything] }

/**
 * The fail-closed footprint of an unsafe call without a declaration.
 *
 * @since 0.1.0
 * @category constants
 */
export const writesEverything: Footprint = { writes: [everything] }

/**
 * What the scheduler goes by: the footprint itself when it is proven complete,
 * else `writesEverything`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const trusted = (
  footprint: Footprint
): Footprint => (footprint.complete === false ? writesEverything : footprint)

/**
 * Whether a footprint writes `*`: a barrier every earlier call must finish
 * before and every later call waits for.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isBarrier = (footprint: Footprint): boolean =>
  footprint === writesEverything || (footprint.writes ?? []).some((w) => toKey(w)._tag === "Everything")

/**
 * Nothing at all (`sleep 1`, `echo hi`).
 *
 * @since 0.1.0
 * @category constants
 */
export const none: Footprint = {}

/**
 * A resource in the form the scheduler compares: `"*"`, a named resource, or
 * the path's segments.
 *
 * @since 0.1.0
 * @category models
 */
export type Key =
  | { readonly _tag: "Everything" }
  | { readonly _tag: "Named"; readonly name: string }
  | { readonly _tag: "Path"; readonly segments: ReadonlyArray<string> }

const everythingKey: Key = { _tag: "Everything" }

/** A kind and a name: `mcp:<server>`, `inode:<device>:<inode>`. */
const namedPattern = /^[a-z][a-z0-9_-]*:.+$/

/** The named resources without a kind. */
const plainNames: ReadonlySet<string> = new Set([net, todos])

/**
 * Read a resource string: `"/a/b/**"` and `"/a/b"` are the same subtree; a
 * path is normalised lexically (`.`, `..`, repeated slashes; footprints hold
 * resolved paths, so `..` only ever climbs a real directory); a named
 * resource is one of `"net"`, `"todos"` or `<kind>:<name>`;
 * anything else (a relative path: `"build"`, `"src/a.ts"`) is `"*"`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const toKey = (resource: Resource): Key => {
  if (resource === everything) return everythingKey
  if (resource.startsWith("/")) {
    const segments: Array<string> = []
    const body = resource.endsWith("/**") ? resource.slice(0, -3) : resource
    for (const part of body.split("/")) {
      if (part === "" || part === ".") continue
      if (part === "..") segments.pop()
      else if (part.includes("*")) return everythingKey
      else segments.push(part)
    }
    return { _tag: "Path", segments }
  }
  return plainNames.has(resource) || namedPattern.test(resource) ? { _tag: "Named", name: resource } : everythingKey
}

/**
 * Whether two resources overlap: `"*"` overlaps everything, a path overlaps
 * itself, its ancestors and everything under it, a named resource only
 * itself.
 *
 * @since 0.1.0
 * @category predicates
 */
export const overlaps = (a: Resource, b: Resource): boolean => keysOverlap(toKey(a), toKey(b))

/**
 * @since 0.1.0
 * @category predicates
 */
export const keysOverlap = (a: Key, b: Key): boolean => {
  if (a._tag === "Everything" || b._tag === "Everything") return true
  if (a._tag === "Named") return b._tag === "Named" && a.name === b.name
  if (b._tag === "Named") return false
  const n = Math.min(a.segments.length, b.segments.length)
  for (let i = 0; i < n; i++) if (a.segments[i] !== b.segments[i]) return false
  return true
}

/**
 * Why a later call must wait for an earlier one, if it must: the earlier
 * call's access that conflicts (`"writes /repo/a.ts"`), or `undefined` when
 * they are independent (a write against a read or write of an overlapping
 * resource; two reads never conflict).
 *
 * @since 0.1.0
 * @category predicates
 */
export const conflict = (earlier: Footprint, later: Footprint): string | undefined => {
  const laterReads = later.reads ?? []
  const laterWrites = later.writes ?? []
  for (const w of earlier.writes ?? []) {
    if ([...laterReads, ...laterWrites].some((r) => overlaps(w, r))) return `writes ${w}`
  }
  for (const r of earlier.reads ?? []) {
    if (laterWrites.some((w) => overlaps(r, w))) return `reads ${r}`
  }
  return undefined
}

/**
 * Whether `later` reads or writes what `earlier` writes (read-after-write,
 * write-after-write): a data dependence. A later write of what the earlier
 * call only read (write-after-read) must wait, but does not depend on it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const dependsOn = (earlier: Footprint, later: Footprint): boolean => {
  const touched = [...(later.reads ?? []), ...(later.writes ?? [])]
  return (earlier.writes ?? []).some((w) => touched.some((r) => overlaps(w, r)))
}
