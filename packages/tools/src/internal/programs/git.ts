/**
 * `git`: the global options, and a check per read-only subcommand.
 *
 * - Options that write, run programs or open a pager are refused, and so are
 *   `--show-signature` and the `%G…` format placeholders (they run gpg, which
 *   creates `~/.gnupg`: issue 19, class 5).
 * - Options whose value is a file (`--contents`, `--ignore-revs-file`,
 *   `--pathspec-from-file`, `--exclude-from`, `grep -f`, `ls-files -X`), in
 *   either spelling, are reads (issue 19, class 6).
 * - What a command reads is the repository it runs in (footprints anchor it
 *   at the work tree's root and the git directory, issue 20); commands that
 *   refresh the index (`status`, `diff`, `describe`) write the index.
 *
 * @internal
 */
import { type Describe, NO_PATHS, Paths, UNKNOWN, type Word } from "./invocation.js"

export const GIT_GLOBAL_FLAGS: ReadonlyArray<string> = [
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects"
]

// Options that write files, run external programs or open a pager, whatever the subcommand.
export const GIT_FORBIDDEN_LONG: ReadonlyArray<string> = [
  "output",
  "ext-diff",
  "exec",
  "open-files-in-pager",
  "upload-pack",
  "receive-pack",
  "edit",
  "config",
  "textconv",
  "show-signature"
]

/** Long options whose value is a file git reads; `names` when the file lists more paths. */
const GIT_FILE_OPTIONS: ReadonlyArray<readonly [string, "read" | "names"]> = [
  ["contents", "read"],
  ["ignore-revs-file", "read"],
  ["pathspec-from-file", "names"],
  ["exclude-from", "read"],
  ["file", "read"]
]

export const isLongOption = (value: string) => value.startsWith("--") && value.length > 2
export const longName = (value: string) => {
  const body = value.slice(2)
  const eq = body.indexOf("=")
  return eq === -1 ? body : body.slice(0, eq)
}
/** git accepts any unambiguous prefix of a long option. */
export const abbreviates = (name: string, option: string) => name.length > 0 && option.startsWith(name)

export type GitCheck = (args: ReadonlyArray<Word>, paths: Paths) => boolean

/**
 * git's revision and diff options are too many for a grammar; a scan that
 * rejects unprovable words before `--`, forbidden long options (by prefix)
 * and the given short letters, and hands the operands on.
 */
export const gitOptions = (
  spec: {
    readonly forbiddenShort?: string
    readonly operands?: (operands: ReadonlyArray<Word>, paths: Paths) => void
    /**
     * The command prints file contents from the repository (a patch, a blob, matches): without
     * pathspecs after `--`, any of them — a revision operand (`HEAD`, `v1.2`, `origin/main`) cannot
     * be told from a path statically — so the whole tree's contents count as read.
     */
    readonly content?: (options: ReadonlyArray<string>) => boolean
    /** Short options whose value (attached or the next word) is a file it reads: `grep -f`, `ls-files -X`. */
    readonly fileShort?: string
  } = {}
): GitCheck =>
(args, paths) => {
  const operands: Array<Word> = []
  const options: Array<string> = []
  let endOfOptions = false
  let pathspecs = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (endOfOptions) {
      operands.push(arg)
      pathspecs++
      continue
    }
    if (arg.dynamic) return false
    const value = arg.value
    if (isLongOption(value) && GIT_FORBIDDEN_LONG.some((option) => abbreviates(longName(value), option))) return false
    // `%G?`, `%GS`, …: the signature, which runs gpg.
    if (value.includes("%G")) return false
    if (
      value.startsWith("-") && !value.startsWith("--") &&
      [...value.slice(1)].some((l) => (spec.forbiddenShort ?? "").includes(l))
    ) {
      return false
    }
    // Options whose value is a file git reads: `blame --contents FILE`, `--ignore-revs-file=FILE`.
    const fileOption = isLongOption(value) && longName(value).length >= 4
      ? GIT_FILE_OPTIONS.find(([option]) => abbreviates(longName(value), option))
      : undefined
    if (fileOption !== undefined) {
      const file = value.includes("=") ? { value: value.slice(value.indexOf("=") + 1), dynamic: false } : args[++i]
      if (file === undefined) return false
      paths.read(file, false, true)
      if (fileOption[1] === "names") paths.names(file)
      continue
    }
    const fileShort = spec.fileShort ?? ""
    if (/^-[A-Za-z]+$/.test(value) && fileShort.length > 0) {
      const at = [...value.slice(1)].findIndex((letter) => fileShort.includes(letter))
      if (at !== -1) {
        const attached = value.slice(at + 2)
        const file = attached.length > 0 ? { value: attached, dynamic: false } : args[++i]
        if (file === undefined) return false
        paths.read(file, false, true)
        options.push(value)
        continue
      }
    }
    if (value === "--") endOfOptions = true
    else if (value.startsWith("-")) options.push(value)
    else operands.push(arg)
  }
  spec.operands?.(operands, paths)
  // Pathspecs after `--`, or only `rev:path` operands, name every file whose contents it prints.
  const narrowed = pathspecs > 0 || (operands.length > 0 && operands.every((operand) => operand.value.includes(":")))
  if (spec.content?.(options) === true && !narrowed) paths.read({ value: ".", dynamic: false }, true, true)
  return true
}

