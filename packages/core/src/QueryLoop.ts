/**
 * The query loop (SPEC §4.11, chapter 5.10): stream a model turn, hand
 * each completed `tool_use` to a fresh streaming executor at
 * `content_block_stop` so tools run while the model is still streaming, drain
 * the rest, append the assistant message and one user message with every
 * `tool_result` in call order, and repeat until a turn has no tool use, a hook
 * says stop, the turn limit is hit, or the user interrupts.
 *
 * The loop is a `Stream` of `LoopEvent`s. Whatever ends it — a model error,
 * an interrupt, or the consumer going away — every `tool_use` that reaches
 * the transcript gets exactly one `tool_result` (synthetic if it never ran).
 * A `tool_use` whose input is not valid JSON — malformed, cut off by
 * `max_tokens` or by a stream that broke inside it — gets an error
 * `tool_result` (`InputValidationError: the input is not valid JSON: …`), the
 * other calls of the message run, and the loop goes on (SPEC §6).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Deferral from "./Deferral.js"
import { closeBlock, endOfResponse, type OpenBlock } from "./internal/responseBlocks.js"
import type * as DispatchEvent from "./DispatchEvent.js"
import * as Execution from "./Execution.js"
import * as Hooks from "./Hooks.js"
import * as Interruption from "./Interruption.js"
import * as Journal from "./Journal.js"
import * as Messages from "./Messages.js"
import * as Model from "./Model.js"
import type * as Registry from "./Registry.js"
import * as Results from "./Results.js"
import * as StreamingExecutor from "./StreamingExecutor.js"
import * as Tool from "./Tool.js"
import * as ToolCall from "./ToolCall.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * Why a run ended.
 *
 * @since 0.1.0
 * @category models
 */
export type StopReason =
  | "end_turn"
  | "max_turns"
  | "hook_stop"
  | "interrupted"
  | "new_message"
  | "error"
  | "prompt_blocked"
  /** `Options.beforeRequest` stopped the run before a model request (a spending limit). */
  | "budget"

/**
 * @since 0.1.0
 * @category models
 */
export type LoopEvent = Data.TaggedEnum<{
  TurnStarted: { readonly turn: number; readonly at: number }
  TextDelta: { readonly turn: number; readonly index: number; readonly text: string }
  ThinkingDelta: { readonly turn: number; readonly index: number; readonly thinking: string }
  /** A model stream event as it arrived (only with `Options.modelEvents`). */
  ModelEvent: { readonly turn: number; readonly event: Model.ModelStreamEvent }
  /** A completed `tool_use` block, handed to the executor. */
  ToolUse: { readonly turn: number; readonly block: Messages.ToolUseBlock; readonly at: number }
  /** An event of the turn's dispatcher (progress, permission, result, …). */
  Tool: { readonly turn: number; readonly event: DispatchEvent.DispatchEvent }
  AssistantMessage: { readonly turn: number; readonly message: Messages.Message }
  ToolResults: { readonly turn: number; readonly message: Messages.Message }
  Usage: { readonly turn: number; readonly usage: Model.Usage }
  HookMessage: {
    readonly hookEvent: Hooks.HookEvent
    readonly content: string
    readonly level: DispatchEvent.HookMessageLevel
  }
  /**
   * The model's response for this turn is complete (tools may still be
   * running). `message`: the assistant message as the conversation will hold
   * it (absent when the response had no content), so that a transcript can
   * record it before the tools finish.
   */
  ResponseEnded: {
    readonly turn: number
    readonly stopReason: Model.StopReason | undefined
    readonly at: number
    readonly message?: Messages.Message | undefined
    /** The API message's id and model (from `message_start`), when the model sent them. */
    readonly id?: string | undefined
    readonly model?: string | undefined
    /** The stop sequence that ended the response (`message_delta`), if one did. */
    readonly stopSequence?: string | undefined
    /** The response's usage: `message_start`'s, each field `message_delta` reports replaced by that value. */
    readonly usage?: Model.Usage | undefined
  }
  /** Something ended the turn abnormally (model error, malformed input, …). */
  Error: { readonly turn: number; readonly reason: string; readonly message: string }
  TurnEnded: { readonly turn: number; readonly stopReason: Model.StopReason | undefined; readonly at: number }
  Stopped: { readonly reason: StopReason; readonly turns: number; readonly detail: string | undefined }
}>

