/**
 * The shell-analysis port (SPEC §4.5): split a command line into its simple
 * commands and classify it as read-only. `@switchyard/tools` provides the
 * tree-sitter implementation as a Layer; without it the engine fails closed —
 * every Bash command is unsafe and not read-only, and a compound command
 * matches no allow rule.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * An output redirection of a simple command (`> file`, `>> file`, `&> file`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Redirect {
  readonly operator: string
  readonly target: string
}

/**
 * A path a simple command reads or writes, as written (quotes removed),
 * relative to the directory the command runs in.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathUse {
  readonly path: string
  /** The whole tree under the path: recursive readers (`grep -r`, `find`, `rg`), `rm -r`, `cp -r`. */
  readonly subtree: boolean
  /** Contents are read or written, not only names and metadata (`cat` and `grep -r`, not `ls` or `find`). */
  readonly content: boolean
  /**
   * The path is renamed (`mv`'s sources): if it is a symbolic link, moving it changes what other
   * paths mean, so a footprint makes the call a barrier (issue 20).
   */
  readonly moves?: boolean
  /**
   * The path is relative to the repository the command runs in, not to its directory: `.` is the
   * work tree's root (git's commands read the whole repository from any subdirectory). A
   * footprint resolves it from the command's directory; the permission rules read it as written.
   */
  readonly anchor?: "repository" | "gitDirectory"
}

/**
 * One simple command of a command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface SimpleCommand {
  /** The command as written, without its redirections. */
  readonly text: string
  /** The words after expansion-free parsing (quotes removed). */
  readonly argv: ReadonlyArray<string>
  /** Leading `VAR=value` assignments. */
  readonly assignments: ReadonlyArray<string>
  /** Output redirections to files (`/dev/null` included). */
  readonly redirects: ReadonlyArray<Redirect>
  /**
   * Files it reads: file arguments of the programs the analyser knows, input
   * redirections (`< f`), and the working directory for recursive readers
   * without one (`grep -r x`, `rg x`, `find`, `ls`).
   */
  readonly readPaths: ReadonlyArray<PathUse>
  /**
   * Files it writes: output redirection targets and the file arguments of
   * `mkdir touch rm rmdir mv cp ln tee truncate dd chmod chown`, `sed -i`.
   */
  readonly writePaths: ReadonlyArray<PathUse>
  /**
   * `readPaths` and `writePaths` are everything it touches. False for an
   * unknown program, a glob or expansion in a path, a file listing more
   * files (`xargs`, `--files0-from`), or a `cd` (later relative paths move).
   */
  readonly pathsKnown: boolean
  /**
   * A path argument or redirection target of a program the analyser knows
   * could not be resolved statically (a glob, brace or parameter expansion, a
   * file listing more files, the names `xargs` feeds). Unlike `pathsKnown`,
   * an unknown program alone does not set it: its arguments are not known to
   * be paths.
   */
  readonly unresolvedPaths: boolean
  /**
   * The path words behind `unresolvedPaths`, as written with quotes removed
   * (`src/*.ts`, `$DIR/x`); a file that lists more names is given as
   * `<names in FILE>`.
   */
  readonly unresolvedWords: ReadonlyArray<string>
  /**
   * The program call alone is read-only: its output redirections are judged
   * apart (they are in `redirects` and `writePaths`), as is the rest of the
   * line (`Analysis.readOnly` weighs everything).
   */
  readonly readOnly: boolean
  /**
   * Its only effect is writing `writePaths` (no program run, no other file
   * touched): `mkdir`, `rm`, `cp`, `sed -i` with a script without
   * `e`/`w`/`W`/`r`/`R`, … — what acceptEdits may allow inside the working
   * directories.
   */
  readonly onlyWritesPaths: boolean
}

