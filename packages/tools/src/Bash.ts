/**
 * The Bash tool (issue 3): runs a command line with `bash -c` in the call's
 * working directory, in its own process group.
 *
 * - stdout and stderr stream to the caller as progress, line by line, and are
 *   collected, interleaved, into the result. The full text is returned; the
 *   engine persists anything over `maxResultSizeChars` (30 000) as a large
 *   result with a head-and-tail preview (SPEC §4.10).
 * - A non-zero exit is an error result: `Exit code N` and the output — unless
 *   the code is an answer (`grep` 1: no matches, `diff`/`cmp` 1: files
 *   differ, `test` 1: false; the line's last command decides, as `$?`):
 *   then the result is a success that says so (`exit 1: no matches`) and
 *   cancels no sibling (issue 20, item 4).
 * - On timeout (default 2 minutes, at most 10) or when the call is
 *   interrupted, the whole group gets SIGTERM and, after a grace period,
 *   SIGKILL — a child that traps TERM cannot outlive the call. A timeout is an
 *   error result with the output so far.
 * - When the shell exits, anything it left running in its group is ended the
 *   same way; use `run_in_background` for commands that should keep running.
 *   Such a command returns its task id at once, and `TaskOutput`/`TaskStop`
 *   read and stop it.
 * - `isConcurrencySafe` and `isReadOnly` are true exactly when the command is
 *   read-only according to the `ShellAnalysis` port (`layer` provides the
 *   tree-sitter analyser).
 * - With the sandbox on (core `Sandbox`; `sandbox.enabled`), the command runs
 *   in it unless it is an excluded command or asks out with
 *   `dangerouslyDisableSandbox` (refused when `allowUnsandboxedCommands` is
 *   false). A write or a connection the sandbox refused gets one more line
 *   saying what was blocked and how to proceed.
 * - git in a repository whose own configuration may make it run a program
 *   (`core.fsmonitor`, a diff driver, …) asks, naming the entry, even when
 *   the command is read-only or an allow rule matches it.
 * - During a speculation (an active overlay) the command runs in the sandbox
 *   with the working tree read-only, whatever the settings say; without a
 *   working sandbox it does not run.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as OverlayFileSystem from "@switchyard/core/OverlayFileSystem"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Tool from "@switchyard/core/Tool"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { BackgroundShells } from "./BackgroundShells.js"
import * as Footprints from "./internal/footprints.js"
import * as ShellFootprint from "./internal/shellFootprint.js"
import * as ShellGit from "./internal/shellGit.js"
import * as ShellProcess from "./internal/shellProcess.js"
import * as ShellCommand from "./ShellCommand.js"

/**
 * The shell settings (shell, default and maximum timeout, kill grace period),
 * shared with the background shells.
 *
 * @since 0.1.0
 * @category settings
 */
export { defaultSettings, type Settings, ShellSettings } from "./internal/shellProcess.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESULT_SIZE_CHARS = 30_000

/**
 * @since 0.1.0
 * @category schemas
 */
export const BashInput = Schema.Struct({
  command: Schema.String.annotations({ description: "The command to execute" }),
  timeout: Schema.optional(
    Schema.Number.pipe(Schema.positive()).annotations({
      description: "Optional timeout in milliseconds (default 120000; max 600000: a longer timeout is capped to it)"
    })
  ),
  description: Schema.optional(
    Schema.String.annotations({
      description: "Clear, concise description of what this command does in 5-10 words, in active voice."
    })
  ),
  run_in_background: Schema.optional(
    Schema.Boolean.annotations({
      description: "Set to true to run this command in the background. Use TaskOutput to read the output later."
    })
  ),
  dangerouslyDisableSandbox: Schema.optional(
    Schema.Boolean.annotations({
      description: "Set this to true to run the command outside the sandbox. Only after the sandbox blocked " +
        "something the command needs; the user decides."
    })
  )
})

/**
 * @since 0.1.0
 * @category models
 */
export type BashInput = typeof BashInput.Type

/**
 * What a call produced: the output of a command that exited with 0, or the id
 * of a background task.
 *
 * @since 0.1.0
 * @category models
 */