/**
 * `LoopEvent.TextDelta({...})`, `LoopEvent.$is("Stopped")`, …
 *
 * @since 0.1.0
 * @category constructors
 */
export const LoopEvent = Data.taggedEnum<LoopEvent>()

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly system?: string | undefined
  /** Default 100. */
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  readonly model?: string | undefined
  /** Overrides the tool concurrency cap. */
  readonly concurrency?: number | undefined
  readonly siblingCancellation?: StreamingExecutor.SiblingCancellation | undefined
  /** Default `"footprints"` (SPEC §4.13); `"greedy"` restores the chapter's schedule. */
  readonly scheduling?: StreamingExecutor.Scheduling | undefined
  /**
   * `true` (default): tools start at their `content_block_stop`. `false`: wait
   * for the whole message first (the non-streaming baseline, for benchmarks).
   */
  readonly streaming?: boolean | undefined
  /** Tools the loop must not offer (e.g. `Agent` inside an agent). */
  readonly excludeTools?: ReadonlyArray<string> | undefined
  /**
   * The run's node in the interruption tree (default: a fresh root per run).
   * Each turn's executor is its child while the turn runs.
   */
  readonly interruption?: Interruption.InterruptionNode | undefined
  /** Emit every model stream event as a `ModelEvent` (for consumers that relay the raw stream). */
  readonly modelEvents?: boolean | undefined
  /**
   * Asked before each model request after the first; a reason stops the run
   * there (`Stopped` with reason `budget` and that detail), e.g. a spending
   * limit reached.
   */
  readonly beforeRequest?: ((turn: number) => Effect.Effect<string | undefined>) | undefined
  /**
   * Context for every request that is not part of the conversation (Claude
   * Code's user context: memory files): its blocks are put at the start of
   * the first user message of each request, read afresh for each one, and
   * never recorded.
   */
  readonly userContext?: Effect.Effect<ReadonlyArray<Messages.ContentBlock>> | undefined
  /**
   * Run each turn, its model call and its tool calls as durable steps (SPEC
   * §4.14; `@switchyard/durable`). When the session stopped in a turn whose
   * response is recorded, the next run finishes that turn from the journal
   * first, then sends its prompt: one model request with both. Default:
   * `Journal.none`.
   */
  readonly journal?: Journal.Journal | undefined
}

/**
 * What the conversation says where the user interrupted a response
 * (Claude Code's words).
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTED = "[Request interrupted by user]"

/**
 * What the tool results message says when the user interrupted running tools.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"

/**
 * The messages as a request sends them: consecutive user messages (an
 * interruption followed by the next prompt) joined into one, so roles
 * alternate.
 *
 * @since 0.1.0
 * @category requests
 */
export const forRequest = (messages: ReadonlyArray<Messages.Message>): ReadonlyArray<Messages.Message> => {
  const out: Array<Messages.Message> = []
  for (const message of messages) {
    const last = out.at(-1)
    if (last !== undefined && last.role === "user" && message.role === "user") {
      out[out.length - 1] = { role: "user", content: [...Messages.blocks(last), ...Messages.blocks(message)] }
    } else {
      out.push(message)
    }
  }
  return out
}

/**
 * The messages of a request with `blocks` at the start of the first user
 * message.
 *
 * @since 0.1.0
 * @category requests
 */
export const withUserContext = (
  messages: ReadonlyArray<Messages.Message>,
  blocks: ReadonlyArray<Messages.ContentBlock>
): ReadonlyArray<Messages.Message> => {
  const first = messages[0]
  if (blocks.length === 0 || first === undefined || first.role !== "user") return messages
  return [{ role: "user", content: [...blocks, ...Messages.blocks(first)] }, ...messages.slice(1)]
}

