/**
 * The `switchyard mcp …` commands of the command table (Claude Code's `claude
 * mcp`): list, get, add, add-json, remove, reset-project-choices.
 *
 * @internal
 */
import type * as CommandLine from "../CommandLine.js"

const mcpScope = (description: string, withDefault = true): CommandLine.OptionSpec => ({
  name: "scope",
  aliases: ["s"],
  value: "SCOPE",
  choices: ["local", "project", "user"],
  description,
  ...(withDefault ? { default: "local" } : {})
})

const mcpCwd: CommandLine.OptionSpec = {
  name: "cwd",
  value: "DIR",
  description: "The project directory",
  default: "the current directory",
  complete: "directories"
}

/** The `mcp` group and its commands; `engineOptions` are the options every engine command takes. */
export const commands = (
  engineOptions: ReadonlyArray<CommandLine.OptionSpec>
): ReadonlyArray<CommandLine.CommandSpec> => [
  {
    path: ["mcp"],
    summary: "MCP servers: list, inspect, add and remove them (Claude Code's `claude mcp`)",
    args: [],
    options: [],
    group: true
  },
  {
    path: ["mcp", "list"],
    summary: "List the configured MCP servers with their scope: connected or failed (and why), with their tool count",
    details: [
      "A project's .mcp.json servers start only once you approve them; one that is not approved is listed and not",
      "started."
    ],
    args: [],
    options: [{ name: "json", description: "Print JSON" }, ...engineOptions]
  },
  {
    path: ["mcp", "get"],
    summary: "Show one MCP server: its scope, status, transport and command line or URL",
    args: [{ name: "NAME", description: "The server's name", optional: false }],
    options: [{ name: "json", description: "Print JSON" }, ...engineOptions]
  },
  {
    path: ["mcp", "add"],
    summary: "Add an MCP server: `mcp add NAME -- COMMAND ARGS…` (stdio) or `mcp add --transport http NAME URL`",
    details: [
      "Options come before NAME; put -- before a command whose arguments start with a dash.",
      "Scopes: local (the default: this project, only you), project (.mcp.json, shared with the project), user",
      "(all your projects). local and user are stored in $SWITCHYARD_HOME/.switchyard.json",
      "(~/.switchyard/.switchyard.json)."
    ],
    args: [
      { name: "NAME", description: "The server's name (letters, digits, - and _)", optional: false },
      {
        name: "COMMAND_OR_URL",
        description: "The command to run (stdio) or the server's URL (http, sse)",
        optional: false
      },
      { name: "ARGS", description: "The command's arguments", optional: true, variadic: true }
    ],
    options: [
      mcpScope("Where to store it"),
      {
        name: "transport",
        aliases: ["t"],
        value: "TRANSPORT",
        choices: ["stdio", "http", "sse"],
        description: "How to reach the server",
        default: "stdio, or http for a URL"
      },
      {
        name: "env",
        aliases: ["e"],
        value: "KEY=VALUE",
        repeatable: true,
        description: "An environment variable of the server's process (stdio)"
      },
      {
        name: "header",
        aliases: ["H"],
        value: "\"NAME: VALUE\"",
        repeatable: true,
        description: "A header sent with every request (http, sse), e.g. \"Authorization: Bearer TOKEN\""
      },
      mcpCwd
    ]
  },
  {
    path: ["mcp", "add-json"],
    summary: "Add an MCP server given as JSON, as in .mcp.json: `mcp add-json NAME '{\"type\":\"http\",\"url\":…}'`",
    args: [
      { name: "NAME", description: "The server's name (letters, digits, - and _)", optional: false },
      { name: "JSON", description: "The server's entry", optional: false }
    ],
    options: [mcpScope("Where to store it"), mcpCwd]
  },
  {
    path: ["mcp", "remove"],
    summary: "Remove an MCP server",
    args: [{ name: "NAME", description: "The server's name", optional: false }],
    options: [mcpScope("The scope to remove it from (needed when the name is in several)", false), mcpCwd]
  },
  {
    path: ["mcp", "reset-project-choices"],
    summary: "Forget the approvals and rejections of this project's .mcp.json servers (you are asked again)",
    args: [],
    options: [mcpCwd]
  }
]
