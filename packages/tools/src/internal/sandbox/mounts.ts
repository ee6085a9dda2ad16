/**
 * The policy's paths made concrete for bubblewrap: real paths (links
 * followed, so a link to a denied file or a protected directory is judged by
 * its target), patterns expanded by walking their base directory, and one
 * mount per path, ordered so that a deeper mount lands on top of a shallower
 * one (a mask inside a writable root hides the file; a writable root inside a
 * masked directory stays visible). Every directory between a writable root
 * and a read-only or masked path in it is a mount point of its own, so it
 * cannot be renamed away with the path; git's own files are in `git.ts`.
 *
 * This reads the real filesystem with `node:fs` on purpose: the sandbox is
 * about what the kernel will let a process do, never about a FileSystem
 * overlay's view.
 *
 * @internal
 */
import * as Sandbox from "@switchyard/core/Sandbox"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Git from "./git.js"

/** A mount the sandbox gets. */
export type Mount =
  | { readonly kind: "writable"; readonly path: string }
  | { readonly kind: "readOnly"; readonly path: string }
  | { readonly kind: "maskFile"; readonly path: string }
  | { readonly kind: "maskDirectory"; readonly path: string }

/** What the policy became on this machine, now. */
export interface Resolved {
  /** Writable roots, real paths. */
  readonly writable: ReadonlyArray<string>
  /** Every mount but the base ones (`/`, `/dev`, `/proc`), shallow first. */
  readonly mounts: ReadonlyArray<Mount>
  /** Placeholders this command uses (released when it is done). */
  readonly placeholders: ReadonlyArray<string>
  /** Read-only paths inside the writable roots, for messages. */
  readonly protectedPaths: ReadonlyArray<string>
  /** Masked paths, for messages. */
  readonly masked: ReadonlyArray<string>
}

/** Directories a pattern walk visits at most; past it the whole base is covered (fail closed). */
const WALK_LIMIT = 20_000

/** The kernel's own trees: never walked, never masked. */
const SKIPPED: ReadonlySet<string> = new Set(["/proc", "/sys", "/dev"])

/**
 * Protected names whose absence is filled with an empty read-only mount point, so none can be made. All
 * are filled with a directory, `.mcp.json` too: git lists no empty directory, so `git add -A` inside the
 * sandbox does not stage a placeholder (an empty file would be committed, and then missing).
 */
const FILL_WHEN_MISSING: ReadonlySet<string> = new Set([".claude", ".switchyard", ".mcp.json"])

const realOrUndefined = (p: string): string | undefined => {
  try {
    return fs.realpathSync(p)
  } catch {
    return undefined
  }
}

const isDirectory = (p: string): boolean | undefined => {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return undefined
  }
}

const isSymbolicLink = (p: string): boolean => {
  try {
    return fs.lstatSync(p).isSymbolicLink()
  } catch {
    return false
  }
}

const isInside = (dir: string, candidate: string): boolean =>
  candidate === dir || candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep)

const depth = (p: string) => (p === "/" ? 0 : p.split("/").length - 1)

const relativePosix = (base: string, p: string) => (p === base ? "" : path.relative(base, p).split(path.sep).join("/"))

/**
 * Directory listings, kept while the directory's modification time stays
 * the same (any entry added, removed or renamed changes it): walks on later
 * calls only read what changed.
 */
export class ListingCache {
  private readonly entries = new Map<string, { readonly stamp: bigint; readonly list: ReadonlyArray<fs.Dirent> }>()

  list(dir: string): ReadonlyArray<fs.Dirent> | undefined {
    let stamp: bigint
    try {
      const stat = fs.statSync(dir, { bigint: true })
      stamp = stat.mtimeNs ^ (stat.ino << 20n)
    } catch {
      this.entries.delete(dir)
      return undefined
    }
    const cached = this.entries.get(dir)
    if (cached !== undefined && cached.stamp === stamp) return cached.list
    try {
      const list = fs.readdirSync(dir, { withFileTypes: true })
      if (this.entries.size > 200_000) this.entries.clear()
      this.entries.set(dir, { stamp, list })
      return list
    } catch {
      return undefined
    }
  }
}

