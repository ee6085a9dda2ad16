/**
 * The Bash tool's footprint (issue 15, SPEC §4.13), derived from the shell
 * analysis of its command line:
 *
 * - redirection targets and the path arguments of the writers the analyser
 *   knows (`mkdir touch rm rmdir mv cp tee truncate ln`, `sed -i`, …) are
 *   written;
 * - the file arguments of read-only programs are read (their subtree when
 *   recursive, and the working directory's subtree for `ls`/`find`/`rg`/
 *   `grep -r` without one);
 * - `sleep`, `true`, `false`, `:`, `exit N`, and `echo`/`printf` without a
 *   redirection touch nothing;
 * - a compound command is the union of its simple commands.
 *
 * - git commands read the repository they find from the call's directory —
 *   the work tree's root and the git directory (and a worktree's common
 *   directory) — not the directory's subtree, and `status`/`diff`/`describe`
 *   write the index (issue 20); only in a repository whose own configuration
 *   names no program, other file or other tree (`gitRepository.ts`), else `*`.
 * - a path through `/proc/self`, `/proc/<pid>` (written so or reached by a
 *   link) names another process's view, and a `TZ`/`LANG`/`LANGUAGE`/`LC_*`
 *   value that is absolute or climbs with `..` a file glibc opens: `*`.
 *
 * A footprint is trusted only when the program's description says its path
 * lists are proven complete (issue 20, "fail-closed by construction"): the
 * default is not, and then the call writes `*`. Creating or changing links is
 * a barrier (`*`): `ln`, `cp -s`/`-l`, and `mv` of a path that is a link.
 *
 * Everything else writes `*`: an unknown program, a path the analyser could
 * not resolve (glob, expansion, a file listing names), a `cd`, a command or
 * process substitution, an assignment that may change what a program does
 * (`PATH=…`, `GIT_DIR=…`), a `~` path (quoting decides whether bash expands
 * it, and the analysis has dropped the quotes), a background command (it
 * outlives the call), and a command line that does not parse. `test`, `[ ]`
 * and `[[ ]]` read the files their operators name (issue 20).
 *
 * Paths are relative to the call's working directory and made canonical like
 * the file tools' (symlinks resolved), so a Bash write and a Read of the
 * same file through a link conflict. They are not normalised before that:
 * `LINK/..` is the parent of the link's target, as the kernel walks it
 * (issue 19, class 7).
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Footprint from "@switchyard/core/Footprint"
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Footprints from "./footprints.js"
import * as GitRepository from "./gitRepository.js"

/** What a Bash call's input is made of, as far as its footprint goes. */
export interface ShellInput {
  readonly command: string
  readonly run_in_background?: boolean | undefined
}

/** A simple command's accesses before resolution, or `undefined` when it may touch anything. */
interface Uses {
  readonly reads: ReadonlyArray<ShellAnalysis.PathUse>
  readonly writes: ReadonlyArray<ShellAnalysis.PathUse>
}

const EXIT_STATUS = /^[0-9]+$/

/** `exit` and `exit N`: the analyser does not know `exit`, but it ends the shell and touches nothing. */
const isPlainExit = (command: ShellAnalysis.SimpleCommand): boolean =>
  command.argv[0] === "exit" &&
  (command.argv.length === 1 || (command.argv.length === 2 && EXIT_STATUS.test(command.argv[1]!)))

/**
 * A harmless assignment (`ShellAnalysis.isHarmlessAssignment`) whose value glibc may open as a file:
 * `TZ` (`:FILE`, an absolute path, or a name under its zoneinfo directory) and the locale variables
 * (`LANGUAGE`'s list, `LC_*`, `LANG`: names under its locale directories). A value that is absolute or
 * climbs with `..` may name any file, the project's too (`TZ=:../../../work/x ls -l` reads it); a plain
 * name (`TZ=Europe/Paris`, `LC_ALL=C`) stays in the system's directories.
 */