/** Options of `git log` and friends that print patches (file contents) instead of only commits. */
export const GIT_PATCH_OPTION =
  /^(-[pu]|--patch.*|-U\d*|--unified.*|--cc|-c|--word-diff.*|--color-words.*|--binary|-L.*|--full-diff|--raw)$/

export const printsPatch = (options: ReadonlyArray<string>) => options.some((option) => GIT_PATCH_OPTION.test(option))
export const always = () => true

/** `rev:path` reads `path`'s contents at that revision; other operands may be paths too. */
export const revisionPaths = (operands: ReadonlyArray<Word>, paths: Paths): void => {
  for (const operand of operands) {
    // `:N:path` names a path at index stage N.
    const staged = /^:[0-3]:/.exec(operand.value)
    const colon = staged === null ? operand.value.indexOf(":") : staged[0].length - 1
    if (operand.dynamic) paths.read(operand, false, true)
    else if (colon !== -1) {
      // A tree-ish (`HEAD:secrets`) prints what is below it; `HEAD:` is the root.
      const path = operand.value.slice(colon + 1).replace(/^\.\//, "")
      paths.read({ value: path.length > 0 ? path : ".", dynamic: false }, true, true)
    } else paths.read(operand, false, true)
  }
}

/** Trees searched whole: a `rev:path` tree-ish is its path (`HEAD:` the root). */
export const contentPaths = (operands: ReadonlyArray<Word>, paths: Paths): void => {
  for (const operand of operands) {
    const staged = /^:[0-3]:/.exec(operand.value)
    const colon = operand.dynamic ? -1 : staged === null ? operand.value.indexOf(":") : staged[0].length - 1
    if (colon === -1) paths.read(operand, true, true)
    else paths.read({ value: operand.value.slice(colon + 1).replace(/^\.\//, "") || ".", dynamic: false }, true, true)
  }
}

export const isCommitValue = (word: Word | undefined) =>
  word !== undefined && !word.dynamic && !word.value.startsWith("-")

/**
 * `git branch`/`git tag` listing: flags from a list; names only when an
 * option switched to list mode (checked against git 2.39: `--sort`,
 * `--format`, `--column`, `-v`, `-i` with a name create it).
 */
export const gitListing = (
  listFlags: ReadonlyArray<string>,
  flags: ReadonlyArray<string>,
  listingValueFlags: ReadonlyArray<string>,
  valueFlags: ReadonlyArray<string>,
  listingPattern: RegExp
): GitCheck =>
(args) => {
  let listing = false
  let names = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    const value = arg.value
    const name = value.includes("=") ? value.slice(0, value.indexOf("=")) : value
    if (listFlags.includes(value) || listingPattern.test(value)) listing = true
    else if (listingValueFlags.includes(name)) {
      // These imply listing; a following commit is their value, a following option is an option.
      listing = true
      if (!value.includes("=") && isCommitValue(args[i + 1])) i++
    } else if (valueFlags.includes(name)) {
      if (!value.includes("=")) {
        if (args[i + 1] === undefined || args[i + 1]!.dynamic) return false
        i++
      }
    } else if (flags.includes(name) || /^-v+$/.test(value)) continue
    else if (value.startsWith("-")) return false
    else names++
  }
  return names === 0 || listing
}

export const gitBranch = gitListing(
  // `-l` meant `--create-reflog` before git 2.19, so it does not switch to listing.
  ["--list"],
  [
    "-l",
    "-a",
    "--all",
    "-r",
    "--remotes",
    "--verbose",
    "--show-current",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "-i",
    "--ignore-case",
    "--abbrev",
    "--no-abbrev"
  ],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"],
  ["--sort", "--format"],
  /^$/
)

export const gitTag = gitListing(
  ["-l", "--list"],
  ["--column", "--no-column", "-i", "--ignore-case", "--color", "--no-color"],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"],
  ["--sort", "--format"],
  /^-n[0-9]*$/
)

export const gitRemote: GitCheck = (args) => {
  if (args.some((arg) => arg.dynamic)) return false
  const values = args.map((arg) => arg.value)
  if (values.every((value) => value === "-v" || value === "--verbose")) return true
  if (values[0] === "get-url") {
    const rest = values.slice(1)
    return rest.filter((value) => !value.startsWith("-")).length === 1 &&
      rest.every((value) => !value.startsWith("-") || value === "--all" || value === "--push")
  }
  return false
}

export const gitConfig: GitCheck = (args) => {
  if (args.some((arg) => arg.dynamic)) return false
  const values = args.map((arg) => arg.value)
  const modes = ["--get", "--get-all", "--get-regexp", "--list", "-l"]
  const flags = [
    "--global",
    "--system",
    "--local",
    "--worktree",
    "--show-origin",
    "--show-scope",
    "--name-only",
    "-z",
    "--null",
    "--includes",
    "--no-includes",
    "--type=bool",
    "--type=int",
    "--type=path",
    "--bool",
    "--int",
    "--path"
  ]
  if (!values.some((value) => modes.includes(value))) return false
  return values.every((value) => modes.includes(value) || flags.includes(value) || !value.startsWith("-"))
}

export const firstIs = (allowed: ReadonlyArray<string>, then: GitCheck): GitCheck => (args, paths) => {
  const first = args[0]
  if (first === undefined) return true
  return !first.dynamic && allowed.includes(first.value) && then(args.slice(1), paths)
}

export const GIT_SUBCOMMANDS: Readonly<Record<string, GitCheck>> = {
  status: gitOptions(),
  log: gitOptions({ operands: revisionPaths, content: printsPatch }),
  show: gitOptions({ operands: revisionPaths, content: always }),
  diff: gitOptions({ operands: revisionPaths, content: always }),
  shortlog: gitOptions(),
  whatchanged: gitOptions({ operands: revisionPaths, content: printsPatch }),
  blame: gitOptions({ operands: revisionPaths }),
  annotate: gitOptions({ operands: revisionPaths }),
  "rev-parse": gitOptions(),
  "rev-list": gitOptions(),
  "ls-files": gitOptions({ fileShort: "X" }),
  "ls-tree": gitOptions(),
  // Any object, named by an id or read from standard input (`--batch`): an object id that is not `rev:path`
  // may be any file's content, so the whole tree counts as read (issue 19, class 6).
  "cat-file": gitOptions({ operands: revisionPaths, content: always }),
  describe: gitOptions(),
  "merge-base": gitOptions(),
  "show-ref": gitOptions(),
  "name-rev": gitOptions(),
  "for-each-ref": gitOptions(),
  grep: gitOptions({
    forbiddenShort: "O",
    fileShort: "f",
    operands: (operands, paths) => contentPaths(operands.slice(1), paths),
    // The pattern, then revisions or paths: only pathspecs after `--` narrow the search.
    content: always
  }),
  branch: gitBranch,
  tag: gitTag,
  remote: gitRemote,
  config: gitConfig,
  stash: (args, paths) =>
    args.length > 0 && firstIs(["list", "show"], gitOptions({ content: printsPatch }))(args, paths),
  reflog: firstIs(["show"], gitOptions({ content: printsPatch }))
}

export const git: Describe = (args) => {
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return UNKNOWN
    if (!arg.value.startsWith("-")) break
    if (arg.value === "--version") return args.length === 1 ? NO_PATHS : UNKNOWN
    if (!GIT_GLOBAL_FLAGS.includes(arg.value)) return UNKNOWN
  }
  const subcommand = args[i]
  if (subcommand === undefined || !Object.hasOwn(GIT_SUBCOMMANDS, subcommand.value)) return UNKNOWN
  const paths = new Paths()
  // Every git command reads the work tree's names, and the repository it finds from its directory
  // (the footprint anchors these at the work tree's root and the git directory).
  paths.read({ value: ".", dynamic: false }, true, false)
  paths.anchored("repository", ".", { read: true })
  paths.anchored("gitDirectory", ".", { read: true })
  if (INDEX_REFRESHING.has(subcommand.value)) paths.anchored("gitDirectory", "index", { write: true })
  const check = GIT_SUBCOMMANDS[subcommand.value]!
  const rest = args.slice(i + 1)
  // `diff --no-index A B` looks for `.gitattributes` in the directories on the way of A and B as written,
  // above the repository too (`src/../..`, `link-up/..`: the oracle, seed 777001): read-only, not proven.
  const end = rest.findIndex((word) => word.value === "--")
  const noIndex = subcommand.value === "diff" &&
    (end === -1 ? rest : rest.slice(0, end)).some((word) => word.value === "--no-index")
  return check(rest, paths) ? paths.done(true, { proven: !noIndex }) : UNKNOWN
}

/** Subcommands that may rewrite the index's stat cache (optional locks). */
const INDEX_REFRESHING = new Set(["status", "diff", "describe"])
