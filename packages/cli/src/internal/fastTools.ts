/**
 * `switchyard tools list [--json]` without the command-line parser: the
 * front (front.ts) runs it here with the defaults the full parser gives every
 * option, so the most common offline command starts without `@effect/cli`.
 * test/front.test.ts checks that its output equals the full parser's.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { CliError } from "../CliError.js"
import { stripColorWhenPiped } from "../Output.js"
import * as ToolsCommand from "../ToolsCommand.js"
import * as Platform from "./platform.js"

/** Run `tools list`; resolves to the exit code. */
export const list = async (json: boolean): Promise<number> => {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
      throw error
    })
  }
  stripColorWhenPiped(process.stdout)
  stripColorWhenPiped(process.stderr)
  const exit = await Effect.runPromiseExit(
    ToolsCommand.run({
      cwd: process.cwd(),
      settingsFiles: [],
      permissionMode: undefined,
      allowedTools: [],
      disallowedTools: [],
      additionalDirectories: [],
      verbose: false,
      mcpConfigFiles: [],
      strictMcpConfig: false,
      json,
      action: { _tag: "list" }
    }).pipe(Effect.provide(Platform.layer))
  )
  if (Exit.isSuccess(exit)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && failure.value instanceof CliError) {
    process.stderr.write(`switchyard: ${failure.value.message}\n`)
    return failure.value.exitCode
  }
  const squashed = Cause.squash(exit.cause)
  const message = squashed instanceof Error ? squashed.message : String(squashed)
  process.stderr.write(`switchyard: unexpected error: ${message.split("\n")[0]} (run with --verbose for details)\n`)
  return 1
}
