/**
 * How a command runs as the process: one line on stderr for a failure (`--verbose` adds the details), the exit
 * code it carries, 130 after Ctrl-C, and the process ends once the output is written. main.ts runs every command
 * it parses this way, and the front's fast paths (fastDispatch.ts) run theirs through the same function, so a
 * command says the same whichever parser started it.
 *
 * @internal
 */
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { CliError, SilentExit } from "../CliError.js"
import { stripColorWhenPiped } from "../Output.js"
import * as Platform from "./platform.js"

/** `program` with every failure reported as the CLI reports it; never fails. */
export const reported = <E, R>(
  program: Effect.Effect<void, E, R>,
  wantsDetails: boolean
): Effect.Effect<void, never, Exclude<R, NodeContext.NodeContext>> =>
  program.pipe(
    Effect.catchAll((error) =>
      Effect.sync(() => {
        if (error instanceof SilentExit) {
          process.exitCode = error.exitCode
          return
        }
        if (error instanceof CliError) {
          process.stderr.write(`switchyard: ${error.message}\n`)
          if (wantsDetails && error.detail !== undefined) process.stderr.write(`${error.detail}\n`)
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
        process.stderr.write(
          `switchyard: unexpected error: ${message.split("\n")[0]} (run with --verbose for details)\n`
        )
        if (wantsDetails) process.stderr.write(`${Cause.pretty(cause)}\n`)
        process.exitCode = 1
      })
    ),
    Effect.provide(Platform.layer)
  )

/**
 * Run `program` as this process's command and exit when it is done. Everything that reads the process (its
 * streams, its signals) happens here, when called, never at load: the start-up snapshots evaluate this module.
 */
export const run = <E>(program: Effect.Effect<void, E, NodeContext.NodeContext>, wantsDetails: boolean): void => {
  // A closed pipe (`switchyard … | head`) ends the program quietly, like other Unix tools.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
      throw error
    })
  }
  stripColorWhenPiped(process.stdout)
  stripColorWhenPiped(process.stderr)
  // Exit once the command is done and its output written: idle keep-alive connections
  // to the API would otherwise hold the process for seconds.
  NodeRuntime.runMain(reported(program, wantsDetails), {
    disableErrorReporting: true,
    teardown: (_, onExit) => {
      const code = typeof process.exitCode === "number" ? process.exitCode : 0
      onExit(code)
      process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
    }
  })
}
