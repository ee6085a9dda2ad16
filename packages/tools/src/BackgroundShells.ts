/**
 * Background shells (issue 3): `Bash` with `run_in_background: true` starts a
 * command detached from the call and returns its task id at once; its output
 * is buffered until `TaskOutput` (alias `BashOutput`) reads it, and
 * `TaskStop` (alias `KillShell`) ends its whole process group — SIGTERM, then
 * SIGKILL after the grace period.
 *
 * The `BackgroundShells` service owns every shell it started: closing the
 * layer's scope kills every group that is still running.
 *
 * @since 0.1.0
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import * as Tool from "@switchyard/core/Tool"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as JSONSchema from "effect/JSONSchema"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as ShellProcess from "./internal/shellProcess.js"
import type * as SandboxPort from "@switchyard/core/Sandbox"

/**
 * @since 0.1.0
 * @category models
 */
export type TaskStatus = "running" | "completed" | "failed" | "killed"

/**
 * A background shell as a read sees it: its state, and the output written
 * since the previous read.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskSnapshot {
  readonly taskId: string
  readonly command: string
  readonly status: TaskStatus
  /** Set once the shell exited on its own. */
  readonly exitCode: number | undefined
  /** New output since the previous read, stdout and stderr interleaved. */
  readonly output: string
}

/**
 * @since 0.1.0
 * @category errors
 */
