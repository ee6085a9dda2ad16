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
import type * as PermissionRules from "../PermissionRules.js"
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
 * A part after which a plain name may run another program, or whose program is not the one its
 * name says: `hash -p /bin/rm ls` (then `ls` is `rm`), `enable -f lib.so name` (a builtin loaded
 * from a file), `fc` (it runs commands from the history, which `history -s` fills), and a
 * command with an assignment outside the harmless list (`PATH=/tmp ls`, `BASH_ENV=f bash -c x`,
 * `env HOME=/tmp/evil git log`, whose planted configuration runs programs: issue 19, class 9).
 */
export const rebindsNames = (part: CommandPart): boolean => {
  const argv = part.forms.argv
  const name = argv[0]
  if (name === "hash" && argv.some((word) => /^-[a-z]*p/.test(word))) return true
  if (name === "enable" && argv.some((word) => /^-[a-z]*f/.test(word))) return true
  if (name === "fc" && !argv.slice(1).some((word) => /^-[a-zA-Z]*l/.test(word))) return true
  if (part.forms.dangerousAssignment) return true
  const assignments = [
    ...(part.simple?.assignments ?? []),
    ...(part.simple?.argv ?? []).filter((word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word))
  ]
  return assignments.some((word) => /^(?:BASH_ENV|ENV)=/.test(word))
}

/**
 * Part `index` runs a program by path (`./x`, `/tmp/x`) after an earlier part
 * may have made or changed files: `ln -s /bin/rm x; ./x victim` runs `rm`
 * under another name (issue 19, class 9). An earlier part may have when it
 * writes a path, redirects to a file, or is a program the analyser does not
 * describe.
 */
export const runsWhatItMade = (parts: ReadonlyArray<CommandPart>, index: number): boolean => {
  const name = parts[index]!.forms.argv[0]
  if (name === undefined || !name.includes("/")) return false
  return parts.slice(0, index).some((part) =>
    part.simple === undefined || !part.simple.readOnly || part.simple.writePaths.length > 0 || part.redirects.length > 0
  )
}

/**
 * For each part run by a path, the same part named by the basename of that
 * path's real path (`./x` that links to `/usr/bin/rm` is `rm`), so that deny
 * rules see the program that runs.
 */
export const resolvedNameParts = (
  parts: ReadonlyArray<CommandPart>,
  env: PermissionRules.Environment
): Effect.Effect<ReadonlyArray<CommandPart>> =>
  Effect.gen(function*() {
    const out: Array<CommandPart> = []
    for (const part of parts) {
      const argv = part.forms.argv
      const name = argv[0]
      if (name === undefined || !name.includes("/") || name.endsWith("/")) continue
      const expanded = name.startsWith("~/") ? env.path.join(env.home, name.slice(2)) : name
      const resolved = yield* env.resolvePath(
        env.path.isAbsolute(expanded) ? expanded : env.path.join(env.cwd, expanded)
      )
      for (const real of resolved.real) {
        const base = env.path.basename(real)
        if (base === env.path.basename(name)) continue
        const renamed = [base, ...argv.slice(1)]
        out.push({
          text: renamed.join(" "),
          forms: CommandPatterns.commandForms(renamed.join(" "), renamed, []),
          redirects: [],
          ...(part.simple === undefined ? {} : { simple: part.simple })
        })
      }
    }
    return out
  })

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
  // `mapfile -C CALLBACK`: bash evaluates the callback every few lines (issue 19, class 9).
  if (name === "mapfile" || name === "readarray") {
    const flag = argv.findIndex((word, index) => index > 0 && /^-[a-zA-Z]*C/.test(word))
    if (flag === -1) return undefined
    const attached = argv[flag]!.slice(argv[flag]!.indexOf("C") + 1)
    return attached.length > 0 ? attached : argv[flag + 1]
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
/** A word quoted for the shell: what `env` passes on is one word whatever it holds. */
const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`

/**
 * `env -S STRING` split as GNU env splits it (issue 19, class 9): blanks
 * separate words, quotes group them, `\_` is a space, `\c` ends the
 * string, `\t \n \r \f \v \\ \' \" \# \$` are those characters, `#`
 * starting a word begins a comment; each word comes back shell-quoted, and a
 * `${VAR}` comes back as a bare expansion (what it holds is not known).
 */
export const splitEnvString = (text: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let current = ""
  let started = false
  let quote: "'" | "\"" | undefined
  const escapes: Readonly<Record<string, string>> = {
    _: " ",
    t: "\t",
    n: "\n",
    r: "\r",
    f: "\f",
    v: "\v",
    "\\": "\\",
    "'": "'",
    "\"": "\"",
    "#": "#",
    $: "$"
  }
  const end = () => {
    if (started) words.push(current)
    current = ""
    started = false
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else current += c
      continue
    }
    if (c === "\\" && i + 1 < text.length) {
      const next = text[++i]!
      if (next === "c") break
      current += next === "_" && quote === undefined ? "'\u0000'" : escapes[next] ?? next
      started = true
      continue
    }
    if (c === "$" && text[i + 1] === "{") {
      const close = text.indexOf("}", i)
      const variable = close === -1 ? text.slice(i + 2) : text.slice(i + 2, close)
      current += `\u0001${variable}\u0001`
      started = true
      i = close === -1 ? text.length : close
      continue
    }
    if (quote === undefined && (c === "'" || c === "\"")) {
      quote = c
      started = true
      continue
    }
    if (quote === "\"" && c === "\"") {
      quote = undefined
      continue
    }
    if (quote === undefined && /\s/.test(c)) {
      end()
      continue
    }
    if (quote === undefined && c === "#" && !started) break
    current += c
    started = true
  }
  end()
  // `\_` outside quotes separates words too (it is a space); expansions stay bare.
  return words.flatMap((word) => word.split("'\u0000'")).map((word) =>
    word.split("\u0001").map((piece, index) => (index % 2 === 1 ? `"$\{${piece}}"` : shellQuote(piece))).join("")
  )
}

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
      const split = word === "-S" || word === "--split-string"
        ? argv[i + 1]
        : word.startsWith("--split-string=")
        ? word.slice(15)
        : /^-[a-zA-Z]*S/.test(word) && !word.startsWith("--")
        ? word.slice(word.indexOf("S") + 1) || argv[i + 1]
        : undefined
      if (split === undefined) continue
      const rest = word === "-S" || word === "--split-string" || split === argv[i + 1]
        ? argv.slice(i + 2)
        : argv.slice(i + 1)
      return [[...splitEnvString(split), ...rest.map(shellQuote)].join(" ")]
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

/** Whether a command hands scripts to a shell or runs commands of its own (`sh -c`, `eval`, `find -exec`). */
export const runsScripts = (argv: ReadonlyArray<string>): boolean =>
  scriptOf(argv) !== undefined || embeddedScripts(argv).length > 0

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
