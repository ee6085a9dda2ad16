/**
 * The interactive session of `switchyard run` in a terminal: the read-eval
 * loop on the terminal UI (`TerminalUi`) — a prompt line, the turn with live
 * output, ESC or Ctrl-C interrupting it (SPEC §4.9), slash commands, the
 * suggested next prompt and its speculation — until Ctrl-D or `/exit`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as Conversation from "./Conversation.js"
import * as Journaling from "./Journaling.js"
import * as Cost from "./Cost.js"
import type * as CliError from "./CliError.js"
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
): Effect.Effect<void, CliError.CliError | CliError.SilentExit, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const { loopOptions, model, prepared } = yield* Conversation.setup(options)
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
          yield* repl(ui, { prepared, model, loopOptions, firstPrompt: options.prompt, start }, controller)
        }).pipe(
          Effect.scoped,
          Effect.provide(ModelLayer.interactiveSuggestions),
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
}

/**
 * The read-eval loop: prompt, run the turn with live output, repeat. Lines
 * starting with `/` are slash commands and never reach the model.
 *
 * @since 0.1.0
 * @category running
 */
export const repl = (
  ui: TerminalUi.TerminalUi,
  options: ReplOptions,
  suggestions?: SuggestionUi.Controller | undefined
): Effect.Effect<void, never, QueryLoop.Requirements | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const state: SlashCommands.State = {
      ui,
      prepared: options.prepared,
      model: options.model,
      loopOptions: options.loopOptions,
      conversation: yield* Conversation.open(options.prepared, options.start, options.loopOptions),
      usage: Cost.zero,
      turns: 0
    }
    const runTurn = (prompt: string | ReadonlyArray<Messages.ContentBlock>) =>
      Effect.gen(function*() {
        const { session, recorder } = state.conversation
        ui.listenForInterrupt(() => {
          ui.line(paint("yellow", "⏹ interrupting…"))
          Runtime.runFork(runtime)(session.interrupt("user_interrupt"))
        })
        const events: Array<QueryLoop.LoopEvent> = []
        let stopped: QueryLoop.StopReason | undefined
        yield* session.run(prompt).pipe(
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
    const cwd = options.prepared.cwd
    const mode = options.prepared.permissions.mode
    ui.line(`${paint("bold", "switchyard")} ${paint("gray", `· ${cwd} · ${options.model} · mode ${mode} · /help`)}`)
    if (options.start !== undefined) {
      ui.line(paint("gray", `(resumed session ${options.start.id}: ${options.start.messages.length} messages)`))
    }
    let pending = options.firstPrompt
    while (true) {
      const input: TerminalUi.LineInput = pending !== undefined
        ? { _tag: "Line", text: pending }
        : yield* Effect.promise(() => ui.readLine(paint("bold", "> "), suggestions?.hint()))
      if (pending !== undefined) ui.line(`${paint("bold", ">")} ${pending}`)
      pending = undefined
      if (input._tag === "EndOfInput") break
      if (input._tag === "AcceptSuggestion") {
        if (suggestions === undefined) continue
        const { session, recorder } = state.conversation
        // The injected work joins the transcript like a turn that ran.
        yield* suggestions.accept(session, runTurn).pipe(Effect.ensuring(recorder.sync))
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
        yield* runTurn(expanded.prompt)
        continue
      }
      if (prompt.startsWith("/")) {
        if (suggestions !== undefined) yield* suggestions.reject
        const next = yield* SlashCommands.run(prompt, state)
        if (next === "exit") break
        continue
      }
      yield* runTurn(prompt)
    }
  })
