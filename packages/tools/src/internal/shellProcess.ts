/**
 * Running a command line with `bash -c` through the platform `Command`
 * service, in its own process group, with its stdout and stderr read as
 * lines; and the settings the Bash tool and the background shells share.
 *
 * @internal
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import type * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as ShellEnvironment from "@switchyard/core/ShellEnvironment"
import * as SandboxProcesses from "./sandbox/processes.js"
import * as ProcessGroup from "./shellProcessGroup.js"

/**
 * How shell commands run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** The shell that runs the command line with `-c`. */
  readonly shell: string
  /** Timeout when the call gives none (Claude Code: 2 minutes). */
  readonly defaultTimeout: Duration.Duration
  /** The most a call may ask for (Claude Code: 10 minutes). */
  readonly maxTimeout: Duration.Duration
  /** Between SIGTERM and SIGKILL to the process group. */
  readonly killGracePeriod: Duration.Duration
  /**
   * After the shell exits, how long to wait for the rest of its output when
   * something outside the group still holds the pipes.
   */
  readonly outputDrainTimeout: Duration.Duration
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultSettings: Settings = {
  shell: "bash",
  defaultTimeout: Duration.minutes(2),
  maxTimeout: Duration.minutes(10),
  killGracePeriod: Duration.seconds(2),
  outputDrainTimeout: Duration.seconds(1)
}

/**
 * The shell settings, as a reference with Claude Code's defaults; provide it
 * (for example with `Layer.succeed`) under the tool layers to change them.
 *
 * @since 0.1.0
 * @category services
 */
export class ShellSettings
  extends Context.Reference<ShellSettings>()("@switchyard/tools/internal/shellProcess/ShellSettings", {
    defaultValue: (): Settings => defaultSettings
  })
{}

/**
 * git configuration every shell command runs with, added through
 * `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` after whatever
 * the environment already sets that way (issue 19, class 4):
 * `safe.bareRepository=explicit`, so git does not use a bare repository it
 * discovers by walking into it (`cd vendor/x.git && git status` would run
 * that repository's `core.fsmonitor`); one named with `--git-dir` still works.
 */
export const gitSafety = (environment: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const given = Number(environment["GIT_CONFIG_COUNT"] ?? "0")
  const count = Number.isInteger(given) && given >= 0 ? given : 0
  return {
    GIT_CONFIG_COUNT: String(count + 1),
    [`GIT_CONFIG_KEY_${count}`]: "safe.bareRepository",
    [`GIT_CONFIG_VALUE_${count}`]: "explicit"
  }
}

/** How the shell process ended. */
export type ShellExit =
  | { readonly _tag: "Exited"; readonly code: number }
  | { readonly _tag: "Signaled"; readonly signal: string }

/**
 * A running shell: the platform process (its pid is the process group id)
 * and every line it writes, stdout and stderr interleaved as they arrive.
 */
export interface Shell {
  readonly pid: number
  readonly lines: Stream.Stream<string, PlatformError.PlatformError>
  readonly exit: Effect.Effect<ShellExit>
  /** Whether it runs in the sandbox. */
  readonly sandboxed: boolean
  /** The line naming what the sandbox blocked, when the output shows a refusal (sandboxed only). */
  readonly explain: (output: string) => Effect.Effect<string | undefined>
  /** End the process group (or the sandbox): SIGTERM, then SIGKILL after the grace period. */
  readonly terminate: Effect.Effect<void>
}

/**
 * How to run a command in the sandbox (`SandboxPort.Sandbox`): the rules and
 * directories of its call, and whether the working tree is read-only too.
 */
export interface SandboxLaunch {
  readonly permissions: PermissionContext.PermissionContext
  readonly readOnly: boolean
}

/**
 * Start `command` in `cwd`, in the sandbox when `sandbox` is given. The scope
 * owns the process group (or the sandbox, with its PID namespace): closing
 * it (normally, on failure or on interruption) sends SIGTERM and SIGKILL
 * after the grace period.
 */
export const start = (
  command: string,
  cwd: string,
  sandbox?: SandboxLaunch
): Effect.Effect<
  Shell,
  PlatformError.PlatformError | SandboxPort.SandboxError,
  CommandExecutor.CommandExecutor | Scope.Scope
