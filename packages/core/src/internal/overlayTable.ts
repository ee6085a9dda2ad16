/**
 * The overlay's table (SPEC §4.12): what the overlay changed, keyed by real
 * path — files whose content (and mode) lives in a file of the overlay
 * directory, symbolic links, whiteouts, new directories — and what the base
 * held at each path when the overlay first touched it. Pure data and the
 * lookups over it; nothing here reads a disk.
 *
 * @internal
 */
import type * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"

/** A path the overlay changed. New directories are always opaque: the base's children under them are hidden. */
export type Entry =
  /** `content`: the overlay file holding its bytes and its mode. */
  | { readonly _tag: "File"; readonly content: string }
  /** A symbolic link to `target`, as written (resolved against its directory when followed). */
  | { readonly _tag: "Link"; readonly target: string }
  | { readonly _tag: "Directory" }
  | { readonly _tag: "Whiteout" }

/** What the base held at a path when the overlay first touched it. */
export type BaseState = Data.TaggedEnum<{
  /** A file, by the hash of its bytes and its permission bits. */
  File: { readonly hash: string; readonly mode: number }
  /** A symbolic link, by its target as written. */
  Link: { readonly target: string }
  Directory: {}
  Missing: {}
}>

/** `BaseState.File({ hash })`, `BaseState.$is("Directory")`, … */
export const BaseState = Data.taggedEnum<BaseState>()

/** @internal */
export const missing: BaseState = BaseState.Missing()

/** @internal */
export const directory: BaseState = BaseState.Directory()

/** Whether two base states denote the same thing (the same bytes, both directories, both nothing). */
export const sameState = (a: BaseState, b: BaseState): boolean => {
  switch (a._tag) {
    case "File":
      return b._tag === "File" && a.hash === b.hash && a.mode === b.mode
    case "Link":
      return b._tag === "Link" && a.target === b.target
    default:
      return a._tag === b._tag
  }
}

/** Whether a state is something `apply` writes or removes (a file or a link), not a directory or nothing. */
export const isLeaf = (state: BaseState): boolean => state._tag === "File" || state._tag === "Link"

/** The hash of a file state, else `undefined`. */
export const hashOf = (state: BaseState): string | undefined => (state._tag === "File" ? state.hash : undefined)

/** Where a path points in the overlay's view. */
export type View =
  | { readonly _tag: "Missing"; readonly path: string; readonly notDirectory?: boolean }
  | { readonly _tag: "OverlayFile"; readonly path: string; readonly content: string }
  | { readonly _tag: "OverlayLink"; readonly path: string; readonly target: string }
  | { readonly _tag: "OverlayDirectory"; readonly path: string }
  | { readonly _tag: "Base"; readonly path: string }

/** The table of one overlay over the real working directory `cwd`. */
export class Table {
  readonly entries = new Map<string, Entry>()
  readonly children = new Map<string, Set<string>>()
  /** Every path the overlay touched, with the base's state when it first did. */
  readonly touched = new Map<string, BaseState>()
  constructor(readonly path: Path.Path, readonly cwd: string) {}

  get size(): number {
    return this.entries.size
  }

  isInside(p: string): boolean {
    const cwd = this.cwd
    return p === cwd || p.startsWith(cwd.endsWith("/") ? cwd : cwd + "/")
  }

  setEntry(p: string, entry: Entry): void {
    this.entries.set(p, entry)
    const parent = this.path.dirname(p)
    let names = this.children.get(parent)
    if (names === undefined) this.children.set(parent, names = new Set())
    names.add(this.path.basename(p))
  }

  /** Forget everything under `p` and hide it. */
  hideSubtree(p: string): void {
    const prefix = p + "/"
    for (const key of [...this.entries.keys()]) {
      if (key.startsWith(prefix)) this.entries.delete(key)
    }
    for (const key of [...this.children.keys()]) {
      if (key === p || key.startsWith(prefix)) this.children.delete(key)
    }
    this.setEntry(p, { _tag: "Whiteout" })
  }

  /** The overlay's say about a real path: an entry, hidden by an ancestor, or nothing (the base decides). */
  lookup(p: string): View {
    const own = this.entries.get(p)
    if (own !== undefined) {
      switch (own._tag) {
        case "File":
          return { _tag: "OverlayFile", path: p, content: own.content }
        case "Link":
          return { _tag: "OverlayLink", path: p, target: own.target }
        case "Directory":
          return { _tag: "OverlayDirectory", path: p }
        case "Whiteout":
          return { _tag: "Missing", path: p }
      }
    }
    if (!this.isInside(p) || p === this.cwd) return { _tag: "Base", path: p }
    let ancestor = this.path.dirname(p)
    while (true) {
      const entry = this.entries.get(ancestor)
      // Any entry above hides the base below: a whiteout, a file, a link (paths through it are
      // resolved by following it first), or a new (opaque) directory.
      if (entry !== undefined) return { _tag: "Missing", path: p, notDirectory: entry._tag === "File" }
      if (ancestor === this.cwd || ancestor === "/") return { _tag: "Base", path: p }
      ancestor = this.path.dirname(ancestor)
    }
  }

  /** Whether some prefix of a lexical path has an entry (then the base cannot resolve it alone). */
  lexicallyAffected(abs: string): boolean {
    let current = abs
    while (true) {
      if (this.entries.has(current)) return true
      const parent = this.path.dirname(current)
      if (parent === current) return false
      current = parent
    }
  }

  /** Record the base's state at `p`, unless the overlay touched it before. */
  recordTouch(p: string, state: BaseState): void {
    if (!this.touched.has(p)) this.touched.set(p, state)
  }

  clear(): void {
    this.entries.clear()
    this.children.clear()
    this.touched.clear()
  }
}
