/**
 * The repository git finds from a directory, and whether its own
 * configuration leaves git running only itself on it.
 *
 * A repository's configuration can make every git command run a program
 * (`core.fsmonitor` — even `git status` and `git ls-files` —, `diff.external`,
 * a `textconv` or `filter` driver, `log.showSignature`'s gpg, `core.pager`),
 * read files anywhere (`include.path`, `core.excludesFile`,
 * `core.attributesFile`, `blame.ignoreRevsFile`, `mailmap.file`) or work on
 * another tree (`core.worktree`); `git status` also obeys its submodules'
 * configurations when it recurses into them, and runs a `post-index-change`
 * hook when it refreshes the index; `objects/info/alternates` lends objects
 * from stores elsewhere. A configuration is *plain* when every entry is one
 * the table below knows to do none of that; anything else, and anything the
 * scanner cannot read plainly (an old-style `[a.b]` section, a value
 * continued on the next line, a key after a section header on one line), is
 * not — fail closed.
 *
 * Two readers: the footprint of a git command (a plain repository without
 * submodules, alternates or such a hook is bounded by its work tree and git
 * directory: `plainRepository`) and the Bash tool's permission check (the git
 * a line runs runs only git: `programEntry`, submodules included).
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** How a section's entries are known: which keys, and whether a subsection (`[remote "origin"]`) belongs there. */
interface SectionRule {
  /** Keys (lower case) that neither run anything, nor name a file or another tree; `"any"`: every key. */
  readonly keys: ReadonlySet<string> | "any"
  /** `required`: only `[section "name"]`; `forbidden`: only `[section]` (a subsection there names a driver). */
  readonly subsection: "required" | "forbidden" | "any"
}

const rule = (keys: ReadonlyArray<string> | "any", subsection: SectionRule["subsection"]): SectionRule => ({
  keys: keys === "any" ? "any" : new Set(keys),
  subsection
})

const KNOWN: Readonly<Record<string, SectionRule>> = {
  core: rule([
    "repositoryformatversion",
    "filemode",
    "bare",
    "logallrefupdates",
    "ignorecase",
    "precomposeunicode",
    "symlinks",
    "autocrlf",
    "eol",
    "safecrlf",
    "quotepath",
    "abbrev",
    "checkstat",
    "trustctime",
    "untrackedcache",
    "preloadindex"
  ], "forbidden"),
  remote: rule(["url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror", "gh-resolved"], "required"),
  branch: rule(["remote", "merge", "rebase", "pushremote", "description", "vscode-merge-base"], "required"),
  user: rule(["name", "email"], "forbidden"),
  init: rule(["defaultbranch"], "forbidden"),
  pull: rule(["rebase", "ff"], "forbidden"),
  push: rule(["default", "autosetupremote"], "forbidden"),
  fetch: rule(["prune"], "forbidden"),
  extensions: rule(["objectformat"], "forbidden"),
  color: rule(["ui", "diff", "status", "branch"], "forbidden"),
  advice: rule("any", "forbidden"),
  diff: rule(["algorithm", "renames", "colormoved", "mnemonicprefix", "noprefix"], "forbidden"),
  merge: rule(["ff", "conflictstyle"], "forbidden"),
  rebase: rule(["autosquash", "autostash"], "forbidden"),
  status: rule(["showuntrackedfiles"], "forbidden"),
  gui: rule("any", "forbidden")
}

/** A submodule's entries in the superproject's configuration (`submodule.<name>.update` may be `!command`). */
const SUBMODULE = rule(["url", "active", "branch"], "required")

/** One `key = value` entry, its section and subsection as written. */
interface Entry {
  readonly section: string
  readonly subsection: string | undefined
  readonly key: string
  readonly value: string | undefined
}

