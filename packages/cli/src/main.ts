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
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createRequire } from "node:module"
import * as CommandLine from "./CommandLine.js"
import { describeOption, findCommand } from "./CommandLine.js"
import * as CommandMain from "./internal/commandMain.js"
import * as RunOptions from "./internal/runOptions.js"

// The package's own version: code, not environment, so reading it at load is fine (also in the start-up snapshot).
const version: string = createRequire(import.meta.url)("../package.json").version

// Options every engine command shares; descriptions come from the CommandLine table.
const engineOptions = (path: ReadonlyArray<string>) => ({
  cwd: Options.text("cwd").pipe(Options.withDescription(describeOption(path, "cwd")), Options.optional),
  settings: Options.text("settings").pipe(Options.withDescription(describeOption(path, "settings")), Options.repeated),
  permissionMode: Options.choice("permission-mode", permissionModes).pipe(
    Options.withDescription(describeOption(path, "permission-mode")),
    Options.optional
  ),
  allowedTools: Options.text("allowed-tools").pipe(
    Options.withAlias("allowedTools"),
    Options.withDescription(describeOption(path, "allowed-tools")),
    Options.repeated
  ),
  disallowedTools: Options.text("disallowed-tools").pipe(
    Options.withAlias("disallowedTools"),
    Options.withDescription(describeOption(path, "disallowed-tools")),
    Options.repeated
  ),
  addDir: Options.text("add-dir").pipe(Options.withDescription(describeOption(path, "add-dir")), Options.repeated),
  dangerouslySkipPermissions: Options.boolean("dangerously-skip-permissions").pipe(
    Options.withDescription(describeOption(path, "dangerously-skip-permissions"))
  ),
  verbose: Options.boolean("verbose").pipe(Options.withDescription(describeOption(path, "verbose"))),
  tools: Options.text("tools").pipe(Options.withDescription(describeOption(path, "tools")), Options.repeated),
  settingSources: Options.text("setting-sources").pipe(
    Options.withDescription(describeOption(path, "setting-sources")),
    Options.optional
  ),
  mcpConfig: Options.text("mcp-config").pipe(
    Options.withDescription(describeOption(path, "mcp-config")),
    Options.repeated
  ),
  strictMcpConfig: Options.boolean("strict-mcp-config").pipe(
    Options.withDescription(describeOption(path, "strict-mcp-config"))
  ),
  scheduling: Options.choice("scheduling", ["greedy", "footprints"]).pipe(
    Options.withDescription(describeOption(path, "scheduling")),
    Options.optional
  )
})
const permissionModes = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"] as const

const outputFormat = (path: ReadonlyArray<string>) =>
  Options.choice("output-format", ["text", "json", "stream-json"]).pipe(
    Options.withDescription(describeOption(path, "output-format")),
    Options.withDefault("text" as const)
  )
const maxTurns = (path: ReadonlyArray<string>) =>
  Options.integer("max-turns").pipe(Options.withDescription(describeOption(path, "max-turns")), Options.optional)

const text = (path: ReadonlyArray<string>, name: string) =>
  Options.text(name).pipe(Options.withDescription(describeOption(path, name)), Options.optional)
const flag = (path: ReadonlyArray<string>, name: string, alias?: string) => {
  const option = Options.boolean(name).pipe(Options.withDescription(describeOption(path, name)))
  return alias === undefined ? option : Options.withAlias(option, alias)
}

const run = Command.make(
  "run",
  {
    ...engineOptions(["run"]),
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("The first message to the model"), Args.optional),
    print: flag(["run"], "print", "p"),
    outputFormat: outputFormat(["run"]),
    inputFormat: Options.choice("input-format", ["text", "stream-json"]).pipe(
      Options.withDescription(describeOption(["run"], "input-format")),
      Options.withDefault("text" as const)
    ),
    model: text(["run"], "model"),
    maxTurns: maxTurns(["run"]),
    systemPrompt: text(["run"], "system-prompt"),
    appendSystemPrompt: text(["run"], "append-system-prompt"),
    continue: flag(["run"], "continue", "c"),
    resume: Options.text("resume").pipe(
      Options.withAlias("r"),
      Options.withDescription(describeOption(["run"], "resume")),
      Options.optional
    ),
    sessionId: text(["run"], "session-id"),
    forkSession: flag(["run"], "fork-session"),
    fallbackModel: text(["run"], "fallback-model"),
    maxBudgetUsd: Options.float("max-budget-usd").pipe(
      Options.withDescription(describeOption(["run"], "max-budget-usd")),
      Options.optional
    ),
    jsonSchema: text(["run"], "json-schema"),
    permissionPromptTool: text(["run"], "permission-prompt-tool"),
    includePartialMessages: flag(["run"], "include-partial-messages"),
    includeDispatchEvents: flag(["run"], "include-dispatch-events"),
    sandbox: flag(["run"], "sandbox")
  },
  (args) => {
    const options = RunOptions.run(args)
    // In a terminal, without -p: the interactive session; otherwise the prompt runs once.
    const interactive = !args.print && args.inputFormat === "text" && process.stdin.isTTY === true &&
      process.stdout.isTTY === true
    return interactive
      ? Effect.flatMap(Effect.promise(() => import("./Terminal.js")), (Terminal) => Terminal.run(options))
      : Effect.flatMap(Effect.promise(() => import("./Run.js")), (Run) => Run.run(options))
  }
).pipe(Command.withDescription(findCommand(["run"])!.summary))

