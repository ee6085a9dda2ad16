/**
 * One tool call, end to end (SPEC §4.6): lookup → validation → PreToolUse
 * hooks and permissions → `call` → PostToolUse hooks → result mapping.
 *
 * `execute` is the pipeline as an Effect that publishes its events through an
 * `emit` function; the batch runner and the streaming executor run it as
 * fibers publishing into one mailbox. `runToolUse` is the public single-call
 * view: the same pipeline as a `Stream` of events.
 *
 * Every path ends in exactly one `Result` event: success, validation error,
 * denial, hook block, tool failure or defect (SPEC §4.10).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as DispatchEvent from "./DispatchEvent.js"
import * as Hooks from "./Hooks.js"
import type * as Interruption from "./Interruption.js"
import * as Messages from "./Messages.js"
import * as PermissionRules from "./PermissionRules.js"
import * as Permissions from "./Permissions.js"
import * as Registry from "./Registry.js"
import * as Results from "./Results.js"
import * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"
import * as Validation from "./Validation.js"

/**
 * What a dispatch runs against: the tools the model sees, the full pool (for
 * the alias fallback) and the shared context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly tools: ReadonlyArray<Tool.Any>
  readonly pool: ReadonlyArray<Tool.Any>
  readonly context: Ref.Ref<ToolUseContext.ToolUseContext>
}

/**
 * Build an environment from the registry, filtering the pool with the
 * context's blanket deny rules.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeEnvironment = (
  context: ToolUseContext.ToolUseContext | Ref.Ref<ToolUseContext.ToolUseContext>
): Effect.Effect<Environment, never, Registry.ToolRegistry> =>
  Effect.gen(function*() {
    const registry = yield* Registry.ToolRegistry
    const ref = Ref.RefTypeId in context ? context : yield* Ref.make(context)
    const current = yield* Ref.get(ref)
    const tools = yield* registry.getTools((name) => PermissionRules.isBlanketDenied(current.permissions, name))
    const pool = yield* registry.pool
    return { tools, pool, context: ref }
  })

/**
 * How a call ended, for the runners: its result event, the context modifiers
 * it queued, and what it asks of the turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly result: DispatchEvent.Result
  readonly modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
  /** The tool whose call this was, when it resolved. */
  readonly tool: Tool.Any | undefined
  /** Abort the turn (the user said no to a permission question). */
  readonly abort: Interruption.InterruptReason | undefined
  /** A hook said `continue: false`: stop the loop after this batch. */
  readonly stop: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type Emit = (event: DispatchEvent.DispatchEvent) => Effect.Effect<void>

/**
 * The text of a failed call for the model.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatFailure = (toolName: string, cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof Tool.ToolError) return error.message
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return `Error: ${error.message}`
    }
    return `Error: ${String(error)}`
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    const value = defect.value
    const text = value instanceof Error ? `${value.name}: ${value.message}` : String(value)
    return `Error: ${toolName} failed unexpectedly (${text})`
  }
  if (Cause.isInterruptedOnly(cause)) return `Error: ${toolName} was interrupted`
  return `Error: ${toolName} failed: ${Cause.pretty(cause).split("\n", 1)[0]}`
}

const appendText = (content: Messages.ToolResultContent, extra: ReadonlyArray<string>): Messages.ToolResultContent => {
  if (extra.length === 0) return content
  return typeof content === "string"
    ? [content, ...extra].join("\n\n")
    : [...content, ...extra.map(Messages.text)]
}

const runCall = (
  tool: Tool.Any,
  input: unknown,
  context: Tool.CallContext<unknown>
): Effect.Effect<unknown, unknown> => {
  const result = tool.call(input, context)
  if (Effect.isEffect(result)) return result
  return Effect.suspend(() => {
    let output: Option.Option<unknown> = Option.none()
    return Stream.runForEach(result, (item) => {
      if (item._tag === "Progress") return context.progress(item.data)
      output = Option.some(item.value)
      return Effect.void
    }).pipe(
      Effect.flatMap(() =>
        Option.match(output, {
          onNone: () => Effect.fail(new Tool.ToolError({ message: `Error: ${tool.name} ended without output` })),
          onSome: Effect.succeed
        })
      )
    )
  })
}

/**
 * Run one call through the whole pipeline, publishing its events with `emit`.
 * Never fails: every path produces a `Result`. Interrupting the fiber
 * interrupts the tool (the runners then produce the synthetic result).
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = (
  block: Messages.ToolUseBlock,
  env: Environment,
  emit: Emit
): Effect.Effect<Outcome, never, Results.ResultStore> =>
  Effect.flatMap(
    FiberRef.get(FiberRef.currentTracerEnabled),
    (tracing) =>
      tracing
        // `useSpan` + `span.attribute` rather than `withSpan` + `annotateCurrentSpan`, and no
        // stack trace per call: this is the hot path (see bench/dispatch.ts).
        ? Effect.useSpan(
          block.name,
          { kind: "internal", attributes: { "switchyard.tool_use_id": block.id }, captureStackTrace: false },
          (span) =>
            Effect.withParentSpan(run(block, env, emit), span).pipe(
              Effect.tap((outcome) => span.attribute("switchyard.status", outcome.result.status))
            )
        )
        : run(block, env, emit)
  )

const run = (
  block: Messages.ToolUseBlock,
  env: Environment,
  emit: Emit
): Effect.Effect<Outcome, never, Results.ResultStore> =>
  Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
    Effect.zipRight(
      emit(DispatchEvent.Started({ toolUseId: block.id, name: block.name, input: block.input, at: startedAt })),
      Effect.flatMap(Ref.get(env.context), (context) => {
        const resolved = Registry.resolve(block.name, env.tools, env.pool)
        if (Either.isLeft(resolved)) {
          return finish(block, emit, startedAt, { status: "error", content: resolved.left })
        }
        const tool = resolved.right
        return pipeline(tool, block, context, env, emit, startedAt).pipe(
          // A defect anywhere in the pipeline is an error result, never a crash. (When this
          // fiber is interrupted from outside, the handler is skipped and the runner answers.)
          Effect.catchAllCause((cause) =>
            finish(block, emit, startedAt, { status: "error", content: formatFailure(tool.name, cause), tool })
          )
        )
      })
    ))

interface Ending {
  readonly status: DispatchEvent.ResultStatus
  readonly content: Messages.ToolResultContent
  readonly tool?: Tool.Any | undefined
  readonly modifiers?: ReadonlyArray<ToolUseContext.ContextModifier>
  readonly abort?: Interruption.InterruptReason | undefined
  readonly stop?: string | undefined
}

const noModifiers: ReadonlyArray<ToolUseContext.ContextModifier> = []

const finish = (
  block: Messages.ToolUseBlock,
  emit: Emit,
  startedAt: number,
  ending: Ending
): Effect.Effect<Outcome> =>
  Effect.flatMap(Clock.currentTimeMillis, (endedAt) => {
    const result = DispatchEvent.Result({
      toolUseId: block.id,
      name: block.name,
      status: ending.status,
      block: Messages.toolResult(block.id, ending.content, ending.status !== "success"),
      startedAt,
      endedAt
    })
    const outcome: Outcome = {
      result,
      modifiers: ending.modifiers ?? noModifiers,
      tool: ending.tool,
      abort: ending.abort,
      stop: ending.stop
    }
    return Effect.as(emit(result), outcome)
  })

const asRecordCopy = (input: unknown): unknown =>
  typeof input === "object" && input !== null && !Array.isArray(input) ? { ...input } : input

const pipeline = (
  tool: Tool.Any,
  block: Messages.ToolUseBlock,
  context: ToolUseContext.ToolUseContext,
  env: Environment,
  emit: Emit,
  startedAt: number
): Effect.Effect<Outcome, never, Results.ResultStore> =>
  Effect.gen(function*() {
    const end = (ending: Ending) => finish(block, emit, startedAt, { tool, ...ending })

    // SPEC §4.4 steps 1–2.
    const decoded = Validation.decodeInput(tool, block.input, context, env.tools)
    if (Either.isLeft(decoded)) return yield* end({ status: "error", content: decoded.left.message })
    if (tool.validateInput !== undefined) {
      const valid = yield* Effect.either(tool.validateInput(decoded.right, context))
      if (Either.isLeft(valid)) return yield* end({ status: "error", content: valid.left.message })
    }
    const input = decoded.right

    // Step 3: hooks and permissions see a backfilled copy; `call` gets the decoded input.
    const observable = tool.backfillObservableInput === undefined
      ? input
      : tool.backfillObservableInput(asRecordCopy(input), context)

    const hooks = yield* Hooks.Hooks
    const pre = hooks.has("PreToolUse", tool.name)
      ? yield* hooks.preToolUse({ tool, toolUseId: block.id, input: observable, context })
      : Hooks.emptyPreToolUse
    if (pre.messages.length > 0) yield* emitHookMessages(block, emit, "PreToolUse", pre.messages)

    const policy = yield* Permissions.PermissionPolicy
    const decision = yield* policy.decide({ tool, toolUseId: block.id, input: observable, context, hook: pre, emit })
    if (decision.source !== "default") {
      yield* emit(DispatchEvent.PermissionDecided({
        toolUseId: block.id,
        name: tool.name,
        behavior: decision.behavior,
        source: decision.source,
        reason: decision.behavior === "deny" ? decision.message : decision.reason,
        at: yield* Clock.currentTimeMillis
      }))
    }
    if (decision.behavior === "deny") {
      return yield* end({
        status: "denied",
        // Claude Code's wording for a user's "no", plus what the user said, if anything.
        content: decision.rejectedByUser
          ? decision.message.includes(" and said: ")
            ? `${Results.REJECTED_BY_USER}\n${decision.message}`
            : Results.REJECTED_BY_USER
          : decision.message,
        abort: decision.rejectedByUser ? "permission_rejected" : undefined,
        stop: pre.stop
      })
    }

    let callInput = input
    if (decision.updatedInput !== undefined) {
      const revalidated = yield* Effect.either(
        Validation.validate(tool, decision.updatedInput.input, context, env.tools)
      )
      if (Either.isLeft(revalidated)) {
        return yield* end({
          status: "error",
          content: `The input supplied by ${decision.updatedInput.source} is invalid:\n${revalidated.left.message}`,
          stop: pre.stop
        })
      }
      callInput = revalidated.right
    }

    let modifiers: Array<ToolUseContext.ContextModifier> | undefined
    const callContext: Tool.CallContext<unknown> = {
      toolUseId: block.id,
      context,
      progress: (data) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (at) => emit(DispatchEvent.Progress({ toolUseId: block.id, name: tool.name, data, at }))
        ),
      modifyContext: (modifier) => Effect.sync(() => void (modifiers ??= []).push(modifier))
    }
    const exit = yield* Effect.exit(runCall(tool, callInput, callContext))
    const isError = Exit.isFailure(exit)
    let content: Messages.ToolResultContent = Exit.isSuccess(exit)
      ? tool.mapResult(exit.value, block.id)
      : formatFailure(tool.name, exit.cause)

    let stop = pre.stop
    const postEvent = isError ? "PostToolUseFailure" : "PostToolUse"
    if (hooks.has(postEvent, tool.name)) {
      const post = yield* hooks.postToolUse({
        tool,
        toolUseId: block.id,
        input: observable,
        context,
        response: content,
        isError
      })
      yield* emitHookMessages(block, emit, postEvent, post.messages)
      if (post.updatedToolOutput !== undefined) content = post.updatedToolOutput
      const extra = [
        ...(post.blockReason !== undefined ? [`PostToolUse hook feedback: ${post.blockReason}`] : []),
        ...post.additionalContext
      ]
      content = appendText(content, extra)
      stop = stop ?? post.stop
    }
    content = appendText(content, pre.additionalContext)
    content = yield* Results.limitSize(content, {
      maxChars: tool.maxResultSizeChars,
      sessionId: context.sessionId,
      toolUseId: block.id
    })
    return yield* end({ status: isError ? "error" : "success", content, modifiers: modifiers ?? noModifiers, stop })
  })

const emitHookMessages = (
  block: Messages.ToolUseBlock,
  emit: Emit,
  hookEvent: string,
  messages: ReadonlyArray<Hooks.HookMessage>
): Effect.Effect<void> =>
  messages.length === 0
    ? Effect.void
    : Effect.flatMap(Clock.currentTimeMillis, (at) =>
      Effect.forEach(
        messages,
        (message) =>
          emit(DispatchEvent.HookAttachment({
            toolUseId: block.id,
            name: block.name,
            hookEvent,
            content: message.content,
            level: message.level,
            at
          })),
        { discard: true }
      ))

/**
 * Events a bounded mailbox holds before a slow consumer slows the tools down.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAILBOX_CAPACITY = 256

/**
 * The public single-call view (SPEC §4.6): one call as a stream of events.
 * Interrupting the consumer interrupts the tool.
 *
 * @since 0.1.0
 * @category execution
 */
export const runToolUse = (
  block: Messages.ToolUseBlock,
  env: Environment
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
        capacity: MAILBOX_CAPACITY,
        strategy: "suspend"
      })
      yield* execute(block, env, (event) => Effect.asVoid(mailbox.offer(event))).pipe(
        Effect.tap((outcome) => Ref.update(env.context, (ctx) => outcome.modifiers.reduce((acc, f) => f(acc), ctx))),
        Mailbox.into(mailbox),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )
