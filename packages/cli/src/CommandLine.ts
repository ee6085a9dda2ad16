/**
 * The command line as data: every command, argument and option of
 * `switchyard` with its description (the table itself is
 * internal/commandTable.ts). From this one table come the help text
 * (`help(path)`, callable without running anything or loading `@effect/cli`),
 * the check of an argv before `@effect/cli` parses it (one-line usage errors
 * with a "did you mean"), and the argv normalisation (options anywhere, the
 * implicit `run`).
 *
 * A command added to `main.ts` is added to the table too: `main.ts` takes its option
 * descriptions from this table (`describeOption`), which throws for an option
 * the table does not know.
 *
 * @since 0.1.0
 */
import * as EditDistance from "@switchyard/core/EditDistance"
import * as HelpText from "./internal/helpText.js"
import { isSessionIdLike } from "./internal/printArguments.js"
import * as CommandTable from "./internal/commandTable.js"

/**
 * What a shell completes for a value (besides `choices`): file or directory
 * names, Claude model names, the names of the tools, or the ids of the
 * sessions recorded in the current directory.
 *
 * @since 0.1.0
 * @category models
 */
export type ValueCompletion = "files" | "directories" | "models" | "tools" | "sessions"

/**
 * @since 0.1.0
 * @category models
 */