export type BashOutput =
  | {
    readonly _tag: "Completed"
    readonly output: string
    /** A non-zero exit status that is an answer, and what it means (`{ code: 1, meaning: "no matches" }`). */
    readonly answer?: { readonly code: number; readonly meaning: string } | undefined
  }
  | { readonly _tag: "Background"; readonly taskId: string }

/**
 * A progress report: the lines the command wrote since the previous one.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashProgress {
  readonly output: string
  /** Lines written so far. */
  readonly totalLines: number
}

const isReadOnlyCommand = (input: BashInput) =>
  Effect.flatMap(ShellAnalysis.ShellAnalysis, (analysis) => analysis.isReadOnly(input.command))

const failure = (message: string, output: string) =>
  new Tool.ToolError({ message: output.length > 0 ? `${message}\n${output}` : message })

const timeoutOf = (input: BashInput, settings: ShellProcess.Settings): Duration.Duration =>
  input.timeout === undefined
    ? settings.defaultTimeout
    : Duration.min(Duration.millis(input.timeout), settings.maxTimeout)

/**
 * Where this call runs: in the sandbox with the working tree read-only during
 * a speculation (or not at all), else as the sandbox settings say.
 */
const sandboxFor = (
  input: BashInput,
  context: Tool.CallContext<BashProgress>
): Effect.Effect<ShellProcess.SandboxLaunch | undefined, Tool.ToolError> =>
  Effect.gen(function*() {
    const permissions = context.context.permissions
    const service = yield* SandboxPort.Sandbox
    if ((yield* OverlayFileSystem.OverlayStatus).active) {
      const status = yield* service.status
      if (status.available) return { permissions, readOnly: true }
      return yield* Effect.fail(
        new Tool.ToolError({
          message: `During a speculation Bash runs only in the sandbox, with the working tree read-only, and the ` +
            `sandbox is not available here (${status.reason ?? "unknown"}).`
        })
      )
    }
    const mode = yield* SandboxPort.modeOf(service, input)
    if (mode._tag === "Refused") return yield* Effect.fail(new Tool.ToolError({ message: mode.message }))
    return mode._tag === "Sandboxed" ? { permissions, readOnly: false } : undefined
  })

const withExplanation = (output: string, line: string | undefined) =>
  line === undefined ? output : output.length > 0 ? `${output}\n${line}` : line

const runForeground = (
  input: BashInput,
  context: Tool.CallContext<BashProgress>
): Effect.Effect<BashOutput, Tool.ToolError, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const settings = yield* ShellProcess.ShellSettings
    const timeout = timeoutOf(input, settings)
    const sandbox = yield* sandboxFor(input, context)
    const lines: Array<string> = []
    let reported = 0
    let explanation: string | undefined
    const output = () => withExplanation(lines.join("\n").trimEnd(), explanation)
    const exit = yield* Effect.scoped(
      Effect.gen(function*() {
        const shell = yield* ShellProcess.start(input.command, context.context.cwd, sandbox)
        // Progress is reported from its own fiber, so a slow consumer never holds the reading back.
        const pending = yield* Mailbox.make<Chunk.Chunk<string>>()
        const reporter = yield* Mailbox.toStream(pending).pipe(
          Stream.runForEach((chunk) => {
            reported += chunk.length
            return context.progress({ output: Chunk.join(chunk, "\n"), totalLines: reported })
          }),
          Effect.forkScoped
        )
        const reader = yield* ShellProcess.readLines(shell, (chunk) => {
          for (const line of chunk) lines.push(line)
          pending.unsafeOffer(chunk)
        })
        const exit = yield* Effect.timeoutOption(shell.exit, timeout)
        // Ends the group either way: after a timeout the shell, otherwise what it left behind.
        yield* ShellProcess.finish(shell, reader)
        yield* pending.end
        yield* Fiber.join(reporter)
        explanation = yield* shell.explain(lines.join("\n"))
        return exit
      })
    ).pipe(
      Effect.mapError((error) => new Tool.ToolError({ message: `Failed to run the command: ${error.message}` }))
    )
    if (Option.isNone(exit)) {
      return yield* Effect.fail(failure(`Command timed out after ${ShellProcess.formatDuration(timeout)}`, output()))
    }
    if (exit.value._tag === "Signaled") {
      return yield* Effect.fail(failure(`Command terminated by ${exit.value.signal}`, output()))
    }
    if (exit.value.code !== 0) {
      const code = exit.value.code
      const meaning = yield* ShellCommand.exitAnswer(input.command, code)
      if (Option.isNone(meaning)) return yield* Effect.fail(failure(`Exit code ${code}`, output()))
      return { _tag: "Completed", output: output(), answer: { code, meaning: meaning.value } } as const
    }
    return { _tag: "Completed", output: output() } as const
  })