/**
 * What the loop needs from its environment.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Model.LanguageModel | Registry.ToolRegistry | Results.ResultStore

/**
 * A conversation: its context (messages included) survives across runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly context: Ref.Ref<ToolUseContext.ToolUseContext>
  /** Run the loop for one user prompt. */
  readonly run: (prompt: string | ReadonlyArray<Messages.ContentBlock>) => Stream.Stream<LoopEvent>
  /**
   * Interrupt the run that is current when this Effect runs (it may be built
   * at any time): `user_interrupt` stops it, `new_message` lets `block` tools
   * finish. With no run in progress it does nothing.
   */
  readonly interrupt: (reason: "user_interrupt" | "new_message") => Effect.Effect<void>
  readonly messages: Effect.Effect<ReadonlyArray<Messages.Message>>
}

/**
 * Make a session. Its runs need nothing more: the model, registry and result
 * store are captured here.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSession = (
  context: ToolUseContext.ToolUseContext | Ref.Ref<ToolUseContext.ToolUseContext>,
  options: Options = {}
): Effect.Effect<Session, never, Requirements> =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Requirements>()
    const contextRef = Ref.RefTypeId in context ? context : yield* Ref.make(context)
    let current: Interruption.InterruptionNode | undefined
    const run = (prompt: string | ReadonlyArray<Messages.ContentBlock>): Stream.Stream<LoopEvent> =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const out = yield* Mailbox.make<LoopEvent>({ capacity: Execution.MAILBOX_CAPACITY, strategy: "suspend" })
          const node = options.interruption ?? (yield* Interruption.makeRoot)
          current = node
          const emit = (event: LoopEvent) => Effect.asVoid(out.offer(event))
          yield* loop(prompt, contextRef, node, emit, options).pipe(
            Effect.provide(services),
            Mailbox.into(out),
            Effect.forkScoped
          )
          return Mailbox.toStream(out)
        })
      )
    return {
      context: contextRef,
      run,
      // Read when the Effect runs, not when it is built: `Effect.sleep(…).pipe(Effect.zipRight(interrupt))`.
      interrupt: (reason) => Effect.suspend(() => (current === undefined ? Effect.void : current.abort(reason))),
      messages: Effect.map(Ref.get(contextRef), (ctx) => ctx.messages)
    }
  })

/**
 * Run the loop once for a prompt in a fresh conversation.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  prompt: string | ReadonlyArray<Messages.ContentBlock>,
  context: ToolUseContext.ToolUseContext | Ref.Ref<ToolUseContext.ToolUseContext>,
  options: Options = {}
): Stream.Stream<LoopEvent, never, Requirements> =>
  Stream.unwrap(Effect.map(makeSession(context, options), (session) => session.run(prompt)))

/**
 * The final assistant text of a run's events (what `-p` prints).
 *
 * @since 0.1.0
 * @category getters
 */
export const finalText = (events: Iterable<LoopEvent>): string => {
  let text = ""
  for (const event of events) {
    if (event._tag !== "AssistantMessage") continue
    const parts = Messages.blocks(event.message).flatMap((b) => (b.type === "text" ? [b.text] : []))
    if (parts.length > 0) text = parts.join("")
  }
  return text
}

type Emit = (event: LoopEvent) => Effect.Effect<void>

const appendMessages = (
  contextRef: Ref.Ref<ToolUseContext.ToolUseContext>,
  messages: ReadonlyArray<Messages.Message>
) => Ref.update(contextRef, (ctx) => ({ ...ctx, messages: [...ctx.messages, ...messages] }))

const emitHookMessages = (emit: Emit, hookEvent: Hooks.HookEvent, messages: ReadonlyArray<Hooks.HookMessage>) =>
  Effect.forEach(messages, (m) => emit(LoopEvent.HookMessage({ hookEvent, content: m.content, level: m.level })), {
    discard: true
  })

const interruptedStop = (reason: Interruption.InterruptReason): StopReason =>
  reason === "new_message" ? "new_message" : "interrupted"

const interruptedDetail = (reason: Interruption.InterruptReason): string | undefined =>
  reason === "permission_rejected" ? "a tool use was rejected" : reason === "user_interrupt" ? "by the user" : undefined

const loop = (
  prompt: string | ReadonlyArray<Messages.ContentBlock>,
  contextRef: Ref.Ref<ToolUseContext.ToolUseContext>,
  node: Interruption.InterruptionNode,
  emit: Emit,
  options: Options
): Effect.Effect<void, never, Requirements> =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.Hooks
    const maxTurns = options.maxTurns ?? 100
    const journal = options.journal ?? Journal.none
    const stopped = (reason: StopReason, turns: number, detail?: string | undefined) =>
      emit(LoopEvent.Stopped({ reason, turns, detail }))
    const journaledTurn = (turn: number) =>
      journal.turn({ turn, context: contextRef }, runTurn(turn, contextRef, node, emit, options)).pipe(
        Effect.catchTag("JournalError", (error) =>
          Effect.succeed<TurnOutcome>({
            toolResults: [],
            failure: error.message,
            abort: Option.none(),
            hookStop: Option.none()
          }))
      )

    // A turn the process stopped in is finished from the journal first (its calls answered
    // per SPEC §4.14); the prompt then joins its results in the next request.
    let first = 1
    const unfinished = yield* Effect.either(journal.unfinished(contextRef))
    if (Either.isLeft(unfinished)) return yield* stopped("error", 0, unfinished.left.message)
    if (unfinished.right) {
      const outcome = yield* journaledTurn(1)
      if (outcome.failure !== undefined) return yield* stopped("error", 1, outcome.failure)
      if (Option.isSome(outcome.abort)) {
        return yield* stopped(interruptedStop(outcome.abort.value), 1, interruptedDetail(outcome.abort.value))
      }
      if (Option.isSome(outcome.hookStop)) return yield* stopped("hook_stop", 1, outcome.hookStop.value)
      first = 2
    }

    // UserPromptSubmit: may block the prompt, stop, or add context. No prompt (an empty
    // array): the loop goes on from the conversation as it is.
    let userContent: Array<Messages.ContentBlock> = typeof prompt === "string" ? [Messages.text(prompt)] : [...prompt]
    const noPrompt = typeof prompt !== "string" && prompt.length === 0
    if (hooks.has("UserPromptSubmit") && !noPrompt) {
      const promptText = typeof prompt === "string"
        ? prompt
        : prompt.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n")
      const outcome = yield* hooks.userPromptSubmit({ context: yield* Ref.get(contextRef), prompt: promptText })
      yield* emitHookMessages(emit, "UserPromptSubmit", outcome.messages)
      if (outcome.blockReason !== undefined) return yield* stopped("prompt_blocked", 0, outcome.blockReason)
      if (outcome.stop !== undefined) return yield* stopped("hook_stop", 0, outcome.stop)
      userContent = [...userContent, ...outcome.additionalContext.map(Messages.text)]
    }
    if (!noPrompt) yield* appendMessages(contextRef, [{ role: "user", content: userContent }])

    let stopHookActive = false
    for (let turn = first;; turn++) {
      if (turn > maxTurns) return yield* stopped("max_turns", turn - 1, `Reached the limit of ${maxTurns} turns`)
      const aborted = node.reason()
      if (Option.isSome(aborted)) {
        return yield* stopped(interruptedStop(aborted.value), turn - 1, interruptedDetail(aborted.value))
      }
      if (turn > 1 && options.beforeRequest !== undefined) {
        const reason = yield* options.beforeRequest(turn)
        if (reason !== undefined) return yield* stopped("budget", turn - 1, reason)
      }

      const outcome = yield* journaledTurn(turn)
      if (outcome.failure !== undefined) return yield* stopped("error", turn, outcome.failure)
      if (Option.isSome(outcome.abort)) {
        return yield* stopped(interruptedStop(outcome.abort.value), turn, interruptedDetail(outcome.abort.value))
      }
      if (Option.isSome(outcome.hookStop)) return yield* stopped("hook_stop", turn, outcome.hookStop.value)

      if (outcome.toolResults.length === 0) {
        if (hooks.has("Stop")) {
          const stop = yield* hooks.stop({ context: yield* Ref.get(contextRef), stopHookActive })
          yield* emitHookMessages(emit, "Stop", stop.messages)
          if (stop.stop !== undefined) return yield* stopped("hook_stop", turn, stop.stop)
          if (stop.blockReason !== undefined) {
            // A Stop hook that blocks keeps the model going, with its reason as the next prompt.
            stopHookActive = true
            yield* appendMessages(contextRef, [{ role: "user", content: [Messages.text(stop.blockReason)] }])
            continue
          }
        }
        return yield* stopped("end_turn", turn)
      }
      stopHookActive = false
    }
  })

