/**
 * The policy's paths made concrete for bubblewrap: real paths (links
 * followed, so a link to a denied file or a protected directory is judged by
 * its target), patterns expanded by walking their base directory, and one
 * mount per path, ordered so that a deeper mount lands on top of a shallower
 * one (a mask inside a writable root hides the file; a writable root inside a
 * masked directory stays visible).
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
 * The empty directories made as mount points for missing protected names,
 * counted per command using them: a command that starts while another one's
 * placeholder exists treats it as missing too, and the last one to finish
 * removes it.
 */
export class Placeholders {
  private readonly users = new Map<string, { count: number }>()

  /** Whether `p` is one of ours (then it counts as missing). */
  has(p: string): boolean {
    return this.users.has(p)
  }

  /** Make (or share) the placeholder; false when something real is there. */
  acquire(p: string): boolean {
    const existing = this.users.get(p)
    if (existing !== undefined) {
      existing.count++
      return true
    }
    try {
      fs.mkdirSync(p)
    } catch {
      return false
    }
    this.users.set(p, { count: 1 })
    return true
  }

  /** One user fewer; the last removes it when it is still empty. */
  release(p: string): void {
    const entry = this.users.get(p)
    if (entry === undefined || --entry.count > 0) return
    this.users.delete(p)
    try {
      fs.rmdirSync(p)
    } catch {
      // Not empty any more, or gone: leave it.
    }
  }
}

interface Hit {
  readonly path: string
  readonly directory: boolean
}

/**
 * Every existing path a set denotes, as real paths: the base itself, or what
 * a walk of the base finds matching the pattern (a matching directory covers
 * everything below it). A walk past the limit covers the base (fail closed).
 */
export const expand = (set: Sandbox.PathSet, cache: ListingCache): ReadonlyArray<Hit> => {
  const base = realOrUndefined(set.base)
  if (base === undefined || SKIPPED.has(base)) return []
  const directory = isDirectory(base)
  if (directory === undefined) return []
  if (set.pattern === undefined) return [{ path: base, directory }]
  if (!directory) return []
  const matches = Sandbox.pathSetMatcher(set)
  const hits: Array<Hit> = []
  const queue: Array<string> = [base]
  let visited = 0
  while (queue.length > 0) {
    const dir = queue.pop()!
    if (++visited > WALK_LIMIT) return [{ path: base, directory: true }]
    for (const entry of cache.list(dir) ?? []) {
      const full = path.join(dir, entry.name)
      if (SKIPPED.has(full)) continue
      const relative = relativePosix(base, full)
      if (entry.isSymbolicLink()) {
        // A link is judged by its target: masking the target covers every way to it.
        const target = realOrUndefined(full)
        if (target === undefined || !isInside(base, target)) continue
        const targetIsDir = isDirectory(target) ?? false
        const targetRelative = relativePosix(base, target)
        if (matches(targetRelative) || (targetIsDir && matches(`${targetRelative}/`))) {
          hits.push({ path: target, directory: targetIsDir })
        }
        continue
      }
      const directory = entry.isDirectory()
      if (matches(relative) || (directory && matches(`${relative}/`))) {
        hits.push({ path: full, directory })
        continue
      }
      if (directory) queue.push(full)
    }
  }
  return hits
}

/**
 * `.git` of a writable root, when it is a directory, or the git directory a
 * `.git` file (a linked worktree) points to with its common directory.
 */
const gitDirectories = (root: string): ReadonlyArray<string> => {
  const dotGit = path.join(root, ".git")
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(dotGit)
  } catch {
    return []
  }
  if (stat.isDirectory()) return [dotGit]
  if (!stat.isFile()) return []
  try {
    const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, "utf8"))?.[1]?.trim()
    if (pointer === undefined) return []
    const gitDir = path.resolve(root, pointer)
    const common = fs.readFileSync(path.join(gitDir, "commondir"), "utf8").trim()
    return [gitDir, path.resolve(gitDir, common)]
  } catch {
    return []
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
  const placeholder = (p: string): boolean => {
    if (!placeholders.acquire(p)) return false
    used.push(p)
    mounts.set(p, { kind: "readOnly", path: p })
    protectedPaths.push(p)
    return true
  }
  const protectedPaths: Array<string> = []
  const masked: Array<string> = []
  for (const root of writable) mounts.set(root, { kind: "writable", path: root })
  // A root's `.git` is a mount point of its own, so it cannot be renamed away and replaced by one
  // with other hooks; its hooks and config are read-only below (also a linked worktree's).
  const protectedSets: Array<Sandbox.PathSet> = [...policy.readOnly]
  for (const root of writable) {
    const dotGit = path.join(root, ".git")
    // No repository here: none may be made while the command runs (`git init` and a planted hook the
    // user's own git would run later). An empty `.git` does not stop git finding a repository above.
    if (placeholders.has(dotGit) || (!fs.existsSync(dotGit) && !isSymbolicLink(dotGit))) {
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
    for (const gitDir of gitDirectories(root)) {
      if (gitDir === path.join(root, ".git")) {
        if (!mounts.has(gitDir)) mounts.set(gitDir, { kind: "writable", path: gitDir })
        const hooks = path.join(gitDir, "hooks")
        // A repository without hooks gets an empty hooks directory, so none can be added.
        if (!fs.existsSync(hooks)) {
          try {
            fs.mkdirSync(hooks)
          } catch {
            // Someone else made it, or the repository is read-only: it stays protected below either way.
          }
        }
      }
      for (const name of ["hooks", "config", "config.worktree"]) {
        protectedSets.push({ base: path.join(gitDir, name), pattern: undefined, source: "git" })
      }
    }
  }
  for (const set of protectedSets) {
    const fill = set.pattern === undefined && FILL_WHEN_MISSING.has(path.basename(set.base))
    const missing = placeholders.has(set.base) || (!fs.existsSync(set.base) && !isSymbolicLink(set.base))
    // Missing: an empty read-only mount point stops the name being made (removed again afterwards).
    if (fill && missing && inWritable(path.dirname(set.base)) && placeholder(set.base)) continue
    const hits = expand(set, cache)
    for (const hit of hits) {
      if (!inWritable(hit.path)) continue
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
      mounts.set(hit.path, { kind: hit.directory ? "maskDirectory" : "maskFile", path: hit.path })
      masked.push(hit.path)
    }
  }
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