/**
 * Variables a `VAR=value` prefix may set without changing what an allowed or
 * read-only command does (issue 9, item 9): locale, time zone, colours and
 * terminal size, with a value that names no file outside the system's
 * locale and time-zone directories. Everything else — `HOME`, `XDG_*`, `GIT_*`, `npm_config_*`,
 * `PATH`, `LD_*`, `BASH_ENV`, `PAGER`, `EDITOR`, `POSIXLY_CORRECT` (it
 * changes how options are parsed), … — may point the program at other
 * configuration or another program.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isHarmlessAssignment = (assignment: string): boolean => {
  const eq = assignment.indexOf("=")
  if (eq <= 0) return false
  const name = assignment.slice(0, eq)
  const value = assignment.slice(eq + 1)
  // The value must be a literal: no expansion or substitution to evaluate.
  return HARMLESS_VARIABLE.test(name) && !/[$`]/.test(value) && !namesFileElsewhere(value)
}

/**
 * A value glibc would open as a file anywhere (found by the footprint oracle): `TZ=/etc/x`, `TZ=:/etc/x`,
 * `LANG=../../x`, a `LANGUAGE` list with such an entry. Names relative to the system's zoneinfo and locale
 * directories (`TZ=Europe/Paris`, `LANG=C.UTF-8`) stay there.
 */
const namesFileElsewhere = (value: string): boolean => {
  const bare = value.replace(/['"]/g, "")
  return bare.split(":").some((entry) => entry.startsWith("/") || entry.startsWith("~") || entry.includes(".."))
}

const HARMLESS_VARIABLE = new RegExp(
  "^(" + [
    "LANG",
    "LANGUAGE",
    "LC_[A-Z]+",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "CI",
    "NODE_ENV",
    "DEBUG",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE"
  ].join("|") + ")$"
)

/**
 * The path and verdict fields of a simple command nothing is known about:
 * the fail-closed defaults for analysers (and tests) that only split.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownPaths: Pick<
  SimpleCommand,
  "readPaths" | "writePaths" | "pathsKnown" | "unresolvedPaths" | "unresolvedWords" | "readOnly" | "onlyWritesPaths"
> = {
  readPaths: [],
  writePaths: [],
  pathsKnown: false,
  unresolvedPaths: false,
  unresolvedWords: [],
  readOnly: false,
  onlyWritesPaths: false
}

/**
 * What the analyser found in a whole command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Analysis {
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Command or process substitution, `$VAR` in command position, or similar: nothing can be proven about it. */
  readonly hasDynamicParts: boolean
  /**
   * Bash may run commands, or other programs, that no simple command shows
   * (issue 19, classes 2, 3, 4 and 9): it evaluates a value known only at run
   * time as arithmetic, a subscript, a prompt or a name (`${x@P}`, `${!x}`,
   * `$((x))`, `(( x ))`, `[[ $x -eq 1 ]]`, `test -v "$x"`, `let`, `declare -i`,
   * `printf -v "$x"`), or it rebinds what later names mean — it assigns or
   * unsets a variable that is not lowercase and not harmless (`PATH`, `HOME`,
   * `BASH_CMDS[ls]`, `PS4`, `GIT_*`) with `VAR=`, `for VAR in`, `read VAR`,
   * `{VAR}>` or a declaration. Its parts prove nothing about it: no allow
   * rule for them allows the line, and a deny rule on any program counts as
   * matching.
   */
  readonly runsUnseen: boolean
  readonly readOnly: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Split into simple commands (text of each, in order). */
  readonly split: (command: string) => Effect.Effect<ReadonlyArray<string>>
  readonly isReadOnly: (command: string) => Effect.Effect<boolean>
  /** Full analysis, or none when the command cannot be analysed. */
  readonly analyze: (command: string) => Effect.Effect<Option.Option<Analysis>>
}

/**
 * The fail-closed analyser used when no implementation is provided: nothing is
 * read-only and nothing can be analysed. `split` splits naively on control
 * operators only so that deny rules still see every part.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failClosed: Service = {
  split: (command) => Effect.succeed(naiveSplit(command)),
  isReadOnly: () => Effect.succeed(false),
  analyze: () => Effect.succeed(Option.none())
}

/**
 * Split on `&& || ; | |& &` and newlines, ignoring quoting. Only used where
 * erring towards more parts is the safe direction (deny matching).
 *
 * @since 0.1.0
 * @category utils
 */
export const naiveSplit = (command: string): ReadonlyArray<string> =>
  command
    .split(/\|&|&&|\|\||[;|&\n]/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)

/**
 * @since 0.1.0
 * @category services
 */
export class ShellAnalysis extends Context.Reference<ShellAnalysis>()("@switchyard/core/ShellAnalysis/ShellAnalysis", {
  defaultValue: (): Service => failClosed
}) {}
