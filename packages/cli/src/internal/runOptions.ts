/**
 * From the parsed command line to a command's options: what main.ts's
 * `@effect/cli` commands hand to the engine, and what fastPrint.ts hands it
 * for the `-p` lines the front runs without the parser (printArguments.ts),
 * so both go through one mapping.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as Conversation from "../Conversation.js"
import type * as Runtime from "../Runtime.js"

/** `--cwd`, or the process's working directory (read when the command runs, never at load). */
export const workingDirectory = (cwd: Option.Option<string>): string => Option.getOrElse(cwd, () => process.cwd())

/** The options every engine command shares, as the parser gives them. */
export interface CommonArgs {
  readonly cwd: Option.Option<string>
  readonly settings: ReadonlyArray<string>
  readonly permissionMode: Option.Option<Runtime.CommonOptions["permissionMode"] & string>
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  readonly addDir: ReadonlyArray<string>
  readonly dangerouslySkipPermissions: boolean
  readonly verbose: boolean
  readonly tools: ReadonlyArray<string>
  readonly settingSources: Option.Option<string>
  readonly mcpConfig: ReadonlyArray<string>
  readonly strictMcpConfig: boolean
  readonly scheduling: Option.Option<"greedy" | "footprints">
}

/** `run`'s options, as the parser gives them. */
export interface RunArgs extends CommonArgs {
  readonly sandbox: boolean
  readonly prompt: Option.Option<string>
  readonly print: boolean
  readonly outputFormat: "text" | "json" | "stream-json"
  readonly inputFormat: "text" | "stream-json"
  readonly model: Option.Option<string>
  readonly maxTurns: Option.Option<number>
  readonly systemPrompt: Option.Option<string>
  readonly appendSystemPrompt: Option.Option<string>
  readonly continue: boolean
  readonly resume: Option.Option<string>
  readonly sessionId: Option.Option<string>
  readonly forkSession: boolean
  readonly fallbackModel: Option.Option<string>
  readonly maxBudgetUsd: Option.Option<number>
  readonly jsonSchema: Option.Option<string>
  readonly permissionPromptTool: Option.Option<string>
  readonly includePartialMessages: boolean
  readonly includeDispatchEvents: boolean
}

/** The engine's common options. */
export const common = (args: CommonArgs): Runtime.CommonOptions => ({
  cwd: workingDirectory(args.cwd),
  settingsFiles: args.settings,
  permissionMode: args.dangerouslySkipPermissions ? "bypassPermissions" : Option.getOrUndefined(args.permissionMode),
  allowedTools: args.allowedTools,
  disallowedTools: args.disallowedTools,
  additionalDirectories: args.addDir,
  verbose: args.verbose,
  tools: args.tools.length === 0 ? undefined : args.tools,
  settingSources: Option.getOrUndefined(args.settingSources),
  mcpConfigFiles: args.mcpConfig,
  strictMcpConfig: args.strictMcpConfig,
  scheduling: Option.getOrUndefined(args.scheduling)
})

/** `run`'s options for the conversation. */
export const run = (args: RunArgs): Conversation.Options => ({
  ...common(args),
  sandbox: args.sandbox,
  prompt: Option.getOrUndefined(args.prompt),
  print: args.print,
  outputFormat: args.outputFormat,
  inputFormat: args.inputFormat,
  model: Option.getOrUndefined(args.model),
  maxTurns: Option.getOrUndefined(args.maxTurns),
  systemPrompt: Option.getOrUndefined(args.systemPrompt),
  appendSystemPrompt: Option.getOrUndefined(args.appendSystemPrompt),
  continue: args.continue,
  resume: Option.getOrUndefined(args.resume),
  sessionId: Option.getOrUndefined(args.sessionId),
  forkSession: args.forkSession,
  fallbackModel: Option.getOrUndefined(args.fallbackModel),
  maxBudgetUsd: Option.getOrUndefined(args.maxBudgetUsd),
  jsonSchema: Option.getOrUndefined(args.jsonSchema),
  permissionPromptTool: Option.getOrUndefined(args.permissionPromptTool),
  includePartialMessages: args.includePartialMessages,
  includeDispatchEvents: args.includeDispatchEvents
})
