/**
 * The `switchyard` binary: parse the command line with `@effect/cli` and run
 * the command. Command implementations are imported when their command runs,
 * so `--help` and `tools list` start without loading the Anthropic SDK or the
 * terminal UI.
 *
 * Errors are one line on stderr with what to do (`--verbose` adds details);
 * exit codes: 0 ok, 1 a run or call failed, 2 bad input.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createRequire } from "node:module"
import { CliError } from "./CliError.js"
import { stripColorWhenPiped } from "./Output.js"
import type * as Runtime from "./Runtime.js"

// A closed pipe (`switchyard … | head`) ends the program quietly, like other Unix tools.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
    throw error
  })
}

stripColorWhenPiped(process.stdout)
stripColorWhenPiped(process.stderr)

const version: string = createRequire(import.meta.url)("../package.json").version

// Options every engine command shares.
const cwd = Options.text("cwd").pipe(
  Options.withDescription("The working directory (default: the current directory)"),
  Options.withDefault(process.cwd())
)
const settings = Options.text("settings").pipe(
  Options.withDescription("An extra settings file (Claude Code's settings.json format); repeatable"),
  Options.repeated
)
const permissionMode = Options.choice("permission-mode", [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
  "auto"
]).pipe(Options.withDescription("The permission mode (default: the settings' defaultMode, else default)"), Options.optional)
const allowedTools = Options.text("allowed-tools").pipe(
  Options.withAlias("allowedTools"),
  Options.withDescription('Rules to allow, e.g. "Bash(git log *)" Edit; repeatable, comma or space separated'),
  Options.repeated
)
const disallowedTools = Options.text("disallowed-tools").pipe(
  Options.withAlias("disallowedTools"),
  Options.withDescription("Rules to deny; repeatable, comma or space separated"),
  Options.repeated
)
const verbose = Options.boolean("verbose").pipe(Options.withDescription("Show details of errors"))
const outputFormat = Options.choice("output-format", ["text", "json", "stream-json"]).pipe(
  Options.withDescription("text for people; json or stream-json (one JSON object per line) for programs"),
  Options.withDefault("text" as const)
)
const maxTurns = Options.integer("max-turns").pipe(
  Options.withDescription("Stop after this many model turns"),
  Options.optional
)

const scheduling = Options.choice("scheduling", ["greedy", "footprints"]).pipe(
  Options.withDescription("greedy: the chapter's schedule; footprints (default): calls wait only for the calls they conflict with"),
  Options.optional
)

const common = { cwd, settings, permissionMode, allowedTools, disallowedTools, verbose, scheduling }

const toCommon = (args: {
  readonly cwd: string
  readonly settings: ReadonlyArray<string>
  readonly permissionMode: Option.Option<Runtime.CommonOptions["permissionMode"] & string>
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  readonly verbose: boolean
  readonly scheduling: Option.Option<"greedy" | "footprints">
}): Runtime.CommonOptions => ({
  cwd: args.cwd,
  settingsFiles: args.settings,
  permissionMode: Option.getOrUndefined(args.permissionMode),
  allowedTools: args.allowedTools,
  disallowedTools: args.disallowedTools,
  verbose: args.verbose,
  scheduling: Option.getOrUndefined(args.scheduling)
})

const run = Command.make(
  "run",
  {
    ...common,
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("What to do (omit for an interactive session)"), Args.optional),
    print: Options.boolean("print").pipe(Options.withAlias("p"), Options.withDescription("Run once and print the result")),
    outputFormat,
    model: Options.text("model").pipe(Options.withDescription("The model name (default: $SWITCHYARD_MODEL, $ANTHROPIC_MODEL, or a current Claude model)"), Options.optional),
    maxTurns,
    systemPrompt: Options.text("system-prompt").pipe(Options.withDescription("Replace the system prompt"), Options.optional)
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Run.js")), (Run) =>
      Run.run({
        ...toCommon(args),
        prompt: Option.getOrUndefined(args.prompt),
        print: args.print,
        outputFormat: args.outputFormat,
        model: Option.getOrUndefined(args.model),
        maxTurns: Option.getOrUndefined(args.maxTurns),
        systemPrompt: Option.getOrUndefined(args.systemPrompt)
      }))
).pipe(Command.withDescription("Run the agent loop against Claude (interactive without a prompt, or -p to print once)"))

const dispatch = Command.make(
  "dispatch",
  {
    ...common,
    file: Args.text({ name: "file" }).pipe(Args.withDescription("A JSON file of tool_use blocks or an assistant message; - for stdin"), Args.optional),
    outputFormat
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Dispatch.js")), (Dispatch) =>
      Dispatch.run({ ...toCommon(args), file: Option.getOrUndefined(args.file), outputFormat: args.outputFormat }))
).pipe(Command.withDescription("Run tool_use blocks through the full pipeline without a model"))

const toolsJson = Options.boolean("json").pipe(Options.withDescription("Print JSON"))
const toolsCommand = <A extends Parameters<typeof toCommon>[0] & { readonly json: boolean }>(
  action: (args: A) => import("./ToolsCommand.js").Action
) =>
(args: A) =>
  Effect.flatMap(Effect.promise(() => import("./ToolsCommand.js")), (Tools) =>
    Tools.run({ ...toCommon(args), json: args.json, action: action(args) }))

const tools = Command.make("tools").pipe(
  Command.withDescription("What the model would see: list, search or show the schema of tools"),
  Command.withSubcommands([
    Command.make("list", { ...common, json: toolsJson }, toolsCommand(() => ({ _tag: "list" }))).pipe(
      Command.withDescription("List the tools the model sees (deferred tools are marked)")
    ),
    Command.make(
      "search",
      { ...common, json: toolsJson, query: Args.text({ name: "query" }) },
      toolsCommand((args) => ({ _tag: "search", query: args.query }))
    ).pipe(Command.withDescription("Search tools by keywords")),
    Command.make(
      "schema",
      { ...common, json: toolsJson, name: Args.text({ name: "name" }) },
      toolsCommand((args) => ({ _tag: "schema", name: args.name }))
    ).pipe(Command.withDescription("Print a tool's definition as sent to the API"))
  ])
)

const replay = Command.make(
  "replay",
  {
    ...common,
    transcript: Args.text({ name: "transcript" }).pipe(Args.withDescription("A replay transcript (JSON)")),
    prompt: Options.text("prompt").pipe(Options.withDescription("The user prompt (default: the first turn's expectation)"), Options.optional),
    outputFormat,
    maxTurns
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Replay.js")), (Replay) =>
      Replay.run({
        ...toCommon(args),
        transcript: args.transcript,
        prompt: Option.getOrUndefined(args.prompt),
        outputFormat: args.outputFormat,
        maxTurns: Option.getOrUndefined(args.maxTurns)
      }))
).pipe(Command.withDescription("Run the agent loop against a recorded transcript (offline)"))

const demo = Command.make(
  "demo",
  {
    keep: Options.boolean("keep").pipe(Options.withDescription("Keep the demo project afterwards")),
    outputFormat,
    verbose
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Demo.js")), (Demo) =>
      Demo.run({ keep: args.keep, outputFormat: args.outputFormat }))
).pipe(Command.withDescription("The offline demo: a replayed session on a sample project, with a summary"))

const switchyard = Command.make("switchyard").pipe(
  Command.withDescription("Switchyard — an Effect-based tool-dispatch runtime for LLM agents"),
  Command.withSubcommands([run, dispatch, tools, replay, demo])
)

const cli = Command.run(switchyard, { name: "switchyard", version })

const SUBCOMMANDS = new Set(["run", "dispatch", "tools", "list", "search", "schema", "replay", "demo"])
const FLAGS = new Set(["-p", "--print", "--verbose", "--keep", "--json", "-h", "--help", "--version", "--wizard"])

/**
 * `@effect/cli` wants a command's options before its arguments; people (and
 * Claude Code habits) put them anywhere: `dispatch calls.json --output-format
 * stream-json`. Move each option (with its value) ahead of the positional
 * arguments that follow the command path.
 */
