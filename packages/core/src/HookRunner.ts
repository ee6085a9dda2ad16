/**
 * The live `Hooks` port (SPEC §4.5): Claude Code's hook configuration and
 * protocol, plus programmatic hooks that go through the same pipeline.
 *
 * Command hooks run as `bash -c command` in the project directory with the
 * event JSON on stdin and `CLAUDE_PROJECT_DIR` / `SWITCHYARD_PROJECT_DIR` set.
 * Exit 0: stdout is the JSON answer when it starts with `{`, otherwise plain
 * text (context for the model on UserPromptSubmit, shown to the user
 * otherwise). Exit 2: block, stderr goes to the model. Any other exit, a
 * timeout, a crash or garbage output: a message to the user and no decision.
 * Matching hooks of one event run in parallel, each under its timeout, and
 * their answers combine (deny > ask > allow).
 *
 * @since 0.1.0
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Hooks from "./Hooks.js"
import * as hookMatcher from "./internal/hookMatcher.js"
import * as hookOutcome from "./internal/hookOutcome.js"
import * as hookProcess from "./internal/hookProcess.js"
import * as Messages from "./Messages.js"
import type * as PermissionContext from "./PermissionContext.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * The event JSON a hook receives (on stdin for command hooks, as the argument
 * for programmatic hooks). Field names are Claude Code's.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookInput {
  readonly session_id: string
  readonly transcript_path?: string
  readonly cwd: string
  readonly permission_mode: PermissionContext.PermissionMode
  readonly hook_event_name: Hooks.HookEvent
  /** PreToolUse, PostToolUse, PostToolUseFailure. */
  readonly tool_name?: string
  readonly tool_input?: unknown
  readonly tool_use_id?: string
  /** PostToolUse, PostToolUseFailure: the result content the model would see. */
  readonly tool_response?: Messages.ToolResultContent
  /** PostToolUseFailure: the error text. */
  readonly error?: string
  readonly is_error?: boolean
  /** UserPromptSubmit. */
  readonly prompt?: string
  /** Stop: whether the loop is already continuing because of a Stop hook. */
  readonly stop_hook_active?: boolean
  /** PostToolBatch: the results of the batch, in call order. */
  readonly tool_results?: ReadonlyArray<Messages.ToolResultBlock>
}

/**
 * `hookSpecificOutput` of a hook answer. `updatedMCPToolOutput` is Claude
 * Code's spelling of `updatedToolOutput`; a replacement that is not a
 * `tool_result` content is given to the model as its JSON text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookSpecificOutput = hookOutcome.HookSpecificOutput

/**
 * A hook's JSON answer: `continue` (false stops the loop, with `stopReason`),
 * `suppressOutput`, `systemMessage` (a warning to the user), `decision`
 * (`approve`/`block`) with `reason`, and `hookSpecificOutput`. Unknown keys
 * are ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookOutput = hookOutcome.HookOutput

/**
 * @since 0.1.0
 * @category models
 */
export type HookOutput = Schema.Schema.Type<typeof HookOutput>

/**
 * A hook written as an Effect. Its answer is decoded and combined exactly like
 * a command hook's JSON; a failure, a defect or a timeout is a message to the
 * user, never a crash.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProgrammaticHook {
  readonly event: Hooks.HookEvent
  /** Same syntax as a settings matcher; ignored for events without a tool. */
  readonly matcher?: string
  /** Names the hook in messages and as the source of `updatedInput`. */
  readonly name?: string
  /** Seconds; default the runner's default timeout. */
  readonly timeout?: number
  readonly run: (input: HookInput) => Effect.Effect<HookOutput | void, unknown>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The `hooks` key of the merged settings. */
  readonly hooks: Hooks.HooksSettings
  /** Where command hooks run; exported to them as `CLAUDE_PROJECT_DIR` and `SWITCHYARD_PROJECT_DIR`. */
  readonly projectDir: string
  readonly programmatic?: ReadonlyArray<ProgrammaticHook>
  /** Seconds a hook may run when it sets no `timeout`; default 600. */
  readonly defaultTimeoutSeconds?: number
  /** How long a timed-out hook gets between SIGTERM and SIGKILL; default 2000 ms. */
  readonly killGraceMillis?: number
  /** How many hooks of one event run at once; default unbounded. */
  readonly concurrency?: number | "unbounded"
}

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_SECONDS = 600

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_KILL_GRACE_MILLIS = 2_000

