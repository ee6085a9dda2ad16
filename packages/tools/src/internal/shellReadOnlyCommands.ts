/**
 * The read-only command table: which simple commands, with which arguments,
 * cannot change anything (issue 3, "Read-only shell commands").
 *
 * Every check fails closed. An argument whose value the parser could not
 * prove (an expansion, a glob, brace expansion) might turn into any option
 * at run time — `find . *` with a file named `-delete` in the directory — so
 * commands with dangerous options reject such arguments unless they come
 * after `--`. GNU tools permute their arguments, so options are looked for
 * everywhere, not only before the first operand, and long options match by
 * unambiguous prefix (`--out=x` is `--output=x`).
 *
 * Decisions worth knowing:
 * - Only bare command names: `./ls` or `/tmp/ls` may be anything.
 * - `git`: no global options except `--no-pager`, `--no-optional-locks` and
 *   the pathspec switches; `-c`, `-C`, `--git-dir`, `--work-tree` are refused
 *   (they can point git at a configuration that runs programs).
 * - `sed` only with `-n` and a script of printing/addressing commands; `s`
 *   without the `w`/`e` flags; no `-i`, `-f`, `w`, `W`, `r`, `R`, `e`.
 * - `jq` is read-only with any arguments (it has no way to write files or run
 *   programs; `-f` only reads the filter).
 * - `less`, `more` and `man` are interactive (pagers can run shell commands)
 *   and are not read-only.
 * - `xargs` is read-only only with plain batching options and a read-only
 *   command that stays read-only whatever arguments it is given.
 *
 * @internal
 */

/** One word of a simple command after quote removal. */
export interface Word {
  readonly value: string
  /** The value depends on the environment or the filesystem (expansion, glob, brace expansion). */
  readonly dynamic: boolean
}

type ArgumentCheck = (args: ReadonlyArray<Word>) => boolean

const anyArguments: ArgumentCheck = () => true

interface OptionSpec {
  /** Long options (without `--`) that make the command unsafe; matched by prefix. */
  readonly forbiddenLong?: ReadonlyArray<string>
  /** Short option letters that make the command unsafe anywhere in a cluster. */
  readonly forbiddenShort?: string
  /** Short options whose value is the next word (so that word is not an operand). */
  readonly shortWithValue?: string
  /** Long options whose value may be the next word. */
  readonly longWithValue?: ReadonlyArray<string>
  /** Checks the operands (non-option words). */
  readonly operands?: (operands: ReadonlyArray<Word>) => boolean
}

const isLongOption = (value: string) => value.startsWith("--") && value.length > 2
const isShortCluster = (value: string) => value.startsWith("-") && !value.startsWith("--") && value.length > 1
const longName = (value: string) => {
  const body = value.slice(2)
  const eq = body.indexOf("=")
  return eq === -1 ? body : body.slice(0, eq)
}
/** GNU getopt and git accept any unambiguous prefix of a long option. */
const abbreviates = (name: string, option: string) => name.length > 0 && option.startsWith(name)

/**
 * A generic option scan for GNU-style commands: rejects unprovable words
 * before `--`, forbidden long options (by prefix) and forbidden short letters
 * (anywhere in a cluster, which may reject a harmless attached value — the
 * safe direction), then hands the operands to `operands`. The value of an
 * option that takes one is not counted as an operand, but it is still checked
 * like any other word, so a misjudged value can only make the check stricter.
 */
const options = (spec: OptionSpec): ArgumentCheck => (args) => {
  const operands: Array<Word> = []
  let endOfOptions = false
  let isValue = false
  for (const arg of args) {
    const wasValue = isValue
    isValue = false
    if (endOfOptions) {
      operands.push(arg)
      continue
    }
    if (arg.dynamic) return false
    const value = arg.value
    const long = isLongOption(value)
    const short = isShortCluster(value)
    if (long && (spec.forbiddenLong ?? []).some((option) => abbreviates(longName(value), option))) return false
    if (short && [...value.slice(1)].some((letter) => (spec.forbiddenShort ?? "").includes(letter))) return false
    // A value is only a value: it neither ends the options nor takes a value itself.
    if (wasValue) continue
    if (value === "--") endOfOptions = true
    else if (long) isValue = !value.includes("=") && (spec.longWithValue ?? []).includes(longName(value))
    else if (short) isValue = (spec.shortWithValue ?? "").includes(value[value.length - 1]!)
    else operands.push(arg)
  }
  return spec.operands === undefined ? true : spec.operands(operands)
}

