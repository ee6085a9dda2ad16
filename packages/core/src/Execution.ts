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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as DispatchEvent from "./DispatchEvent.js"
import * as Hooks from "./Hooks.js"
import type * as Interruption from "./Interruption.js"
import * as Journal from "./Journal.js"
import * as Messages from "./Messages.js"
import * as PermissionRules from "./PermissionRules.js"
import * as Permissions from "./Permissions.js"
import * as Registry from "./Registry.js"
import * as Results from "./Results.js"
import * as Tool from "./Tool.js"
import * as ToolCall from "./ToolCall.js"
import type * as ToolUseContext from "./ToolUseContext.js"
import * as FailureText from "./internal/failureText.js"
import * as ToolSpan from "./internal/toolSpan.js"
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
 * context's blanket deny rules; the alias fallback pool leaves out the
 * special tools.
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
    // Special tools stay out of the alias fallback: they are never for the model.
    const pool = yield* registry.modelPool
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
 * Where a call publishes its events. `unsafeOffer`, when given, publishes an
 * event at once without an Effect and says whether it did (`false`: a full
 * mailbox, so the caller runs the Effect and waits); the pipeline uses it on
 * the hot path, keeping the order of events.
 *
 * @since 0.1.0
 * @category models
 */
export interface Emit {
  (event: DispatchEvent.DispatchEvent): Effect.Effect<void>
  readonly unsafeOffer?: ((event: DispatchEvent.DispatchEvent) => boolean) | undefined
}

/**
 * An `Emit` that offers into a mailbox.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emitTo = (mailbox: Mailbox.Mailbox<DispatchEvent.DispatchEvent>): Emit =>
  Object.assign((event: DispatchEvent.DispatchEvent) => Effect.asVoid(mailbox.offer(event)), {
    unsafeOffer: (event: DispatchEvent.DispatchEvent) => mailbox.unsafeOffer(event)
  })

/** Publish `event`, then go on with `next`: in the same step when `emit` can publish at once. */
const emitThen = <A, R>(
  emit: Emit,
  event: DispatchEvent.DispatchEvent,
  next: () => Effect.Effect<A, never, R>
): Effect.Effect<A, never, R> =>
  emit.unsafeOffer !== undefined && emit.unsafeOffer(event) ? next() : Effect.flatMap(emit(event), next)

/**
 * The text of a failed call for the model. A tagged error without a message
 * is given by its tag and fields (`Error: OutOfStock {"sku":"a-1"}`).
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatFailure: (toolName: string, cause: Cause.Cause<unknown>) => string = FailureText.formatFailure

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
 * Options of `execute`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteOptions {
  /**
   * The context the call starts with, when the runner already read it (a
   * concurrent batch shares one); else it is read from `env.context`.
   */
  readonly context?: ToolUseContext.ToolUseContext | undefined
}

/**
 * Run one call through the whole pipeline, publishing its events with `emit`.
 * Never fails: every path produces a `Result`. Interrupting the fiber
 * interrupts the tool (the runners then produce the synthetic result).
 *
 * With tracing on, the call runs in a span `execute_tool {tool name}` with the
 * OpenTelemetry GenAI attributes (`gen_ai.operation.name`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.tool.type`: `function`, or `extension` for
 * MCP tools; `error.type` on failure) and `switchyard.status`.
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = (
  call: ToolCall.Any,
  env: Environment,
  emit: Emit,
  options?: ExecuteOptions
): Effect.Effect<Outcome, never, Results.ResultStore> =>
  // One look at the fiber gives the clock, the tracing flag and the services, where
  // separate Effects would cost a step each on the hot path (see bench/dispatch.ts).
  Effect.withFiberRuntime((fiber) => {
    const toolCall = ToolCall.of(call)
    const resolved = Registry.resolve(toolCall.block.name, env.tools, env.pool)
    const journal = Context.get(fiber.currentContext, Journal.Current)
    if (!Journal.isNone(journal)) {
      // A durable session (SPEC §4.14): the whole call is one step of the journal, which
      // runs it here (without the journal) or answers it from what it recorded.
      const step = { block: toolCall.block, tool: Either.getOrUndefined(resolved), context: env.context }
      return journal.tool(step, emit, (observed) =>
        Effect.provideService(execute(toolCall, env, observed, options), Journal.Current, Journal.none))
    }
    const context = options?.context
    if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) {
      return begin(makeCall(fiber, toolCall, env, emit, resolved), resolved, context)
    }
    return traced(fiber, toolCall, env, emit, resolved, context)
  })

const makeCall = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  toolCall: ToolCall.ToolCall,
  env: Environment,
  emit: Emit,
  resolved: Either.Either<Tool.Any, string>
): Call => {
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  return {
    block: toolCall.block,
    input: toolCall.input,
    env,
    emit,
    clock,
    services: fiber.currentContext,
    startedAt: clock.unsafeCurrentTimeMillis(),
    tool: Either.isRight(resolved) ? resolved.right : undefined,
    errorType: undefined
  }
}

/** Publish `Started`, then run the pipeline. */
const begin = (
  call: Call,
  resolved: Either.Either<Tool.Any, string>,
  context: ToolUseContext.ToolUseContext | undefined
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const block = call.block
  const started = DispatchEvent.Started({
    toolUseId: block.id,
    name: block.name,
    input: block.input,
    at: call.startedAt
  })
  return emitThen(
    call.emit,
    started,
    Either.isLeft(resolved) ? () => notFound(call, resolved.left) : () => guarded(call, context)
  )
}

