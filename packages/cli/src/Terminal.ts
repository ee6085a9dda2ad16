/**
 * The interactive session of `switchyard run` in a terminal: the read-eval
 * loop on the terminal UI (`TerminalUi`) — a prompt line, the turn with live
 * output, ESC or Ctrl-C interrupting it (SPEC §4.9), slash commands, the
 * suggested next prompt and its speculation — until Ctrl-D or `/exit`.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Messages from "@switchyard/core/Messages"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as BashMode from "./BashMode.js"
import * as Conversation from "./Conversation.js"
import * as Journaling from "./Journaling.js"
import * as Cost from "./Cost.js"
import type * as CliError from "./CliError.js"
import type * as Memory from "./Memory.js"
import * as Mentions from "./Mentions.js"
import * as ModelLayer from "./ModelLayer.js"
import { paint } from "./Output.js"
import type { Prepared } from "./Runtime.js"
import * as CliRuntime from "./Runtime.js"
import * as McpSlash from "./McpSlash.js"
import * as SlashCommands from "./SlashCommands.js"
import * as SuggestionUi from "./SuggestionUi.js"
import * as TerminalUi from "./TerminalUi.js"

/**
 * Run the interactive session: the terminal is taken over (raw mode) until
 * the session ends.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  options: Conversation.Options
): Effect.Effect<void, CliError.CliError | CliError.SilentExit, NodeContext.NodeContext> =>
  Effect.scoped(Effect.gen(function*() {
    const { loopOptions, memory, model, prepared } = yield* Conversation.setup(options)
    const suggestionsOn = ModelLayer.suggestionsEnabled()
    // The session's journal (SPEC §4.14): where it is read back from and recorded.
    const journal = yield* Journaling.open(prepared)
    const ui = new TerminalUi.TerminalUi()
    const modelLive = yield* ModelLayer.layer(options.model, (text) => ui.notice(text))
    return yield* Effect.acquireUseRelease(
      Effect.sync(() => ui.open()),
      () =>
        Effect.gen(function*() {
          const start = yield* Conversation.startingPoint(
            options,
            prepared.cwd,
            (sessions) => TerminalUi.pickSession(ui, sessions)
          )
          const controller = yield* SuggestionUi.make(ui, loopOptions)
          yield* repl(ui, {
            prepared,
            model,
            loopOptions,
            firstPrompt: options.prompt,
            start,
            memory,
            suggestions: suggestionsOn
          }, controller)
        }).pipe(
          Effect.scoped,
          Effect.provide(suggestionsOn ? ModelLayer.interactiveSuggestions : Layer.empty),
          Effect.provide(
            CliRuntime.layer(prepared, { model: modelLive, prompt: TerminalUi.promptLayer(ui), modelName: model })
          ),
          Effect.provide(Journaling.layer(journal))
        ),
      () => Effect.sync(() => ui.close())
    )
  }))

/**
 * @since 0.1.0
 * @category models
 */
export interface ReplOptions {
  readonly prepared: Prepared
  readonly model: string
  readonly loopOptions: QueryLoop.Options
  /** Sent as the first message (`switchyard "prompt"` in a terminal). */
  readonly firstPrompt: string | undefined
  readonly start: Conversation.Start | undefined
  readonly memory: Memory.Memory
  readonly suggestions: boolean
}

/**
 * The modes Shift+Tab cycles through, as Claude Code's: default, acceptEdits,
 * plan, and bypassPermissions only for a session that started in it.
 *
 * @since 0.1.0
 * @category modes
 */
export const nextMode = (
  mode: PermissionContext.PermissionMode,
  startedIn: PermissionContext.PermissionMode
): PermissionContext.PermissionMode => {
  const cycle: ReadonlyArray<PermissionContext.PermissionMode> = startedIn === "bypassPermissions"
    ? ["default", "acceptEdits", "plan", "bypassPermissions"]
    : ["default", "acceptEdits", "plan"]
  const at = cycle.indexOf(mode)
  return at === -1 ? "default" : cycle[(at + 1) % cycle.length]!
}

const modeNotice = (mode: PermissionContext.PermissionMode): string =>
  mode === "acceptEdits"
    ? paint("magenta", "⏵⏵ accept edits on (shift+tab to cycle)")
    : mode === "plan"
    ? paint("cyan", "⏸ plan mode on (shift+tab to cycle)")
    : mode === "bypassPermissions"
    ? paint("red", "⏵⏵ bypass permissions on (shift+tab to cycle)")
    : paint("gray", `mode ${mode} (shift+tab to cycle)`)

/**
 * The read-eval loop: prompt, run the turn with live output, repeat. A line
 * starting with `/` is a slash command, `#` a memory note, `!` a shell
 * command (bash mode); none of these is a prompt. `@file` mentions complete
 * with Tab and travel with the prompt.
 *
 * @since 0.1.0
 * @category running
 */
export const repl = (
  ui: TerminalUi.TerminalUi,
  options: ReplOptions,
  suggestions?: SuggestionUi.Controller | undefined
): Effect.Effect<
  void,
  never,
  | QueryLoop.Requirements
  | FileSystem.FileSystem
  | Path.Path
  | CommandExecutor.CommandExecutor
  | CliRuntime.LivePermissions
> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const meter = yield* Effect.serviceOption(Cost.Meter)
    const state: SlashCommands.State = {
      ui,
      prepared: options.prepared,
      model: options.model,
      loopOptions: options.loopOptions,
      conversation: yield* Conversation.open(options.prepared, options.start, options.loopOptions),
      usage: Cost.zero,
      turns: 0,
      memory: options.memory,
      meter: Option.getOrUndefined(meter),
      suggestions: options.suggestions
    }
    const cwd = options.prepared.cwd
    /** `typed`: the line as typed, for its `@file` mentions (when `prompt` is already expanded). */
    const runTurn = (prompt: string | ReadonlyArray<Messages.ContentBlock>, typed?: string) =>
      Effect.gen(function*() {
        const { session, recorder } = state.conversation
        ui.listenForInterrupt(() => {
          ui.line(paint("yellow", "⏹ interrupting…"))
          Runtime.runFork(runtime)(session.interrupt("user_interrupt"))
        })
        // `@file` mentions carry the files' content, as Claude Code attaches it.
        const text = typeof prompt === "string" ? prompt : typed
        const attached = text === undefined ? [] : yield* Mentions.attachments(text, cwd)
        const blocks = typeof prompt === "string" ? [Messages.text(prompt)] : prompt
        const events: Array<QueryLoop.LoopEvent> = []
        let stopped: QueryLoop.StopReason | undefined
        yield* session.run(attached.length === 0 ? prompt : [...blocks, ...attached]).pipe(
          Stream.runForEach((event) =>
            Effect.gen(function*() {
              events.push(event)
              if (event._tag === "Stopped") stopped = event.reason
              ui.handle(event)
              yield* recorder.record(event)
            })
          ),
          Effect.ensuring(recorder.sync)
        )
        state.usage = Cost.add(state.usage, Cost.fromEvents(events))
        state.turns += events.filter((e) => e._tag === "TurnStarted").length
        if (suggestions !== undefined) yield* suggestions.afterTurn(session, stopped)
      })
    /** `!command`: run it, show it, and put it in the conversation for the next prompt. */
    const bash = (command: string) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(BashMode.run(command, cwd))
        ui.listenForInterrupt(() => {
          ui.line(paint("yellow", "⏹ interrupting…"))
          Runtime.runFork(runtime)(Fiber.interrupt(fiber))
        })
        const ran = yield* Fiber.join(fiber).pipe(
          Effect.catchAllCause(() => Effect.succeed({ stdout: "", stderr: "(interrupted)\n", exitCode: 130 }))
        )
        if (ran.stdout !== "") ui.line(ran.stdout.trimEnd())
        if (ran.stderr !== "") ui.line(paint("red", ran.stderr.trimEnd()))
        if (ran.exitCode !== 0) ui.line(paint("gray", `(exit code ${ran.exitCode})`))
        const { context, recorder } = state.conversation
        yield* Ref.update(context, (ctx) => ({ ...ctx, messages: [...ctx.messages, BashMode.message(command, ran)] }))
        yield* recorder.sync
      })
    const cycleMode = () => {
      const startedIn = options.prepared.permissions.mode
      const mode = Runtime.runSync(runtime)(
        Ref.modify(state.conversation.context, (ctx) => {
          const next = nextMode(ctx.permissions.mode, startedIn)
          return [next, { ...ctx, permissions: { ...ctx.permissions, mode: next } }] as const
        })
      )
      return modeNotice(mode)
    }
    const mode = options.prepared.permissions.mode
    ui.line(`${paint("bold", "switchyard")} ${paint("gray", `· ${cwd} · ${options.model} · mode ${mode} · /help`)}`)
    if (options.start !== undefined) {
      ui.line(paint("gray", `(resumed session ${options.start.id}: ${options.start.messages.length} messages)`))
    }
    let pending = options.firstPrompt
    while (true) {
      const input: TerminalUi.LineInput = pending !== undefined
        ? { _tag: "Line", text: pending }
        : yield* Effect.promise(() =>
          ui.readLine(paint("bold", "> "), {
            suggestion: suggestions?.hint(),
            complete: (line) => Mentions.complete(line, cwd),
            onShiftTab: cycleMode
          })
        )
      if (pending !== undefined) ui.line(`${paint("bold", ">")} ${pending}`)
      pending = undefined
      if (input._tag === "EndOfInput") break
      if (input._tag === "AcceptSuggestion") {
        if (suggestions === undefined) continue
        const { session, recorder } = state.conversation
        // The injected work joins the transcript like a turn that ran.
        const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
        yield* suggestions.accept(session, (p) => Effect.provide(runTurn(p), platform)).pipe(
          Effect.ensuring(recorder.sync)
        )
        continue
      }
      const prompt = input.text.trim()
      if (prompt === "") continue
      // MCP prompts as slash commands and @server:uri mentions (McpSlash.ts).
      const expanded = yield* McpSlash.expand(prompt)
      if (expanded._tag === "Say") {
        ui.line(paint("yellow", expanded.text))
        continue
      }
      if (expanded._tag === "Send") {
        if (suggestions !== undefined) yield* suggestions.reject
        yield* runTurn(expanded.prompt, prompt)
        continue
      }
      if (prompt.startsWith("/") || prompt.startsWith("#") || prompt.startsWith("!")) {
        if (suggestions !== undefined) yield* suggestions.reject
      }
      if (prompt.startsWith("/")) {
        const next = yield* SlashCommands.run(prompt, state)
        if (next === "exit") break
        continue
      }
      if (prompt.startsWith("#")) {
        yield* SlashCommands.remember(prompt.slice(1), state)
        continue
      }
      if (prompt.startsWith("!")) {
        yield* bash(prompt.slice(1).trim())
        continue
      }
      yield* runTurn(prompt)
    }
  })