export const normalizeArgv = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const [node, script, ...rest] = argv
  const path: Array<string> = []
  let i = 0
  while (i < rest.length && SUBCOMMANDS.has(rest[i]!) && path.length < 2) path.push(rest[i++]!)
  const options: Array<string> = []
  const positionals: Array<string> = []
  for (; i < rest.length; i++) {
    const token = rest[i]!
    if (token === "--") {
      positionals.push(...rest.slice(i + 1))
      break
    }
    if (token.startsWith("-") && token !== "-") {
      options.push(token)
      const takesValue = !FLAGS.has(token) && !token.includes("=")
      if (takesValue && i + 1 < rest.length) options.push(rest[++i]!)
    } else {
      positionals.push(token)
    }
  }
  return [node ?? "node", script ?? "switchyard", ...path, ...options, ...positionals]
}

const wantsDetails = process.argv.includes("--verbose")

const program = Effect.suspend(() => cli(normalizeArgv(process.argv))).pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      if (ValidationError.isValidationError(error)) {
        // @effect/cli has printed the problem and the usage already.
        process.exitCode = 2
        return
      }
      if (error instanceof CliError) {
        if (error.detail !== "quiet") {
          process.stderr.write(`switchyard: ${error.message}\n`)
          if (wantsDetails && error.detail !== undefined) process.stderr.write(`${error.detail}\n`)
        }
        process.exitCode = error.exitCode
        return
      }
      process.stderr.write(`switchyard: ${String(error)}\n`)
      process.exitCode = 1
    })
  ),
  Effect.catchAllCause((cause) =>
    Effect.sync(() => {
      if (Cause.isInterruptedOnly(cause)) {
        process.exitCode = 130
        return
      }
      const squashed = Cause.squash(cause)
      const message = squashed instanceof Error ? squashed.message : String(squashed)
      process.stderr.write(`switchyard: unexpected error: ${message.split("\n")[0]} (run with --verbose for details)\n`)
      if (wantsDetails) process.stderr.write(`${Cause.pretty(cause)}\n`)
      process.exitCode = 1
    })
  ),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, { disableErrorReporting: true })