const namesAFile = (assignment: string): boolean => {
  const eq = assignment.indexOf("=")
  if (!/^(?:TZ|LANG|LANGUAGE|LC_[A-Z]+)$/.test(assignment.slice(0, eq))) return false
  return assignment.slice(eq + 1).split(":").some((entry) => entry.startsWith("/") || entry.split("/").includes(".."))
}

const usesOf = (command: ShellAnalysis.SimpleCommand): Uses | undefined => {
  if (command.unresolvedPaths) return undefined
  if (!command.assignments.every(ShellAnalysis.isHarmlessAssignment)) return undefined
  if (command.assignments.some(namesAFile)) return undefined
  if (!command.pathsKnown && !isPlainExit(command)) return undefined
  const uses = [...command.readPaths, ...command.writePaths]
  // `~` and `~user`: expanded by bash only when unquoted, which the analysis no longer shows.
  if (uses.some((use) => use.path.startsWith("~") || use.path.length === 0)) return undefined
  return { reads: command.readPaths, writes: command.writePaths }
}

/**
 * The simple commands' accesses, or `undefined` when the line may touch
 * anything.
 */
const lineUses = (analysis: ShellAnalysis.Analysis): ReadonlyArray<Uses> | undefined => {
  if (analysis.hasDynamicParts) return undefined
  const all: Array<Uses> = []
  for (const command of analysis.commands) {
    const uses = usesOf(command)
    if (uses === undefined) return undefined
    all.push(uses)
  }
  return all
}

/**
 * The outermost directory of `target` that does not exist yet, else `target`:
 * a write under a missing directory may create it (`mkdir -p d/e`), and
 * whether it succeeds depends on it (`touch d/f`), so it stands for the whole
 * new subtree.
 */
const creationRoot = (target: string): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    let root = target
    for (;;) {
      const parent = path.dirname(root)
      if (parent === root || (yield* fs.exists(parent).pipe(Effect.orElseSucceed(() => true)))) return root
      root = parent
    }
  })

/** The repository a git command finds from `cwd`: the work tree's root and its git directories, canonical. */
interface Repository {
  readonly root: string
  readonly gitDirectories: ReadonlyArray<string>
}

/**
 * The repository git finds from `cwd` (`GitRepository.discover`), its paths
 * canonical; `undefined` outside a repository (git then touches nothing), and
 * `"unbounded"` where what git uses is not a work tree with its git directory
 * (a bare repository, a `.git` entry git passes over or cannot read).
 */
const findRepository = (
  cwd: string
): Effect.Effect<Repository | "unbounded" | undefined, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const found = GitRepository.discover(yield* Footprints.canonical(cwd))
    if (found === undefined) return undefined
    if (found.root === undefined || found.broken || found.passed.length > 0) return "unbounded"
    const gitDirectories = yield* Effect.forEach(found.gitDirectories, (dir) => Footprints.canonical(dir))
    return { root: found.root, gitDirectories }
  })

/** An anchored path (`ShellAnalysis.PathUse.anchor`) as resources: under the root, or under each git directory. */
const resolveAnchored = (
  use: ShellAnalysis.PathUse,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<ReadonlyArray<Footprint.Resource>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const repository = yield* findRepository(context.cwd)
    // "unbounded" is judged by the caller (the call writes `*`).
    if (repository === undefined || repository === "unbounded") return []
    const bases = use.anchor === "repository" ? [repository.root] : repository.gitDirectories.slice(0, 1)
    const all = use.anchor === "gitDirectory" && use.path === "." ? repository.gitDirectories : bases
    return all.map((base) => {
      const resource = use.path === "." ? base : path.join(base, use.path)
      return use.subtree ? Footprint.subtree(resource) : resource
    })
  })

/** `relative` under `cwd` as the kernel walks it, not normalised (`LINK/..` is the target's parent). */
const unnormalised = (path: Path.Path, cwd: string, relative: string): string =>
  path.isAbsolute(relative) ? relative : `${cwd.replace(/\/+$/, "")}/${relative}`

