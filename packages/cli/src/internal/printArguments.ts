/**
 * The `-p PROMPT …` command lines the front runs without the command-line
 * parser: `-p` (or `--print`) and the prompt first, then the options scripts
 * pass with it most (`--output-format json`, `--model`, `--allowed-tools`,
 * `--resume`, …), each spelled `--name value` or alone for a flag, each
 * single-valued one at most once, and every value one the full parser takes
 * as it is. Anything else (another option, `--name=value`, a value starting
 * with `-`, a choice the parser would refuse) is left to the parser, which
 * says what is wrong. Depends on nothing, so the front can import it.
 * test/front.test.ts runs generated lines both ways and compares.
 *
 * @internal
 */

/** What the accepted line says, in the parser's terms (main.ts's `run` options). */
export interface PrintArguments {
  readonly prompt: string
  readonly values: Readonly<Record<ValueOption, string | undefined>>
  readonly lists: Readonly<Record<ListOption, ReadonlyArray<string>>>
  readonly flags: Readonly<Record<FlagOption, boolean>>
}

/** Options with one value, under their long names. */
export type ValueOption =
  | "output-format"
  | "model"
  | "permission-mode"
  | "cwd"
  | "max-turns"
  | "system-prompt"
  | "append-system-prompt"
  | "resume"
  | "session-id"
  | "fallback-model"

/** Options that may be repeated, under their long names. */
export type ListOption = "allowed-tools" | "disallowed-tools" | "mcp-config" | "settings" | "add-dir"

/** Flags, under their long names. */
export type FlagOption = "verbose" | "strict-mcp-config" | "continue" | "dangerously-skip-permissions"

const valueOptions: ReadonlyArray<ValueOption> = [
  "output-format",
  "model",
  "permission-mode",
  "cwd",
  "max-turns",
  "system-prompt",
  "append-system-prompt",
  "resume",
  "session-id",
  "fallback-model"
]
const listOptions: ReadonlyArray<ListOption> = [
  "allowed-tools",
  "disallowed-tools",
  "mcp-config",
  "settings",
  "add-dir"
]
const flagOptions: ReadonlyArray<FlagOption> = [
  "verbose",
  "strict-mcp-config",
  "continue",
  "dangerously-skip-permissions"
]

/** The parser's other spellings (main.ts's aliases). */
const aliases: Readonly<Record<string, string>> = {
  "--allowedTools": "--allowed-tools",
  "--disallowedTools": "--disallowed-tools"
}

/**
 * A word `--resume` takes as its value; after `--resume` any other word is the prompt's, and the option picks a
 * session (CommandLine.ts reads the line so, with this test).
 */
export const isSessionIdLike = (token: string): boolean => /^[\w.-]{1,100}$/.test(token)

/** Values the parser would refuse or read otherwise (CommandLine.ts's `checkValue`) are left to it. */
const valid: Partial<Record<ValueOption, (value: string) => boolean>> = {
  "output-format": (value) => value === "text" || value === "json" || value === "stream-json",
  "permission-mode": (value) =>
    ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"].includes(value),
  "max-turns": (value) => /^[1-9][0-9]{0,8}$/.test(value),
  resume: isSessionIdLike
}

const isValue = (word: string | undefined): word is string => word !== undefined && word !== "" && !word.startsWith("-")

const member = <A extends string>(names: ReadonlyArray<A>, name: string): name is A =>
  (names as ReadonlyArray<string>).includes(name)

const record = <A extends string, V>(names: ReadonlyArray<A>, value: () => V): Record<A, V> =>
  Object.fromEntries(names.map((name) => [name, value()])) as Record<A, V>

/** The line as the front may run it, or undefined for the parser. */
export const parse = (args: ReadonlyArray<string>): PrintArguments | undefined => {
  const [first, prompt] = args
  if ((first !== "-p" && first !== "--print") || !isValue(prompt)) return undefined
  const values = record<ValueOption, string | undefined>(valueOptions, () => undefined)
  const lists = record<ListOption, Array<string>>(listOptions, () => [])
  const flags = record<FlagOption, boolean>(flagOptions, () => false)
  for (let i = 2; i < args.length; i++) {
    const word = args[i]!
    if (!word.startsWith("--")) return undefined
    const name = (aliases[word] ?? word).slice(2)
    if (member(flagOptions, name)) {
      if (flags[name]) return undefined
      flags[name] = true
      continue
    }
    const value = args[i + 1]
    if (!isValue(value)) return undefined
    i++
    if (member(listOptions, name)) {
      lists[name].push(value)
    } else if (member(valueOptions, name)) {
      if (values[name] !== undefined || valid[name]?.(value) === false) return undefined
      values[name] = value
    } else {
      return undefined
    }
  }
  return { prompt, values, lists, flags }
}
