/**
 * Whether a repository's own configuration leaves git's read-only commands
 * read-only (found by the footprint oracle's review): `.git/config` can make
 * every git command run a program (`core.fsmonitor` — even `git ls-files` —,
 * `diff.external`, a `textconv` or `filter` driver, `log.showSignature`'s
 * gpg), read files anywhere (`include.path`, `core.excludesFile`,
 * `core.attributesFile`, `blame.ignoreRevsFile`, `mailmap.file`) or work on
 * another tree (`core.worktree`; submodules, whose own configurations `git
 * status` obeys when it recurses into them). So a git footprint is trusted
 * only when every entry of the repository's configuration is one this list
 * knows to do none of that; anything else, and anything the scanner cannot
 * read plainly (an old-style `[a.b]` section, a value continued on the next
 * line, a key after a section header on one line), fails closed.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"

/** Per section, the keys (lower case) that neither run anything, nor name a file or another tree. */
const KNOWN: Readonly<Record<string, ReadonlySet<string>>> = {
  core: new Set([
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
  ]),
  remote: new Set(["url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror"]),
  branch: new Set(["remote", "merge", "rebase", "pushremote", "description"]),
  user: new Set(["name", "email"]),
  init: new Set(["defaultbranch"]),
  pull: new Set(["rebase", "ff"]),
  push: new Set(["default", "autosetupremote"]),
  fetch: new Set(["prune"]),
  extensions: new Set(["objectformat"]),
  color: new Set(["ui", "diff", "status", "branch"])
}

const COMMENT = /^\s*(?:[#;].*)?$/
const SECTION = /^\s*\[([A-Za-z0-9-]+)(?:\s+"(?:[^"\\\n]|\\.)*")?\]\s*(?:[#;].*)?$/
const ENTRY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/

/** Whether the text of one configuration file has only known entries. */
export const isPlain = (text: string): boolean => {
  let section: string | undefined
  for (const line of text.split("\n")) {
    if (COMMENT.test(line)) continue
    const header = SECTION.exec(line)
    if (header !== null) {
      section = header[1]!.toLowerCase()
      continue
    }
    const entry = ENTRY.exec(line)
    if (entry === null || section === undefined) return false
    // A value continued on the next line: that line is not an entry of its own.
    if (/\\\s*$/.test(entry[2] ?? "")) return false
    if (KNOWN[section]?.has(entry[1]!.toLowerCase()) !== true) return false
  }
  return true
}

/**
 * Whether git, in a repository with these git directories, runs only itself
 * on what it finds there: every configuration file they hold (`config`,
 * `config.worktree`) is plain, and they hold no submodules (`modules`). A
 * file that cannot be read fails closed.
 */
export const isPlainRepository = (
  gitDirectories: ReadonlyArray<string>
): Effect.Effect<boolean, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const dir of gitDirectories) {
      // Submodules' git directories, each with a configuration of its own.
      if (yield* fs.exists(path.join(dir, "modules")).pipe(Effect.orElseSucceed(() => true))) return false
      for (const name of ["config", "config.worktree"]) {
        const file = path.join(dir, name)
        const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => true))
        if (!exists) continue
        const text = yield* fs.readFileString(file).pipe(Effect.option)
        if (text._tag === "None" || !isPlain(text.value)) return false
      }
    }
    return true
  })
