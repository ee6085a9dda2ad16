/**
 * `switchyard -p PROMPT …` without the command-line parser: the front
 * (frontStart.ts) runs here the lines printArguments.ts accepts, with the
 * values the full parser would give every option of `run` (its defaults for
 * the rest), mapped by the same function (runOptions.ts) and reported as
 * main.ts reports every command (commandMain.ts), so the one-shot calls
 * scripts and hooks make start without `@effect/cli`. test/front.test.ts
 * checks that it prints and exits as the full parser does.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Run from "../Run.js"
import * as CommandMain from "./commandMain.js"
import type * as PrintArguments from "./printArguments.js"
import * as RunOptions from "./runOptions.js"

const optional = <A>(value: A | undefined): Option.Option<A> => Option.fromNullable(value)

/** `run`'s parsed options for an accepted `-p` line. */
export const runArgs = (line: PrintArguments.PrintArguments): RunOptions.RunArgs => {
  const { flags, lists, values } = line
  const maxTurns = values["max-turns"]
  return {
    cwd: optional(values.cwd),
    settings: lists.settings,
    // printArguments.ts let only the parser's choices through.
    permissionMode: optional(values["permission-mode"]) as RunOptions.RunArgs["permissionMode"],
    allowedTools: lists["allowed-tools"],
    disallowedTools: lists["disallowed-tools"],
    addDir: lists["add-dir"],
    dangerouslySkipPermissions: flags["dangerously-skip-permissions"],
    verbose: flags.verbose,
    tools: [],
    settingSources: Option.none(),
    mcpConfig: lists["mcp-config"],
    strictMcpConfig: flags["strict-mcp-config"],
    scheduling: Option.none(),
    sandbox: false,
    prompt: Option.some(line.prompt),
    print: true,
    outputFormat: (values["output-format"] ?? "text") as RunOptions.RunArgs["outputFormat"],
    inputFormat: "text",
    model: optional(values.model),
    maxTurns: maxTurns === undefined ? Option.none() : Option.some(Number(maxTurns)),
    systemPrompt: optional(values["system-prompt"]),
    appendSystemPrompt: optional(values["append-system-prompt"]),
    continue: flags.continue,
    resume: optional(values.resume),
    sessionId: optional(values["session-id"]),
    forkSession: false,
    fallbackModel: optional(values["fallback-model"]),
    maxBudgetUsd: Option.none(),
    jsonSchema: Option.none(),
    permissionPromptTool: Option.none(),
    includePartialMessages: false,
    includeDispatchEvents: false
  }
}

/** Run an accepted `-p` line as this process's command. */
export const print = (line: PrintArguments.PrintArguments): void =>
  CommandMain.run(Run.run(RunOptions.run(runArgs(line))), false)