const atMostOperands = (n: number) => (operands: ReadonlyArray<Word>) => operands.length <= n

/** Every word is a static option from `allowed` (flags only, no operands). */
const onlyFlags = (allowed: ReadonlyArray<string>): ArgumentCheck => (args) =>
  args.every((arg) => !arg.dynamic && allowed.includes(arg.value))

const printf: ArgumentCheck = (args) => {
  // `printf -v var` assigns a variable; options are only read before the format.
  const first = args[0]
  if (first === undefined) return true
  return !first.dynamic && !first.value.startsWith("-v")
}

const date = options({
  forbiddenLong: ["set"],
  forbiddenShort: "s",
  shortWithValue: "drf",
  longWithValue: ["date", "reference", "file"],
  // `date MMDDhhmm` sets the clock; only `+FORMAT` operands are read-only.
  operands: (operands) => operands.every((word) => !word.dynamic && word.value.startsWith("+"))
})

const env: ArgumentCheck = onlyFlags(["-0", "--null"])

const hostname = onlyFlags([
  "-f", "--fqdn", "--long", "-s", "--short", "-i", "--ip-address", "-I", "--all-ip-addresses",
  "-d", "--domain", "-A", "--all-fqdns", "-a", "--alias", "-y", "--yp", "--nis"
])

const sort = options({
  forbiddenLong: ["output", "compress-program"],
  forbiddenShort: "o",
  shortWithValue: "kStT",
  longWithValue: ["key", "buffer-size", "field-separator", "temporary-directory"]
})

// `uniq INPUT OUTPUT` writes OUTPUT.
const uniq = options({ shortWithValue: "fsw", operands: atMostOperands(1) })

// `tree -o file` writes; `-R` with `-H` writes an index into every directory.
const tree = options({ forbiddenShort: "oR", shortWithValue: "LPIH", operands: () => true })

// `file -C` compiles a magic file into the current directory.
const file = options({ forbiddenLong: ["compile"], forbiddenShort: "C" })

// `xxd INPUT OUTPUT` writes OUTPUT.
const xxd = options({ shortWithValue: "cglsno", operands: atMostOperands(1) })

const rg = options({
  forbiddenLong: ["pre", "pre-glob", "hostname-bin"],
  operands: () => true
})

const FIND_FORBIDDEN = new Set([
  "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"
])

// find's primaries look like short options, so every word must be static: a
// glob or expansion could become `-delete`.
const find: ArgumentCheck = (args) => args.every((arg) => !arg.dynamic && !FIND_FORBIDDEN.has(arg.value))

const commandBuiltin: ArgumentCheck = (args) => {
  // `command -v name` only looks names up; `command name` would run it.
  const first = args[0]
  if (first === undefined || first.dynamic || (first.value !== "-v" && first.value !== "-V")) return false
  return args.slice(1).every((arg) =>
    !arg.dynamic && (!arg.value.startsWith("-") || arg.value === "-v" || arg.value === "-V")
  )
}

const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/

// `read` assigns shell variables; lowercase names cannot clobber the exported
// environment (PATH, GIT_PAGER, LD_PRELOAD, …) that later commands inherit.
const read: ArgumentCheck = (args) => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    const value = arg.value
    if (["-r", "-s", "-e"].includes(value)) continue
    if (["-d", "-n", "-N", "-t", "-p", "-u"].includes(value)) {
      i++
      continue
    }
    if (value === "-a") {
      const name = args[++i]
      if (name === undefined || name.dynamic || !LOWERCASE_NAME.test(name.value)) return false
      continue
    }
    if (!LOWERCASE_NAME.test(value)) return false
  }
  return true
}

// --- sed -------------------------------------------------------------------

const SED_LONG: ReadonlyArray<string> = [
  "quiet", "silent", "regexp-extended", "separate", "null-data", "unbuffered", "posix", "debug", "sandbox",
  "expression", "line-length"
]
const SED_FORBIDDEN_LONG: ReadonlyArray<string> = ["in-place", "file", "follow-symlinks"]