/**
 * The mount points made for missing protected names — an empty directory,
 * or a file with what git assumes when it is absent (`commondir`) — counted
 * per command using them: a command that starts while another one's
 * placeholder exists treats it as missing too, and the last one to finish
 * removes it (a file only while it still holds what was written).
 */
export class Placeholders {
  private readonly users = new Map<string, { count: number; readonly content: string | undefined }>()

  /** Whether `p` is one of ours (then it counts as missing). */
  has(p: string): boolean {
    return this.users.has(p)
  }

  /** Make (or share) the placeholder, a directory or a file with `content`; false when something real is there. */
  acquire(p: string, content?: string): boolean {
    const existing = this.users.get(p)
    if (existing !== undefined) {
      existing.count++
      return true
    }
    try {
      if (content === undefined) fs.mkdirSync(p)
      else fs.writeFileSync(p, content, { flag: "wx", mode: 0o644 })
    } catch {
      return false
    }
    this.users.set(p, { count: 1, content })
    return true
  }

  /** One user fewer; the last removes it when it is still as made. */
  release(p: string): void {
    const entry = this.users.get(p)
    if (entry === undefined || --entry.count > 0) return
    this.users.delete(p)
    try {
      if (entry.content === undefined) fs.rmdirSync(p)
      else if (fs.readFileSync(p, "utf8") === entry.content) fs.unlinkSync(p)
    } catch {
      // Not empty any more, or gone: leave it.
    }
  }
}

interface Hit {
  readonly path: string
  readonly directory: boolean
}

/** Links out of a pattern's base a walk follows in a row at most (a bound against loops). */
const LINK_HOPS = 4

/**
 * Every existing path a set denotes, as real paths: the base itself, or what
 * a walk of the base finds matching the pattern (a matching directory covers
 * everything below it). A link is denied by its own name or its target's (a
 * name the rule matches that links out of the base masks the target, as the
 * Read tool denies it), and a link to a directory out of the base is walked
 * under the link's name. A walk past the limit covers the base and every
 * directory out of it that it entered (fail closed).
 */
export const expand = (set: Sandbox.PathSet, cache: ListingCache): ReadonlyArray<Hit> => {
  const base = realOrUndefined(set.base)
  if (base === undefined || SKIPPED.has(base)) return []
  const directory = isDirectory(base)
  if (directory === undefined) return []
  if (set.pattern === undefined) return [{ path: base, directory }]
  if (!directory) return []
  const matches = Sandbox.pathSetMatcher(set)
  const denotes = (relative: string, directory: boolean) => matches(relative) || (directory && matches(`${relative}/`))
  const hits: Array<Hit> = []
  const entered: Array<Hit> = [{ path: base, directory: true }]
  const queue: Array<{ readonly dir: string; readonly relative: string; readonly hops: number }> = [
    { dir: base, relative: "", hops: 0 }
  ]
  let visited = 0
  while (queue.length > 0) {
    const { dir, hops, relative: at } = queue.pop()!
    if (++visited > WALK_LIMIT) return entered
    for (const entry of cache.list(dir) ?? []) {
      const full = path.join(dir, entry.name)
      if (SKIPPED.has(full)) continue
      const relative = at === "" ? entry.name : `${at}/${entry.name}`
      if (entry.isSymbolicLink()) {
        // A link is judged by its target and by its own name: masking the target covers every way to it.
        const target = realOrUndefined(full)
        if (target === undefined || SKIPPED.has(target)) continue
        const targetIsDir = isDirectory(target) ?? false
        const inside = isInside(base, target)
        if (denotes(relative, targetIsDir) || (inside && denotes(relativePosix(base, target), targetIsDir))) {
          hits.push({ path: target, directory: targetIsDir })
        } else if (!inside && targetIsDir && hops < LINK_HOPS) {
          // Names below the link match the rule too (`config/linked/prod.key` for `config/**/*.key`).
          entered.push({ path: target, directory: true })
          queue.push({ dir: target, relative, hops: hops + 1 })
        }
        continue
      }
      const directory = entry.isDirectory()
      if (denotes(relative, directory)) {
        hits.push({ path: full, directory })
        continue
      }
      if (directory) queue.push({ dir: full, relative, hops })
    }
  }
  return hits
}