const resolveUse = (
  use: ShellAnalysis.PathUse,
  context: ToolUseContext.ToolUseContext,
  access: "read" | "write"
): Effect.Effect<ReadonlyArray<Footprint.Resource>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    if (use.anchor !== undefined) return yield* resolveAnchored(use, context)
    const path = yield* Path.Path
    const absolute = unnormalised(path, context.cwd, use.path)
    const canonical = yield* Footprints.canonical(absolute)
    const target = access === "write" ? yield* creationRoot(canonical) : canonical
    // When the last component is a symlink the command may act on the link itself (`rm link`,
    // `ln -sf x link`), so the entry's own place is touched too.
    const entry = path.join(yield* Footprints.canonical(path.dirname(absolute)), path.basename(absolute))
    const resources = entry === canonical || path.basename(absolute) === ".." || path.basename(absolute) === "."
      ? [target]
      : [target, entry]
    return use.subtree ? resources.map(Footprint.subtree) : resources
  })

/**
 * The symbolic links a path goes through before its last component (`mkdir -p link-src/a` looks up
 * `link-src` itself): what the path means depends on them, so they are touched too, and so is the directory
 * each one leads to (`mkdir -p` enters it: `mkdir -p link-up/../x` reads the link's target, wherever it is).
 */
const linksOnTheWay = (
  path: Path.Path,
  cwd: string,
  relative: string
): Effect.Effect<ReadonlyArray<Footprint.Resource>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const components = relative.split("/")
    const links: Array<Footprint.Resource> = []
    for (let i = 1; i < components.length; i++) {
      const name = components[i - 1]!
      if (name === "" || name === "." || name === "..") continue
      const prefix = unnormalised(path, cwd, components.slice(0, i).join("/") || "/")
      const entry = path.join(yield* Footprints.canonical(path.dirname(prefix)), path.basename(prefix))
      const target = yield* Footprints.canonical(prefix)
      if (entry !== target) links.push(entry, target)
    }
    return links
  })

/** `mv` moves a symbolic link: what other paths mean changes (issue 20: a barrier). */
const movesLink = (
  uses: ReadonlyArray<ShellAnalysis.PathUse>,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<boolean, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const use of uses) {
      if (use.moves !== true) continue
      const link = yield* fs.readLink(unnormalised(path, context.cwd, use.path)).pipe(Effect.option)
      if (link._tag === "Some") return true
    }
    return false
  })

/**
 * Kernel names that mean something else in every process: `/proc/self/cwd` is the directory of the process
 * that opens it (the command's, not this one's, where a footprint is resolved), `/proc/<pid>/…` another
 * process's. A path through them cannot be resolved here.
 */
const PROCESS_RELATIVE = /^\/proc\/(?:self|thread-self|[0-9]+)(?:\/|$)/

/** Links followed before giving up, as the kernel's `ELOOP` limit (fail closed past it). */
const MAX_LINKS = 40

/**
 * Whether a path reaches a process-relative name: written so (`/proc/self/cwd/x`, `../../proc/self/…`), or
 * through a symbolic link on the way whose target is one (each link's target is followed, to the kernel's
 * limit).
 */
const reachesProcess = (
  path: Path.Path,
  absolute: string,
  links = 0
): Effect.Effect<boolean, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (PROCESS_RELATIVE.test(path.normalize(absolute))) return true
    if (links >= MAX_LINKS) return true
    const fs = yield* FileSystem.FileSystem
    const components = absolute.split("/")
    for (let i = 2; i <= components.length; i++) {
      const prefix = components.slice(0, i).join("/")
      if (components[i - 1] === "" || components[i - 1] === "." || components[i - 1] === "..") continue
      const target = yield* fs.readLink(prefix).pipe(Effect.option)
      if (target._tag === "None") continue
      const rest = components.slice(i).join("/")
      const followed = path.isAbsolute(target.value) ? target.value : `${path.dirname(prefix)}/${target.value}`
      return yield* reachesProcess(path, rest.length > 0 ? `${followed}/${rest}` : followed, links + 1)
    }
    return false
  })

const dedupe = (resources: ReadonlyArray<Footprint.Resource>): ReadonlyArray<Footprint.Resource> => [
  ...new Set(resources)
]

