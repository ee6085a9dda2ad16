/**
 * `switchyard dispatch FILE` without the command-line parser: the front
 * (frontStart.ts) runs it here with the defaults the full parser gives every
 * option, reported as main.ts reports every command (commandMain.ts), so a
 * script's most common call starts without `@effect/cli`.
 * test/front.test.ts checks that it prints and exits as the full parser does.
 *
 * @internal
 */
import * as Dispatch from "../Dispatch.js"
import * as CommandMain from "./commandMain.js"

/** Run `dispatch FILE` (`-` for stdin) as this process's command. */
export const dispatch = (file: string): void =>
  CommandMain.run(
    Dispatch.run({
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
      file,
      outputFormat: "text"
    }),
    false
  )
