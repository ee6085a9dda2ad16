/**
 * `!command` in the interactive session (Claude Code's bash mode): the
 * command runs in the working directory as the user typed it — no model, no
 * permission question (the user is the one asking) — its output is shown,
 * and the conversation gets it in Claude Code's shape, so the next prompt
 * can refer to it: `<bash-input>` with the command, then `<bash-stdout>` and
 * `<bash-stderr>`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import type * as Messages from "@switchyard/core/Messages"
import * as ShellEnvironment from "@switchyard/core/ShellEnvironment"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * @since 0.1.0
 * @category models
 */
export interface Ran {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/** The most of each stream kept for the conversation. */
const MAX_CHARS = 30_000

const clip = (text: string) => (text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}\n… (output cut)` : text)

/**
 * Run a command with bash in `cwd` (the process is killed if the run is
 * interrupted).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (command: string, cwd: string): Effect.Effect<Ran, never, CommandExecutor.CommandExecutor> =>
  Effect.scoped(Effect.gen(function*() {
    const process = yield* Command.start(
      Command.make("bash", "-c", command).pipe(
        Command.workingDirectory(cwd),
        Command.env(ShellEnvironment.nonInteractive())
      )
    )
    const text = (stream: Stream.Stream<Uint8Array, PlatformError.PlatformError>) =>
      stream.pipe(Stream.decodeText(), Stream.mkString)
    const [stdout, stderr, exitCode] = yield* Effect.all(
      [text(process.stdout), text(process.stderr), process.exitCode],
      { concurrency: "unbounded" }
    )
    return { stdout, stderr, exitCode }
  })).pipe(
    Effect.catchAll((error) => Effect.succeed({ stdout: "", stderr: `${error.message}\n`, exitCode: 127 }))
  )

/**
 * The user message the conversation gets for a command and what it printed.
 *
 * @since 0.1.0
 * @category formatting
 */
export const message = (command: string, ran: Ran): Messages.Message => ({
  role: "user",
  content: [
    { type: "text", text: `<bash-input>${command}</bash-input>` },
    {
      type: "text",
      text: `<bash-stdout>${clip(ran.stdout).trimEnd()}</bash-stdout>` +
        `<bash-stderr>${clip(ran.stderr).trimEnd()}</bash-stderr>`
    }
  ]
})
