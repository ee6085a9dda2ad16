/**
 * The command table behind CommandLine.ts: every command of `switchyard` with
 * its arguments, options and descriptions, as data.
 *
 * @internal
 */
import type * as CommandLine from "../CommandLine.js"
import * as McpCommandLine from "./mcpCommandLine.js"

const permissionModes = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"] as const
const outputFormats = ["text", "json", "stream-json"] as const

/** The shells `switchyard completions` writes a script for (`sh` gets the bash one). */
export const completionShells = ["bash", "zsh", "fish", "sh"] as const

const engineOptions: ReadonlyArray<CommandLine.OptionSpec> = [
  {
    name: "cwd",
    value: "DIR",
    description: "The working directory",
    default: "the current directory",
    complete: "directories"
  },
  {
    name: "settings",
    value: "FILE",
    repeatable: true,
    description: "An extra settings file in Claude Code's settings.json format, read after the others",
    complete: "files"
  },
  {
    name: "permission-mode",
    value: "MODE",
    choices: permissionModes,
    description: "How calls are approved",
    default: "the settings' defaultMode, else default"
  },
  {
    name: "allowed-tools",
    aliases: ["allowedTools"],
    value: "RULES",
    repeatable: true,
    variadic: true,
    description: "Permission rules to allow, e.g. \"Bash(git log *)\" Edit (commas also separate them)"
  },
  {
    name: "disallowed-tools",
    aliases: ["disallowedTools"],
    value: "RULES",
    repeatable: true,
    variadic: true,
    description: "Permission rules to deny (commas also separate them); a deny rule wins over every allow rule"
  },
  {
    name: "add-dir",
    value: "DIR",
    repeatable: true,
    variadic: true,
    description: "More directories the tools may work in, besides the working directory",
    complete: "directories"
  },
  {
    name: "tools",
    value: "TOOLS",
    repeatable: true,
    variadic: true,
    allowEmpty: true,
    description:
      "Which built-in tools exist, e.g. \"Bash,Edit,Read\" (\"\" for none, default for all); MCP tools are not affected",
    default: "default"
  },
  {
    name: "setting-sources",
    value: "SOURCES",
    allowEmpty: true,
    description: "Which settings files to load, comma-separated: user, project, local (--settings files always load)",
    default: "user,project,local"
  },
  {
    name: "dangerously-skip-permissions",
    description: "Approve every call without asking (the bypassPermissions mode); deny rules still apply"
  },
  { name: "verbose", description: "More detail: the settings files loaded, whole tool results, error details" },
  {
    name: "mcp-config",
    value: "FILE",
    repeatable: true,
    variadic: true,
    description: "MCP servers to connect, in Claude Code's .mcp.json format (files or inline JSON)",
    complete: "files"
  },
  {
    name: "strict-mcp-config",
    description: "Use only the --mcp-config servers, not the working directory's .mcp.json"
  },
  {
    name: "scheduling",
    value: "SCHEDULE",
    choices: ["greedy", "footprints"],
    description:
      "footprints: a call waits only for earlier calls it conflicts with, and a failed Bash call cancels only its dependents; greedy: the chapter's batches and sibling cancellation",
    default: "the settings' scheduling, else footprints"
  }
]

const sandboxOption: CommandLine.OptionSpec = {
  name: "sandbox",
  description:
    "Run Bash in the bubblewrap sandbox (sandbox.enabled for this run): writes only in the working directories, no network beyond sandbox.network.allowedDomains"
}

const outputFormat = (what: string): CommandLine.OptionSpec => ({
  name: "output-format",
  value: "FORMAT",
  choices: outputFormats,
  description: `${what}; json: one result object; stream-json: one JSON object per line`,
  default: "text"
})

const maxTurns: CommandLine.OptionSpec = {
  name: "max-turns",
  value: "N",
  integer: "positive",
  description: "Stop after this many model turns (the result is then error_max_turns)",
  default: "100"
}