const dispatch = Command.make(
  "dispatch",
  {
    ...engineOptions(["dispatch"]),
    file: Args.text({ name: "file" }).pipe(
      Args.withDescription("A JSON file of tool_use blocks or an assistant message; - for stdin"),
      Args.optional
    ),
    outputFormat: outputFormat(["dispatch"]),
    sandbox: flag(["dispatch"], "sandbox")
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Dispatch.js")), (Dispatch) =>
      Dispatch.run({
        ...RunOptions.common(args),
        sandbox: args.sandbox,
        file: Option.getOrUndefined(args.file),
        outputFormat: args.outputFormat
      }))
).pipe(Command.withDescription(findCommand(["dispatch"])!.summary))

const toolsCommand = <A extends RunOptions.CommonArgs & { readonly json: boolean }>(
  action: (args: A) => import("./ToolsCommand.js").Action
) =>
(args: A) =>
  Effect.flatMap(
    Effect.promise(() => import("./ToolsCommand.js")),
    (Tools) => Tools.run({ ...RunOptions.common(args), json: args.json, action: action(args) })
  )

const tools = Command.make("tools").pipe(
  Command.withDescription(findCommand(["tools"])!.summary),
  Command.withSubcommands([
    Command.make(
      "list",
      {
        ...engineOptions(["tools", "list"]),
        json: flag(["tools", "list"], "json"),
        cached: flag(["tools", "list"], "cached")
      },
      toolsCommand((args) => ({ _tag: "list", cached: args.cached }))
    ).pipe(Command.withDescription(findCommand(["tools", "list"])!.summary)),
    Command.make(
      "search",
      {
        ...engineOptions(["tools", "search"]),
        json: flag(["tools", "search"], "json"),
        query: Args.text({ name: "query" })
      },
      toolsCommand((args) => ({ _tag: "search", query: args.query }))
    ).pipe(Command.withDescription(findCommand(["tools", "search"])!.summary)),
    Command.make(
      "schema",
      {
        ...engineOptions(["tools", "schema"]),
        json: flag(["tools", "schema"], "json"),
        name: Args.text({ name: "name" })
      },
      toolsCommand((args) => ({ _tag: "schema", name: args.name }))
    ).pipe(Command.withDescription(findCommand(["tools", "schema"])!.summary))
  ])
)

const replay = Command.make(
  "replay",
  {
    ...engineOptions(["replay"]),
    transcript: Args.text({ name: "transcript" }).pipe(Args.withDescription("A replay transcript (JSON)")),
    prompt: text(["replay"], "prompt"),
    outputFormat: outputFormat(["replay"]),
    maxTurns: maxTurns(["replay"])
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Replay.js")), (Replay) =>
      Replay.run({
        ...RunOptions.common(args),
        transcript: args.transcript,
        prompt: Option.getOrUndefined(args.prompt),
        outputFormat: args.outputFormat,
        maxTurns: Option.getOrUndefined(args.maxTurns)
      }))
).pipe(Command.withDescription(findCommand(["replay"])!.summary))

const demo = Command.make(
  "demo",
  {
    keep: flag(["demo"], "keep"),
    outputFormat: outputFormat(["demo"]),
    verbose: flag(["demo"], "verbose")
  },
  (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./Demo.js")),
      (Demo) => Demo.run({ keep: args.keep, outputFormat: args.outputFormat })
    )
).pipe(Command.withDescription(findCommand(["demo"])!.summary))

const mcpModule = Effect.promise(() => import("./McpCommand.js"))
const mcpScope = (path: ReadonlyArray<string>) =>
  Options.choice("scope", ["local", "project", "user"]).pipe(Options.withDescription(describeOption(path, "scope")))
const mcpCwd = (path: ReadonlyArray<string>) =>
  Options.text("cwd").pipe(Options.withDescription(describeOption(path, "cwd")), Options.optional)
const mcpName = Args.text({ name: "name" }).pipe(Args.withDescription("The server's name"))

