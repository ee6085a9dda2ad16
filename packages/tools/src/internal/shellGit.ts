/**
 * The Bash tool's check of the git a command line runs: a repository's own
 * configuration can make `git status` run a program (`core.fsmonitor`), so
 * "read-only" and an allow rule such as `Bash(git status:*)` mean what they
 * say only in a repository whose configuration is plain
 * (`gitRepository.ts`). Where the line's git may use another repository, the
 * call asks, naming the file and the entry — the read-only set and allow rules
 * do not skip that ask (only `bypassPermissions` does).
 *
 * Where git looks: from the call's directory and every place a `cd`/`pushd`
 * on the line may lead, each `git -C DIR` applied, and an explicit
 * `--git-dir`/`--bare`; git named through a wrapper that runs it as given
 * (`env`, `timeout`, `nice`) and in a nested line (`sh -c '…'`, depth 3)
 * counts too. A place that cannot be known ahead of time (`cd -`, `popd`,
 * git run by `xargs` or `find -exec` with arguments they add, a `GIT_*`
 * variable, `--exec-path`, git's options in a variable) asks as well — unless the line
 * is one bash evaluates at run time (a substitution, `$X` in command
 * position) or one the parser cannot read: only a blanket grant allows those,
 * and it grants any program already.
 *
 * @internal
 */
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as GitRepository from "./gitRepository.js"

/** Where the line's git may look for its repository. */
interface Places {
  /** Directories git may start from (before its `-C`). */
  readonly starts: Set<string>
  /** Git directories named outright (`--git-dir`, `--bare`). */
  readonly gitDirectories: Set<string>
  /** Why a place cannot be known ahead of time, if one cannot (it matters when the line runs git). */
  unknown: string | undefined
  /** A variable the line sets that changes which configuration git reads (`HOME=.`): asked about even in a
   * line bash evaluates at run time. */
  rebinds: string | undefined
  /** The line runs git, or may (a nested line, `xargs git`). */
  runsGit: boolean
  /** An earlier command may have changed the disk (made a link, a directory, a repository, a configuration). */
  changed: boolean
}

/** Variables that change which configuration git reads, or where `cd` leads (`HOME=. git status`). */
const GIT_VARIABLES = /^(?:GIT_[A-Za-z0-9_]*|HOME|XDG_CONFIG_HOME|CDPATH|PATH|PREFIX|EMAIL)=/

/** Where a place named from `dir` may be: as the kernel walks it (`..` after a link from the target) and as written. */
const physicalPlaces = (dir: string, relative: string): ReadonlyArray<string> => [
  ...new Set([
    GitRepository.physical(NodePath.isAbsolute(relative) ? relative : `${dir}/${relative}`),
    GitRepository.physical(NodePath.resolve(dir, relative))
  ])
]

/** git subcommands that change no link, directory, repository or configuration git would later read. */
const KEEPS_LAYOUT = new Set(["add", "stage", "commit", "fetch", "push", "tag", "branch", "notes"])

/** A word that is git: `git`, `/usr/bin/git`, `git-upload-pack`. */
const isGitProgram = (word: string): boolean => /^(?:.*\/)?git(?:-[A-Za-z0-9-]+)?$/.test(word)