/** Names a command could rename a directory to, for the question whether a pattern still matches then. */
const RENAMED = ["\u0001moved", ".\u0001moved"]

/**
 * Whether a pattern still denotes `hit` wherever below the writable root
 * `root` its ancestor `ancestor` is moved (the base holds the whole root and
 * the pattern matches any directories in its place: `**\/*.pem`), so the
 * ancestor needs no pin.
 */
const followsMoves = (set: Sandbox.PathSet, root: string, ancestor: string, hit: Hit): boolean => {
  if (set.pattern === undefined) return false
  const base = realOrUndefined(set.base)
  if (base === undefined || !isInside(base, root)) return false
  const matches = Sandbox.pathSetMatcher(set)
  const prefix = relativePosix(base, root)
  const rest = relativePosix(ancestor, hit.path)
  return RENAMED.every((name) =>
    [1, 2, 3].every((levels) => {
      const moved = [prefix, ...Array.from({ length: levels }, () => name), rest].filter((s) => s !== "").join("/")
      return matches(moved) || (hit.directory && matches(`${moved}/`))
    })
  )
}

/**
 * Every directory between a writable root and a read-only or masked path
 * inside it becomes a mount point of its own (bound writable onto itself):
 * renaming or removing one fails with EBUSY. Otherwise `mv config moved`
 * carries the mask along inside the sandbox, and on disk the rule no longer
 * names the new place, so the next command reads what was denied (or
 * replaces what was protected). No pin where every rule denoting the path
 * still does wherever the directory goes (`**\/.env`): each mount costs
 * bubblewrap start-up time. Below a read-only or masked mount nothing can be
 * renamed anyway; the walk stops there.
 */
const pinAncestors = (
  writable: ReadonlyArray<string>,
  mounts: Map<string, Mount>,
  sources: ReadonlyMap<string, { readonly hit: Hit; readonly sets: ReadonlyArray<Sandbox.PathSet> }>
): void => {
  const guarded = Array.from(mounts.values()).filter((mount) => mount.kind !== "writable")
  for (const mount of guarded) {
    // From the outermost root holding it: a root nested in another moves with its parent too.
    const root = writable
      .filter((root) => root !== mount.path && isInside(root, mount.path))
      .sort((a, b) => a.length - b.length)[0]
    if (root === undefined) continue
    const source = sources.get(mount.path)
    const between = path.relative(root, path.dirname(mount.path)).split(path.sep).filter((part) => part !== "")
    let dir = root
    for (const part of between) {
      dir = path.join(dir, part)
      const existing = mounts.get(dir)
      if (existing !== undefined && existing.kind !== "writable") break
      if (existing !== undefined) continue
      const ancestor = dir
      if (source !== undefined && source.sets.every((set) => followsMoves(set, root, ancestor, source.hit))) continue
      mounts.set(dir, { kind: "writable", path: dir })
    }
  }
}