const mcp = Command.make("mcp").pipe(
  Command.withDescription(findCommand(["mcp"])!.summary),
  Command.withSubcommands([
    Command.make(
      "list",
      { ...engineOptions(["mcp", "list"]), json: flag(["mcp", "list"], "json") },
      (args) => Effect.flatMap(mcpModule, (Mcp) => Mcp.list({ ...RunOptions.common(args), json: args.json }))
    ).pipe(
      Command.withDescription(findCommand(["mcp", "list"])!.summary)
    ),
    Command.make(
      "get",
      {
        ...engineOptions(["mcp", "get"]),
        json: flag(["mcp", "get"], "json"),
        name: mcpName
      },
      (args) =>
        Effect.flatMap(mcpModule, (Mcp) => Mcp.get({ ...RunOptions.common(args), json: args.json, name: args.name }))
    )
      .pipe(
        Command.withDescription(findCommand(["mcp", "get"])!.summary)
      ),
    Command.make(
      "add",
      {
        scope: mcpScope(["mcp", "add"]).pipe(Options.withDefault("local" as const)),
        transport: Options.choice("transport", ["stdio", "http", "sse"]).pipe(
          Options.withDescription(describeOption(["mcp", "add"], "transport")),
          Options.optional
        ),
        env: Options.text("env").pipe(Options.withDescription(describeOption(["mcp", "add"], "env")), Options.repeated),
        header: Options.text("header").pipe(
          Options.withDescription(describeOption(["mcp", "add"], "header")),
          Options.repeated
        ),
        cwd: mcpCwd(["mcp", "add"]),
        name: mcpName,
        commandOrUrl: Args.text({ name: "commandOrUrl" }).pipe(Args.withDescription("The command or the URL")),
        args: Args.text({ name: "args" }).pipe(Args.withDescription("The command's arguments"), Args.repeated)
      },
      (args) =>
        Effect.flatMap(mcpModule, (Mcp) =>
          Mcp.add({
            cwd: RunOptions.workingDirectory(args.cwd),
            name: args.name,
            commandOrUrl: args.commandOrUrl,
            args: args.args,
            scope: args.scope,
            transport: Option.getOrUndefined(args.transport),
            env: args.env,
            headers: args.header
          }))
    ).pipe(Command.withDescription(findCommand(["mcp", "add"])!.summary)),
    Command.make(
      "add-json",
      {
        scope: mcpScope(["mcp", "add-json"]).pipe(Options.withDefault("local" as const)),
        cwd: mcpCwd(["mcp", "add-json"]),
        name: mcpName,
        json: Args.text({ name: "json" }).pipe(Args.withDescription("The server's entry"))
      },
      (args) =>
        Effect.flatMap(
          mcpModule,
          (Mcp) =>
            Mcp.addJson({
              cwd: RunOptions.workingDirectory(args.cwd),
              name: args.name,
              json: args.json,
              scope: args.scope
            })
        )
    ).pipe(Command.withDescription(findCommand(["mcp", "add-json"])!.summary)),
    Command.make(
      "remove",
      { scope: mcpScope(["mcp", "remove"]).pipe(Options.optional), cwd: mcpCwd(["mcp", "remove"]), name: mcpName },
      (args) =>
        Effect.flatMap(
          mcpModule,
          (Mcp) =>
            Mcp.remove({
              cwd: RunOptions.workingDirectory(args.cwd),
              name: args.name,
              scope: Option.getOrUndefined(args.scope)
            })
        )
    ).pipe(Command.withDescription(findCommand(["mcp", "remove"])!.summary)),
    Command.make(
      "reset-project-choices",
      { cwd: mcpCwd(["mcp", "reset-project-choices"]) },
      (args) =>
        Effect.flatMap(mcpModule, (Mcp) => Mcp.resetProjectChoices({ cwd: RunOptions.workingDirectory(args.cwd) }))
    ).pipe(
      Command.withDescription(findCommand(["mcp", "reset-project-choices"])!.summary)
    )
  ])
)

const speculate = Command.make(
  "speculate",
  {
    ...engineOptions(["speculate"]),
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("The prompt to run as a speculation")),
    accept: flag(["speculate"], "accept"),
    replay: text(["speculate"], "replay"),
    outputFormat: Options.choice("output-format", ["text", "json"]).pipe(
      Options.withDescription(describeOption(["speculate"], "output-format")),
      Options.withDefault("text" as const)
    ),
    model: text(["speculate"], "model")
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./Speculate.js")), (Speculate) =>
      Speculate.run({
        ...RunOptions.common(args),
        prompt: args.prompt,
        accept: args.accept,
        replay: Option.getOrUndefined(args.replay),
        outputFormat: args.outputFormat,
        model: Option.getOrUndefined(args.model)
      }))
).pipe(Command.withDescription(findCommand(["speculate"])!.summary))