/** A word in which a nested line may run git (`sh -c 'cd x; git status'`). */
const mentionsGit = (word: string): boolean =>
  word.split(/[\s;&|()<>`'"{}=]+/).some((token) => token.length > 0 && isGitProgram(token))

const isStatic = (word: string): boolean => !/[$`]/.test(word)

/** Options of git that take the next word as their value. */
const GIT_VALUE_OPTIONS = new Set(["-c", "--config-env", "--namespace", "--super-prefix", "--work-tree", "--list-cmds"])

/**
 * Apply git's global options from `argv[at]` (the git word) on: `-C` moves
 * the start, `--git-dir`/`--bare` name the git directory.
 */
const gitInvocation = (
  argv: ReadonlyArray<string>,
  at: number,
  bases: ReadonlySet<string>,
  places: Places
): void => {
  places.runsGit = true
  if (places.changed) {
    places.unknown ??= "an earlier command on the line may change which repository git uses, or its configuration"
  }
  let starts = [...bases]
  let explicit: string | undefined
  for (let i = at + 1; i < argv.length; i++) {
    const word = argv[i]!
    // `git "$@"`: options known only at run time (`-C elsewhere`).
    if (!isStatic(word)) {
      places.unknown ??= "git's options known only at run time"
      return
    }
    if (!word.startsWith("-")) break
    const [name, attached] = word.startsWith("--") && word.includes("=")
      ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]
      : [word, undefined]
    if (name === "-C" || name === "--git-dir") {
      const value = attached ?? argv[++i]
      if (value === undefined || !isStatic(value)) {
        places.unknown ??= `\`git ${name}\` with a value known only at run time`
        return
      }
      if (name === "-C") starts = starts.flatMap((start) => physicalPlaces(start, value))
      else explicit = value
    } else if (name === "--exec-path" && attached !== undefined) {
      places.unknown ??= "`git --exec-path=…` (git would run its commands from there)"
      return
    } else if (name === "--bare") {
      explicit ??= "."
    } else if (GIT_VALUE_OPTIONS.has(name) && attached === undefined) {
      i++
    }
  }
  if (explicit === undefined) { for (const start of starts) places.starts.add(start) }
  else for (const start of starts) for (const dir of physicalPlaces(start, explicit)) places.gitDirectories.add(dir)
}

/** Programs that run the command they are given as given (`timeout 5 git status`): git is found after them. */
const PASS_THROUGH = new Set([
  "env",
  "command",
  "exec",
  "builtin",
  "time",
  "timeout",
  "nice",
  "ionice",
  "nohup",
  "setsid",
  "stdbuf",
  "chrt",
  "taskset",
  "flock",
  "sudo",
  "doas",
  "unbuffer"
])

/** Programs that run a command line given as one word (`sh -c 'git status'`, `watch 'git status'`). */
const NESTING = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "fish",
  "csh",
  "tcsh",
  "busybox",
  "eval",
  "su",
  "watch",
  "script"
])

/** Programs that run a command with arguments they add (`xargs git`, `fd -x git`). */
const SUBSTITUTING = new Set(["xargs", "parallel", "fd", "fdfind"])

const basename = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

/**
 * find's actions: `-exec`/`-ok` run their command (up to `;` or `+`) from
 * find's own directory, as given unless it has `{}` (a found path, anywhere);
 * `-execdir`/`-okdir` run it in each directory find visits. Its other words are
 * tests (`-name git`), not commands.
 */
const findExecs = (
  argv: ReadonlyArray<string>,
  bases: ReadonlySet<string>,
  places: Places,
  depth: number
): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 1; i < argv.length; i++) {
      const action = argv[i]!
      if (!/^-(?:exec|execdir|ok|okdir)$/.test(action)) continue
      let end = i + 1
      while (end < argv.length && argv[end] !== ";" && argv[end] !== "+") end++
      const command = argv.slice(i + 1, end)
      i = end
      if (!command.some(mentionsGit)) continue
      if (/dir$/.test(action) || command.some((word) => word.includes("{}"))) {
        places.unknown ??= `\`find ${action}\` running git where it finds`
      } else {
        yield* walkCommands([{ argv: command, assignments: [] }], bases, places, depth)
      }
    }
  })

/** What the walk reads of a simple command. */
type Command =
  & Pick<ShellAnalysis.SimpleCommand, "argv" | "assignments">
  & Partial<Pick<ShellAnalysis.SimpleCommand, "readOnly" | "redirects">>

/** Whether a command may change the disk git reads: it is not read-only, or it redirects its output to a file. */
const mayChange = (command: Command, name: string): boolean => {
  if (name === "cd" || name === "pushd" || name === "popd") return false
  if (isGitProgram(name)) {
    const subcommand = command.argv.slice(1).find((word) => !word.startsWith("-"))
    if (subcommand !== undefined && KEEPS_LAYOUT.has(subcommand)) return false
  }
  const writes = (command.redirects ?? []).some((redirect) => redirect.target !== "/dev/null")
  return command.readOnly !== true || writes
}