interface TurnOutcome {
  readonly toolResults: ReadonlyArray<Messages.ToolResultBlock>
  readonly failure: string | undefined
  readonly abort: Option.Option<Interruption.InterruptReason>
  readonly hookStop: Option.Option<string>
}

class TurnFailure extends Data.TaggedError("TurnFailure")<{ readonly reason: string; readonly message: string }> {}

const runTurn = (
  turn: number,
  contextRef: Ref.Ref<ToolUseContext.ToolUseContext>,
  node: Interruption.InterruptionNode,
  emit: Emit,
  options: Options
): Effect.Effect<TurnOutcome, never, Requirements> =>
  Effect.scoped(Effect.gen(function*() {
    const model = yield* Model.LanguageModel
    const hooks = yield* Hooks.Hooks
    yield* emit(LoopEvent.TurnStarted({ turn, at: yield* Clock.currentTimeMillis }))
    const baseEnv = yield* Execution.makeEnvironment(contextRef)
    const excluded = new Set(options.excludeTools ?? [])
    const env: Execution.Environment = excluded.size === 0
      ? baseEnv
      : { ...baseEnv, tools: baseEnv.tools.filter((t) => !excluded.has(t.name)) }
    const executor = yield* StreamingExecutor.make(env, {
      interruption: node,
      concurrency: options.concurrency,
      siblingCancellation: options.siblingCancellation,
      scheduling: options.scheduling
    })
    // The finished turn leaves the tree: later aborts no longer reach it, and it can be collected.
    yield* Effect.addFinalizer(() => executor.interruption.detach)
    const consumer = yield* executor.results.pipe(
      Stream.runForEach((event) => emit(LoopEvent.Tool({ turn, event }))),
      Effect.fork
    )

    const open = new Map<number, OpenBlock>()
    const closed: Array<{ readonly index: number; readonly block: Messages.ContentBlock }> = []
    const toolUses: Array<Messages.ToolUseBlock> = []
    const toolCalls: Array<ToolCall.ToolCall> = []
    let stopReason: Model.StopReason | undefined
    let sawMessageStop = false
    let response: { id?: string; model?: string; usage?: Model.Usage; stopSequence?: string } = {}
    const mergeUsage = (usage: Model.Usage | undefined) => {
      if (usage === undefined) return
      const merged: Record<string, unknown> = { ...response.usage }
      for (const [key, value] of Object.entries(usage)) if (value !== undefined && value !== null) merged[key] = value
      response = { ...response, usage: merged as Model.Usage }
    }
    const streaming = options.streaming ?? true

    const assistantMessage = (): Messages.Message | undefined => {
      const content = closed
        .slice()
        .sort((a, b) => a.index - b.index)
        .map((c) => c.block)
        .filter((b) => !(b.type === "text" && b.text.length === 0))
      return content.length === 0 ? undefined : { role: "assistant", content }
    }

    // If the consumer goes away mid-turn, the transcript still gets a paired turn.
    let recorded = false
    const record = (results: ReadonlyArray<Messages.ToolResultBlock>, extra: ReadonlyArray<string> = []) =>
      Effect.suspend(() => {
        if (recorded) return Effect.void
        recorded = true
        const assistant = assistantMessage()
        if (assistant === undefined) return Effect.void
        const byId = new Map(results.map((r) => [r.tool_use_id, r]))
        const user = toolUses.length === 0 ? undefined : Results.toUserMessage(toolUses, byId)
        const userWithExtra = user === undefined || extra.length === 0
          ? user
          : { ...user, content: [...Messages.blocks(user), ...extra.map(Messages.text)] }
        return appendMessages(contextRef, userWithExtra === undefined ? [assistant] : [assistant, userWithExtra]).pipe(
          Effect.zipRight(emit(LoopEvent.AssistantMessage({ turn, message: assistant }))),
          Effect.zipRight(
            userWithExtra === undefined ? Effect.void : emit(LoopEvent.ToolResults({ turn, message: userWithExtra }))
          )
        )
      })

    // tool_use ids must be unique: a repeated one is renamed, so that the transcript stays valid
    // and each block gets its own result, and the call is answered with an error, not run.
    const uniqueToolUse = ToolCall.uniqueIds()

    const addToolUse = (call: ToolCall.ToolCall): Effect.Effect<void> => {
      const block = call.block
      toolUses.push(block)
      toolCalls.push(call)
      return Effect.flatMap(Clock.currentTimeMillis, (at) => emit(LoopEvent.ToolUse({ turn, block, at }))).pipe(
        Effect.zipRight(streaming ? executor.addTool(call) : Effect.void)
      )
    }

    const handle = (event: Model.ModelStreamEvent): Effect.Effect<void, TurnFailure> =>
      options.modelEvents ? Effect.zipRight(emit(LoopEvent.ModelEvent({ turn, event })), apply(event)) : apply(event)
    const apply = (event: Model.ModelStreamEvent): Effect.Effect<void, TurnFailure> => {
      switch (event.type) {
        case "content_block_start": {
          open.set(event.index, { start: event.content_block, text: "", json: "", signature: "", closed: false })
          const initial = event.content_block.type === "text" ? event.content_block.text : ""
          return initial.length > 0
            ? emit(LoopEvent.TextDelta({ turn, index: event.index, text: initial }))
            : Effect.void
        }
        case "content_block_delta": {
          const block = open.get(event.index)
          if (block === undefined) {
            return Effect.fail(
              new TurnFailure({
                reason: "protocol",
                message: `A delta arrived for unknown content block ${event.index}`
              })
            )
          }
          const delta = event.delta
          switch (delta.type) {
            case "text_delta":
              block.text += delta.text
              return emit(LoopEvent.TextDelta({ turn, index: event.index, text: delta.text }))
            case "thinking_delta":
              block.text += delta.thinking
              return emit(LoopEvent.ThinkingDelta({ turn, index: event.index, thinking: delta.thinking }))
            case "signature_delta":
              block.signature += delta.signature
              return Effect.void
            case "input_json_delta":
              block.json += delta.partial_json
              return Effect.void
          }
          return Effect.void
        }
        case "content_block_stop": {
          const block = open.get(event.index)
          if (block === undefined || block.closed) return Effect.void
          block.closed = true
          const closedBlock = closeBlock(block)
          if (!ToolCall.isToolCall(closedBlock) && closedBlock.type !== "tool_use") {
            closed.push({ index: event.index, block: closedBlock })
            return Effect.void
          }
          const call = uniqueToolUse(closedBlock)
          closed.push({ index: event.index, block: call.block })
          return addToolUse(call)
        }
        case "message_delta": {
          if (event.delta.stop_reason != null) stopReason = event.delta.stop_reason
          if (event.delta.stop_sequence != null) response = { ...response, stopSequence: event.delta.stop_sequence }
          mergeUsage(event.usage)
          return event.usage === undefined ? Effect.void : emit(LoopEvent.Usage({ turn, usage: event.usage }))
        }
        case "message_start":
          response = {
            id: event.message.id,
            ...(event.message.model === undefined ? {} : { model: event.message.model })
          }
          mergeUsage(event.message.usage)
          return event.message.usage === undefined
            ? Effect.void
            : emit(LoopEvent.Usage({ turn, usage: event.message.usage }))
        case "message_stop":
          sawMessageStop = true
          return Effect.void
        case "ping":
          return Effect.void
        case "error":
          return Effect.fail(new TurnFailure({ reason: event.error.type, message: event.error.message }))
      }
    }

    const context = yield* Ref.get(contextRef)
    const userContext = options.userContext === undefined ? [] : yield* options.userContext
    const request: Model.ModelRequest = {
      // Deferred tools are one line each in the system prompt (SPEC §4.3).
      system: Deferral.systemPrompt(options.system, env.tools, context.messages),
      messages: withUserContext(forRequest(context.messages), userContext),
      tools: env.tools.map((tool) => Model.toolDefinition(tool, { deferred: Tool.isDeferred(tool) })),
      maxTokens: options.maxTokens,
      model: options.model
    }
    const streamed = (options.journal ?? Journal.none).model({ turn, request }, model.stream(request)).pipe(
      Stream.mapError((error) => new TurnFailure({ reason: error.reason, message: error.message })),
      Stream.runForEach(handle)
    )
    // Race the model against an abort: an interrupt stops the stream (and its HTTP request).
    const finished = yield* Effect.raceFirst(
      Effect.either(streamed),
      Effect.as(node.await, Either.right(undefined))
    ).pipe(Effect.onInterrupt(() => pairOnInterrupt(executor, record)))

    const responseEndedAt = yield* Clock.currentTimeMillis
    const { cutOff, failure } = endOfResponse(
      { open, closed, sawMessageStop, stopReason },
      finished,
      node.isAborted(),
      uniqueToolUse
    )
    yield* emit(LoopEvent.ResponseEnded({
      turn,
      stopReason,
      at: responseEndedAt,
      message: assistantMessage(),
      id: response.id,
      model: response.model,
      stopSequence: response.stopSequence,
      usage: response.usage
    }))
    if (failure !== undefined) {
      yield* emit(LoopEvent.Error({
        turn,
        reason: Either.isLeft(finished) ? finished.left.reason : "incomplete",
        message: failure
      }))
      yield* Effect.forEach(cutOff, addToolUse, { discard: true })
    }

    if (!streaming && !node.isAborted()) {
      yield* Effect.forEach(toolCalls, executor.addTool, { discard: true })
    }
    yield* executor.finish
    yield* Fiber.join(consumer).pipe(Effect.onInterrupt(() => pairOnInterrupt(executor, record)))
    const toolResults = yield* executor.toolResults

    let extra: ReadonlyArray<string> = []
    let hookStop = yield* executor.stopReason
    if (toolResults.length > 0 && hooks.has("PostToolBatch")) {
      const batch = yield* hooks.postToolBatch({ context: yield* Ref.get(contextRef), results: toolResults })
      yield* emitHookMessages(emit, "PostToolBatch", batch.messages)
      extra = batch.additionalContext
      if (batch.stop !== undefined && Option.isNone(hookStop)) hookStop = Option.some(batch.stop)
    }
    // The user's interrupt is recorded as Claude Code records it: in the results message when tools
    // were interrupted, else as a user message of its own (requests merge it with the next prompt).
    const userInterrupt = Option.getOrUndefined(node.reason()) === "user_interrupt"
    yield* record(toolResults, userInterrupt && toolUses.length > 0 ? [...extra, INTERRUPTED_FOR_TOOL_USE] : extra)
    if (userInterrupt && toolUses.length === 0) {
      yield* appendMessages(contextRef, [{ role: "user", content: [Messages.text(INTERRUPTED)] }])
    }
    yield* emit(LoopEvent.TurnEnded({ turn, stopReason, at: yield* Clock.currentTimeMillis }))
    return {
      toolResults: toolUses.length === 0 ? [] : toolResults,
      // A broken response whose tool calls were all answered does not end the run: the
      // model sees the errors in the next turn.
      failure: toolUses.length === 0 ? failure : undefined,
      abort: node.reason(),
      hookStop
    }
  })).pipe(Effect.provideService(Journal.Current, options.journal ?? Journal.none))

/** The consumer went away mid-turn: record the turn with what finished, synthetic results for the rest. */
const pairOnInterrupt = (
  executor: StreamingExecutor.StreamingExecutor,
  record: (results: ReadonlyArray<Messages.ToolResultBlock>) => Effect.Effect<void>
) => Effect.flatMap(executor.toolResults, record)

/**
 * Collect a run's events (handy in tests and `-p` mode).
 *
 * @since 0.1.0
 * @category running
 */
export const collect = <R>(
  stream: Stream.Stream<LoopEvent, never, R>
): Effect.Effect<ReadonlyArray<LoopEvent>, never, R> =>
  Effect.map(Stream.runCollect(stream), (chunk) => Array.from(chunk))
