/**
 * Footprints (SPEC §4.13): the resources a call reads and writes, so that the
 * streaming executor can run calls that touch different things in parallel
 * and still end in the state of the sequential run.
 *
 * A resource is one of:
 * - an absolute path, canonical (symlinks resolved); it stands for the path
 *   and everything under it, so `mkdir /r/d` conflicts with a Read of `/r/d/x`;
 * - a subtree `"<abs dir>/**"` (the same as the directory's path);
 * - a named resource: `"net"`, `"todos"`, `"mcp:<server>"`;
 * - `"*"`: everything.
 *
 * Anything else (a relative path, an empty string) is read as `"*"`: a
 * footprint that cannot be understood fails closed.
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

const namedPattern = /^[a-z][a-z0-9_-]*(?::.+)?$/

/**
 * Read a resource string: `"/a/b/**"` and `"/a/b"` are the same subtree; a
 * path is normalised lexically (`.`, `..`, repeated slashes); anything not
 * understood is `"*"`.
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
  return namedPattern.test(resource) ? { _tag: "Named", name: resource } : everythingKey
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