/**
 * The most of a command hook's stdout and of its stderr that is kept (bytes);
 * the rest is read and dropped, and the hook's messages say how much it printed.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_OUTPUT_BYTES: number = hookProcess.MAX_OUTPUT_BYTES

/**
 * Whether a matcher (settings syntax) selects a tool: empty or `*` selects
 * every tool, `a|b` exact names, anything else is a regex over the whole name.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (matcher: string | undefined, toolName: string): boolean =>
  hookMatcher.compile(matcher).matches(toolName)

const TOOL_EVENTS: ReadonlySet<Hooks.HookEvent> = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure"])

const EVENTS: ReadonlyArray<Hooks.HookEvent> = Hooks.HookEvent.literals

interface Entry {
  readonly matches: hookMatcher.ToolMatcher
  /** Identical commands of one event run once: the command string, or the programmatic hook itself. */
  readonly key: string | ProgrammaticHook
  readonly run: (event: Hooks.HookEvent, input: HookInput) => Effect.Effect<hookOutcome.Verdict>
}

/**
 * Build the hooks service from settings and programmatic hooks. The command
 * executor is captured here, so the service's methods need nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Hooks.Service, never, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    const defaultTimeout = options.defaultTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS
    const killGrace = Duration.millis(options.killGraceMillis ?? DEFAULT_KILL_GRACE_MILLIS)
    const concurrency = options.concurrency ?? "unbounded"
    const env = { CLAUDE_PROJECT_DIR: options.projectDir, SWITCHYARD_PROJECT_DIR: options.projectDir }

    const commandEntry = (
      matcher: hookMatcher.ToolMatcher,
      command: string,
      timeoutSeconds: number,
      sandbox: boolean
    ): Entry => ({
      matches: matcher,
      key: command,
      run: (event, input) =>
        Effect.suspend(() =>
          hookProcess.run(executor, {
            command,
            cwd: options.projectDir,
            env,
            stdin: JSON.stringify(input),
            timeout: Duration.seconds(timeoutSeconds),
            killGrace,
            sandbox
          })
        ).pipe(Effect.map((result) => hookOutcome.fromProcess(event, command, result, timeoutSeconds)))
    })

    const programmaticEntry = (hook: ProgrammaticHook, index: number): Entry => {
      const source = hook.name ?? `programmatic hook #${index + 1}`
      const timeoutSeconds = hook.timeout ?? defaultTimeout
      return {
        matches: hookMatcher.compile(hook.matcher).matches,
        key: hook,
        run: (event, input) =>
          Effect.suspend(() => hook.run(input)).pipe(
            Effect.timeoutOption(Duration.seconds(timeoutSeconds)),
            Effect.exit,
            Effect.map((exit) => {
              const name = hookOutcome.label(event, source)
              if (Exit.isFailure(exit)) {
                return hookOutcome.errorVerdict(`${name} failed: ${describeCause(exit.cause)}`)
              }
              if (Option.isNone(exit.value)) {
                return hookOutcome.warningVerdict(`${name} timed out after ${timeoutSeconds}s; it gave no decision`)
              }
              const answer = exit.value.value
              return answer === undefined ? hookOutcome.emptyVerdict : hookOutcome.fromValue(event, source, answer)
            })
          )
      }
    }

    const byEvent = new Map<Hooks.HookEvent, Array<Entry>>(EVENTS.map((event) => [event, []]))
    for (const event of EVENTS) {
      const entries = byEvent.get(event)!
      for (const group of options.hooks[event] ?? []) {
        const compiled = hookMatcher.compile(group.matcher)
        if (compiled.warning !== undefined && TOOL_EVENTS.has(event)) {
          yield* Effect.logWarning(`${event}: ${compiled.warning}`)
        }
        for (const hook of group.hooks) {
          entries.push(
            commandEntry(compiled.matches, hook.command, hook.timeout ?? defaultTimeout, hook.sandbox === true)
          )
        }
      }
    }
    const programmatic = options.programmatic ?? []
    programmatic.forEach((hook, index) => byEvent.get(hook.event)!.push(programmaticEntry(hook, index)))

    // The hooks that run for an event and tool, deduplicated, in config order; cached
    // so `has` stays a map lookup on the dispatch path.
    const selected = new Map<string, ReadonlyArray<Entry>>()
    const select = (event: Hooks.HookEvent, toolName: string | undefined): ReadonlyArray<Entry> => {
      const byTool = TOOL_EVENTS.has(event) && toolName !== undefined
      const cacheKey = byTool ? `${event}\u0000${toolName}` : event
      const cached = selected.get(cacheKey)
      if (cached !== undefined) return cached
      const seen = new Set<Entry["key"]>()
      const result = (byEvent.get(event) ?? []).filter((entry) => {
        if (byTool && !entry.matches(toolName)) return false
        if (seen.has(entry.key)) return false
        seen.add(entry.key)
        return true
      })
      selected.set(cacheKey, result)
      return result
    }

    const dispatch = (
      event: Hooks.HookEvent,
      toolName: string | undefined,
      input: HookInput
    ): Effect.Effect<ReadonlyArray<hookOutcome.Verdict>> => {
      const entries = select(event, toolName)
      const runEntry = (entry: Entry) =>
        entry.run(event, input).pipe(
          // A bug in decoding must not take the dispatcher down either.
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.succeed(hookOutcome.errorVerdict(`${event} hook failed: ${describeCause(cause)}`))
          )
        )
      // One hook needs no fork; several run in parallel.
      return entries.length === 1
        ? Effect.map(runEntry(entries[0]!), (verdict) => [verdict])
        : Effect.forEach(entries, runEntry, { concurrency })
    }

    const service: Hooks.Service = {
      has: (event, toolName) => select(event, toolName).length > 0,
      preToolUse: (request) =>
        Effect.map(
          dispatch("PreToolUse", request.tool.name, {
            ...baseInput("PreToolUse", request.context),
            tool_name: request.tool.name,
            tool_input: request.input,
            tool_use_id: request.toolUseId
          }),
          hookOutcome.combinePreToolUse
        ),
      postToolUse: (request) => {
        const event = request.isError ? "PostToolUseFailure" : "PostToolUse"
        return Effect.map(
          dispatch(event, request.tool.name, {
            ...baseInput(event, request.context),
            tool_name: request.tool.name,
            tool_input: request.input,
            tool_use_id: request.toolUseId,
            tool_response: request.response,
            ...(request.isError ? { error: Messages.contentText(request.response), is_error: true } : {})
          }),
          hookOutcome.combinePostToolUse
        )
      },
      postToolBatch: (request) =>
        Effect.map(
          dispatch("PostToolBatch", undefined, {
            ...baseInput("PostToolBatch", request.context),
            tool_results: request.results
          }),
          hookOutcome.combineLoop
        ),
      userPromptSubmit: (request) =>
        Effect.map(
          dispatch("UserPromptSubmit", undefined, {
            ...baseInput("UserPromptSubmit", request.context),
            prompt: request.prompt
          }),
          hookOutcome.combineLoop
        ),
      stop: (request) =>
        Effect.map(
          dispatch("Stop", undefined, {
            ...baseInput("Stop", request.context),
            stop_hook_active: request.stopHookActive
          }),
          hookOutcome.combineLoop
        )
    }
    return service
  })

/**
 * Provide the live hooks (`Hooks.Hooks`) from settings and programmatic hooks.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Hooks.Hooks, never, CommandExecutor.CommandExecutor> =>
  Layer.effect(Hooks.Hooks, make(options))

const baseInput = (event: Hooks.HookEvent, context: ToolUseContext.ToolUseContext): HookInput => ({
  session_id: context.sessionId,
  ...(context.transcriptPath !== undefined ? { transcript_path: context.transcriptPath } : {}),
  cwd: context.cwd,
  permission_mode: context.permissions.mode,
  hook_event_name: event
})

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (error instanceof Error) return `${error.name}: ${error.message}`
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  if (error !== undefined) return String(error)
  return Cause.pretty(cause).split("\n", 1)[0] ?? "unknown failure"
}
