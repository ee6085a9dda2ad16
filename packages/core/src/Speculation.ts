/**
 * Speculation (SPEC §4.12, chapter 5.7): while the user looks at a
 * suggested next prompt, run it already — in a scoped fiber, against a
 * copy-on-write overlay of the working tree, with a permission checker of its
 * own that stops at the first call it cannot take back.
 *
 * `start` forks the query loop (`Effect.forkScoped`, in the speculation's own
 * scope) with the overlay as the tools' `FileSystem`; hook commands do not
 * run. `accept` applies the overlay to the real tree and returns the messages
 * cleaned for injection and the time saved; `reject` (or closing the scope)
 * interrupts the fiber and deletes the overlay, leaving the real tree
 * byte-identical. When a speculation completes, the `SuggestionGenerator`
 * produces the next suggestion at once; accepting promotes it.
 *
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Hooks from "./Hooks.js"
import * as Interruption from "./Interruption.js"
import * as Messages from "./Messages.js"
import type * as Model from "./Model.js"
import * as OverlayFileSystem from "./OverlayFileSystem.js"
import * as PermissionRules from "./PermissionRules.js"
import * as Permissions from "./Permissions.js"
import * as QueryLoop from "./QueryLoop.js"
import type * as Registry from "./Registry.js"
import * as Results from "./Results.js"
import * as Sandbox from "./Sandbox.js"
import * as Settings from "./Settings.js"
import * as SuggestionGenerator from "./SuggestionGenerator.js"
import * as Tool from "./Tool.js"
import * as ToolUseContext from "./ToolUseContext.js"

/**
 * The turn limit of a speculation.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_TURNS = 20

/**
 * Tools that only read (or only touch the conversation's own state) and run
 * freely during speculation.
 *
 * @since 0.1.0
 * @category constants
 */
export const SAFE_READ_TOOLS: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "ToolSearch", "TodoWrite"])

/**
 * Modes in which an edit runs during speculation (into the overlay) instead of stopping it.
 *
 * @since 0.1.0
 * @category constants
 */
export const EDITING_MODES: ReadonlySet<string> = new Set(["acceptEdits", "bypassPermissions", "auto"])

/**
 * Where a speculation stopped. `complete`: the model ended its turn;
 * `edit`, `bash`, `denied_tool`, `permission`: a call it may not make (with
 * the tool and input); `max_turns`: the turn limit; `error`: the loop failed
 * (the model, a transcript).
 *
 * @since 0.1.0
 * @category models
 */
export interface Boundary {
  readonly type: "complete" | "edit" | "bash" | "denied_tool" | "permission" | "max_turns" | "error"
  readonly toolName?: string | undefined
  readonly input?: unknown
  readonly detail?: string | undefined
}

/**
 * The state a UI shows.
 *
 * @since 0.1.0
 * @category models
 */
export type State = Data.TaggedEnum<{
  Idle: {}
  Running: { readonly suggestion: string; readonly startedAt: number }
  Boundary: {
    readonly suggestion: string
    readonly boundary: Boundary
    readonly startedAt: number
    readonly endedAt: number
  }
  Complete: { readonly suggestion: string; readonly startedAt: number; readonly endedAt: number }
}>

/**
 * `State.Running({...})`, `State.$is("Complete")`, …
 *
 * @since 0.1.0
 * @category constructors
 */
export const State = Data.taggedEnum<State>()

/**
 * How a speculation ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly boundary: Boundary
  /** The files that differ from the real tree (relative to cwd). */
  readonly writtenPaths: ReadonlyArray<string>
}

/**
 * What `accept` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Accepted {
  /** Where it stopped; `undefined` when it was still running (it was interrupted). */
  readonly boundary: Boundary | undefined
  /** The speculation's messages, cleaned for injection into the session. */
  readonly messages: ReadonlyArray<Messages.Message>
  readonly writtenPaths: ReadonlyArray<string>
  /** The written paths that reached the real tree. */
  readonly applied: ReadonlyArray<string>
  readonly conflicts: ReadonlyArray<OverlayFileSystem.Conflict>
  /**
   * The speculation's context changes (the files its calls read or wrote, its
   * todos), in call order, for the session to apply with the messages (see
   * `inject`): without them the next Edit of a file the speculation read
   * would fail with "File has not been read yet".
   */
  readonly modifiers: ReadonlyArray<ToolUseContext.ContextModifier>
  /**
   * Speculative work the user no longer waits for: from the start to the end
   * of the last work accept keeps (the last message with a block that is
   * injected), capped at the time until accept.
   */
  readonly timeSavedMs: number
  /** The pipelined next speculation, when its suggestion was ready. */
  readonly next: Option.Option<Speculation>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Speculation {
  readonly suggestion: string
  readonly state: SubscriptionRef.SubscriptionRef<State>
  readonly overlay: OverlayFileSystem.Overlay
  /** Wait until it completes or stops at a boundary. */
  readonly await: Effect.Effect<Outcome, PlatformError.PlatformError>
  /** The speculation's messages so far, as recorded (uncleaned). */
  readonly messages: Effect.Effect<ReadonlyArray<Messages.Message>>
  /** Wait for the pipelined next suggestion (`None`: it did not complete, or nothing to suggest). */
  readonly nextSuggestion: Effect.Effect<Option.Option<string>>
  /**
   * Apply the overlay to the real tree and hand over the work (interrupting
   * it if it still runs). It fails only before anything was applied; once
   * the overlay is applied nothing fails.
   */
  readonly accept: Effect.Effect<Accepted, PlatformError.PlatformError>
  /**
   * `accept`, and the messages and context changes injected into the
   * session's context (`inject`), as one step: nothing is applied, or all of
   * it and the messages are injected.
   */
  readonly acceptInto: (
    session: Ref.Ref<ToolUseContext.ToolUseContext>
  ) => Effect.Effect<Accepted, PlatformError.PlatformError>
  /** Interrupt it and delete the overlay; the real tree is untouched. */
  readonly reject: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<E, R> {
  /**
   * The tools, built once per speculation with the overlay as their
   * `FileSystem` (e.g. the built-in tools and a registry).
   */
  readonly tools: Layer.Layer<Registry.ToolRegistry, E, R>
  /** The overlay's directory; default `<state dir>/speculation/<random>`. */
  readonly directory?: string | undefined
  /** Default {@link MAX_TURNS}. */
  readonly maxTurns?: number | undefined
  /** System prompt, model name, … of the loop. */
  readonly loop?: Omit<QueryLoop.Options, "maxTurns"> | undefined
  /** Where next suggestions come from; default the `SuggestionGenerator` in context, if any. */
  readonly generator?: SuggestionGenerator.Service | undefined
  /** Start the next suggestion's speculation on accept when it is ready (default `true`). */
  readonly promote?: boolean | undefined
  /** Sees every event of the speculative loop (a UI's status line). */
  readonly onEvent?: ((event: QueryLoop.LoopEvent) => Effect.Effect<void>) | undefined
}

/**
 * What `start` needs besides the tools' own requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Model.LanguageModel | Results.ResultStore | FileSystem.FileSystem | Path.Path

const interruptionTexts: ReadonlySet<string> = new Set([
  Results.REJECTED_BY_USER,
  ...(["user_interrupt", "new_message", "sibling_error", "permission_rejected"] as const).map(Interruption.describe),
  "[Request interrupted by user]",
  "[Request interrupted by user for tool use]"
])

/**
 * The messages of a speculation as they are injected on accept: thinking and
 * redacted-thinking blocks dropped; every `tool_use` without a successful
 * `tool_result` dropped with its result; interruption notices dropped;
 * empty messages removed (neighbours of one role merged); and, when it did
 * not complete, trailing assistant messages removed.
 *
 * @since 0.1.0
 * @category cleaning
 */
export const cleanMessages = (
  messages: ReadonlyArray<Messages.Message>,
  completed: boolean
): ReadonlyArray<Messages.Message> => {
  const out: Array<{ role: Messages.Role; content: Array<Messages.ContentBlock> }> = []
  keptBlocks(messages, completed).forEach((content, i) => {
    if (content.length === 0) return
    const role = messages[i]!.role
    const last = out[out.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...content)
    else out.push({ role, content: [...content] })
  })
  return out
}

/** Per message, the blocks `cleanMessages` keeps of it (an empty list: nothing of it is injected). */
const keptBlocks = (
  messages: ReadonlyArray<Messages.Message>,
  completed: boolean
): ReadonlyArray<ReadonlyArray<Messages.ContentBlock>> => {
  const used = new Set<string>()
  const succeeded = new Set<string>()
  for (const message of messages) {
    for (const block of Messages.blocks(message)) {
      if (block.type === "tool_use") used.add(block.id)
      if (block.type === "tool_result" && block.is_error !== true && !isInterruptionNotice(block.content)) {
        succeeded.add(block.tool_use_id)
      }
    }
  }
  const kept = messages.map((message) =>
    Messages.blocks(message).filter((block) => {
      switch (block.type) {
        case "thinking":
        case "redacted_thinking":
          return false
        case "tool_use":
          return succeeded.has(block.id)
        case "tool_result":
          return succeeded.has(block.tool_use_id) && used.has(block.tool_use_id)
        case "text":
          return block.text.trim() !== "" && !interruptionTexts.has(block.text.trim())
        default:
          return true
      }
    })
  )
  if (!completed) {
    // Trailing assistant messages (past the empty ones) are dropped.
    for (let i = kept.length - 1; i >= 0; i--) {
      if (kept[i]!.length === 0) continue
      if (messages[i]!.role !== "assistant") break
      kept[i] = []
    }
  }
  return kept
}

const isInterruptionNotice = (content: Messages.ToolResultContent): boolean =>
  interruptionTexts.has(Messages.contentText(content).trim())

/**
 * Where a speculation stops, by the table of SPEC §4.12. `allow` runs the
 * call (writes land in the overlay); `deny` gives the model an error result
 * and goes on; `boundary` stops the speculation.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "allow" }
  | { readonly _tag: "deny"; readonly message: string }
  | { readonly _tag: "boundary"; readonly type: "edit" | "bash" | "denied_tool" | "permission" }

/**
 * The speculation's permission checker for one call: the first matching row
 * of SPEC §4.12's table decides. Deny rules still deny; only an explicit ask
 * rule gives `permission`; hooks are not consulted.
 *
 * @since 0.1.0
 * @category permissions
 */
export const check = (
  call: {
    readonly tool: Tool.Any
    readonly input: unknown
    readonly context: ToolUseContext.ToolUseContext
  },
  overlay: Pick<OverlayFileSystem.Overlay, "hasWrites" | "isWritable" | "fileSystem">,
  options: { readonly home: string; readonly path: Path.Path }
): Effect.Effect<Verdict> =>
  Effect.gen(function*() {
    const { context, input, tool } = call
    const { path } = options
    const permissions = context.permissions
    // Rules judge what a path denotes (a link to a denied file is that file), in the overlay's view.
    const env = PermissionRules.makeEnvironment({
      cwd: context.cwd,
      home: options.home,
      additionalDirectories: permissions.additionalDirectories,
      path,
      fileSystem: overlay.fileSystem
    })
    const assessment = yield* PermissionRules.assess(call, { ruleSets: [permissions.rules], env })
    if (assessment.match?.behavior === "deny") {
      return {
        _tag: "deny",
        message: `Permission to use ${tool.name} on ${assessment.match.subject} has been denied by the rule ` +
          `"${assessment.match.rule.raw.trim()}" (${assessment.match.rule.source}).`
      }
    }
    if (PermissionRules.editTools.has(tool.name)) {
      const target = safePath(tool, input)
      const resolved = target === undefined ? undefined : path.resolve(context.cwd, target)
      if (resolved === undefined || !(yield* overlay.isWritable(resolved))) {
        return {
          _tag: "deny",
          message: `${tool.name} may not write ${target ?? "(no path)"} during speculation: it is outside the ` +
            `working directory ${context.cwd}.`
        }
      }
      // An ask rule asks in every mode, bypassPermissions included (SPEC §4.5): accept must not skip it.
      if (assessment.match?.behavior === "ask") return { _tag: "boundary", type: "permission" }
      // A mode allows what it allows outside speculation: `acceptEdits` and `auto` never write a
      // protected directory (`.git`, `.claude`, `.switchyard`) or a path they cannot resolve by
      // themselves — accepting would apply it without the question the normal chain asks.
      const modeAllows = permissions.mode === "bypassPermissions" ||
        (EDITING_MODES.has(permissions.mode) && (assessment.allowed || assessment.allowedWithEdits))
      return modeAllows ? { _tag: "allow" } : { _tag: "boundary", type: "edit" }
    }
    if (assessment.match?.behavior === "ask") return { _tag: "boundary", type: "permission" }
    // Outside bypassPermissions, a read the normal chain would ask about (a path outside the working
    // directories) asks here too: its content would reach the model before the user said yes.
    const readAllowed = permissions.mode === "bypassPermissions" || assessment.allowed
    if (SAFE_READ_TOOLS.has(tool.name)) {
      return readAllowed || safePath(tool, input) === undefined
        ? { _tag: "allow" }
        : { _tag: "boundary", type: "permission" }
    }
    // A process started in the background would outlive the speculation (accept would have to hand it
    // over alive, reject to kill what the transcript says is running): it is a boundary.
    if (tool.name === "Bash" && isBackground(input)) return { _tag: "boundary", type: "bash" }
    if (tool.name === "Bash") {
      const readOnly = yield* Effect.suspend(() => Tool.evaluate(tool.isReadOnly(input, context))).pipe(
        Effect.catchAllDefect(() => Effect.succeed(false))
      )
      // It runs in the sandbox with the working tree read-only, whatever the settings say; without a working
      // sandbox a wrong "read-only" could write the real tree, so it stops (fail closed). A child process reads
      // the real tree: once the overlay has writes it would miss them.
      const sandboxed = (yield* (yield* Sandbox.Sandbox).status).available
      return readOnly && readAllowed && sandboxed && !overlay.hasWrites()
        ? { _tag: "allow" }
        : { _tag: "boundary", type: "bash" }
    }
    return { _tag: "boundary", type: "denied_tool" }
  })

/**
 * The session's context with an accepted speculation handed over: its
 * messages appended and its context changes applied, in call order.
 *
 * @since 0.1.0
 * @category accepting
 */
export const inject = (
  context: ToolUseContext.ToolUseContext,
  accepted: Pick<Accepted, "messages" | "modifiers">
): ToolUseContext.ToolUseContext =>
  ToolUseContext.applyAll({ ...context, messages: [...context.messages, ...accepted.messages] }, accepted.modifiers)

/**
 * What the speculation's calls changed in its context, as modifiers over the
 * session's: every file-read state it recorded or dropped, in the order it
 * recorded them, then its todos. (The speculation's context already applied
 * its calls' modifiers in call order.)
 */
const contextChanges = (
  start: ToolUseContext.ToolUseContext,
  end: ToolUseContext.ToolUseContext
): ReadonlyArray<ToolUseContext.ContextModifier> => {
  const out: Array<ToolUseContext.ContextModifier> = []
  for (const [path, state] of end.fileState) {
    if (start.fileState.get(path) !== state) out.push(ToolUseContext.setFileState(path, state))
  }
  for (const path of start.fileState.keys()) {
    if (!end.fileState.has(path)) out.push(ToolUseContext.setFileState(path, undefined))
  }
  if (end.todos !== start.todos) out.push(ToolUseContext.setTodos(end.todos))
  return out
}

const isBackground = (input: unknown): boolean =>
  typeof input === "object" && input !== null &&
  (input as { readonly run_in_background?: unknown }).run_in_background === true

const safePath = (tool: Tool.Any, input: unknown): string | undefined => {
  try {
    return tool.getPath(input)
  } catch {
    return undefined
  }
}

const boundaryMessage = (type: string, toolName: string) =>
  `Speculation stopped before this ${toolName} call (boundary: ${type}); it runs when the user accepts.`

const stateDirectory = Effect.orElseSucceed(Results.stateDirectory, () => ".switchyard")

/**
 * Start a speculation of `suggestion` in `context` (the session's context:
 * its messages come first). The work runs in a scope of its own, forked from
 * the caller's: closing the caller's scope rejects it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = <E, R>(
  suggestion: string,
  context: ToolUseContext.ToolUseContext,
  options: Options<E, R>
): Effect.Effect<
  Speculation,
  PlatformError.PlatformError | E,
  Scope.Scope | Requirements | Exclude<R, FileSystem.FileSystem>
> =>
  Effect.gen(function*() {
    const parentScope = yield* Effect.scope
    const services = yield* Effect.context<Requirements | Exclude<R, FileSystem.FileSystem>>()
    const generator = options.generator ??
      Option.getOrUndefined(yield* Effect.serviceOption(SuggestionGenerator.SuggestionGenerator))
    const scope = yield* Scope.fork(parentScope, ExecutionStrategy.sequential)
    const path = yield* Path.Path
    const home = yield* Settings.homeDirectory
    const startedAt = yield* Clock.currentTimeMillis
    const directory = options.directory ??
      path.join(yield* stateDirectory, "speculation", `${startedAt}-${crypto.randomUUID()}`)

    const overlay = yield* OverlayFileSystem.make({ cwd: context.cwd, directory }).pipe(
      Scope.extend(scope),
      Effect.tapError(() => Scope.close(scope, Exit.void))
    )
    const tools = yield* Layer.buildWithScope(
      Layer.provide(options.tools, OverlayFileSystem.layer(overlay)) as Layer.Layer<
        Registry.ToolRegistry,
        E,
        Exclude<R, FileSystem.FileSystem>
      >,
      scope
    ).pipe(Effect.tapError(() => Scope.close(scope, Exit.void)))

    const state = yield* SubscriptionRef.make<State>(State.Running({ suggestion, startedAt }))
    const boundary = yield* Ref.make<Boundary | undefined>(undefined)
    const contextRef = yield* Ref.make<ToolUseContext.ToolUseContext>(context)
    const ended = yield* Deferred.make<Outcome, PlatformError.PlatformError>()
    const nextSuggestion = yield* Deferred.make<Option.Option<string>>()
    let endedAt: number | undefined

    const policy: Permissions.Service = {
      decide: (request) =>
        Effect.gen(function*() {
          const verdict = yield* check(request, overlay, { home, path })
          switch (verdict._tag) {
            case "allow":
              return { behavior: "allow", source: "speculation" }
            case "deny":
              return { behavior: "deny", source: "speculation", message: verdict.message }
            case "boundary": {
              yield* Ref.update(
                boundary,
                (current) => current ?? { type: verdict.type, toolName: request.tool.name, input: request.input }
              )
              // A "no" aborts the turn (SPEC §4.9): the loop stops here with everything paired.
              return {
                behavior: "deny",
                source: "speculation",
                message: boundaryMessage(verdict.type, request.tool.name),
                rejectedByUser: true
              }
            }
          }
        })
    }

    const finish = (stop: Boundary) =>
      Effect.gen(function*() {
        yield* Effect.uninterruptible(Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          endedAt = at
          const writtenPaths = yield* Effect.either(overlay.writtenPaths)
          yield* SubscriptionRef.set(
            state,
            stop.type === "complete"
              ? State.Complete({ suggestion, startedAt, endedAt: at })
              : State.Boundary({ suggestion, boundary: stop, startedAt, endedAt: at })
          )
          yield* Deferred.complete(
            ended,
            Effect.map(writtenPaths, (paths) => ({ boundary: stop, writtenPaths: paths }))
          )
        }))
        // Pipelining: the next suggestion, at once (interrupted if the user accepts first).
        if (stop.type !== "complete" || generator === undefined) {
          return yield* Deferred.succeed(nextSuggestion, Option.none())
        }
        const messages = yield* Ref.get(contextRef).pipe(Effect.map((ctx) => ctx.messages))
        // Not `Deferred.complete(…, generator.next(…))`: that would store an interruption (accept
        // arriving while the next suggestion is asked for) and re-raise it in `accept`; the
        // `ensuring` below answers "no next suggestion" instead.
        yield* Deferred.succeed(nextSuggestion, yield* generator.next(messages))
      })

    const onStopped = (stopped: Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }>) =>
      Effect.flatMap(Ref.get(boundary), (hit): Effect.Effect<void> => {
        if (hit !== undefined) return finish(hit)
        switch (stopped.reason) {
          case "end_turn":
            return finish({ type: "complete" })
          case "max_turns":
            return finish({ type: "max_turns", detail: stopped.detail })
          default:
            return finish({ type: "error", detail: stopped.detail ?? stopped.reason })
        }
      })

    // When each message after the prompt was recorded, in order: the time saved ends at the last one kept.
    const recordedAt: Array<number> = []
    const run = QueryLoop.run(suggestion, contextRef, { ...options.loop, maxTurns: options.maxTurns ?? MAX_TURNS })
      .pipe(
        Stream.runForEach((event) =>
          Effect.zipRight(
            options.onEvent === undefined ? Effect.void : options.onEvent(event),
            event._tag === "Stopped"
              ? onStopped(event)
              : event._tag === "AssistantMessage" || event._tag === "ToolResults"
              ? Effect.map(Clock.currentTimeMillis, (at) => void recordedAt.push(at))
              : Effect.void
          )
        ),
        Effect.provide(Context.merge(services, tools)),
        Effect.provideService(Permissions.PermissionPolicy, policy),
        // Hook commands do not run: their side effects could not be taken back.
        Effect.provideService(Hooks.Hooks, Hooks.none),
        Effect.ensuring(Effect.zipRight(Deferred.interrupt(ended), Deferred.succeed(nextSuggestion, Option.none())))
      )
    // Interruptible even when started from an uninterruptible region (a promotion inside `accept`).
    const fiber = yield* Effect.forkScoped(Effect.interruptible(run)).pipe(Scope.extend(scope))

    const messages = Effect.map(Ref.get(contextRef), (ctx) => ctx.messages.slice(context.messages.length))

    const accept: Effect.Effect<Accepted, PlatformError.PlatformError> = Effect.gen(function*() {
      const acceptedAt = yield* Clock.currentTimeMillis
      yield* Fiber.interrupt(fiber)
      const done = yield* Deferred.poll(ended)
      const exit = Option.isSome(done) ? yield* Effect.exit(done.value) : undefined
      const outcome = exit !== undefined && Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none<Outcome>()
      const stop = Option.getOrUndefined(Option.map(outcome, (o) => o.boundary))
      const completed = stop?.type === "complete"
      // Everything that can fail happens before the overlay is applied.
      const recorded = yield* messages
      const kept = keptBlocks(recorded, completed)
      const cleaned = cleanMessages(recorded, completed)
      const modifiers = contextChanges(context, yield* Ref.get(contextRef))
      const writtenPaths = yield* overlay.writtenPaths
      const result = yield* overlay.apply
      // The last message accept keeps (index 0 is the prompt, recorded at the start).
      let keptUntil = startedAt
      kept.forEach((blocks, i) => {
        if (i > 0 && blocks.length > 0) keptUntil = recordedAt[i - 1] ?? keptUntil
      })
      const timeSavedMs = Math.max(0, Math.min(keptUntil, endedAt ?? acceptedAt, acceptedAt) - startedAt)
      const ready = yield* Deferred.poll(nextSuggestion)
      const promoted = Option.isSome(ready) ? yield* ready.value : Option.none<string>()
      yield* Scope.close(scope, Exit.void)
      yield* SubscriptionRef.set(state, State.Idle())
      // Promotion is best effort: the accepted work stands whether or not the next speculation starts.
      const next = Option.isSome(promoted) && options.promote !== false
        ? yield* start(promoted.value, { ...context, messages: [...context.messages, ...cleaned] }, options).pipe(
          Scope.extend(parentScope),
          Effect.provide(services),
          Effect.map(Option.some),
          Effect.catchAllCause(() => Effect.succeed(Option.none<Speculation>()))
        )
        : Option.none<Speculation>()
      return {
        boundary: stop,
        messages: cleaned,
        writtenPaths,
        applied: result.applied,
        conflicts: result.conflicts,
        modifiers,
        timeSavedMs,
        next
      }
    }).pipe(Effect.uninterruptible) as Effect.Effect<Accepted, PlatformError.PlatformError>

    const acceptInto = (session: Ref.Ref<ToolUseContext.ToolUseContext>) =>
      Effect.uninterruptible(
        Effect.tap(accept, (accepted) => Ref.update(session, (current) => inject(current, accepted)))
      )

    const reject = Effect.zipRight(
      Scope.close(scope, Exit.void),
      SubscriptionRef.set(state, State.Idle())
    )

    return {
      suggestion,
      state,
      overlay,
      await: Deferred.await(ended),
      messages,
      nextSuggestion: Deferred.await(nextSuggestion),
      accept,
      acceptInto,
      reject
    }
  })