const COMMENT = /^\s*(?:[#;].*)?$/
const SECTION = /^\s*\[([A-Za-z0-9-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\]\s*(?:[#;].*)?$/
const ENTRY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/

/**
 * A value as git's config parser reads it (config.c `parse_value`): blanks
 * around it dropped, runs of blanks inside kept, `"…"` quoting anywhere, `#`
 * and `;` outside quotes starting a comment, `\\ \" \n \t \b` escapes.
 * `undefined` where git would reject the line or continue it on the next one
 * (a trailing `\\`, an open quote, another escape): the file is then not
 * read plainly.
 */
export const parseValue = (raw: string): string | undefined => {
  let value = ""
  let quote = false
  let spaces = 0
  for (let i = 0; i < raw.length; i++) {
    let c = raw[i]!
    if (/\s/.test(c) && !quote) {
      if (value.length > 0) spaces++
      continue
    }
    if (!quote && (c === ";" || c === "#")) break
    value += " ".repeat(spaces)
    spaces = 0
    if (c === "\\") {
      const next = raw[++i]
      if (next === undefined) return undefined
      const escaped = ({ t: "\t", b: "\b", n: "\n", "\\": "\\", "\"": "\"" } as Record<string, string>)[next]
      if (escaped === undefined) return undefined
      value += escaped
      continue
    }
    if (c === "\"") {
      quote = !quote
      continue
    }
    c = c === "\r" ? "" : c
    value += c
  }
  return quote ? undefined : value
}

/** The entries of one configuration file, or `undefined` where a line cannot be read plainly. */
const entriesOf = (text: string): ReadonlyArray<Entry> | undefined => {
  const entries: Array<Entry> = []
  let section: string | undefined
  let subsection: string | undefined
  for (const line of text.split("\n")) {
    if (COMMENT.test(line)) continue
    const header = SECTION.exec(line)
    if (header !== null) {
      section = header[1]!.toLowerCase()
      subsection = header[2]
      continue
    }
    const entry = ENTRY.exec(line)
    if (entry === null || section === undefined) return undefined
    const value = entry[2] === undefined ? undefined : parseValue(entry[2])
    if (entry[2] !== undefined && value === undefined) return undefined
    entries.push({ section, subsection, key: entry[1]!.toLowerCase(), value })
  }
  return entries
}

/**
 * Who reads a configuration file: a footprint (git must touch nothing but the
 * repository), or the permission check (git must run nothing but git — and
 * Git LFS's standard filter, the user's own program, which writes `.git/lfs`).
 * And where it sits: a repository's own, or a submodule's git directory.
 */
export interface Reading {
  readonly reader: "footprint" | "permission"
  readonly place: "repository" | "submodule"
}

/** `git lfs install`'s filter, exactly as it writes it. */
const LFS_FILTER: Readonly<Record<string, string>> = {
  clean: "git-lfs clean -- %f",
  smudge: "git-lfs smudge -- %f",
  process: "git-lfs filter-process",
  required: "true"
}

const isKnown = (entry: Entry, reading: Reading): boolean => {
  // A submodule's git directory names its work tree in the superproject (`core.worktree = ../../../lib`).
  if (reading.place === "submodule" && entry.section === "core" && entry.key === "worktree") return true
  // Where hooks are: the permission check examines the hooks that read-only commands run there (`hookEntry`).
  if (reading.reader === "permission" && entry.section === "core" && entry.subsection === undefined) {
    if (entry.key === "hookspath") return true
    // A boolean is git's own daemon (`git fsmonitor--daemon`) or none; any other value is a program to run.
    if (entry.key === "fsmonitor") return /^(?:true|false|yes|no|on|off|1|0)$/i.test(entry.value ?? "")
  }
  if (reading.reader === "permission" && entry.section === "filter" && entry.subsection === "lfs") {
    return Object.hasOwn(LFS_FILTER, entry.key) && LFS_FILTER[entry.key] === entry.value
  }
  if (reading.reader === "permission" && entry.section === "lfs") {
    return entry.subsection === undefined
      ? ["repositoryformatversion", "locksverify"].includes(entry.key)
      : entry.key === "access"
  }
  const known = entry.section === "submodule" ? SUBMODULE : KNOWN[entry.section]
  if (known === undefined) return false
  if (known.subsection === "required" && entry.subsection === undefined) return false
  if (known.subsection === "forbidden" && entry.subsection !== undefined) return false
  return known.keys === "any" || known.keys.has(entry.key)
}

const nameOf = (entry: Entry): string =>
  entry.subsection === undefined
    ? `${entry.section}.${entry.key}`
    : `${entry.section}.${JSON.stringify(entry.subsection)}.${entry.key}`

/**
 * The first entry of one configuration file's text that is not known to be
 * plain (`core.fsmonitor`, `diff."tool".textconv`), or a line that cannot be
 * read plainly; `undefined` when the whole file is plain.
 */
export const unknownEntry = (text: string, reading: Reading = FOOTPRINT): string | undefined => {
  const entries = entriesOf(text)
  if (entries === undefined) return "a line it cannot read plainly"
  const unknown = entries.find((entry) => !isKnown(entry, reading))
  return unknown === undefined ? undefined : nameOf(unknown)
}

const FOOTPRINT: Reading = { reader: "footprint", place: "repository" }

/** Whether the text of one configuration file has only known entries (as a footprint reads it). */
export const isPlain = (text: string): boolean => unknownEntry(text) === undefined

/** A repository git would use: its work tree's root (none for a bare one) and its git directories. */
export interface Repository {
  readonly root: string | undefined
  /** The git directory, then the common directory a worktree's shares (`commondir`). */
  readonly gitDirectories: ReadonlyArray<string>
}

/**
 * The disk as git sees it, asked synchronously: a decision runs this for
 * every Bash line that runs git, and a dozen asynchronous platform calls (a
 * thread-pool round trip each, an exception object for each missing file) cost
 * many times the rest of the decision (bench `permissions`). What is asked is
 * git's own view of the real disk, never an overlay's.
 */
interface Disk {
  /** What is at `p`, links followed. */
  readonly kind: (p: string) => "file" | "directory" | "missing" | "other"
  /** The text of a file, or `undefined` when it cannot be read. */
  readonly read: (p: string) => string | undefined
  /** A directory's entries, or `undefined` when it cannot be listed. */
  readonly list: (p: string) => ReadonlyArray<string> | undefined
  /** The kernel's real path (`realpath(3)`), or `undefined` when `p` is not there. */
  readonly real: (p: string) => string | undefined
  /** A symbolic link's target, or `undefined` when `p` is not a link. */
  readonly link: (p: string) => string | undefined
  /** `access(p, X_OK)`: what git asks of `objects` and `refs`. */
  readonly enterable: (p: string) => boolean
}

const disk: Disk = {
  kind: (p) => {
    try {
      const info = NodeFs.statSync(p, { throwIfNoEntry: false })
      return info === undefined ? "missing" : info.isDirectory() ? "directory" : info.isFile() ? "file" : "other"
    } catch {
      // ENOTDIR, EACCES on the way: not something git reads.
      return "missing"
    }
  },
  read: (p) => {
    try {
      return NodeFs.readFileSync(p, "utf8")
    } catch {
      return undefined
    }
  },
  list: (p) => {
    try {
      return NodeFs.readdirSync(p)
    } catch {
      return undefined
    }
  },
  real: (p) => {
    try {
      return NodeFs.realpathSync.native(p)
    } catch {
      return undefined
    }
  },
  link: (p) => {
    try {
      return NodeFs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() === true
        ? NodeFs.readlinkSync(p)
        : undefined
    } catch {
      return undefined
    }
  },
  enterable: (p) => {
    try {
      NodeFs.accessSync(p, NodeFs.constants.X_OK)
      return true
    } catch {
      return false
    }
  }
}

/** Whether anything is at `p` — or it cannot be told (fail closed: a file that may be there counts). */
const present = (p: string): boolean => disk.kind(p) !== "missing"

/** A file's text as git reads `.git` files and `commondir`: only trailing CR and LF removed (setup.c). */
const gitFileText = (p: string): string | undefined => disk.read(p)?.replace(/[\r\n]+$/, "")

/** Where the kernel takes `p` (links followed, `..` after a link from its target), or `p` when it is not there. */
export const physical = (p: string): string => disk.real(p) ?? NodePath.resolve(p)

/** The common directory a git directory names (`commondir`), if any: `realpath(gitdir/commondir's text)`. */
const commonDirectory = (dir: string): string | undefined => {
  const file = NodePath.join(dir, "commondir")
  if (disk.kind(file) === "missing") return undefined
  const text = gitFileText(file)
  if (text === undefined || text.length === 0) return undefined
  return physical(NodePath.isAbsolute(text) ? text : `${dir}/${text}`)
}

/** setup.c `validate_headref`: a link into `refs/`, a `ref: refs/…` file, or an object id. */
const isHead = (file: string): boolean => {
  const link = disk.link(file)
  if (link !== undefined) return link.startsWith("refs/")
  const text = disk.read(file)
  if (text === undefined) return false
  if (/^ref:\s*refs\//.test(text)) return true
  return /^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40})/.test(text)
}

/**
 * Whether git takes `dir` for a git directory (setup.c `is_git_directory`): a
 * valid `HEAD`, and `objects` and `refs` it may enter (`access(X_OK)`) in it
 * or in its common directory.
 */
const isGitDirectory = (dir: string): boolean => {
  if (!isHead(NodePath.join(dir, "HEAD"))) return false
  const common = commonDirectory(dir) ?? dir
  return disk.enterable(NodePath.join(common, "objects")) && disk.enterable(NodePath.join(common, "refs"))
}

const withCommon = (gitDir: string): ReadonlyArray<string> => {
  const common = commonDirectory(gitDir)
  return common === undefined ? [gitDir] : [gitDir, common]
}

/**
 * A `.git` file's git directory (setup.c `read_gitfile_gently`): the file
 * starts with `gitdir: `, the path is the rest (trailing CR/LF removed),
 * relative to the file's directory, and git opens its real path. `undefined`
 * when the file is not one (git then stops with an error).
 */
const gitFileTarget = (dotGit: string): string | undefined => {
  const text = gitFileText(dotGit)
  if (text === undefined || !text.startsWith("gitdir: ")) return undefined
  const named = text.slice("gitdir: ".length)
  if (named.length === 0) return undefined
  return physical(NodePath.isAbsolute(named) ? named : `${NodePath.dirname(dotGit)}/${named}`)
}

/** The git directories a `.git` entry leads to: itself when it is a git directory, a `gitdir: X` file's X. */
const gitDirectoriesAt = (dotGit: string): ReadonlyArray<string> | undefined => {
  const kind = disk.kind(dotGit)
  if (kind === "missing") return undefined
  if (kind === "directory") return isGitDirectory(dotGit) ? withCommon(dotGit) : undefined
  const target = gitFileTarget(dotGit)
  return target === undefined ? undefined : withCommon(target)
}

/** What git finds from a directory, and the `.git` directories it passed over on the way. */
export interface Discovered extends Repository {
  /** `.git` directories on the way that git does not take (it walks on): examined too, and a footprint's barrier. */
  readonly passed: ReadonlyArray<Repository>
  /** A `.git` file git cannot read (it stops with an error there). */
  readonly broken: boolean
}

/**
 * What git finds from `start` (a physical path), walking up as setup.c does:
 * in each directory a `.git` that is a git directory (checked as git checks
 * it) or a file `gitdir: X` (a worktree or a submodule). Not a bare
 * repository on the way: the Bash tool runs git with
 * `safe.bareRepository=explicit` (`shellProcess.ts`), so one is used only when
 * named (`--git-dir`, `GIT_DIR`). `undefined` outside any repository.
 */
export const discover = (start: string): Discovered | undefined => {
  const passed: Array<Repository> = []
  for (let dir = NodePath.resolve(start);;) {
    const dotGit = NodePath.join(dir, ".git")
    const kind = disk.kind(dotGit)
    if (kind === "directory") {
      if (isGitDirectory(dotGit)) return { root: dir, gitDirectories: withCommon(dotGit), passed, broken: false }
      passed.push({ root: dir, gitDirectories: [dotGit] })
    } else if (kind !== "missing") {
      const target = gitFileTarget(dotGit)
      if (target === undefined) return { root: dir, gitDirectories: [dotGit], passed, broken: true }
      return { root: dir, gitDirectories: withCommon(target), passed, broken: false }
    }
    const parent = NodePath.dirname(dir)
    if (parent === dir) return passed.length === 0 ? undefined : { ...passed[0]!, passed, broken: false }
    dir = parent
  }
}

/** A git directory named outright (`git --git-dir=X`): no work tree of its own is known. */
export const atGitDirectory = (gitDir: string): Repository => ({ root: undefined, gitDirectories: withCommon(gitDir) })

/** Why git in a repository may run more than git: the file and the entry that may make it. */
export interface ProgramEntry {
  /** The configuration file (or directory) that says so. */
  readonly file: string
  /** The entry (`core.fsmonitor`) or what could not be examined. */
  readonly entry: string
}

/** The configuration files of a git directory that are there, with their text (`undefined`: unreadable). */
const configurationFiles = (gitDir: string): ReadonlyArray<{ readonly file: string; readonly text?: string }> =>
  ["config", "config.worktree"].flatMap((name) => {
    const file = NodePath.join(gitDir, name)
    if (disk.kind(file) === "missing") return []
    const text = disk.read(file)
    return [text === undefined ? { file } : { file, text }]
  })

/** The first entry not known to be plain in a git directory's configuration files, with the file. */
const configurationEntry = (gitDir: string, reading: Reading): ProgramEntry | undefined => {
  for (const { file, text } of configurationFiles(gitDir)) {
    // A file that cannot be read fails closed.
    const entry = text === undefined ? "a file it cannot read" : unknownEntry(text, reading)
    if (entry !== undefined) return { file, entry }
  }
  return undefined
}

/** Object stores elsewhere a git directory borrows from (`git show` prints their objects too). */
const alternatesEntry = (gitDir: string): ProgramEntry | undefined => {
  for (const name of ["alternates", "http-alternates"]) {
    const file = NodePath.join(gitDir, "objects", "info", name)
    if (present(file)) return { file, entry: "object stores elsewhere (objects/info/alternates)" }
  }
  return undefined
}

/**
 * Hooks git runs from its read-only commands: `post-index-change`, whenever a
 * command writes the index — `git status`, `git diff` and `git describe`
 * refresh it. In the hooks directory: `core.hooksPath` (relative to the work
 * tree's root) when a configuration file sets it, else the common git
 * directory's `hooks`. Present at all is enough (git runs it when executable).
 */
const READ_ONLY_HOOKS = ["post-index-change"]

const hookEntry = (repository: Repository): ProgramEntry | undefined => {
  const common = repository.gitDirectories[repository.gitDirectories.length - 1]
  if (common === undefined) return undefined
  let hooks = NodePath.join(common, "hooks")
  for (const dir of repository.gitDirectories) {
    for (const { text } of configurationFiles(dir)) {
      for (const entry of entriesOf(text ?? "") ?? []) {
        if (entry.section !== "core" || entry.key !== "hookspath" || entry.subsection !== undefined) continue
        const value = entry.value ?? ""
        const expanded = value === "~" || value.startsWith("~/")
          ? NodePath.join(NodeOs.homedir(), value.slice(1))
          : value
        hooks = NodePath.resolve(repository.root ?? common, expanded)
      }
    }
  }
  for (const hook of READ_ONLY_HOOKS) {
    const file = NodePath.join(hooks, hook)
    if (present(file)) return { file, entry: `the ${hook} hook` }
  }
  return undefined
}

/**
 * Whether git, in a repository with these git directories, runs only itself
 * on what it finds there and touches nothing outside it: every configuration
 * file they hold (`config`, `config.worktree`) is plain, and they hold no
 * submodules (`modules`, whose indexes `git status` refreshes too), no
 * alternates and no `post-index-change` hook. A file that cannot be read fails
 * closed. What a footprint trusts.
 */
export const plainRepository = (gitDirectories: ReadonlyArray<string>): boolean => {
  for (const dir of gitDirectories) {
    if (present(NodePath.join(dir, "modules"))) return false
    if (configurationEntry(dir, FOOTPRINT) !== undefined || alternatesEntry(dir) !== undefined) return false
  }
  // core.hooksPath is not plain here, so the hooks are the common directory's own.
  return hookEntry({ root: undefined, gitDirectories }) === undefined
}

/** Submodules nest; past this depth a module tree is not examined, and fails closed. */
const MAX_MODULE_DEPTH = 4

/** Every submodule git directory under a git directory's `modules` (names may have slashes: `modules/a/b`). */
const moduleDirectories = (gitDir: string, depth: number): ReadonlyArray<string> | undefined => {
  const found: Array<string> = []
  const visit = (dir: string, level: number): boolean => {
    if (level > MAX_MODULE_DEPTH * 4) return false
    const names = disk.list(dir)
    if (names === undefined) return false
    for (const name of names) {
      const child = NodePath.join(dir, name)
      if (disk.kind(child) !== "directory") continue
      if (isGitDirectory(child)) {
        found.push(child)
        if (depth >= MAX_MODULE_DEPTH && present(NodePath.join(child, "modules"))) return false
        continue
      }
      if (!visit(child, level + 1)) return false
    }
    return true
  }
  const modules = NodePath.join(gitDir, "modules")
  if (!present(modules)) return []
  return visit(modules, 0) ? found : undefined
}

/** The work-tree paths `.gitmodules` names (`path = lib`), or `undefined` when it cannot be read plainly. */
const submodulePaths = (root: string): ReadonlyArray<string> | undefined => {
  const file = NodePath.join(root, ".gitmodules")
  if (disk.kind(file) === "missing") return []
  const text = disk.read(file)
  const entries = text === undefined ? undefined : entriesOf(text)
  if (entries === undefined) return undefined
  return entries.flatMap((entry) =>
    entry.section === "submodule" && entry.key === "path" && entry.value !== undefined
      ? [entry.value]
      : []
  )
}

/**
 * The paths of the gitlinks (mode 160000: submodules) in a git directory's
 * index, read as git's read-cache.c lays entries out (versions 2 to 4, a
 * SHA-1 or SHA-256 id); `undefined` when the index cannot be read so. `git
 * status` recurses into every populated gitlink, named in `.gitmodules` or
 * not. Memoised by the index file's identity (device, inode, size, mtime): git
 * replaces the index by renaming a new file over it, so a changed index is
 * another inode.
 */
const gitlinksOf = (gitDir: string, idLength: number): ReadonlyArray<string> | undefined => {
  const file = NodePath.join(gitDir, "index")
  let identity: string
  try {
    const info = NodeFs.statSync(file, { throwIfNoEntry: false, bigint: true })
    if (info === undefined) return []
    identity = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${idLength}`
  } catch {
    return undefined
  }
  const known = gitlinkCache.get(file)
  if (known !== undefined && known.identity === identity) return known.paths
  const paths = parseGitlinks(file, idLength)
  if (paths !== undefined) {
    if (gitlinkCache.size > 64) gitlinkCache.clear()
    gitlinkCache.set(file, { identity, paths })
  }
  return paths
}

const gitlinkCache = new Map<string, { readonly identity: string; readonly paths: ReadonlyArray<string> }>()

const parseGitlinks = (file: string, idLength: number): ReadonlyArray<string> | undefined => {
  let data: Buffer
  try {
    data = NodeFs.readFileSync(file)
  } catch {
    return undefined
  }
  if (data.length < 12 || data.toString("latin1", 0, 4) !== "DIRC") return undefined
  const version = data.readUInt32BE(4)
  const count = data.readUInt32BE(8)
  if (version < 2 || version > 4) return undefined
  const found: Array<string> = []
  let offset = 12
  let previous: Buffer = Buffer.alloc(0)
  // ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each), the object id, the flags (2).
  const fixed = 40 + idLength + 2
  for (let n = 0; n < count; n++) {
    if (offset + fixed > data.length) return undefined
    const mode = data.readUInt32BE(offset + 24)
    const flags = data.readUInt16BE(offset + 40 + idLength)
    let at = offset + fixed
    if (version >= 3 && (flags & 0x4000) !== 0) at += 2
    let name: Buffer
    if (version === 4) {
      // The number of bytes to drop from the previous name (an offset varint), then the rest, NUL-terminated.
      let strip = 0
      for (let shift = 0;; shift++) {
        if (at >= data.length || shift > 8) return undefined
        const byte = data[at++]!
        strip = shift === 0 ? byte & 0x7f : ((strip + 1) << 7) | (byte & 0x7f)
        if ((byte & 0x80) === 0) break
      }
      const end = data.indexOf(0, at)
      if (end === -1 || strip > previous.length) return undefined
      name = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(at, end)])
      offset = end + 1
    } else {
      const end = data.indexOf(0, at)
      if (end === -1) return undefined
      name = data.subarray(at, end)
      // Entries are padded with NULs to a multiple of 8 bytes, at least one.
      offset += Math.floor((end - offset + 8) / 8) * 8
    }
    previous = name
    if ((mode & 0o170000) === 0o160000) found.push(name.toString("utf8"))
  }
  return found
}

/** The object id's length in the index: 32 bytes in a SHA-256 repository (`extensions.objectFormat`). */
const idLengthOf = (gitDirectories: ReadonlyArray<string>): number => {
  for (const dir of gitDirectories) {
    for (const { text } of configurationFiles(dir)) {
      const sha256 = (entriesOf(text ?? "") ?? []).some((entry) =>
        entry.section === "extensions" && entry.key === "objectformat" && entry.value?.toLowerCase() === "sha256"
      )
      if (sha256) return 32
    }
  }
  return 20
}

/**
 * The first thing in a repository, or in any submodule `git status` would
 * recurse into, that is not known to leave git running only itself — a
 * configuration entry, a `post-index-change` hook, alternates; `undefined`
 * when there is none. What the Bash tool's permission check asks about.
 */
export const programEntry = (repository: Repository, depth = 0): ProgramEntry | undefined => {
  const reading: Reading = { reader: "permission", place: depth === 0 ? "repository" : "submodule" }
  const hook = hookEntry(repository)
  if (hook !== undefined) return hook
  for (const dir of repository.gitDirectories) {
    const own = configurationEntry(dir, reading) ?? alternatesEntry(dir)
    if (own !== undefined) return own
    const modules = moduleDirectories(dir, depth)
    if (modules === undefined) {
      return { file: NodePath.join(dir, "modules"), entry: "submodules nested too deep to examine" }
    }
    for (const module of modules) {
      const inner = programEntry({ root: undefined, gitDirectories: withCommon(module) }, depth + 1)
      if (inner !== undefined) return inner
    }
  }
  // Submodules checked out with a git directory of their own in the work tree (`lib/.git/`): the paths
  // `.gitmodules` names, and every gitlink in the index.
  if (repository.root === undefined) return undefined
  const gitmodules = NodePath.join(repository.root, ".gitmodules")
  const paths = submodulePaths(repository.root)
  if (paths === undefined) return { file: gitmodules, entry: "a line it cannot read" }
  const index = repository.gitDirectories[0]!
  const gitlinks = gitlinksOf(index, idLengthOf(repository.gitDirectories))
  if (gitlinks === undefined) return { file: NodePath.join(index, "index"), entry: "an index it cannot read" }
  for (const relative of new Set([...paths, ...gitlinks])) {
    if (depth >= MAX_MODULE_DEPTH) return { file: gitmodules, entry: "submodules nested too deep to examine" }
    const tree = NodePath.resolve(repository.root, relative)
    const gitDirectories = gitDirectoriesAt(NodePath.join(tree, ".git"))
    if (gitDirectories === undefined) continue
    const inner = programEntry({ root: tree, gitDirectories }, depth + 1)
    if (inner !== undefined) return inner
  }
  return undefined
}