const sessions = Command.make(
  "sessions",
  { ...engineOptions(["sessions"]), all: flag(["sessions"], "all"), json: flag(["sessions"], "json") },
  (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./Journaling.js")),
      (Journaling) => Journaling.list({ ...RunOptions.common(args), all: args.all, json: args.json })
    )
).pipe(Command.withDescription(findCommand(["sessions"])!.summary))

const runner = Command.make(
  "runner",
  {
    ...engineOptions(["runner"]),
    host: Options.text("host").pipe(
      Options.withDescription(describeOption(["runner"], "host")),
      Options.withDefault("127.0.0.1")
    ),
    port: Options.integer("port").pipe(
      Options.withDescription(describeOption(["runner"], "port")),
      Options.withDefault(34431)
    )
  },
  (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./RunnerCommand.js")),
      (RunnerCommand) => RunnerCommand.serve({ ...RunOptions.common(args), host: args.host, port: args.port })
    )
).pipe(Command.withDescription(findCommand(["runner"])!.summary))

const submit = Command.make(
  "submit",
  {
    ...engineOptions(["submit"]),
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("The prompt")),
    sessionId: text(["submit"], "session-id"),
    resume: text(["submit"], "resume"),
    wait: flag(["submit"], "wait"),
    outputFormat: Options.choice("output-format", ["text", "json"]).pipe(
      Options.withDescription(describeOption(["submit"], "output-format")),
      Options.withDefault("text" as const)
    ),
    model: text(["submit"], "model"),
    maxTurns: maxTurns(["submit"])
  },
  (args) =>
    Effect.flatMap(Effect.promise(() => import("./RunnerCommand.js")), (RunnerCommand) =>
      RunnerCommand.submit({
        ...RunOptions.common(args),
        prompt: args.prompt,
        sessionId: Option.getOrUndefined(args.sessionId),
        resume: Option.getOrUndefined(args.resume),
        wait: args.wait,
        outputFormat: args.outputFormat,
        model: Option.getOrUndefined(args.model),
        maxTurns: Option.getOrUndefined(args.maxTurns)
      }))
).pipe(Command.withDescription(findCommand(["submit"])!.summary))

const switchyard = Command.make("switchyard").pipe(
  Command.withDescription("Switchyard — an Effect-based tool-dispatch runtime for LLM agents"),
  Command.withSubcommands([run, dispatch, tools, replay, demo, mcp, speculate, sessions, runner, submit])
)

const cli = Command.run(switchyard, { name: "switchyard", version })

/** `@effect/cli` prints a usage error with the whole help; ours is one line, so its printing is dropped. */
const quietErrors = Effect.map(Effect.console, (console): Console.Console => ({ ...console, error: () => Effect.void }))

const usageError = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`switchyard: ${message}\n`)
    process.exitCode = 2
  })

/** The first line of an `@effect/cli` error, for the rare one our check lets through. */
const validationMessage = (error: ValidationError.ValidationError): string => {
  const doc = (error as { readonly error?: HelpDoc.HelpDoc }).error
  const text = doc === undefined ? error._tag : HelpDoc.toAnsiText(doc).replace(/\x1b\[[0-9;]*m/g, "")
  return text.split("\n").map((line: string) => line.trim()).find((line: string) => line !== "") ??
    "invalid command line"
}

/** The command line `argv` (with `node` and the script) run to its end; usage errors reported, the rest left. */
const program = (argv: ReadonlyArray<string>) => {
  const parsed = CommandLine.parse(argv)
  return Effect.suspend(() => {
    switch (parsed._tag) {
      case "Help":
        return Effect.sync(() => void process.stdout.write(parsed.text))
      case "Version":
        return Effect.sync(() => void process.stdout.write(`${version}\n`))
      case "UsageError":
        return usageError(parsed.message)
      case "Completions":
        return Effect.flatMap(
          Effect.promise(() => import("./Completions.js")),
          (Completions) => Effect.sync(() => void process.stdout.write(Completions.script(parsed.shell)))
        )
      case "Run":
        return Effect.flatMap(quietErrors, (console) => Effect.withConsole(cli(parsed.argv), console))
    }
  }).pipe(Effect.catchIf(ValidationError.isValidationError, (error) => usageError(validationMessage(error))))
}

/**
 * Run this process's command line and exit when it is done. Everything that
 * reads the process (its arguments, streams, working directory) happens
 * here, not at load: the start-up snapshot evaluates this module once, at
 * build time.
 *
 * @since 0.1.0
 */
export const main = (): void => CommandMain.run(program(process.argv), process.argv.includes("--verbose"))