/** The pipeline in its span (SPEC §3), opened with its attributes in this step. */
const traced = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  toolCall: ToolCall.ToolCall,
  env: Environment,
  emit: Emit,
  resolved: Either.Either<Tool.Any, string>,
  context: ToolUseContext.ToolUseContext | undefined
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const span = ToolSpan.open(fiber, toolCall.block, Either.isRight(resolved) ? resolved.right : undefined)
  const call = makeCall(fiber, toolCall, env, emit, resolved)
  return ToolSpan.within(
    fiber,
    span,
    begin(call, resolved, context),
    (exit, at) => ToolSpan.close(span, exit, at, call.errorType)
  )
}

/** One call's fixed facts, shared by the steps of its pipeline. */
interface Call {
  readonly block: Messages.ToolUseBlock
  /** What the query loop knew of the input: parsed, unparsed or refused. */
  readonly input: ToolCall.Input
  readonly env: Environment
  readonly emit: Emit
  readonly clock: Clock.Clock
  readonly services: Context.Context<never>
  readonly startedAt: number
  readonly tool: Tool.Any | undefined
  /** The `error.type` of the span, set by the step that failed. */
  errorType: string | undefined
}

const notFound = (call: Call, message: string): Effect.Effect<Outcome> => {
  call.errorType = "tool_not_found"
  return finish(call, { status: "error", content: message })
}

const guarded = (
  call: Call,
  context: ToolUseContext.ToolUseContext | undefined
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  // A defect anywhere in the pipeline is an error result, never a crash. (When this
  // fiber is interrupted from outside, the handler is skipped and the runner answers.)
  const recover = (cause: Cause.Cause<unknown>) => {
    call.errorType = FailureText.errorTypeOf(cause)
    return finish(call, {
      status: "error",
      content: FailureText.formatFailure(call.tool!.name, cause),
      tool: call.tool
    })
  }
  // The steps run at once up to the first one that waits, so a call that never waits is
  // one step of the runtime; a step that throws on the way is a defect like any other.
  let effect: Effect.Effect<Outcome, never, Results.ResultStore>
  try {
    effect = context === undefined
      ? Effect.flatMap(Ref.get(call.env.context), (current) => pipeline(call, call.tool!, current))
      : pipeline(call, call.tool!, context)
  } catch (defect) {
    return recover(Cause.die(defect))
  }
  if (Exit.isExit(effect)) {
    const exit = effect as Exit.Exit<Outcome>
    return Exit.isSuccess(exit) ? exit : recover(exit.cause)
  }
  return Effect.catchAllCause(effect, recover)
}

interface Ending {
  readonly status: DispatchEvent.ResultStatus
  readonly content: Messages.ToolResultContent
  readonly tool?: Tool.Any | undefined
  readonly modifiers?: ReadonlyArray<ToolUseContext.ContextModifier>
  readonly abort?: Interruption.InterruptReason | undefined
  readonly stop?: string | undefined
}

const noModifiers: ReadonlyArray<ToolUseContext.ContextModifier> = []

const finish = (call: Call, ending: Ending): Effect.Effect<Outcome> => {
  const block = call.block
  const result = DispatchEvent.Result({
    toolUseId: block.id,
    name: block.name,
    status: ending.status,
    block: Messages.toolResult(block.id, ending.content, ending.status !== "success"),
    startedAt: call.startedAt,
    endedAt: call.clock.unsafeCurrentTimeMillis()
  })
  const outcome: Outcome = {
    result,
    modifiers: ending.modifiers ?? noModifiers,
    tool: ending.tool,
    abort: ending.abort,
    stop: ending.stop
  }
  const emit = call.emit
  return emit.unsafeOffer !== undefined && emit.unsafeOffer(result)
    ? Effect.succeed(outcome)
    : Effect.as(emit(result), outcome)
}