export class BackgroundTaskNotFound extends Schema.TaggedError<BackgroundTaskNotFound>()("BackgroundTaskNotFound", {
  taskId: Schema.String
}) {
  override get message() {
    return `No background task with ID: ${this.taskId}`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class BackgroundTaskNotRunning extends Schema.TaggedError<BackgroundTaskNotRunning>()(
  "BackgroundTaskNotRunning",
  { taskId: Schema.String, status: Schema.Literal("completed", "failed", "killed") }
) {
  override get message() {
    return `Background task ${this.taskId} is not running (status: ${this.status})`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Start `command` in `cwd` (in the sandbox with `sandbox`); succeeds with the task id once it is spawned. */
  readonly start: (
    command: string,
    options: { readonly cwd: string; readonly sandbox?: ShellProcess.SandboxLaunch | undefined }
  ) => Effect.Effect<string, PlatformError.PlatformError | SandboxPort.SandboxError>
  /**
   * The task's state and its output since the previous read. With `block`, wait
   * first until the task ends or `timeout` passes.
   */
  readonly read: (
    taskId: string,
    options?: { readonly block?: boolean | undefined; readonly timeout?: Duration.DurationInput | undefined }
  ) => Effect.Effect<TaskSnapshot, BackgroundTaskNotFound>
  /** End the task's process group (SIGTERM, then SIGKILL); returns its final state and unread output. */
  readonly stop: (taskId: string) => Effect.Effect<TaskSnapshot, BackgroundTaskNotFound | BackgroundTaskNotRunning>
  /** Every task started so far, without consuming output. */
  readonly list: Effect.Effect<ReadonlyArray<Omit<TaskSnapshot, "output">>>
}

/**
 * @since 0.1.0
 * @category services
 */
export class BackgroundShells
  extends Context.Tag("@switchyard/tools/BackgroundShells/BackgroundShells")<BackgroundShells, Service>()
{}

interface Task {
  readonly id: string
  readonly command: string
  status: TaskStatus
  exitCode: number | undefined
  /** Lines not read yet. */
  unread: Array<string>
  readonly done: Deferred.Deferred<void>
  fiber: Fiber.RuntimeFiber<void> | undefined
}

const snapshot = (task: Task): TaskSnapshot => {
  const output = task.unread.join("\n")
  task.unread = []
  return { taskId: task.id, command: task.command, status: task.status, exitCode: task.exitCode, output }
}

/**
 * The service, owning its shells: closing the scope kills every group still
 * running, all at once.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<BackgroundShells, never, CommandExecutor.CommandExecutor> = Layer.scoped(
  BackgroundShells,
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    const settings = yield* ShellProcess.ShellSettings
    const tasks = new Map<string, Task>()
    let counter = 0

    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        tasks.values(),
        (task) => (task.fiber === undefined ? Effect.void : Fiber.interrupt(task.fiber)),
        { concurrency: "unbounded", discard: true }
      )
    )

    const find = (taskId: string) =>
      Effect.suspend(() => {
        const task = tasks.get(taskId)
        return task === undefined ? Effect.fail(new BackgroundTaskNotFound({ taskId })) : Effect.succeed(task)
      })

    const run = (
      task: Task,
      options: Parameters<Service["start"]>[1],
      started: Deferred.Deferred<void, PlatformError.PlatformError | SandboxPort.SandboxError>
    ) =>
      Effect.scoped(
        Effect.gen(function*() {
          const shell = yield* ShellProcess.start(task.command, options.cwd, options.sandbox)
          yield* Deferred.succeed(started, undefined)
          const reader = yield* ShellProcess.readLines(shell, (lines) => {
            for (const line of lines) task.unread.push(line)
          })
          const exit = yield* shell.exit
          yield* ShellProcess.finish(shell, reader)
          if (task.status === "running") {
            task.exitCode = exit._tag === "Exited" ? exit.code : undefined
            task.status = exit._tag === "Exited" && exit.code === 0 ? "completed" : "failed"
          }
        })
      ).pipe(
        Effect.tapError((error) => Deferred.fail(started, error)),
        Effect.ignore,
        // Whatever ended the run, nobody waits for a start or an end that will not come.
        Effect.ensuring(Effect.zipRight(Deferred.interrupt(started), Deferred.succeed(task.done, undefined))),
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.provideService(ShellProcess.ShellSettings, settings)
      )

    const start: Service["start"] = (command, options) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const task: Task = {
            id: `bash_${++counter}`,
            command,
            status: "running",
            exitCode: undefined,
            unread: [],
            done: yield* Deferred.make<void>(),
            fiber: undefined
          }
          const started = yield* Deferred.make<void, PlatformError.PlatformError | SandboxPort.SandboxError>()
          // Registered and forked together, so that the layer's finalizer kills it whatever happens to this
          // call. (Forked fibers inherit the mask; the shell itself must stay interruptible.)
          tasks.set(task.id, task)
          task.fiber = yield* Effect.forkDaemon(Effect.interruptible(run(task, options, started)))
          yield* restore(Deferred.await(started)).pipe(
            Effect.tapError(() => Effect.sync(() => tasks.delete(task.id)))
          )
          return task.id
        })
      )

    const read: Service["read"] = (taskId, options = {}) =>
      Effect.gen(function*() {
        const task = yield* find(taskId)
        if (options.block === true && task.status === "running") {
          yield* Deferred.await(task.done).pipe(
            Effect.timeoutOption(options.timeout ?? Duration.seconds(30))
          )
        }
        return snapshot(task)
      })

    const stop: Service["stop"] = (taskId) =>
      Effect.gen(function*() {
        const task = yield* find(taskId)
        if (task.status !== "running") {
          return yield* Effect.fail(new BackgroundTaskNotRunning({ taskId, status: task.status }))
        }
        task.status = "killed"
        if (task.fiber !== undefined) yield* Fiber.interrupt(task.fiber)
        return snapshot(task)
      })

    const list: Service["list"] = Effect.sync(() =>
      Array.from(tasks.values(), (task) => ({
        taskId: task.id,
        command: task.command,
        status: task.status,
        exitCode: task.exitCode
      }))
    )

    return BackgroundShells.of({ start, read, stop, list })
  })
)

// --- the tools ---------------------------------------------------------------

const TaskId = Schema.String.annotations({ description: "The ID of the background task" })

/** What the model is told to send; `bash_id`/`shell_id` are accepted as older spellings. */
const TaskIdSpellings = {
  task_id: Schema.optional(TaskId),
  bash_id: Schema.optional(Schema.String.annotations({ description: "Deprecated: use task_id" })),
  shell_id: Schema.optional(Schema.String.annotations({ description: "Deprecated: use task_id" }))
}

const resolveTaskId = (
  input: {
    readonly task_id?: string | undefined
    readonly bash_id?: string | undefined
    readonly shell_id?: string | undefined
  },
  ast: SchemaAST.AST
): Effect.Effect<string, ParseResult.ParseIssue> => {
  const taskId = input.task_id ?? input.bash_id ?? input.shell_id
  return taskId === undefined
    ? ParseResult.fail(new ParseResult.Type(ast, input, "task_id is required"))
    : ParseResult.succeed(taskId)
}

/**
 * A plain object JSON Schema for the API, from the canonical parameters;
 * without the titles Effect's refinements give themselves (`positive`), as
 * `Tool.inputJsonSchema` leaves them out.
 */
const jsonSchemaOf = (schema: Schema.Schema.Any): Tool.JsonObjectSchema => {
  const { $schema: _schema, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  const untitled = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(untitled)
    if (typeof value !== "object" || value === null) return value
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key, child]) =>
          !(key === "title" && typeof child === "string" && /^[a-z][A-Za-z]*(\(.*\))?$/.test(child))
        )
        .map(([key, child]) => [key, untitled(child)])
    )
  }
  return { ...(untitled(rest) as object), type: "object" } as Tool.JsonObjectSchema
}

const Block = Schema.Boolean.annotations({ description: "Whether to wait for the task to finish (default true)" })
const Timeout = Schema.Number.pipe(Schema.positive()).annotations({
  description:
    "Maximum time to wait in milliseconds when blocking (default 30000; max 600000: a longer wait is capped to it)"
})

const TaskOutputParameters = Schema.Struct({
  task_id: TaskId,
  block: Schema.optional(Block),
  timeout: Schema.optional(Timeout)
})

/**
 * TaskOutput's decoded input.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskOutputInput = typeof TaskOutputParameters.Type

const TaskOutputInputSchema = Schema.transformOrFail(
  Schema.Struct({ ...TaskIdSpellings, block: Schema.optional(Block), timeout: Schema.optional(Timeout) }),
  Schema.typeSchema(TaskOutputParameters),
  {
    strict: true,
    decode: (input, _, ast) =>
      Effect.map(resolveTaskId(input, ast), (task_id): TaskOutputInput => ({
        task_id,
        ...(input.block !== undefined ? { block: input.block } : {}),
        ...(input.timeout !== undefined ? { timeout: input.timeout } : {})
      })),
    encode: (output) => ParseResult.succeed(output)
  }
)

const MAX_BLOCK_MILLIS = 600_000
const DEFAULT_BLOCK_MILLIS = 30_000

/**
 * Format a snapshot for the model.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatSnapshot = (task: TaskSnapshot): string =>
  [
    `<task_id>${task.taskId}</task_id>`,
    `<status>${task.status}</status>`,
    ...(task.exitCode !== undefined ? [`<exit_code>${task.exitCode}</exit_code>`] : []),
    task.output.length > 0 ? `<output>\n${task.output}\n</output>` : `<output>(no new output)</output>`
  ].join("\n")

/**
 * Read a background task's new output and status (Claude Code's TaskOutput;
 * the older name `BashOutput` resolves to it).
 *
 * @since 0.1.0
 * @category tools
 */
export const TaskOutput = Tool.make("TaskOutput", {
  aliases: ["BashOutput"],
  description: [
    "Retrieves output from a running or completed background task (a Bash command run with run_in_background).",
    "Returns the output written since the last read, with the task's status and, once it ended, its exit code.",
    "By default waits for the task to finish (block: true) for up to timeout milliseconds; use block: false to",
    "check on a task without waiting."
  ].join("\n"),
  input: TaskOutputInputSchema,
  inputJsonSchema: jsonSchemaOf(TaskOutputParameters),
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  call: (input) =>
    Effect.gen(function*() {
      const shells = yield* BackgroundShells
      return yield* shells.read(input.task_id, {
        block: input.block ?? true,
        timeout: Duration.millis(Math.min(input.timeout ?? DEFAULT_BLOCK_MILLIS, MAX_BLOCK_MILLIS))
      })
    }).pipe(Effect.mapError((error) => new Tool.ToolError({ message: error.message }))),
  mapResult: formatSnapshot
})

const TaskStopParameters = Schema.Struct({ task_id: TaskId })

/**
 * TaskStop's decoded input.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskStopInput = typeof TaskStopParameters.Type

const TaskStopInputSchema = Schema.transformOrFail(
  Schema.Struct(TaskIdSpellings),
  Schema.typeSchema(TaskStopParameters),
  {
    strict: true,
    decode: (input, _, ast) => Effect.map(resolveTaskId(input, ast), (task_id): TaskStopInput => ({ task_id })),
    encode: (output) => ParseResult.succeed(output)
  }
)

/**
 * Stop a background task: SIGTERM to its process group, SIGKILL after the
 * grace period (Claude Code's TaskStop; the older name `KillShell` resolves
 * to it).
 *
 * @since 0.1.0
 * @category tools
 */
export const TaskStop = Tool.make("TaskStop", {
  aliases: ["KillShell"],
  description: "Stops a running background task (a Bash command run with run_in_background) and its child processes.",
  input: TaskStopInputSchema,
  inputJsonSchema: jsonSchemaOf(TaskStopParameters),
  call: (input) =>
    Effect.gen(function*() {
      const shells = yield* BackgroundShells
      return yield* shells.stop(input.task_id)
    }).pipe(Effect.mapError((error) => new Tool.ToolError({ message: error.message }))),
  mapResult: (task) =>
    [
      `Stopped background task ${task.taskId} (${task.command})`,
      ...(task.output.length > 0 ? [`Unread output:\n${task.output}`] : [])
    ].join("\n")
})

/**
 * @since 0.1.0
 * @category layers
 */
export const TaskOutputLive = Tool.layer(TaskOutput)

/**
 * @since 0.1.0
 * @category layers
 */
export const TaskStopLive = Tool.layer(TaskStop)

/**
 * Both background-task tools. They need `BackgroundShells`, shared with Bash.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTools = Layer.mergeAll(TaskOutputLive, TaskStopLive)
