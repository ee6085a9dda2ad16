/**
 * Rendering the command table as help text (`CommandLine.help`).
 *
 * @internal
 */
import type { CommandSpec, OptionSpec } from "../CommandLine.js"

const flagText = (option: OptionSpec): string => {
  const short = (option.aliases ?? []).filter((a) => a.length === 1).map((a) => `-${a}, `).join("")
  const value = option.value === undefined ? "" : option.valueOptional ? ` [${option.value}]` : ` ${option.value}`
  return `${short}--${option.name}${value}`
}

const optionHelp = (option: OptionSpec): string => {
  const notes = [
    option.choices === undefined ? undefined : `one of: ${option.choices.join(", ")}`,
    option.default === undefined ? undefined : `default: ${option.default}`,
    option.variadic ? "one or more, up to the next option" : option.repeatable ? "repeatable" : undefined,
    // Kept on one line: "also" and the spelling it names.
    ...(option.aliases ?? []).filter((a) => a.length > 1).map((a) => `also\u00a0--${a}`)
  ].filter((n): n is string => n !== undefined)
  return notes.length === 0 ? option.description : `${option.description} (${notes.join("; ")})`
}

const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let current = ""
  for (const word of text.split(" ")) {
    if (current !== "" && current.length + 1 + word.length > width) {
      lines.push(current)
      current = word
    } else {
      current = current === "" ? word : `${current} ${word}`
    }
  }
  if (current !== "") lines.push(current)
  return lines
}

const table = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const left = Math.min(34, Math.max(...rows.map(([l]) => l.length)) + 2)
  return rows.flatMap(([l, r]) => {
    const text = wrap(r, 110 - left - 2).map((t) => t.replace(/\u00a0/g, " "))
    const first = l.length + 2 > left ? [`  ${l}`, ...text.map((t) => `  ${" ".repeat(left)}${t}`)] : [
      `  ${l.padEnd(left)}${text[0] ?? ""}`,
      ...text.slice(1).map((t) => `  ${" ".repeat(left)}${t}`)
    ]
    return first
  })
}

export const usageLine = (command: CommandSpec): string => {
  const args = command.args.map((a) => {
    const name = a.variadic ? `${a.name}...` : a.name
    return a.optional ? `[${name}]` : name
  }).join(" ")
  const options = command.options.length > 0 ? " [options]" : ""
  return `switchyard ${command.path.join(" ")}${options}${args === "" ? "" : ` ${args}`}`
}

/** The help text of a command (`[]` for `switchyard` itself), from the table. */
export const render = (
  path: ReadonlyArray<string>,
  commands: ReadonlyArray<CommandSpec>,
  builtIns: ReadonlyArray<OptionSpec>
): string => {
  const findCommand = (p: ReadonlyArray<string>) =>
    commands.find((c) => c.path.length === p.length && c.path.every((x, i) => x === p[i]))
  if (path.length === 0) return rootHelp(commands, builtIns)
  const command = findCommand(path)
  if (command === undefined) return rootHelp(commands, builtIns)
  const subcommands = commands.filter((c) => c.path.length === path.length + 1 && path.every((p, i) => c.path[i] === p))
  const lines = [
    `Usage: ${command.group ? `switchyard ${path.join(" ")} COMMAND` : usageLine(command)}`,
    "",
    command.summary + ".",
    ...(command.details ?? []),
    ""
  ]
  if (subcommands.length > 0) {
    lines.push("Commands:", ...table(subcommands.map((s) => [usageLine(s).replace(/^switchyard /, ""), s.summary])), "")
  }
  if (command.args.length > 0) {
    lines.push(
      "Arguments:",
      ...table(command.args.map((a) => [a.name, `${a.description}${a.optional ? " (optional)" : " (required)"}`])),
      ""
    )
  }
  lines.push("Options:", ...table([...command.options, builtIns[0]!].map((o) => [flagText(o), optionHelp(o)])))
  return `${lines.join("\n")}\n`
}

const rootHelp = (commands: ReadonlyArray<CommandSpec>, builtIns: ReadonlyArray<OptionSpec>): string => {
  const run = commands.find((c) => c.path.length === 1 && c.path[0] === "run")!
  const lines = [
    "Usage: switchyard [options] [PROMPT]        (the same as switchyard run)",
    "       switchyard COMMAND [options] …",
    "",
    "Switchyard: an Effect-based tool-dispatch runtime for LLM agents, with Claude Code's tools, permissions and",
    "hooks. `switchyard` in a terminal opens an interactive session; `switchyard -p PROMPT` runs once.",
    "",
    "Commands:",
    ...table(commands.filter((c) => !c.group).map((c) => [usageLine(c).replace(/^switchyard /, ""), c.summary])),
    "",
    "Options of run (see `switchyard run --help`):",
    ...table(run.options.map((o) => [flagText(o), optionHelp(o)])),
    "",
    "Other options:",
    ...table(builtIns.map((o) => [flagText(o), optionHelp(o)]))
  ]
  return `${lines.join("\n")}\n`
}