const asRecordCopy = (input: unknown): unknown =>
  typeof input === "object" && input !== null && !Array.isArray(input) ? { ...input } : input

/** What hooks and permissions see of a call input (SPEC §4.4 step 3): a backfilled copy. */
const observe = (tool: Tool.Any, input: unknown, context: ToolUseContext.ToolUseContext): unknown =>
  tool.backfillObservableInput === undefined ? input : tool.backfillObservableInput(asRecordCopy(input), context)

/**
 * `f` of how `effect` ended. When `effect` is already an `Exit` (`Effect.succeed`, a
 * synchronous check, a no-op tool), `f` runs at once: a call that never waits costs no
 * extra steps of the runtime (this is the hot path, see bench/dispatch.ts).
 */
const settle = <A, E, B, R>(
  effect: Effect.Effect<A, E>,
  f: (exit: Exit.Exit<A, E>) => Effect.Effect<B, never, R>
): Effect.Effect<B, never, R> =>
  Exit.isExit(effect) ? f(effect as Exit.Exit<A, E>) : Effect.flatMap(Effect.exit(effect), f)

/** The failure of a failed step's exit, if it failed rather than died. */
const expectedFailure = <E>(exit: Exit.Failure<unknown, E>): Option.Option<E> => Cause.failureOption(exit.cause)

/** Re-raise an exit that died or was interrupted (no expected failure in it): the defect handler answers. */
const reraise = (exit: Exit.Failure<unknown, unknown>): Effect.Effect<never> =>
  Effect.failCause(exit.cause as Cause.Cause<never>)

/** A call on its way through the pipeline: what each step knows so far. */
interface Stage {
  readonly call: Call
  readonly tool: Tool.Any
  readonly context: ToolUseContext.ToolUseContext
  readonly hooks: Hooks.Service
  /** The input `call` gets (decoded; a validated replacement once one is given). */
  input: unknown
  /** What hooks and permissions see of `input` (SPEC §4.4 step 3). */
  observable: unknown
  pre: Hooks.PreToolUseOutcome
  /** A hook's replacement input, validated and as rules see it. */
  hookInput: { readonly input: unknown; readonly source: string } | undefined
}

const end = (stage: Stage, ending: Ending) => finish(stage.call, { tool: stage.tool, ...ending })

const invalid = (stage: Stage, content: string): Effect.Effect<Outcome> => {
  stage.call.errorType = "InputValidationError"
  return end(stage, { status: "error", content, stop: stage.pre.stop })
}

// The pipeline of SPEC §4.4–§4.6, one step per function, in order:
// validate → PreToolUse hooks → their replacement input → permission → call → PostToolUse
// hooks → size limit → end.
const pipeline = (
  call: Call,
  tool: Tool.Any,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<Outcome, never, Results.ResultStore> =>
  validate({
    call,
    tool,
    context,
    hooks: Context.get(call.services as Context.Context<Hooks.Hooks>, Hooks.Hooks),
    input: undefined,
    observable: undefined,
    pre: Hooks.emptyPreToolUse,
    hookInput: undefined
  })

/** SPEC §6, then §4.4 steps 1–2: an input that never parsed, the decode, `validateInput`. */
const validate = (stage: Stage): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, tool } = stage
  if (call.input._tag === "Unparsed") return invalid(stage, ToolCall.invalidJsonMessage(call.input.reason))
  if (call.input._tag === "Refused") return invalid(stage, call.input.message)
  const decoded = Validation.decodeInput(tool, call.block.input, context, call.env.tools)
  if (Either.isLeft(decoded)) return invalid(stage, decoded.left.message)
  stage.input = decoded.right
  if (tool.validateInput === undefined) return preToolUse(stage)
  return settle(tool.validateInput(decoded.right, context), (exit) => {
    if (Exit.isSuccess(exit)) return preToolUse(stage)
    const error = expectedFailure(exit)
    return Option.isSome(error) ? invalid(stage, error.value.message) : reraise(exit)
  })
}