> =>
  Effect.gen(function*() {
    const settings = yield* ShellSettings
    const wrapped = sandbox === undefined ? undefined : yield* (yield* SandboxPort.Sandbox).wrap({
      command,
      cwd,
      permissions: sandbox.permissions,
      readOnly: sandbox.readOnly,
      shell: settings.shell
    })
    const process = yield* (wrapped === undefined
      ? Command.make(settings.shell, "-c", command)
      : Command.make(wrapped.command, ...wrapped.args).pipe(Command.env(wrapped.env))).pipe(
        Command.workingDirectory(cwd),
        // Repositories the project supplies do not configure git (issue 19 class 4); bwrap passes it through.
        Command.env(gitSafety(globalThis.process.env)),
        // Without SHLVL, bash would take its socket stdin for sshd's and run ~/.bashrc first (ShellEnvironment).
        Command.env(ShellEnvironment.nonInteractive(globalThis.process.env)),
        // Commands that read stdin get end-of-file instead of waiting forever.
        Command.stdin(Stream.empty),
        Command.start
      )
    const terminate = wrapped === undefined
      ? ProcessGroup.terminateGroup(process.pid, settings.killGracePeriod)
      : SandboxProcesses.terminate(process.pid, settings.killGracePeriod)
    // Added after the executor's own release, so it runs first and escalates.
    yield* Effect.addFinalizer(() => terminate)
    const lines = (stream: Stream.Stream<Uint8Array, PlatformError.PlatformError>) =>
      stream.pipe(Stream.decodeText(), Stream.splitLines)
    return {
      pid: process.pid,
      sandboxed: wrapped !== undefined,
      explain: wrapped === undefined ? () => Effect.succeed(undefined) : wrapped.explain,
      terminate,
      lines: Stream.merge(lines(process.stdout), lines(process.stderr)),
      exit: Effect.map(
        Effect.either(process.exitCode),
        Either.match({
          // The executor only fails `exitCode` when there is no code, i.e. a signal ended the shell.
          onLeft: (error): ShellExit => ({
            _tag: "Signaled",
            signal: /SIG[A-Z0-9]+/.exec(`${error.description ?? ""} ${error.message}`)?.[0] ?? "a signal"
          }),
          onRight: (code): ShellExit => ({ _tag: "Exited", code })
        })
      )
    }
  })

/**
 * Read the shell's lines in a fiber of the current scope, handing each chunk
 * of lines to `onLines`. The callback is synchronous on purpose: reading must
 * never wait for a consumer, or a slow one would hold output back past the
 * drain timeout.
 */
export const readLines = (
  shell: Shell,
  onLines: (lines: Chunk.Chunk<string>) => void
): Effect.Effect<Fiber.RuntimeFiber<void>, never, Scope.Scope> =>
  shell.lines.pipe(
    Stream.runForEachChunk((lines) => Effect.sync(() => onLines(lines))),
    // A read error only ends the output; the exit status still tells what happened.
    Effect.ignore,
    Effect.forkScoped
  )

/**
 * End the shell's process group (SIGTERM, then SIGKILL) — after a timeout the
 * shell itself, after a normal exit whatever it left running, whose pipes
 * would otherwise stay open — then wait for the rest of its output.
 */
export const finish = (shell: Shell, reader: Fiber.RuntimeFiber<void>): Effect.Effect<void> =>
  Effect.gen(function*() {
    const settings = yield* ShellSettings
    yield* shell.terminate
    yield* Fiber.join(reader).pipe(Effect.timeoutOption(settings.outputDrainTimeout))
  })

/**
 * A duration for messages: `0.3s`, `45s`, `2m 30s`.
 */
export const formatDuration = (duration: Duration.Duration): string => {
  const millis = Duration.toMillis(duration)
  if (millis < 60_000) return `${Number((millis / 1000).toFixed(1))}s`
  const minutes = Math.floor(millis / 60_000)
  const seconds = Math.round((millis % 60_000) / 1000)
  return seconds === 0 ? `${minutes}m` : `${minutes}m ${seconds}s`
}
