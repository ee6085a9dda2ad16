/**
 * Speculation in the interactive session (SPEC §4.12): after a turn ends,
 * ask the `SuggestionGenerator` for the next prompt, show it dimmed in the
 * input line and run its speculation in the background (the hint says how
 * far it got and where it stopped). Tab or Enter on the empty line accepts —
 * the finished work appears at once, with the time saved; typing anything
 * else rejects it (the overlay is deleted, the tree untouched).
 *
 * A speculation that stopped at a boundary is not injected half-done: on
 * accept its suggestion runs as a normal turn, with the normal permission
 * chain.
 *
 * @since 0.1.0
 */
import type * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Speculation from "@switchyard/core/Speculation"
import * as SuggestionGenerator from "@switchyard/core/SuggestionGenerator"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import { paint } from "./Output.js"
import * as Render from "./Render.js"
import * as Runtime from "./Runtime.js"
import * as TerminalUi from "./TerminalUi.js"

const statusOf = (state: Speculation.State): string => {
  switch (state._tag) {
    case "Idle":
      return ""
    case "Running":
      return "· speculating…"
    case "Complete":
      return `· ready (${((state.endedAt - state.startedAt) / 1000).toFixed(1)}s of work) — Tab to accept`
    case "Boundary": {
      const { boundary } = state
      const tool = boundary.toolName === undefined ? "" : ` at ${boundary.toolName}`
      return `· stopped: ${boundary.type}${tool} — Tab to run it`
    }
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Controller {
  /** The hint for the next prompt, if any. */
  readonly hint: () => TerminalUi.Hint | undefined
  /** After a turn: suggest the next prompt and start its speculation (in the background). */
  readonly afterTurn: (session: QueryLoop.Session, stopped: QueryLoop.StopReason | undefined) => Effect.Effect<void>
  /** Accept: inject the finished work, or run the suggestion as a normal turn. */
  readonly accept: (session: QueryLoop.Session, run: (prompt: string) => Effect.Effect<void>) => Effect.Effect<void>
  readonly reject: Effect.Effect<void>
}

/** Print injected messages like the live transcript: text, and one line per tool call. */
const printMessages = (ui: TerminalUi.TerminalUi, messages: ReadonlyArray<Messages.Message>) => {
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue
    for (const block of message.content) {
      if (block.type === "text") ui.line(block.text)
      if (block.type === "tool_use") ui.line(`${paint("green", "⏺")} ${Render.callLabel(block.name, block.input)}`)
    }
  }
}

/**
 * The controller, or `undefined` when no `SuggestionGenerator` is provided.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  ui: TerminalUi.TerminalUi,
  loop: QueryLoop.Options
) =>
  Effect.gen(function*() {
    const generator = yield* Effect.serviceOption(SuggestionGenerator.SuggestionGenerator)
    if (Option.isNone(generator)) return undefined
    const scope = yield* Effect.scope
    const services = yield* Effect.context<
      Speculation.Requirements | Layer.Layer.Context<typeof Runtime.builtinToolsLayer>
    >()
    let hint: TerminalUi.Hint | undefined
    let speculation: Speculation.Speculation | undefined
    let speculationScope: Scope.CloseableScope | undefined

    const startIn = (suggestion: string, context: ToolUseContext.ToolUseContext) =>
      Speculation.start(suggestion, context, { tools: Runtime.builtinToolsLayer, loop, generator: generator.value })

    const drop = Effect.suspend(() => {
      const closing = speculationScope
      speculation = undefined
      speculationScope = undefined
      return closing === undefined ? Effect.void : Scope.close(closing, Exit.void)
    })

    /** Follow a speculation's state on the hint. */
    const follow = (current: TerminalUi.Hint, running: Speculation.Speculation) =>
      running.state.changes.pipe(
        Stream.runForEach((state) => Effect.sync(() => current.update(running.suggestion, statusOf(state)))),
        Effect.forkIn(speculationScope ?? scope)
      )

    const begin = (current: TerminalUi.Hint, running: Speculation.Speculation, own: Scope.CloseableScope) =>
      Effect.gen(function*() {
        speculation = running
        speculationScope = own
        yield* follow(current, running)
      })

    const afterTurn = (session: QueryLoop.Session, stopped: QueryLoop.StopReason | undefined) =>
      Effect.gen(function*() {
        yield* drop
        hint = undefined
        if (stopped !== "end_turn") return
        const current = new TerminalUi.Hint(() => Effect.runFork(drop))
        hint = current
        yield* Effect.gen(function*() {
          const suggestion = yield* generator.value.next(yield* session.messages)
          if (Option.isNone(suggestion) || current.dismissed) return
          const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
          const running = yield* startIn(suggestion.value, yield* Ref.get(session.context)).pipe(
            Scope.extend(own),
            Effect.provide(services)
          )
          if (current.dismissed) return yield* Scope.close(own, Exit.void)
          yield* begin(current, running, own)
        }).pipe(Effect.catchAllCause(() => Effect.void), Effect.forkIn(scope))
      })

    const accept = (session: QueryLoop.Session, run: (prompt: string) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        const running = speculation
        hint = undefined
        if (running === undefined) return
        const state = yield* SubscriptionRef.get(running.state)
        if (state._tag !== "Complete") {
          // Half-done work is not injected here: the suggestion runs as a normal turn.
          yield* drop
          return yield* run(running.suggestion)
        }
        // The messages and the speculation's context changes (read state, todos) reach the session in one step.
        const accepted = yield* running.acceptInto(session.context).pipe(Effect.either)
        speculation = undefined
        if (accepted._tag === "Left") {
          ui.line(paint("red", `Applying the speculation failed: ${accepted.left.message}`))
          return yield* drop
        }
        const result = accepted.right
        printMessages(ui, result.messages)
        const files = result.applied.length === 0 ? "" : `; ${result.applied.length} file(s) written`
        ui.line(paint("gray", `✓ accepted speculation (time saved ${(result.timeSavedMs / 1000).toFixed(1)}s${files})`))
        for (const conflict of result.conflicts) ui.line(paint("yellow", `conflict: ${conflict.message}`))
        if (Option.isNone(result.next)) return yield* drop
        // Pipelining: the next suggestion's speculation already started, in the same scope.
        const current = new TerminalUi.Hint(() => Effect.runFork(drop))
        hint = current
        speculation = result.next.value
        yield* follow(current, result.next.value)
      })

    const controller: Controller = { hint: () => hint, afterTurn, accept, reject: drop }
    return controller
  })