const sed: ArgumentCheck = (args) => {
  let quiet = false
  const scripts: Array<string> = []
  const operands: Array<Word> = []
  let endOfOptions = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (endOfOptions) {
      operands.push(arg)
      continue
    }
    if (arg.dynamic) return false
    const value = arg.value
    if (value === "--") {
      endOfOptions = true
      continue
    }
    if (isLongOption(value)) {
      const name = longName(value)
      if (SED_FORBIDDEN_LONG.some((option) => abbreviates(name, option))) return false
      const matches = SED_LONG.filter((option) => abbreviates(name, option))
      if (matches.length !== 1) return false
      const option = matches[0]!
      if (option === "quiet" || option === "silent") quiet = true
      if (option === "expression" || option === "line-length") {
        const eq = value.indexOf("=")
        const optionValue = eq === -1 ? args[++i] : { value: value.slice(eq + 1), dynamic: false }
        if (optionValue === undefined || optionValue.dynamic) return false
        if (option === "expression") scripts.push(optionValue.value)
      }
      continue
    }
    if (isShortCluster(value)) {
      const letters = value.slice(1)
      for (let j = 0; j < letters.length; j++) {
        const letter = letters[j]!
        if (letter === "n") quiet = true
        else if ("Ersuz".includes(letter)) continue
        else if (letter === "e" || letter === "l") {
          const rest = letters.slice(j + 1)
          const optionValue = rest.length > 0 ? { value: rest, dynamic: false } : args[++i]
          if (optionValue === undefined || optionValue.dynamic) return false
          if (letter === "e") scripts.push(optionValue.value)
          break
        } else return false
      }
      continue
    }
    operands.push(arg)
  }
  if (scripts.length === 0) {
    const script = operands.shift()
    if (script === undefined || script.dynamic) return false
    scripts.push(script.value)
  }
  return quiet && scripts.every(isPrintingSedScript)
}

/**
 * Whether a sed script only selects and prints: addresses, `{}` blocks and the
 * commands `p P = l n N d D q Q h H g G x z F`, plus `s` and `y` without the
 * `w` (write) and `e` (execute) flags. Everything else — `w`, `W`, `r`, `R`,
 * `e`, `a`, `i`, `c`, labels, branches, comments — is refused.
 */
export const isPrintingSedScript = (script: string): boolean => {
  let i = 0
  let depth = 0
  const peek = () => script[i]
  const skip = (chars: string) => {
    while (i < script.length && chars.includes(script[i]!)) i++
  }
  // Read up to the next unescaped delimiter; false when it never comes.
  const delimited = (delimiter: string): boolean => {
    while (i < script.length) {
      const c = script[i]!
      if (c === "\\") {
        i += 2
        continue
      }
      if (c === "\n") return false
      i++
      if (c === delimiter) return true
    }
    return false
  }
  const regexAddress = (): boolean => {
    let delimiter = "/"
    if (peek() === "\\") {
      delimiter = script[i + 1] ?? ""
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false
      i += 2
    } else i++
    if (!delimited(delimiter)) return false
    skip("IM")
    return true
  }
  const address = (second: boolean): boolean | undefined => {
    const c = peek()
    if (c === undefined) return undefined
    if (/[0-9]/.test(c)) {
      skip("0123456789")
      if (peek() === "~") {
        i++
        skip("0123456789")
      }
      return true
    }
    if (c === "$") {
      i++
      return true
    }
    if (c === "/" || c === "\\") return regexAddress()
    if (second && (c === "+" || c === "~")) {
      i++
      skip("0123456789")
      return true
    }
    return undefined
  }
  const endOfCommand = (): boolean => {
    skip(" \t")
    const c = peek()
    return c === undefined || c === ";" || c === "\n" || c === "}"
  }
  while (true) {
    skip(" \t\n;")
    const c = peek()
    if (c === undefined) return depth === 0
    if (c === "}") {
      if (depth === 0) return false
      depth--
      i++
      continue
    }
    const first = address(false)
    if (first === false) return false
    if (first === true) {
      skip(" \t")
      if (peek() === ",") {
        i++
        skip(" \t")
        if (address(true) !== true) return false
      }
    }
    skip(" \t")
    if (peek() === "!") {
      i++
      skip(" \t")
    }
    const command = peek()
    if (command === undefined) return false
    i++
    if (command === "{") {
      depth++
      continue
    }
    if ("pP=nNdDhHgGxzF".includes(command)) {
      if (!endOfCommand()) return false
      continue
    }
    if (command === "l" || command === "q" || command === "Q") {
      skip(" \t")
      skip("0123456789")
      if (!endOfCommand()) return false
      continue
    }
    if (command === "s" || command === "y") {
      const delimiter = peek()
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return false
      i++
      if (!delimited(delimiter) || !delimited(delimiter)) return false
      if (command === "s") skip("gpiImM0123456789")
      if (!endOfCommand()) return false
      continue
    }
    return false
  }
}