/** Step 3 and the PreToolUse hooks: they see a backfilled copy; `call` gets the decoded input. */
const preToolUse = (stage: Stage): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, hooks, tool } = stage
  stage.observable = observe(tool, stage.input, context)
  if (!hooks.has("PreToolUse", tool.name)) return permission(stage)
  return Effect.flatMap(
    hooks.preToolUse({ tool, toolUseId: call.block.id, input: stage.observable, context }),
    (pre) => {
      stage.pre = pre
      // A thunk: the steps run at once and publish as they go, so they must start after the messages.
      const next = () =>
        pre.updatedInput !== undefined && pre.decision !== "deny" ? hookReplacement(stage) : permission(stage)
      return pre.messages.length === 0
        ? next()
        : Effect.flatMap(emitHookMessages(call.block, call.emit, "PreToolUse", pre.messages), next)
    }
  )
}

/**
 * A replacement input (from a hook or the permission decision) passes steps 1–2 again
 * (SPEC §4.4); it becomes the call input, or the result names who supplied it.
 */
const revalidated = (
  stage: Stage,
  replacement: { readonly input: unknown; readonly source: string },
  next: () => Effect.Effect<Outcome, never, Results.ResultStore>
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, tool } = stage
  return settle(Validation.validate(tool, replacement.input, context, call.env.tools), (exit) => {
    if (Exit.isFailure(exit)) {
      const error = expectedFailure(exit)
      return Option.isSome(error)
        ? invalid(stage, `The input supplied by ${replacement.source} is invalid:\n${error.value.message}`)
        : reraise(exit)
    }
    stage.input = exit.value
    stage.observable = observe(tool, exit.value, context)
    return next()
  })
}

/**
 * A hook's replacement input passes steps 1–2 before any rule or `checkPermissions`
 * sees it; the rules then judge (the backfilled copy of) what will run.
 */
const hookReplacement = (stage: Stage): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const replacement = stage.pre.updatedInput!
  return revalidated(stage, replacement, () => {
    stage.hookInput = { input: stage.observable, source: replacement.source }
    stage.pre = { ...stage.pre, updatedInput: stage.hookInput }
    return permission(stage)
  })
}

/** SPEC §4.5: the permission policy decides; a replacement it supplies is validated here. */
const permission = (stage: Stage): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, pre, tool } = stage
  const policy = Context.get(
    call.services as Context.Context<Permissions.PermissionPolicy>,
    Permissions.PermissionPolicy
  )
  const decided = policy.decide({
    tool,
    toolUseId: call.block.id,
    input: stage.observable,
    context,
    hook: pre,
    emit: call.emit
  })
  return settle(decided, (exit) => {
    if (Exit.isFailure(exit)) return reraise(exit)
    const decision = exit.value
    const next = () => decision.behavior === "deny" ? denied(stage, decision) : permitted(stage, decision)
    if (decision.source === "default" && decision.behavior === "allow") return next()
    return emitThen(
      call.emit,
      DispatchEvent.PermissionDecided({
        toolUseId: call.block.id,
        name: tool.name,
        behavior: decision.behavior,
        source: decision.source,
        reason: decision.behavior === "deny" ? decision.message : decision.reason,
        at: call.clock.unsafeCurrentTimeMillis()
      }),
      next
    )
  })
}

const denied = (
  stage: Stage,
  decision: Extract<Permissions.PermissionDecision, { readonly behavior: "deny" }>
): Effect.Effect<Outcome> => {
  stage.call.errorType = decision.rejectedByUser ? "permission_rejected" : "permission_denied"
  return end(stage, {
    status: "denied",
    // Claude Code's wording for a user's "no", plus what the user said, if anything.
    content: decision.rejectedByUser
      ? decision.message.includes(" and said: ")
        ? `${Results.REJECTED_BY_USER}\n${decision.message}`
        : Results.REJECTED_BY_USER
      : decision.message,
    abort: decision.rejectedByUser ? "permission_rejected" : undefined,
    stop: stage.pre.stop
  })
}

const permitted = (
  stage: Stage,
  decision: Extract<Permissions.PermissionDecision, { readonly behavior: "allow" }>
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const replacement = decision.updatedInput
  // The hook's own replacement was validated before the policy saw it.
  if (replacement === undefined || (stage.hookInput !== undefined && replacement.input === stage.hookInput.input)) {
    return runTool(stage)
  }
  return revalidated(stage, replacement, () => runTool(stage))
}

