/**
 * What a Bash command line runs, for the rules (issue 9): its simple commands
 * as `CommandPart`s with their matching forms, the commands of the scripts it
 * hands to a shell (`sh -c`, `eval`, `trap`, `script -c`, aliases, `env -S`,
 * `find -exec`, `find -delete` as `rm`, `unlink` as `rm`, `/abs/path/name` as
 * `name`), and the parts whose program cannot be known ahead of time.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ShellAnalysis from "../ShellAnalysis.js"
import * as CommandPatterns from "./commandPatterns.js"

const nonFileTargets = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

export interface CommandPart {
  readonly text: string
  readonly forms: CommandPatterns.CommandForms
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
  /** The analyser's record, when the part came from an analysis. */
  readonly simple?: ShellAnalysis.SimpleCommand
}

/** A name bash cannot be known to run: an expansion, a substitution or a glob in command position. */
export const unresolvableName = (name: string | undefined): boolean =>
  name === undefined || /[$`*?]/.test(name) || (name !== "[" && name !== "[[" && /\[.*\]/.test(name)) ||
  // Brace expansion: `r{m,} x` runs `rm r x`.
  /\{[^}]*(?:,|\.\.)[^}]*\}/.test(name)

/**
 * A part after which a plain name may run another program, or whose shell runs a script from
 * elsewhere: `hash -p /bin/rm ls` (then `ls` is `rm`), `enable -f lib.so name` (a builtin
 * loaded from a file), `BASH_ENV=…`/`ENV=…` (a script every non-interactive shell sources first).
 */
export const rebindsNames = (part: CommandPart): boolean => {
  const argv = part.forms.argv
  const name = argv[0]
  if (name === "hash" && argv.some((word) => /^-[a-z]*p/.test(word))) return true
  if (name === "enable" && argv.some((word) => /^-[a-z]*f/.test(word))) return true
  const assignments = [
    ...(part.simple?.assignments ?? []),
    ...(part.simple?.argv ?? []).filter((word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word))
  ]
  return assignments.some((word) => /^(?:BASH_ENV|ENV)=/.test(word))
}

/** A shell that reads its script from standard input or a file: what it runs is not on the line. */
export const shellWithoutScript = (argv: ReadonlyArray<string>): boolean => {
  const name = argv[0]
  if (name === "source" || name === ".") return true
  if (name === undefined || !shells.has(name)) return false
  const query = argv.length > 1 && argv.slice(1).every((word) => word === "--version" || word === "--help")
  return scriptOf(argv) === undefined && !query
}

const shells: ReadonlySet<string> = new Set(["sh", "bash", "zsh", "dash", "ksh"])

/** The script a command hands to a shell: `bash -c 'script'`, `bash -c -- 'script'`, `eval script`. */
const scriptOf = (argv: ReadonlyArray<string>): string | undefined => {
  const name = argv[0]
  if (name === "eval") return argv.length > 1 ? argv.slice(1).join(" ") : undefined
  // `trap 'cmd' SIGNAL…` runs `cmd` later in this shell, like eval.
  if (name === "trap") {
    const action = argv.slice(1).find((word) => word !== "--" && !/^-[lp]$/.test(word))
    return action !== undefined && action !== "-" && argv.length > 2 ? action : undefined
  }
  // `script -c CMD` runs CMD in a shell.
  if (name === "script") {
    const flag = argv.findIndex((word, index) =>
      index > 0 && (word === "-c" || word === "--command" || /^-[a-z]*c$/.test(word))
    )
    if (flag !== -1) return argv[flag + 1]
    const long = argv.find((word) => word.startsWith("--command="))
    return long === undefined ? undefined : long.slice("--command=".length)
  }
  if (name === undefined || !shells.has(name)) return undefined
  const flag = argv.findIndex((word, index) => index > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(word))
  if (flag === -1) return undefined
  // Options may follow `-c` before the script (`bash -c -e 'x'`, `bash -c -- 'x'`).
  let i = flag + 1
  while (i < argv.length && argv[i]!.startsWith("-") && argv[i] !== "-") i++
  return argv[i]
}

/** Scripts a command runs that are not shell scripts on their own: aliases, `env -S`, `find -exec`. */
const embeddedScripts = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const name = argv[0]
  if (name === "alias") {
    // `alias x='rm -rf'`: the commands an alias may later run.
    return argv.slice(1).flatMap((word) => {
      const eq = word.indexOf("=")
      return eq > 0 ? [word.slice(eq + 1)] : []
    })
  }
  if (name === "env") {
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i]!
      if (word === "-S" || word === "--split-string") return [argv.slice(i + 1).join(" ")]
      if (word.startsWith("-S")) return [[word.slice(2), ...argv.slice(i + 1)].join(" ")]
      if (word.startsWith("--split-string=")) return [[word.slice(15), ...argv.slice(i + 1)].join(" ")]
    }
    return []
  }
  if (name === "find") {
    const out: Array<string> = []
    const roots = argv.slice(1).filter((word, index, words) =>
      !word.startsWith("-") && !["(", "!", ")"].includes(word) && words.slice(0, index).every((w) => !w.startsWith("-"))
    )
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i]!
      if (["-exec", "-execdir", "-ok", "-okdir"].includes(word)) {
        let j = i + 1
        while (j < argv.length && argv[j] !== ";" && argv[j] !== "+") j++
        out.push(argv.slice(i + 1, j).join(" "))
        i = j
      } else if (word === "-delete") {
        // The same effect as `rm`: a `Bash(rm …)` deny rule sees it.
        out.push(["rm", "-r", ...(roots.length > 0 ? roots : ["."])].join(" "))
      }
    }
    return out
  }
  if (name === "unlink") return [["rm", ...argv.slice(1)].join(" ")]
  return []
}

/** The part's name with a directory stripped (`/bin/rm x` is `rm x` for deny rules). */
const basenameForm = (argv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const name = argv[0]
  if (name === undefined || !name.includes("/") || name.endsWith("/")) return undefined
  return [name.slice(name.lastIndexOf("/") + 1), ...argv.slice(1)]
}

/**
 * The commands of scripts run through `sh -c`, `eval`, aliases, `env -S` and
 * `find -exec`, and the bare-name form of `/abs/path/name`, for deny and ask
 * rules (and path rules).
 */
export const nestedParts = (
  parts: ReadonlyArray<CommandPart>,
  shell: ShellAnalysis.Service,
  depth: number
): Effect.Effect<ReadonlyArray<CommandPart>> =>
  Effect.gen(function*() {
    if (depth === 0) return []
    const out: Array<CommandPart> = []
    for (const part of parts) {
      const argv = part.forms.argv
      const script = scriptOf(argv)
      const scripts = [...(script === undefined ? [] : [script]), ...embeddedScripts(argv)]
      const inner: Array<CommandPart> = []
      const bare = basenameForm(argv)
      if (bare !== undefined) {
        inner.push({
          text: bare.join(" "),
          forms: CommandPatterns.commandForms(bare.join(" "), bare, []),
          redirects: [],
          ...(part.simple === undefined ? {} : { simple: part.simple })
        })
      }
      for (const text of scripts) {
        const analysis = yield* shell.analyze(text)
        inner.push(
          ...(Option.isSome(analysis)
            ? analysis.value.commands.map((simple) => ({
              text: simple.text,
              forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
              redirects: fileRedirects(simple.redirects),
              simple
            }))
            : ShellAnalysis.naiveSplit(text).map((piece) => ({
              text: piece,
              forms: CommandPatterns.commandForms(piece, CommandPatterns.naiveWords(piece), []),
              redirects: []
            })))
        )
      }
      out.push(...inner, ...(yield* nestedParts(inner, shell, depth - 1)))
    }
    return out
  })

const isDescriptor = (redirect: ShellAnalysis.Redirect): boolean =>
  redirect.operator.includes("&") && /^(\d+|-)$/.test(redirect.target)

/** Redirects that write a file (not `/dev/null`, not `2>&1`). */
export const fileRedirects = (
  redirects: ReadonlyArray<ShellAnalysis.Redirect>
): ReadonlyArray<ShellAnalysis.Redirect> =>
  redirects.filter((redirect) => !nonFileTargets.test(redirect.target) && !isDescriptor(redirect))

/** The parts of an analysed line, one per simple command, with their matching forms. */
export const partsOf = (commands: ReadonlyArray<ShellAnalysis.SimpleCommand>): ReadonlyArray<CommandPart> =>
  commands.map((simple) => ({
    text: simple.text,
    forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
    redirects: fileRedirects(simple.redirects),
    simple
  }))