// --- git -------------------------------------------------------------------

const GIT_GLOBAL_FLAGS: ReadonlyArray<string> = [
  "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
  "--icase-pathspecs", "--no-replace-objects"
]

// Options that write files, run external programs or open a pager, whatever
// the subcommand.
const GIT_FORBIDDEN_LONG: ReadonlyArray<string> = [
  "output", "ext-diff", "exec", "open-files-in-pager", "upload-pack", "receive-pack", "edit", "config"
]

const gitOptions = (extra: OptionSpec = {}): ArgumentCheck =>
  options({
    ...extra,
    forbiddenLong: [...GIT_FORBIDDEN_LONG, ...(extra.forbiddenLong ?? [])],
    operands: extra.operands ?? (() => true)
  })

const isCommitValue = (word: Word | undefined) => word !== undefined && !word.dynamic && !word.value.startsWith("-")

/**
 * `git branch`/`git tag` listing: flags from a list; names only in list mode.
 * (`git branch -l` meant `--create-reflog` before git 2.19, so only `--list`
 * turns list mode on for branches.)
 */
const gitListing = (
  listFlags: ReadonlyArray<string>,
  flags: ReadonlyArray<string>,
  valueFlags: ReadonlyArray<string>
): ArgumentCheck =>
(args) => {
  let listing = false
  let names = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    const value = arg.value
    const name = value.includes("=") ? value.slice(0, value.indexOf("=")) : value
    if (listFlags.includes(value)) listing = true
    else if (valueFlags.includes(name)) {
      // These options imply listing; a following commit is their value, but a
      // following option is an option (the value is optional).
      listing = true
      if (!value.includes("=") && isCommitValue(args[i + 1])) i++
    } else if (flags.includes(name) || /^-n[0-9]*$/.test(value) || /^-v+$/.test(value)) continue
    else if (value.startsWith("-")) return false
    else names++
  }
  return names === 0 || listing
}

const gitBranch = gitListing(
  ["--list"],
  [
    "-l",
    "-a", "--all", "-r", "--remotes", "--verbose", "--show-current", "--color", "--no-color", "--column",
    "--no-column", "-i", "--ignore-case", "--abbrev", "--no-abbrev", "--omit-empty"
  ],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"]
)

const gitTag = gitListing(
  ["-l", "--list"],
  ["--column", "--no-column", "-i", "--ignore-case", "--color", "--no-color", "--omit-empty"],
  ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"]
)

const gitRemote: ArgumentCheck = (args) => {
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

const gitConfig: ArgumentCheck = (args) => {
  if (args.some((arg) => arg.dynamic)) return false
  const values = args.map((arg) => arg.value)
  const modes = ["--get", "--get-all", "--get-regexp", "--list", "-l"]
  const flags = [
    "--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope", "--name-only", "-z", "--null",
    "--includes", "--no-includes", "--type=bool", "--type=int", "--type=path", "--bool", "--int", "--path"
  ]
  if (!values.some((value) => modes.includes(value))) return false
  return values.every((value) => modes.includes(value) || flags.includes(value) || !value.startsWith("-"))
}

const firstIs = (allowed: ReadonlyArray<string>, then: ArgumentCheck): ArgumentCheck => (args) => {
  const first = args[0]
  if (first === undefined) return true
  return !first.dynamic && allowed.includes(first.value) && then(args.slice(1))
}

const GIT_SUBCOMMANDS: Readonly<Record<string, ArgumentCheck>> = {
  status: gitOptions(),
  log: gitOptions(),
  show: gitOptions(),
  diff: gitOptions(),
  shortlog: gitOptions(),
  whatchanged: gitOptions(),
  blame: gitOptions(),
  annotate: gitOptions(),
  "rev-parse": gitOptions(),
  "rev-list": gitOptions(),
  "ls-files": gitOptions(),
  "ls-tree": gitOptions(),
  "cat-file": gitOptions(),
  describe: gitOptions(),
  "merge-base": gitOptions(),
  "show-ref": gitOptions(),
  "name-rev": gitOptions(),
  "for-each-ref": gitOptions(),
  grep: gitOptions({ forbiddenShort: "O" }),
  branch: gitBranch,
  tag: gitTag,
  remote: gitRemote,
  config: gitConfig,
  stash: (args) => args.length > 0 && firstIs(["list", "show"], gitOptions())(args),
  reflog: firstIs(["show"], gitOptions())
}

const git: ArgumentCheck = (args) => {
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    if (!arg.value.startsWith("-")) break
    if (arg.value === "--version") return args.length === 1
    if (!GIT_GLOBAL_FLAGS.includes(arg.value)) return false
  }
  const subcommand = args[i]
  if (subcommand === undefined) return false
  const check = GIT_SUBCOMMANDS[subcommand.value]
  return check !== undefined && Object.hasOwn(GIT_SUBCOMMANDS, subcommand.value) && check(args.slice(i + 1))
}