/** SPEC §4.6: the call itself, its progress bridged to events, its failure mapped to text. */
const runTool = (stage: Stage): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, tool } = stage
  let modifiers: Array<ToolUseContext.ContextModifier> | undefined
  const callContext: Tool.CallContext<unknown> = {
    toolUseId: call.block.id,
    context,
    progress: (data) =>
      Effect.suspend(() =>
        call.emit(
          DispatchEvent.Progress({
            toolUseId: call.block.id,
            name: tool.name,
            data,
            at: call.clock.unsafeCurrentTimeMillis()
          })
        )
      ),
    modifyContext: (modifier) => Effect.sync(() => void (modifiers ??= []).push(modifier))
  }
  return settle(runCall(tool, stage.input, callContext), (exit) => {
    if (Exit.isFailure(exit)) {
      call.errorType = FailureText.errorTypeOf(exit.cause)
      return postToolUse(stage, FailureText.formatFailure(tool.name, exit.cause), true, modifiers ?? noModifiers)
    }
    const mapped = mapOutput(tool, exit.value, call.block.id)
    if (Either.isRight(mapped)) return postToolUse(stage, mapped.right, false, modifiers ?? noModifiers)
    call.errorType = "UnencodableOutput"
    const text = `Error: ${tool.name} returned an output that cannot be sent to the model: ${mapped.left}`
    return postToolUse(stage, text, true, modifiers ?? noModifiers)
  })
}

/**
 * The `tool_result` content of a successful output, or why there is none:
 * `mapResult` threw, or gave something that is not content (a function's
 * output has no JSON form, so the default gives `undefined`).
 */
const mapOutput = (
  tool: Tool.Any,
  output: unknown,
  toolUseId: string
): Either.Either<Messages.ToolResultContent, string> => {
  let content: unknown
  try {
    content = tool.mapResult(output, toolUseId)
  } catch (error) {
    return Either.left(`mapResult threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`)
  }
  if (typeof content === "string" || (Array.isArray(content) && isContent(content))) return Either.right(content)
  const what = typeof output === "function"
    ? "the output is a function, which has no JSON form"
    : typeof output === "symbol"
    ? "the output is a symbol, which has no JSON form"
    : `mapResult gave ${content === undefined ? "undefined" : content === null ? "null" : `a ${typeof content}`}`
  return Either.left(`${what}, not a string or a list of content blocks`)
}

const isContent = Schema.is(Messages.ToolResultContent)

/** The PostToolUse(Failure) hooks see the input that ran, and may replace or extend the output. */
const postToolUse = (
  stage: Stage,
  content: Messages.ToolResultContent,
  isError: boolean,
  modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const { call, context, hooks, tool } = stage
  const postEvent = isError ? "PostToolUseFailure" : "PostToolUse"
  if (!hooks.has(postEvent, tool.name)) return limit(stage, content, isError, modifiers, stage.pre.stop)
  return Effect.flatMap(
    hooks.postToolUse({ tool, toolUseId: call.block.id, input: stage.observable, context, response: content, isError }),
    (post) => {
      let output = post.updatedToolOutput ?? content
      output = appendText(output, [
        ...(post.blockReason !== undefined ? [`PostToolUse hook feedback: ${post.blockReason}`] : []),
        ...post.additionalContext
      ])
      const next = () => limit(stage, output, isError, modifiers, stage.pre.stop ?? post.stop)
      return post.messages.length === 0
        ? next()
        : Effect.flatMap(emitHookMessages(call.block, call.emit, postEvent, post.messages), next)
    }
  )
}

/** SPEC §4.10: a result over the tool's size limit is persisted and previewed. */
const limit = (
  stage: Stage,
  output: Messages.ToolResultContent,
  isError: boolean,
  modifiers: ReadonlyArray<ToolUseContext.ContextModifier>,
  stop: string | undefined
): Effect.Effect<Outcome, never, Results.ResultStore> => {
  const content = appendText(output, stage.pre.additionalContext)
  const status = isError ? "error" : "success"
  const maxChars = stage.tool.maxResultSizeChars
  if (Results.fitsIn(content, maxChars)) return end(stage, { status, content, modifiers, stop })
  return Effect.flatMap(
    Results.limitSize(content, { maxChars, sessionId: stage.context.sessionId, toolUseId: stage.call.block.id }),
    (limited) => end(stage, { status, content: limited, modifiers, stop })
  )
}

const emitHookMessages = (
  block: Messages.ToolUseBlock,
  emit: Emit,
  hookEvent: Hooks.HookEvent,
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
  block: ToolCall.Any,
  env: Environment
): Stream.Stream<DispatchEvent.DispatchEvent, never, Results.ResultStore> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<DispatchEvent.DispatchEvent>({
        capacity: MAILBOX_CAPACITY,
        strategy: "suspend"
      })
      yield* execute(block, env, emitTo(mailbox)).pipe(
        Effect.tap((outcome) => Ref.update(env.context, (ctx) => outcome.modifiers.reduce((acc, f) => f(acc), ctx))),
        Mailbox.into(mailbox),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )
