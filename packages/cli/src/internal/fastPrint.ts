/**
 * `switchyard -p PROMPT` (or `--print PROMPT`) without the command-line
 * parser: the front (frontStart.ts) runs it here with the defaults the full
 * parser gives every option of `run`, reported as main.ts reports every
 * command (commandMain.ts), so the one-shot call scripts and hooks make most
 * starts without `@effect/cli`. test/front.test.ts checks that it prints and
 * exits as the full parser does.
 *
 * @internal
 */
import * as Run from "../Run.js"
import * as CommandMain from "./commandMain.js"

/** Run `-p PROMPT` as this process's command. */
export const print = (prompt: string): void =>
  CommandMain.run(
    Run.run({
      cwd: process.cwd(),
      settingsFiles: [],
      permissionMode: undefined,
      allowedTools: [],
      disallowedTools: [],
      additionalDirectories: [],
      verbose: false,
      tools: undefined,
      settingSources: undefined,
      mcpConfigFiles: [],
      strictMcpConfig: false,
      scheduling: undefined,
      sandbox: false,
      prompt,
      print: true,
      outputFormat: "text",
      inputFormat: "text",
      model: undefined,
      maxTurns: undefined,
      systemPrompt: undefined,
      appendSystemPrompt: undefined,
      continue: false,
      resume: undefined,
      sessionId: undefined,
      forkSession: false,
      fallbackModel: undefined,
      maxBudgetUsd: undefined,
      jsonSchema: undefined,
      permissionPromptTool: undefined,
      includePartialMessages: false,
      includeDispatchEvents: false
    }),
    false
  )