/**
 * @since 0.1.0
 * @category tools
 */
export const Bash = Tool.make<
  BashInput,
  BashOutput,
  BashProgress,
  CommandExecutor.CommandExecutor | BackgroundShells
>("Bash", {
  description: [
    "Executes a bash command and returns its output (stdout and stderr, interleaved).",
    "",
    "- The command runs with `bash -c` in the current working directory, in its own process group.",
    "- Optional timeout in milliseconds (default 120000, max 600000). On timeout the whole process group is",
    "  terminated (SIGTERM, then SIGKILL) and the output so far is returned with the error.",
    "- A non-zero exit status is reported as an error with the exit code and the output.",
    "- Output over 30000 characters is saved in full to a file, and a preview is returned.",
    "- Background processes a command starts are ended when it exits; set run_in_background to keep a long",
    "  command running, and read its output with TaskOutput (stop it with TaskStop).",
    "- Quote paths that contain spaces. Prefer the Read, Glob and Grep tools over cat, find and grep.",
    "- When the sandbox is on, commands run in it: writable are the working directories and $TMPDIR only, and",
    "  the network is limited to the allowed domains. If the sandbox blocked something the command needs, say",
    "  so, or set dangerouslyDisableSandbox: true to let the user decide."
  ].join("\n"),
  input: BashInput,
  maxResultSizeChars: MAX_RESULT_SIZE_CHARS,
  isConcurrencySafe: isReadOnlyCommand,
  isReadOnly: isReadOnlyCommand,
  // Asking to leave the sandbox where that is not allowed is refused before anything runs; git in a repository
  // whose configuration may make it run programs asks, whatever allows the call (`internal/shellGit.ts`).
  checkPermissions: (input, context) =>
    Effect.gen(function*() {
      const mode = yield* Effect.flatMap(SandboxPort.Sandbox, (sandbox) => SandboxPort.modeOf(sandbox, input))
      if (mode._tag === "Refused") return { behavior: "deny", message: mode.message } as const
      const git = yield* ShellGit.check(input.command, context.cwd)
      return git._tag === "Ask" ? { behavior: "ask", message: git.message } as const : { behavior: "allow" } as const
    }),
  // Hard links meet by inode: the same keying as the file tools' footprints.
  footprint: (input, context) =>
    Effect.flatMap(ShellFootprint.footprint(input, context), Footprints.identifiedWhereKnown),
  userFacingName: (input) => (input?.run_in_background === true ? "Bash (background)" : "Bash"),
  call: (input, context) =>
    input.run_in_background === true
      ? Effect.gen(function*() {
        const shells = yield* BackgroundShells
        const sandbox = yield* sandboxFor(input, context)
        const taskId = yield* shells.start(input.command, { cwd: context.context.cwd, sandbox }).pipe(
          Effect.mapError((error) => new Tool.ToolError({ message: `Failed to start the command: ${error.message}` }))
        )
        return { _tag: "Background", taskId } as const
      })
      : runForeground(input, context),
  mapResult: (output) =>
    output._tag === "Background"
      ? `Command running in background with ID: ${output.taskId}`
      : output.answer !== undefined
      ? [output.output, `exit ${output.answer.code}: ${output.answer.meaning}`].filter((s) => s.length > 0).join("\n")
      : output.output.length > 0
      ? output.output
      : "(no output)"
})

/**
 * The Bash tool with the tree-sitter shell analyser captured, so its safety
 * predicates classify commands for real. Needs a `CommandExecutor` (e.g.
 * `NodeContext.layer`) and `BackgroundShells.layer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, Tool.ToolPool | CommandExecutor.CommandExecutor | BackgroundShells> = Tool
  .layer(Bash).pipe(Layer.provide(ShellCommand.layer))
