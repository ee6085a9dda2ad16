/**
 * Running one command hook as a child process: `bash -c command` in the project
 * directory, the event JSON on stdin, stdout and stderr collected up to
 * `MAX_OUTPUT_BYTES` each (the rest is read and dropped, and the result says
 * how much), the whole run under the hook's timeout.
 *
 * The platform executor starts the child as its own process group and, when
 * its scope closes, sends SIGTERM to the group and waits without escalating
 * (SPEC §1 traps). A finalizer registered after the start runs first and does
 * the escalation: TERM to the group, a grace period, then KILL to the group,
 * so a hook that traps TERM, or a grandchild that ignores it, is gone when
 * the run ends, on timeout and on interruption alike.
 *
 * A hook that opted in (`"sandbox": true`) runs wrapped by the `Sandbox`
 * service; its own PID namespace ends with it.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as PermissionContext from "../PermissionContext.js"
import * as Sandbox from "../Sandbox.js"
import * as ShellEnvironment from "../ShellEnvironment.js"

/** @internal */
export type ProcessResult =
  | {
    readonly _tag: "Exited"
    readonly code: number
    readonly stdout: string
    readonly stderr: string
    readonly truncated: Truncation | undefined
  }
  | {
    readonly _tag: "Signaled"
    readonly message: string
    readonly stderr: string
    readonly truncated: Truncation | undefined
  }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "SpawnFailed"; readonly message: string }

/** @internal */
export interface ProcessOptions {
  readonly command: string
  readonly cwd: string
  readonly env: Record<string, string>
  readonly stdin: string
  readonly timeout: Duration.Duration
  readonly killGrace: Duration.Duration
  /** Run it in the sandbox (the hook opted in); without a working sandbox it does not run. */
  readonly sandbox?: boolean | undefined
}

/**
 * The most a hook's stdout or stderr contributes: a hook printing 50 MB must
 * not become a 50 MB event (or be held in memory whole).
 *
 * @internal
 */
export const MAX_OUTPUT_BYTES = 256 * 1024

/** How many bytes each stream printed, when one printed more than was kept. @internal */
export interface Truncation {
  readonly stdoutBytes: number
  readonly stderrBytes: number
}

interface Collected {
  readonly text: string
  readonly bytes: number
}

/** Keep the first `MAX_OUTPUT_BYTES`, count the rest; the stream is drained so the child never blocks on a full pipe. */
const collectText = <E>(stream: Stream.Stream<Uint8Array, E>): Effect.Effect<Collected, E> =>
  stream.pipe(
    Stream.runFold({ chunks: [] as Array<Uint8Array>, kept: 0, bytes: 0 }, (acc, chunk) => {
      const room = MAX_OUTPUT_BYTES - acc.kept
      if (room > 0) {
        const part = chunk.length <= room ? chunk : chunk.subarray(0, room)
        acc.chunks.push(part)
        acc.kept += part.length
      }
      acc.bytes += chunk.length
      return acc
    }),
    Effect.map((acc) => {
      const joined = new Uint8Array(acc.kept)
      let offset = 0
      for (const chunk of acc.chunks) {
        joined.set(chunk, offset)
        offset += chunk.length
      }
      // A multi-byte character cut at the cap decodes as one replacement character.
      return { text: new TextDecoder().decode(joined), bytes: acc.bytes }
    })
  )

const empty: Collected = { text: "", bytes: 0 }

const truncationOf = (stdout: Collected, stderr: Collected): Truncation | undefined =>
  stdout.bytes > MAX_OUTPUT_BYTES || stderr.bytes > MAX_OUTPUT_BYTES
    ? { stdoutBytes: stdout.bytes, stderrBytes: stderr.bytes }
    : undefined

/**
 * TERM the group, give the leader `grace` to exit, then KILL the group, so
 * members that trap or ignore TERM die too. The group is signalled even when
 * the leader is gone: a background child that still holds stdout open is what
 * made the run time out. Interruptible inside, because finalizers run
 * uninterruptibly and the waits must be cut by their timeouts.
 */
const terminateGroup = (process: CommandExecutor.Process, grace: Duration.Duration): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* Effect.interruptible(process.kill("SIGTERM")).pipe(Effect.timeoutOption(grace), Effect.ignore)
    yield* Effect.interruptible(process.kill("SIGKILL")).pipe(Effect.timeoutOption(grace), Effect.ignore)
  })

/** @internal */
export const run = (
  executor: CommandExecutor.CommandExecutor,
  options: ProcessOptions
): Effect.Effect<ProcessResult> =>
  Effect.scoped(
    Effect.gen(function*() {
      const wrapped = options.sandbox === true
        ? yield* Effect.either((yield* Sandbox.Sandbox).wrap({
          command: options.command,
          cwd: options.cwd,
          permissions: PermissionContext.empty
        }))
        : undefined
      if (wrapped !== undefined && Either.isLeft(wrapped)) {
        return { _tag: "SpawnFailed", message: wrapped.left.message } satisfies ProcessResult
      }
      const command = (wrapped === undefined
        ? Command.make("bash", "-c", options.command)
        : Command.make(wrapped.right.command, ...wrapped.right.args)).pipe(
          Command.workingDirectory(options.cwd),
          Command.env({
            ...ShellEnvironment.nonInteractive({ ...globalThis.process.env, ...options.env }),
            ...options.env,
            ...(wrapped === undefined ? {} : wrapped.right.env)
          }),
          Command.feed(options.stdin)
        )
      const started = yield* Effect.either(executor.start(command))
      if (Either.isLeft(started)) {
        return { _tag: "SpawnFailed", message: started.left.message } satisfies ProcessResult
      }
      const process = started.right
      // Runs before the executor's own release (finalizers run in reverse order). A hook
      // that finished is left alone, as Claude Code does; one that timed out or was
      // interrupted loses its whole process group.
      let completed = false
      yield* Effect.addFinalizer(() => completed ? Effect.void : terminateGroup(process, options.killGrace))
      const finished = yield* Effect.all(
        [
          Effect.either(collectText(process.stdout)),
          Effect.either(collectText(process.stderr)),
          Effect.either(process.exitCode)
        ],
        { concurrency: "unbounded" }
      ).pipe(Effect.timeoutOption(options.timeout))
      if (Option.isNone(finished)) return { _tag: "TimedOut" } satisfies ProcessResult
      completed = true
      const [stdoutResult, stderrResult, exitCode] = finished.value
      const stdout = Either.getOrElse(stdoutResult, () => empty)
      const stderr = Either.getOrElse(stderrResult, () => empty)
      const truncated = truncationOf(stdout, stderr)
      if (Either.isLeft(exitCode)) {
        return {
          _tag: "Signaled",
          message: exitCode.left.message,
          stderr: stderr.text,
          truncated
        } satisfies ProcessResult
      }
      return {
        _tag: "Exited",
        code: exitCode.right,
        stdout: stdout.text,
        stderr: stderr.text,
        truncated
      } satisfies ProcessResult
    })
  )