/** Walk a line's commands in order, collecting where its git may look; `bases` are the directories it starts in. */
const walkCommands = (
  commands: ReadonlyArray<Command>,
  bases: ReadonlySet<string>,
  places: Places,
  depth: number
): Effect.Effect<void> =>
  Effect.gen(function*() {
    let current: ReadonlySet<string> = new Set(bases)
    for (const command of commands) {
      const argv = command.argv
      const variable = command.assignments.find((assignment) => GIT_VARIABLES.test(assignment))
      if (variable !== undefined) places.rebinds ??= `the \`${variable.split("=")[0]}\` variable`
      const name = basename(argv[0] ?? "")
      const changes = mayChange(command, name)
      yield* walkCommand(command, name, current, places, depth).pipe(
        Effect.map((moved) => {
          if (moved !== undefined) current = moved
        })
      )
      if (changes) places.changed = true
    }
  })

/** Walk one command; a `cd`/`pushd` answers where the line's next commands run. */
const walkCommand = (
  command: Command,
  name: string,
  current: ReadonlySet<string>,
  places: Places,
  depth: number
): Effect.Effect<ReadonlySet<string> | undefined> =>
  Effect.gen(function*() {
    const shell = yield* ShellAnalysis.ShellAnalysis
    const argv = command.argv
    if (name === "cd" || name === "pushd") {
      // Its options are `-L`, `-P`, `-e`, `-@`; `-` is an operand (the previous directory).
      const target = argv.slice(1).find((word) => word === "-" || !word.startsWith("-"))
      if (target === undefined) return new Set([...current, GitRepository.physical(NodeOs.homedir())])
      if (target === "-" || !isStatic(target) || (target.startsWith("~") && !/^~(?:\/|$)/.test(target))) {
        places.unknown ??= `\`${name} ${target}\` (where it leads is known only at run time)`
        return undefined
      }
      if (places.changed) places.unknown ??= `\`${name} ${target}\` after a command that may have made it`
      const expanded = target === "~" || target.startsWith("~/")
        ? NodePath.join(NodeOs.homedir(), target.slice(1))
        : target
      // bash's `cd` looks in CDPATH's directories first for a name that does not start with `/`, `.` or `..`.
      const cdpath = process.env["CDPATH"]
      const searched = cdpath !== undefined && cdpath.length > 0 && !/^\.{0,2}(?:\/|$)/.test(expanded)
        ? cdpath.split(":").filter((dir) => dir.length > 0)
        : []
      return new Set([
        ...current,
        ...[...current, ...searched].flatMap((dir) => physicalPlaces(dir, expanded))
      ])
    }
    if (name === "popd") {
      places.unknown ??= "`popd` (where it leads is known only at run time)"
      return undefined
    }
    if (/^(?:export|declare|typeset|local|readonly)$/.test(name)) {
      const exported = argv.find((word) => GIT_VARIABLES.test(word))
      if (exported !== undefined) places.rebinds ??= `the \`${exported.split("=")[0]}\` variable`
      return undefined
    }
    if (isGitProgram(name)) {
      gitInvocation(argv, 0, current, places)
      return undefined
    }
    // `hash -p /usr/bin/git ls` makes another name run git.
    if (name === "hash" && argv.some(isGitProgram)) {
      places.runsGit = true
      places.unknown ??= "`hash -p` naming git"
      return undefined
    }
    if (name === "find") {
      yield* findExecs(argv, current, places, depth)
      return undefined
    }
    if (SUBSTITUTING.has(name)) {
      if (argv.slice(1).some(mentionsGit)) {
        places.runsGit = true
        places.unknown ??= `\`${name}\` running git with arguments it adds`
      }
      return undefined
    }
    if (NESTING.has(name) && !argv.includes("-c") && name !== "eval" && name !== "watch") {
      // A shell reading its script from standard input or a file (`bash <<< '…'`): the script is not a word.
      if (argv.slice(1).some(mentionsGit) || (command.redirects ?? []).length > 0 || argv.length === 1) {
        places.runsGit = true
        places.unknown ??= `\`${name}\` reading a script this check cannot see`
      }
    }
    if (!PASS_THROUGH.has(name) && !NESTING.has(name)) {
      // A program that is not read-only and is given git (`strace git …`, `ltrace git`) may run it anywhere.
      if (command.readOnly !== true && argv.slice(1).some(isGitProgram)) {
        places.runsGit = true
        places.unknown ??= `\`${name}\` running git`
      }
      return undefined
    }
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i]!
      // `env GIT_DIR=x git status`, `sudo HOME=. git …`: git's environment.
      if (GIT_VARIABLES.test(word)) places.rebinds ??= `the \`${word.split("=")[0]}\` variable`
      if (isGitProgram(word)) {
        // GNU env's `-C DIR`/`--chdir=DIR` moves git too.
        if (name === "env" && argv.slice(1, i).some((option) => /^(?:-C|--chdir)/.test(option))) {
          places.runsGit = true
          places.unknown ??= "`env --chdir` before git"
        } else if (PASS_THROUGH.has(name)) gitInvocation(argv, i, current, places)
        break
      }
      if (mentionsGit(word)) {
        const nested = depth < 3 ? yield* shell.analyze(word) : Option.none()
        if (Option.isNone(nested)) {
          places.runsGit = true
          places.unknown ??= "a nested command line that runs git"
        } else yield* walkCommands(nested.value.commands, current, places, depth + 1)
      }
    }
    return undefined
  })