/** Every command. */
export const commands: ReadonlyArray<CommandLine.CommandSpec> = [
  {
    path: ["run"],
    summary: "The agent loop against Claude: interactive in a terminal, or once with -p",
    details: [
      "In a terminal, `switchyard` and `switchyard run` open an interactive session (with PROMPT as its first",
      "message). With -p, or when stdin or stdout is not a terminal, the prompt (an argument or stdin) runs once",
      "and the result is printed. Needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for another endpoint).",
      "Exit codes with -p: 0 when the loop ended normally (denied calls are listed, not fatal), 1 when it ended in",
      "an error or at the turn limit, 2 for bad usage."
    ],
    args: [{ name: "PROMPT", description: "The first message to the model", optional: true }],
    options: [
      { name: "print", aliases: ["p"], description: "Run the prompt once, print the result and exit" },
      outputFormat("With -p: text prints the final answer"),
      {
        name: "input-format",
        value: "FORMAT",
        choices: ["text", "stream-json"],
        description: "With -p: stream-json reads user messages as JSON lines on stdin, one turn each, until stdin ends",
        default: "text"
      },
      {
        name: "model",
        value: "NAME",
        description: "The Claude model: an alias (sonnet, opus, haiku, sonnet[1m], opus[1m]) or a model id",
        default: "$SWITCHYARD_MODEL, else $ANTHROPIC_MODEL, else a current Claude model",
        complete: "models"
      },
      maxTurns,
      { name: "system-prompt", value: "TEXT", description: "Replace the system prompt" },
      { name: "append-system-prompt", value: "TEXT", description: "Add text to the end of the system prompt" },
      { name: "continue", aliases: ["c"], description: "Continue the most recent session in this directory" },
      {
        name: "resume",
        aliases: ["r"],
        value: "ID",
        valueOptional: true,
        description: "Resume the session ID; without ID (in a terminal) pick one of the recent sessions",
        complete: "sessions"
      },
      { name: "session-id", value: "ID", description: "The id of the new session (a UUID)" },
      {
        name: "fork-session",
        description: "With --continue or --resume: continue in a new session (a new id), leaving the old one as it was"
      },
      {
        name: "fallback-model",
        value: "NAME",
        description: "With -p: the model that takes over when the model is overloaded",
        complete: "models"
      },
      {
        name: "max-budget-usd",
        value: "USD",
        decimal: "positive",
        description: "With -p: send no further model request once the run has cost this much (error_max_budget_usd)"
      },
      {
        name: "json-schema",
        value: "SCHEMA",
        description: "With -p: a JSON Schema the final answer must match; the result's structured_output holds it"
      },
      {
        name: "permission-prompt-tool",
        value: "TOOL",
        description: "With -p: an MCP tool (mcp__server__tool) that answers permission questions instead of a terminal"
      },
      {
        name: "include-partial-messages",
        description: "With stream-json: add stream_event lines, the API's stream events as they arrive"
      },
      {
        name: "include-dispatch-events",
        description: "With stream-json: add Switchyard's dispatch events (started, progress, permission_*, hook)"
      },
      sandboxOption,
      ...engineOptions
    ]
  },
  {
    path: ["dispatch"],
    summary: "Run tool_use blocks through the full pipeline without a model",
    details: [
      "FILE holds a JSON array of tool_use blocks or an assistant message. All calls go to one streaming executor.",
      "Nothing is asked: a call that needs approval is denied with how to allow it.",
      "Exit codes: 0 when every call succeeded, 1 when any failed or was denied, 2 for bad usage."
    ],
    args: [{
      name: "FILE",
      description: "The calls: a JSON file, or - for stdin (the default when piped)",
      optional: true,
      complete: "files"
    }],
    options: [outputFormat("text: a report for people"), sandboxOption, ...engineOptions]
  },
  {
    path: ["tools"],
    summary: "What the model would see: list, search or show the schema of tools",
    args: [],
    options: [],
    group: true
  },
  {
    path: ["tools", "list"],
    summary: "List the tools the model sees (deferred tools are marked)",
    args: [],
    options: [
      { name: "json", description: "Print JSON" },
      {
        name: "cached",
        description: "Start no MCP server: list MCP tools as they were when their servers last connected here " +
          "(what completion scripts use)"
      },
      ...engineOptions
    ]
  },
  {
    path: ["tools", "search"],
    summary: "Search the tools by keywords",
    args: [{ name: "QUERY", description: "Keywords, e.g. \"background task\"", optional: false }],
    options: [{ name: "json", description: "Print JSON" }, ...engineOptions]
  },
  {
    path: ["tools", "schema"],
    summary: "Print a tool's definition as it is sent to the API",
    args: [{ name: "NAME", description: "The tool's name or alias", optional: false, complete: "tools" }],
    options: [{ name: "json", description: "Print JSON (the definition is JSON already)" }, ...engineOptions]
  },
  {
    path: ["replay"],
    summary: "Run the agent loop against a recorded transcript (offline, real tools)",
    args: [{ name: "TRANSCRIPT", description: "A replay transcript (JSON)", optional: false, complete: "files" }],
    options: [
      { name: "prompt", value: "TEXT", description: "The user prompt", default: "the first turn's expectation" },
      outputFormat("text: a live transcript"),
      maxTurns,
      ...engineOptions
    ]
  },
  ...McpCommandLine.commands(engineOptions),
  {
    path: ["speculate"],
    summary: "Run a prompt in a copy-on-write overlay and report what it would change",
    details: [
      "The prompt runs as a speculation: writes land in an overlay of the working tree, and it stops at the first",
      "call that would need approval or touch the real world (its boundary). Without --accept the overlay is",
      "discarded (a safe preview); with --accept it is applied. Exit code 0 whenever it ran, 1 when it could not",
      "run, 2 for bad usage."
    ],
    args: [{ name: "PROMPT", description: "The prompt to run as a speculation", optional: false }],
    options: [
      { name: "accept", description: "Apply the overlay's changes to the working tree afterwards" },
      {
        name: "replay",
        value: "TRANSCRIPT",
        description: "Use a replay transcript instead of Claude (offline)",
        complete: "files"
      },
      {
        name: "output-format",
        value: "FORMAT",
        choices: ["text", "json"],
        description: "text: the boundary, a unified diff and the time saved; json: one report object",
        default: "text"
      },
      {
        name: "model",
        value: "NAME",
        description: "The Claude model: an alias (sonnet, opus, haiku, sonnet[1m], opus[1m]) or a model id",
        default: "$SWITCHYARD_MODEL, else $ANTHROPIC_MODEL, else a current Claude model",
        complete: "models"
      },
      ...engineOptions
    ]
  },
  {
    path: ["sessions"],
    summary: "List the recorded sessions: state (running, interrupted, done), turns and last activity",
    details: [
      "The sessions of this directory, the most recent first (--all: every directory's), from the journal",
      "(SPEC §4.14: journal.db in the state directory, or $SWITCHYARD_JOURNAL_URL) and the transcripts.",
      "interrupted: the process stopped in a turn; `switchyard --resume ID` finishes it before the next prompt."
    ],
    args: [],
    options: [
      { name: "all", description: "List the sessions of every directory" },
      { name: "json", description: "Print JSON" },
      ...engineOptions
    ]
  },
  {
    path: ["runner"],
    summary: "Run a runner: execute the prompts clients submit (needs a PostgreSQL journal)",
    details: [
      "Runners share the PostgreSQL journal (SWITCHYARD_JOURNAL_URL=postgresql://…) and shard the submitted prompts",
      "between them (@effect/cluster); when a runner stops, the others take over its prompts, which go on from the",
      "journal. A prompt runs as `run -p` would, with the options it was submitted with; nothing is asked."
    ],
    args: [],
    options: [
      { name: "host", value: "HOST", description: "The address other runners reach this one at", default: "127.0.0.1" },
      {
        name: "port",
        value: "PORT",
        integer: "positive",
        description: "The port this runner listens on",
        default: "34431"
      },
      ...engineOptions
    ]
  },
  {
    path: ["submit"],
    summary: "Hand a prompt to the runners (a new session, or --resume ID)",
    details: [
      "Prints the session id at once; with --wait, the final answer once a runner has run the prompt (whichever",
      "runner, after any runner stopped). Needs a PostgreSQL journal, like `switchyard runner`."
    ],
    args: [{ name: "PROMPT", description: "The prompt", optional: false }],
    options: [
      { name: "session-id", value: "ID", description: "The id of the new session (a UUID)" },
      { name: "resume", value: "ID", description: "Continue the session ID", complete: "sessions" },
      { name: "wait", description: "Wait for the outcome and print the final answer" },
      {
        name: "output-format",
        value: "FORMAT",
        choices: ["text", "json"],
        description: "text: the session id (the answer with --wait); json: one object",
        default: "text"
      },
      {
        name: "model",
        value: "NAME",
        description: "The Claude model",
        default: "the runner's $SWITCHYARD_MODEL, else $ANTHROPIC_MODEL, else a current Claude model",
        complete: "models"
      },
      maxTurns,
      ...engineOptions
    ]
  },
  {
    path: ["demo"],
    summary: "The offline demo: a replayed session on a sample project, with a summary",
    args: [],
    options: [
      { name: "keep", description: "Keep the edited demo project afterwards (its path is printed)" },
      outputFormat("text: the transcript and a summary"),
      { name: "verbose", description: "Show details of errors" }
    ]
  },
  {
    path: ["completions"],
    summary: "Print a shell completion script (bash, zsh or fish)",
    details: [
      "Completes commands, options, option values one by one (formats, modes, model names, files), and tool",
      "names for `tools schema` (asked of `switchyard tools list` when TAB is pressed, so MCP tools are offered too).",
      "bash: add `source <(switchyard completions bash)` to ~/.bashrc; zsh: put the output in a file named",
      "_switchyard on $fpath; fish: `switchyard completions fish > ~/.config/fish/completions/switchyard.fish`."
    ],
    args: [{ name: "SHELL", description: "The shell: bash, zsh or fish", optional: false, choices: completionShells }],
    options: []
  }
]

/** The options every command has. */
export const builtIns: ReadonlyArray<CommandLine.OptionSpec> = [
  { name: "help", aliases: ["h"], description: "Show this help" },
  { name: "version", aliases: ["v"], description: "Show the version" },
  {
    name: "completions",
    value: "SHELL",
    choices: completionShells,
    description: "Print a shell completion script (the same as `switchyard completions SHELL`)"
  }
]
