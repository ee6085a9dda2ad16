/**
 * The files of a repository through which a write becomes a program the
 * user's own git runs later, outside any sandbox: every git directory's
 * `hooks/` and `config`, the files that send git to another git directory or
 * config (`commondir`, `config.worktree`, a `.git` file's `gitdir:`), for
 * the repository at the top of a writable root, its linked worktrees
 * (`worktrees/*`), its submodules (`modules/**`, nested ones too) and their
 * checkouts' `.git` files.
 *
 * A missing redirect file is filled while the command runs with what git
 * assumes when it is absent (`commondir` holding `.`: the git directory is
 * its own common directory; an empty `config.worktree`): an empty file or a
 * directory there makes git refuse to run, and a missing one could be made.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** What a writable root's repositories need. */
export interface Protection {
  /** Existing paths kept read-only. */
  readonly readOnly: ReadonlyArray<string>
  /** Missing files held by a read-only file with this content while the command runs. */
  readonly fills: ReadonlyArray<{ readonly path: string; readonly content: string }>
}

/** What git reads from a missing `commondir`: the git directory is its own common directory. */
export const COMMONDIR_ASSUMED = ".\n"

/** Git directories a walk of `modules/` visits at most (a bound against a tree of links). */
const MODULES_LIMIT = 2_000

const lstat = (p: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(p)
  } catch {
    return undefined
  }
}

const readText = (p: string): string | undefined => {
  try {
    return fs.statSync(p).isFile() ? fs.readFileSync(p, "utf8") : undefined
  } catch {
    return undefined
  }
}

/** A git metadata value as git reads it: trailing newlines stripped, nothing else. */
const metadataValue = (text: string): string | undefined => {
  const value = text.replace(/[\r\n]+$/, "")
  return value.length === 0 ? undefined : value
}

/** The git directory a `.git` file points to (git wants `gitdir: ` at its very start). */
const pointerOf = (dotGit: string): string | undefined => {
  const text = readText(dotGit)
  if (text === undefined || !text.startsWith("gitdir: ")) return undefined
  const value = metadataValue(text.slice("gitdir: ".length))
  return value === undefined ? undefined : path.resolve(path.dirname(dotGit), value)
}

/** Whether a directory holds what makes one a git directory (looser than git: it only protects more). */
const isGitDirectory = (dir: string): boolean => {
  try {
    return fs.readdirSync(dir).some((name) => name === "HEAD" || name === "config" || name === "objects")
  } catch {
    return false
  }
}

/** Directories below `dir`, links to directories followed. */
const subdirectories = (dir: string): ReadonlyArray<string> => {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) return [full]
      if (!entry.isSymbolicLink()) return []
      try {
        return fs.statSync(full).isDirectory() ? [full] : []
      } catch {
        return []
      }
    })
  } catch {
    return []
  }
}

/** `core.worktree` of a git directory's config, resolved from the git directory (a submodule's checkout). */
const worktreeOf = (gitDir: string): string | undefined => {
  const value = /^\s*worktree\s*=\s*(.+?)\s*$/m.exec(readText(path.join(gitDir, "config")) ?? "")?.[1]
  return value === undefined ? undefined : path.resolve(gitDir, value.replace(/^"(.*)"$/, "$1"))
}

/**
 * The protection of the repositories a writable root holds. `writable` says
 * whether a path may be written (only those need protecting, and only there
 * is anything made); `missing` whether a path counts as absent (one of the
 * sandbox's own placeholders does).
 */
export const protection = (
  root: string,
  writable: (p: string) => boolean,
  missing: (p: string) => boolean
): Protection => {
  const readOnly: Array<string> = []
  const fills: Array<{ path: string; content: string }> = []
  const keep = (p: string) => {
    if (writable(p) && !missing(p) && lstat(p) !== undefined) readOnly.push(p)
  }
  const fill = (p: string, content: string) => {
    if (!writable(path.dirname(p))) return
    if (missing(p) || lstat(p) === undefined) fills.push({ path: p, content })
    else readOnly.push(p)
  }
  const queue: Array<string> = []
  const seen = new Set<string>()
  const visit = (gitDir: string) => {
    if (seen.size > MODULES_LIMIT || seen.has(gitDir)) return
    seen.add(gitDir)
    queue.push(gitDir)
  }
  const dotGit = path.join(root, ".git")
  const top = lstat(dotGit)
  if (top?.isFile() === true) {
    // A linked worktree's or a submodule's `.git` file: rewritten, it sends git to a directory the command made.
    keep(dotGit)
    const gitDir = pointerOf(dotGit)
    if (gitDir !== undefined) visit(gitDir)
  } else if (top?.isDirectory() === true) {
    visit(dotGit)
  }
  for (const checkout of gitmodulesPaths(root)) {
    if (lstat(path.join(checkout, ".git"))?.isFile() === true) keep(path.join(checkout, ".git"))
  }
  while (queue.length > 0) {
    const gitDir = queue.pop()!
    if (!isGitDirectory(gitDir)) continue
    const hooks = path.join(gitDir, "hooks")
    // A repository without hooks gets an empty hooks directory, so none can be added.
    if (writable(gitDir) && lstat(hooks) === undefined) {
      try {
        fs.mkdirSync(hooks)
      } catch {
        // Someone else made it: it is kept read-only below either way.
      }
    }
    keep(hooks)
    keep(path.join(gitDir, "config"))
    const common = metadataValue(readText(path.join(gitDir, "commondir")) ?? "")
    fill(path.join(gitDir, "commondir"), COMMONDIR_ASSUMED)
    if (common !== undefined && !missing(path.join(gitDir, "commondir"))) visit(path.resolve(gitDir, common))
    // Read instead of config where extensions.worktreeConfig is on (which only config can turn on).
    if (/worktreeconfig/i.test(readText(path.join(gitDir, "config")) ?? "")) {
      fill(path.join(gitDir, "config.worktree"), "")
    } else {
      keep(path.join(gitDir, "config.worktree"))
    }
    for (const worktree of subdirectories(path.join(gitDir, "worktrees"))) visit(worktree)
    // A submodule's name may hold slashes (modules/vendor/lib): directories that are no git directory are
    // segments of a name; a git directory keeps its own submodules under its `modules/`.
    const pending = subdirectories(path.join(gitDir, "modules")).slice()
    while (pending.length > 0 && seen.size <= MODULES_LIMIT) {
      const dir = pending.pop()!
      if (isGitDirectory(dir)) {
        visit(dir)
        const checkout = worktreeOf(dir)
        if (checkout !== undefined && lstat(path.join(checkout, ".git"))?.isFile() === true) {
          keep(path.join(checkout, ".git"))
        }
      } else {
        pending.push(...subdirectories(dir))
      }
    }
  }
  return { readOnly, fills }
}

/** The checkouts `.gitmodules` at a root names. */
const gitmodulesPaths = (root: string): ReadonlyArray<string> =>
  Array.from(
    (readText(path.join(root, ".gitmodules")) ?? "").matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm),
    (match) => path.resolve(root, match[1]!.replace(/^"(.*)"$/, "$1"))
  ).filter((p) => p.startsWith(root + path.sep))