/** What the line's git is: nothing to ask, or the question. */
export type Verdict =
  | { readonly _tag: "OnlyGit" }
  | { readonly _tag: "Ask"; readonly message: string }

const onlyGit: Verdict = { _tag: "OnlyGit" }

/**
 * Whether the git `command` runs (from `cwd`) runs only git; else the ask,
 * naming the configuration file and the entry, or why the repository cannot
 * be known. Fails closed: a file that cannot be read, a line it cannot parse.
 */
export const check = (
  command: string,
  cwd: string
): Effect.Effect<Verdict> =>
  Effect.gen(function*() {
    const shell = yield* ShellAnalysis.ShellAnalysis
    const analysis = yield* shell.analyze(command)
    const places: Places = {
      starts: new Set(),
      gitDirectories: new Set(),
      unknown: undefined,
      rebinds: undefined,
      runsGit: false,
      changed: false
    }
    const start = GitRepository.physical(cwd)
    // A line only a blanket grant allows: its git is judged where it can be seen, and from the call's directory.
    const dynamic = Option.isNone(analysis) || analysis.value.hasDynamicParts || analysis.value.runsUnseen
    if (Option.isNone(analysis)) {
      // The parser could not read the line: anything may be git, and only from the call's directory is known.
      if (/git/.test(command.replace(/[\\'"]/g, ""))) places.starts.add(start)
    } else {
      yield* walkCommands(analysis.value.commands, new Set([start]), places, 0)
      if (dynamic) places.unknown = undefined
      if (dynamic && analysis.value.commands.some((c) => !isStatic(c.argv[0] ?? ""))) places.starts.add(start)
    }
    // What cannot be known matters only where git runs.
    places.unknown ??= places.rebinds
    if (places.unknown !== undefined && places.runsGit) {
      return {
        _tag: "Ask",
        message: `the command runs git in a repository that cannot be known ahead of time (${places.unknown}), ` +
          `and a repository's own configuration can make git run programs (core.fsmonitor, a diff driver)`
      }
    }
    if (places.starts.size === 0 && places.gitDirectories.size === 0) return onlyGit
    // The shell inherits this process's environment: a `GIT_DIR` there (switchyard run from a git hook) is the
    // repository every git on the line uses.
    const inherited = process.env["GIT_DIR"]
    if (inherited !== undefined && inherited.length > 0) places.gitDirectories.add(NodePath.resolve(cwd, inherited))
    const found = findProgramEntry(places)
    if (found === undefined) return onlyGit
    return {
      _tag: "Ask",
      message: `git would read ${found.file}, whose entry \`${found.entry}\` may make git run a program or ` +
        `touch files outside the repository; approve only if you trust this repository's git configuration`
    }
  })

const findProgramEntry = (places: Places): GitRepository.ProgramEntry | undefined => {
  const repositories: Array<GitRepository.Repository> = []
  for (const start of places.starts) {
    const found = GitRepository.discover(start)
    // The `.git` directories git passes over on the way are examined too (fail closed).
    if (found !== undefined) repositories.push(found, ...found.passed)
  }
  for (const gitDir of places.gitDirectories) repositories.push(GitRepository.atGitDirectory(gitDir))
  const seen = new Set<string>()
  for (const repository of repositories) {
    const key = repository.gitDirectories.join("\u0000")
    if (seen.has(key)) continue
    seen.add(key)
    const entry = GitRepository.programEntry(repository)
    if (entry !== undefined) return entry
  }
  return undefined
}