export interface OptionSpec {
  /** Without the dashes: `output-format`. */
  readonly name: string
  /** One letter (`p`) or another long spelling (`allowedTools`). */
  readonly aliases?: ReadonlyArray<string>
  /** What the value is called in help; absent for a flag. */
  readonly value?: string
  /** The value may be left out (`--resume` with or without an id). */
  readonly valueOptional?: boolean
  readonly choices?: ReadonlyArray<string>
  readonly integer?: "positive"
  /** A positive decimal number (`--max-budget-usd 0.50`). */
  readonly decimal?: "positive"
  readonly repeatable?: boolean
  /**
   * Takes one or more values, as Claude Code's `--allowedTools A B` does: the
   * words after it up to the next option (or `--`) are its values, so a
   * prompt goes before it. Implies `repeatable`.
   */
  readonly variadic?: boolean
  /** The value may be the empty string (`--tools ""`: no built-in tools). */
  readonly allowEmpty?: boolean
  readonly description: string
  readonly default?: string
  readonly complete?: ValueCompletion
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ArgSpec {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  /** The last argument may take every remaining word (`ARGS...`). */
  readonly variadic?: boolean
  readonly choices?: ReadonlyArray<string>
  readonly complete?: ValueCompletion
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CommandSpec {
  /** `["tools", "schema"]`. */
  readonly path: ReadonlyArray<string>
  readonly summary: string
  /** More lines for the command's own help. */
  readonly details?: ReadonlyArray<string>
  readonly args: ReadonlyArray<ArgSpec>
  readonly options: ReadonlyArray<OptionSpec>
  /** A group of subcommands (`tools`) has no action of its own. */
  readonly group?: boolean
}

/**
 * The shells `switchyard completions` writes a script for (`sh` gets the bash one).
 *
 * @since 0.1.0
 * @category constants
 */
export const completionShells = CommandTable.completionShells

/**
 * Every command.
 *
 * @since 0.1.0
 * @category constants
 */
export const commands: ReadonlyArray<CommandSpec> = CommandTable.commands

const builtIns = CommandTable.builtIns

/**
 * The command at a path.
 *
 * @since 0.1.0
 * @category getters
 */
export const findCommand = (path: ReadonlyArray<string>): CommandSpec | undefined =>
  commands.find((c) => c.path.length === path.length && c.path.every((p, i) => p === path[i]))

/**
 * The spec of a command's option; throws when the table lacks it (a
 * programming error, caught by every test that starts the CLI).
 *
 * @since 0.1.0
 * @category getters
 */
export const optionSpec = (path: ReadonlyArray<string>, name: string): OptionSpec => {
  const found = findCommand(path)?.options.find((o) => o.name === name)
  if (found === undefined) throw new Error(`CommandLine: no option --${name} for \`switchyard ${path.join(" ")}\``)
  return found
}

/**
 * An option's description as `@effect/cli` shows it (with the default).
 *
 * @since 0.1.0
 * @category getters
 */
export const describeOption = (path: ReadonlyArray<string>, name: string): string => {
  const spec = optionSpec(path, name)
  return spec.default === undefined ? spec.description : `${spec.description} (default: ${spec.default})`
}

// -----------------------------------------------------------------------------
// help
// -----------------------------------------------------------------------------

/**
 * The help text of a command (`[]` for `switchyard` itself).
 *
 * @since 0.1.0
 * @category help
 */
export const help = (path: ReadonlyArray<string>): string => HelpText.render(path, commands, builtIns)

// -----------------------------------------------------------------------------
// checking and normalising argv
// -----------------------------------------------------------------------------

const closest = (word: string, candidates: ReadonlyArray<string>, max = 2): string | undefined => {
  let best: string | undefined
  let bestDistance = max + 1
  for (const candidate of candidates) {
    const d = EditDistance.levenshtein(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/**
 * What to do with an argv.
 *
 * @since 0.1.0
 * @category models
 */
export type Parsed =
  | { readonly _tag: "Help"; readonly text: string }
  | { readonly _tag: "Version" }
  /** A usage error: the one line to print after `switchyard: `. */
  | { readonly _tag: "UsageError"; readonly message: string }
  /** Print the completion script of a shell. */
  | { readonly _tag: "Completions"; readonly shell: (typeof completionShells)[number] }
  /** Hand to `@effect/cli`: the command path first, then options, then arguments. */
  | { readonly _tag: "Run"; readonly argv: ReadonlyArray<string> }

const topLevel = commands.filter((c) => c.path.length === 1).map((c) => c.path[0]!)

const allOptionNames = (command: CommandSpec): ReadonlyArray<string> =>
  [...command.options, ...builtIns].flatMap((o) => [o.name, ...(o.aliases ?? []).filter((a) => a.length > 1)])

const findOption = (command: CommandSpec, token: string): OptionSpec | undefined => {
  const all = [...command.options, ...builtIns]
  if (/^-[A-Za-z]$/.test(token)) return all.find((o) => (o.aliases ?? []).includes(token.slice(1)))
  const name = token.slice(2)
  return all.find((o) => o.name === name || (o.aliases ?? []).includes(name))
}

const unknownOption = (command: CommandSpec, token: string): string => {
  const where = `switchyard ${command.path.join(" ")}`
  const name = token.replace(/^-+/, "")
  const suggestion = token.startsWith("--") ? closest(name, allOptionNames(command)) : undefined
  const elsewhere = suggestion === undefined
    ? commands.find((c) => c.options.some((o) => o.name === name))
    : undefined
  const hint = command.path.join(" ") === "mcp add" && suggestion === undefined
    ? "options come before NAME; put -- before the server's command (switchyard mcp add NAME -- COMMAND ARGS…)"
    : suggestion !== undefined
    ? `did you mean --${suggestion}?`
    : elsewhere !== undefined
    ? `it is an option of \`switchyard ${elsewhere.path.join(" ")}\``
    : `see \`${where} --help\``
  return `unknown option ${token} for \`${where}\`; ${hint}`
}

const checkValue = (command: CommandSpec, option: OptionSpec, flag: string, value: string): string | undefined => {
  if (option.choices !== undefined && !option.choices.includes(value)) {
    const suggestion = closest(value, option.choices)
    return `${flag} must be one of ${option.choices.join(", ")}, not '${value}'` +
      (suggestion === undefined ? "" : `; did you mean ${suggestion}?`)
  }
  if (option.integer === "positive" && !/^[1-9]\d*$/.test(value)) {
    return `${flag} needs a whole number of at least 1, not '${value}' (e.g. ${flag} 10)`
  }
  if (option.decimal === "positive" && !(/^\d*\.?\d+$/.test(value) && Number(value) > 0)) {
    return `${flag} needs a positive number, not '${value}' (e.g. ${flag} 0.50)`
  }
  if (value === "" && !option.valueOptional && !option.allowEmpty) {
    return `${flag} needs a value (${option.value ?? "a value"}); see \`switchyard ${command.path.join(" ")} --help\``
  }
  return undefined
}

/**
 * Check an argv (`[node, script, ...args]`) against the table and put it in
 * the order `@effect/cli` wants, or say what is wrong in one line.
 *
 * - No command word: `run` (so `switchyard "prompt"` and bare `switchyard` work).
 * - A first bare word close to a command (edit distance 1, or 2 for a
 *   command of five letters or more) is a misspelt command, not a prompt,
 *   with or without arguments after it (`switchyard dispach calls.json`).
 * - A variadic option (`--allowedTools A B`) takes the words after it up to
 *   the next option or `--`, as Claude Code's parser does.
 * - `--resume` without a value becomes `--resume ""` (pick a session).
 * - `-v` is `--version`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (argv: ReadonlyArray<string>): Parsed => {
  const [node = "node", script = "switchyard", ...rest] = argv
  const beforeDashes = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest
  if (beforeDashes.includes("--version") || beforeDashes.includes("-v")) return { _tag: "Version" }
  if (rest[0] === "--completions") {
    const shell = rest[1]
    const spec = builtIns.find((b) => b.name === "completions")!
    if (shell === undefined || !spec.choices!.includes(shell)) {
      return { _tag: "UsageError", message: `--completions needs a shell: ${spec.choices!.join(", ")}` }
    }
    return { _tag: "Completions", shell: shell as (typeof completionShells)[number] }
  }
  const path: Array<string> = []
  let i = 0
  const first = rest[0]
  const implicitRun = first === undefined || !topLevel.includes(first)
  if (first !== undefined && topLevel.includes(first)) {
    path.push(first)
    i = 1
    const subcommands = commands.filter((c) => c.path.length === 2 && c.path[0] === first).map((c) => c.path[1]!)
    if (subcommands.length > 0) {
      const next = rest[1]
      if (next === undefined || next === "--help" || next === "-h") return { _tag: "Help", text: help(path) }
      if (!subcommands.includes(next)) {
        const suggestion = next.startsWith("-") ? undefined : closest(next, subcommands)
        return {
          _tag: "UsageError",
          message: next.startsWith("-")
            ? `\`switchyard ${first}\` needs a command first: ${subcommands.join(", ")} (e.g. switchyard ${first} ${
              subcommands[0]
            } ${next})`
            : `unknown command \`${first} ${next}\`; ${
              suggestion === undefined
                ? `the commands are ${subcommands.join(", ")}`
                : `did you mean \`${first} ${suggestion}\`?`
            }`
        }
      }
      path.push(next)
      i = 2
    }
  } else {
    path.push("run")
    const suggestion = first === undefined ? undefined : misspeltCommand(first)
    if (first !== undefined && suggestion !== undefined) {
      const words = rest.filter((t) => !t.startsWith("-"))
      const prompt = words.length === 1 ? first : `"${words.join(" ")}"`
      return {
        _tag: "UsageError",
        message: `unknown command \`${first}\`; did you mean \`${suggestion}\`? ` +
          `(to send ${words.length === 1 ? `"${first}"` : "the words"} to the model, use \`switchyard run ${prompt}\`)`
      }
    }
  }
  const command = findCommand(path)!
  const options: Array<string> = []
  const positionals: Array<string> = []
  for (; i < rest.length; i++) {
    const token = rest[i]!
    if (token === "--") {
      positionals.push(...rest.slice(i + 1))
      break
    }
    if (!token.startsWith("-") || token === "-") {
      positionals.push(token)
      continue
    }
    if (token === "--help" || token === "-h") return { _tag: "Help", text: help(implicitRun ? [] : path) }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1
    const flag = eq === -1 ? token : token.slice(0, eq)
    const option = findOption(command, flag)
    if (option === undefined || option.name === "version" || option.name === "completions") {
      return { _tag: "UsageError", message: unknownOption(command, flag) }
    }
    const canonical = `--${option.name}`
    if (option.value === undefined) {
      if (eq !== -1) return { _tag: "UsageError", message: `${flag} takes no value (got '${token.slice(eq + 1)}')` }
      if (options.includes(canonical)) continue
      options.push(canonical)
      continue
    }
    let value: string
    if (eq !== -1) {
      value = token.slice(eq + 1)
    } else if (option.valueOptional) {
      const next = rest[i + 1]
      value = next !== undefined && !next.startsWith("-") && isSessionIdLike(next) ? rest[++i]! : ""
    } else {
      const next = rest[i + 1]
      if (next === undefined || (next.startsWith("-") && next !== "-" && !/^-\d/.test(next))) {
        return {
          _tag: "UsageError",
          message: `${flag} needs a value (${option.value})` +
            (option.choices === undefined ? "" : `: one of ${option.choices.join(", ")}`)
        }
      }
      value = rest[++i]!
    }
    const values = [value]
    // A variadic option takes the words after it, up to the next option (Claude Code's `<tools...>`).
    while (option.variadic && eq === -1 && i + 1 < rest.length && !rest[i + 1]!.startsWith("-")) values.push(rest[++i]!)
    for (const each of values) {
      const problem = checkValue(command, option, flag, each)
      if (problem !== undefined) return { _tag: "UsageError", message: problem }
      if (!option.repeatable && options.includes(canonical)) {
        return { _tag: "UsageError", message: `${canonical} is given twice; it takes one value` }
      }
      // `@effect/cli` drops an empty value; an empty list is spelt as a lone separator.
      options.push(canonical, each === "" && option.allowEmpty ? "," : each)
    }
  }
  const maxArgs = command.args.at(-1)?.variadic ? Infinity : command.args.length
  const required = command.args.filter((a) => !a.optional)
  if (path[0] === "run" && positionals.length > 1) {
    // A prompt split by the shell: Claude Code takes the words as one prompt too.
    positionals.splice(0, positionals.length, positionals.join(" "))
  }
  if (positionals.length > maxArgs) {
    return {
      _tag: "UsageError",
      message: `unexpected argument '${positionals[maxArgs]}' for \`switchyard ${path.join(" ")}\`` +
        (maxArgs === 0 ? " (it takes none)" : ` (it takes ${command.args.map((a) => a.name).join(" ")})`)
    }
  }
  if (positionals.length < required.length) {
    const missing = required[positionals.length]!
    return {
      _tag: "UsageError",
      message: `\`switchyard ${path.join(" ")}\` needs ${missing.name}: ${missing.description.toLowerCase()} (usage: ${
        HelpText.usageLine(command)
      })`
    }
  }
  for (const [index, arg] of command.args.entries()) {
    const value = positionals[index]
    if (value === undefined || arg.choices === undefined || arg.choices.includes(value)) continue
    const suggestion = closest(value, arg.choices)
    return {
      _tag: "UsageError",
      message:
        `${arg.name} of \`switchyard ${path.join(" ")}\` must be one of ${arg.choices.join(", ")}, not '${value}'` +
        (suggestion === undefined ? "" : `; did you mean ${suggestion}?`)
    }
  }
  if (path[0] === "completions") {
    return { _tag: "Completions", shell: positionals[0] as (typeof completionShells)[number] }
  }
  return {
    _tag: "Run",
    argv: [node, script, ...path, ...options, ...(positionals.length > 0 ? ["--", ...positionals] : [])]
  }
}

/**
 * The command a first word misspells, if any: a bare word (letters, digits,
 * `-`) within edit distance 1 of a command, or 2 of a command of five
 * letters or more.
 */
const misspeltCommand = (word: string): string | undefined => {
  if (!/^[A-Za-z][\w-]*$/.test(word) || topLevel.includes(word)) return undefined
  const suggestion = closest(word, topLevel)
  if (suggestion === undefined) return undefined
  const distance = EditDistance.levenshtein(word.toLowerCase(), suggestion.toLowerCase())
  return distance <= (suggestion.length >= 5 ? 2 : 1) ? suggestion : undefined
}

/** A session id as `--resume` takes it: no spaces, at most 100 characters. */