/**
 * The footprint of a Bash call. It needs the platform's `FileSystem` and
 * `Path` to resolve symlinks; the Bash tool's requirements do not name them
 * (it runs on a `CommandExecutor`), so they are taken from the context when
 * present and the call writes `*` when they are not.
 */
export const footprint = (
  input: ShellInput,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<Footprint.Footprint> =>
  Effect.gen(function*() {
    // A background command keeps running after the call has completed: nothing bounds what it touches.
    if (input.run_in_background === true) return Footprint.writesEverything
    const shell = yield* ShellAnalysis.ShellAnalysis
    const analysis = yield* shell.analyze(input.command)
    if (Option.isNone(analysis)) return Footprint.writesEverything
    const uses = lineUses(analysis.value)
    if (uses === undefined) return Footprint.writesEverything
    const fs = yield* Effect.serviceOption(FileSystem.FileSystem)
    const path = yield* Effect.serviceOption(Path.Path)
    if (Option.isNone(fs) || Option.isNone(path)) return Footprint.writesEverything
    const resolveAll = (list: ReadonlyArray<ShellAnalysis.PathUse>, access: "read" | "write") =>
      Effect.map(
        Effect.forEach(list, (use) => resolveUse(use, context, access)),
        (resolved) => dedupe(resolved.flat())
      )
    // Links on the way of any path are read: what the path means depends on them.
    const links = Effect.map(
      Effect.forEach(
        uses.flatMap((use) => [...use.reads, ...use.writes]).filter((use) => use.anchor === undefined),
        (use) => Effect.flatMap(Path.Path, (path) => linksOnTheWay(path, context.cwd, use.path))
      ),
      (found) => found.flat()
    )
    const all = uses.flatMap((use) => [...use.reads, ...use.writes])
    const throughProcess = Effect.flatMap(Path.Path, (path) =>
      Effect.exists(
        all.filter((use) => use.anchor === undefined),
        (use) => reachesProcess(path, unnormalised(path, context.cwd, use.path))
      ))
    const written = uses.flatMap((use) => use.writes)
    const [reads, ownWrites, gitWrites, barrier, repository] = yield* Effect.all([
      Effect.zipWith(resolveAll(uses.flatMap((use) => use.reads), "read"), links, (a, b) => dedupe([...a, ...b])),
      resolveAll(written.filter((use) => use.anchor === undefined), "write"),
      resolveAll(written.filter((use) => use.anchor !== undefined), "write"),
      Effect.zipWith(movesLink(uses.flatMap((use) => use.writes), context), throughProcess, (a, b) => a || b),
      all.some((use) => use.anchor !== undefined) ? findRepository(context.cwd) : Effect.succeed(undefined)
    ]).pipe(
      Effect.provideService(FileSystem.FileSystem, fs.value),
      Effect.provideService(Path.Path, path.value)
    )
    if (barrier || repository === "unbounded") return Footprint.writesEverything
    // A repository whose configuration may make git run a program or read elsewhere (`core.fsmonitor`,
    // a `textconv` driver, `include.path`): its git commands are not bounded by the repository.
    const plain = repository === undefined || GitRepository.plainRepository(repository.gitDirectories)
    if (!plain) return Footprint.writesEverything
    // A line that writes into the git directory its git commands use (`git status > .git/HEAD`) may leave
    // them no repository, and git then looks for one in every directory above: a barrier. git's own writes
    // there (the index `git status` refreshes) keep the repository one.
    const gitDirectories = repository?.gitDirectories ?? []
    const intoGit = ownWrites.some((resource) => {
      const written = resource.replace(/\/\*\*$/, "")
      return gitDirectories.some((dir) => written === dir || written.startsWith(`${dir}/`))
    })
    if (intoGit) return Footprint.writesEverything
    const writes = dedupe([...ownWrites, ...gitWrites])
    const result: Footprint.Footprint = {
      ...(reads.length > 0 ? { reads } : {}),
      ...(writes.length > 0 ? { writes } : {})
    }
    return result
  }).pipe(Effect.catchAllCause(() => Effect.succeed(Footprint.writesEverything)))