// --- xargs -----------------------------------------------------------------

const XARGS_FLAGS = ["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit"]
const XARGS_VALUE_SHORT = "nLPsd"
const XARGS_VALUE_LONG = ["--max-args", "--max-lines", "--max-procs", "--max-chars", "--delimiter"]

/** The input words xargs appends, unknown by nature. */
const UNKNOWN_WORD: Word = { value: "", dynamic: true }

const xargs: ArgumentCheck = (args) => {
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]!
    if (arg.dynamic) return false
    const value = arg.value
    if (!value.startsWith("-")) break
    if (value === "--") {
      i++
      break
    }
    if (XARGS_FLAGS.includes(value)) continue
    const long = XARGS_VALUE_LONG.find((option) => value === option || value.startsWith(`${option}=`))
    if (long !== undefined) {
      if (value === long) i++
      continue
    }
    if (value.length >= 2 && XARGS_VALUE_SHORT.includes(value[1]!) && !value.startsWith("--")) {
      if (value.length === 2) i++
      continue
    }
    return false
  }
  const command = args[i]
  // Without a command xargs runs `echo`.
  if (command === undefined) return true
  if (command.dynamic) return false
  return isReadOnlyInvocation(command.value, [...args.slice(i + 1), UNKNOWN_WORD])
}

// --- the table -------------------------------------------------------------

const ANY_ARGUMENTS: ReadonlyArray<string> = [
  "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "stat", "which", "whereis", "type",
  "whoami", "id", "groups", "uname", "sleep", "true", "false", ":", "basename", "dirname", "realpath", "readlink",
  "du", "df", "cut", "tr", "diff", "cmp", "comm", "jq", "test", "[", "seq", "nproc", "free", "uptime", "ps",
  "pgrep", "tac", "nl", "od", "hexdump", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum",
  "b2sum", "cksum", "base64", "column", "fold", "expand", "unexpand", "rev", "paste", "join", "strings", "tty",
  "locale", "arch", "printenv", "cd", "expr", "getconf", "lsb_release", "fmt", "numfmt", "look"
]

const TABLE: ReadonlyMap<string, ArgumentCheck> = new Map<string, ArgumentCheck>([
  ...ANY_ARGUMENTS.map((name): [string, ArgumentCheck] => [name, anyArguments]),
  ["printf", printf],
  ["date", date],
  ["env", env],
  ["hostname", hostname],
  ["sort", sort],
  ["uniq", uniq],
  ["tree", tree],
  ["file", file],
  ["xxd", xxd],
  ["rg", rg],
  ["find", find],
  ["sed", sed],
  ["git", git],
  ["xargs", xargs],
  ["command", commandBuiltin],
  ["read", read]
])

/**
 * The names on the read-only list (each still subject to its argument check).
 */
export const readOnlyCommandNames: ReadonlyArray<string> = [...TABLE.keys()]

/**
 * Whether running `name` with these arguments cannot change anything. Only
 * bare, static names are looked up.
 */
export const isReadOnlyInvocation = (name: string, args: ReadonlyArray<Word>): boolean => {
  if (name.includes("/")) return false
  const check = TABLE.get(name)
  return check !== undefined && check(args)
}