/** Resolve a policy into mounts, now. */
export const resolve = (policy: Sandbox.Policy, cache: ListingCache, placeholders: Placeholders): Resolved => {
  const writable = Array.from(
    new Set(policy.writable.flatMap((root) => {
      const real = realOrUndefined(root)
      return real === undefined ? [] : [real]
    }))
  )
  const inWritable = (p: string) => writable.some((root) => isInside(root, p))
  const mounts = new Map<string, Mount>()
  const used: Array<string> = []
  const placeholder = (p: string, content?: string): boolean => {
    if (!placeholders.acquire(p, content)) return false
    used.push(p)
    denotedBy({ path: p, directory: content === undefined }, { base: p, pattern: undefined, source: "placeholder" })
    mounts.set(p, { kind: "readOnly", path: p })
    protectedPaths.push(p)
    return true
  }
  const protectedPaths: Array<string> = []
  const masked: Array<string> = []
  // The sets denoting each path (a placeholder has none: it is pinned wherever it is).
  const sources = new Map<string, { hit: Hit; sets: Array<Sandbox.PathSet> }>()
  const denotedBy = (hit: Hit, set: Sandbox.PathSet) => {
    const entry = sources.get(hit.path)
    if (entry === undefined) sources.set(hit.path, { hit, sets: [set] })
    else entry.sets.push(set)
  }
  for (const root of writable) mounts.set(root, { kind: "writable", path: root })
  // A root's `.git` is a mount point of its own, so it cannot be renamed away and replaced by one
  // with other hooks; git's own files that make the user's next git run a program are read-only below.
  const protectedSets: Array<Sandbox.PathSet> = [...policy.readOnly]
  const missing = (p: string) => placeholders.has(p) || (!fs.existsSync(p) && !isSymbolicLink(p))
  for (const root of writable) {
    const dotGit = path.join(root, ".git")
    // No repository here: none may be made while the command runs (`git init` and a planted hook the
    // user's own git would run later). An empty `.git` does not stop git finding a repository above.
    if (missing(dotGit)) {
      if (placeholder(dotGit)) continue
    }
    // A `.git` directory that is no repository (no HEAD: a placeholder a killed runtime left, say) is read-only
    // whole: a `git init` into it would plant a config the user's own git runs later.
    if (
      !placeholders.has(dotGit) && isDirectory(dotGit) === true && !isSymbolicLink(dotGit) &&
      !fs.existsSync(path.join(dotGit, "HEAD"))
    ) {
      mounts.set(dotGit, { kind: "readOnly", path: dotGit })
      protectedPaths.push(dotGit)
      continue
    }
    if (isDirectory(dotGit) === true && !isSymbolicLink(dotGit) && !mounts.has(dotGit)) {
      mounts.set(dotGit, { kind: "writable", path: dotGit })
    }
    const git = Git.protection(root, inWritable, (p) => placeholders.has(p))
    for (const fill of git.fills) {
      // What git assumes when the file is absent, read-only, so that no other can be written there.
      if (!placeholder(fill.path, fill.content)) {
        protectedSets.push({ base: fill.path, pattern: undefined, source: "git" })
      }
    }
    for (const p of git.readOnly) protectedSets.push({ base: p, pattern: undefined, source: "git" })
  }
  for (const set of protectedSets) {
    const fill = set.pattern === undefined && FILL_WHEN_MISSING.has(path.basename(set.base))
    // Missing: an empty read-only mount point stops the name being made (removed again afterwards).
    if (fill && missing(set.base) && inWritable(path.dirname(set.base)) && placeholder(set.base)) continue
    const hits = expand(set, cache)
    for (const hit of hits) {
      if (!inWritable(hit.path)) continue
      denotedBy(hit, set)
      const existing = mounts.get(hit.path)
      if (existing === undefined || existing.kind === "writable") {
        mounts.set(hit.path, { kind: "readOnly", path: hit.path })
      }
      protectedPaths.push(hit.path)
    }
  }
  for (const set of policy.denyRead) {
    for (const hit of expand(set, cache)) {
      if (hit.path === "/") continue
      denotedBy(hit, set)
      mounts.set(hit.path, { kind: hit.directory ? "maskDirectory" : "maskFile", path: hit.path })
      masked.push(hit.path)
    }
  }
  pinAncestors(writable, mounts, sources)
  const rank = { writable: 0, readOnly: 1, maskFile: 2, maskDirectory: 2 } as const
  const ordered = Array.from(mounts.values()).sort((a, b) =>
    depth(a.path) - depth(b.path) || rank[a.kind] - rank[b.kind] || a.path.localeCompare(b.path)
  )
  return { writable, mounts: ordered, placeholders: used, protectedPaths, masked }
}

/** Release the placeholders a command used. */
export const release = (resolved: Resolved, placeholders: Placeholders): void => {
  for (const p of resolved.placeholders) placeholders.release(p)
}
