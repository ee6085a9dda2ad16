/**
 * The hooks port (SPEC §4.5). The engine asks it at PreToolUse and
 * PostToolUse(Failure); the query loop at PostToolBatch, UserPromptSubmit and
 * Stop. The default does nothing; `HookRunner` (command and programmatic hooks
 * from settings) is the full implementation.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as DispatchEvent from "./DispatchEvent.js"
import type * as Messages from "./Messages.js"
import type * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * A message a hook wants shown (to the user, or attached for the model).
 *
 * @since 0.1.0
 * @category models
 */
export interface HookMessage {
  readonly content: string
  readonly level: DispatchEvent.HookMessageLevel
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolHookRequest {
  readonly tool: Tool.Any
  readonly toolUseId: string
  /** The observable input (SPEC §4.4 step 3). */
  readonly input: unknown
  readonly context: ToolUseContext.ToolUseContext
}

/**
 * The combined answer of the PreToolUse hooks.
 *
 * @since 0.1.0
 * @category models
 */
export interface PreToolUseOutcome {
  /** `deny` also covers exit code 2 and `decision: "block"`. */
  readonly decision: "allow" | "deny" | "ask" | undefined
  readonly reason: string | undefined
  /** `updatedInput` from a hook, with the hook that supplied it. */
  readonly updatedInput: { readonly input: unknown; readonly source: string } | undefined
  readonly additionalContext: ReadonlyArray<string>
  readonly messages: ReadonlyArray<HookMessage>
  /** `continue: false`: stop the loop after this batch, with the reason. */
  readonly stop: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseRequest extends ToolHookRequest {
  readonly response: Messages.ToolResultContent
  readonly isError: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseOutcome {
  readonly additionalContext: ReadonlyArray<string>
  /** Replaces the tool's output (MCP output modification). */
  readonly updatedToolOutput: Messages.ToolResultContent | undefined
  /** `decision: "block"` on PostToolUse: the reason is given to the model. */
  readonly blockReason: string | undefined
  readonly messages: ReadonlyArray<HookMessage>
  readonly stop: string | undefined
}

/**
 * The answer of hooks that can only stop or add context (PostToolBatch,
 * UserPromptSubmit, Stop).
 *
 * @since 0.1.0
 * @category models
 */
export interface LoopHookOutcome {
  /** `decision: "block"` (UserPromptSubmit: drop the prompt; Stop: keep going) with its reason. */
  readonly blockReason: string | undefined
  readonly additionalContext: ReadonlyArray<string>
  readonly messages: ReadonlyArray<HookMessage>
  readonly stop: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly preToolUse: (request: ToolHookRequest) => Effect.Effect<PreToolUseOutcome>
  readonly postToolUse: (request: PostToolUseRequest) => Effect.Effect<PostToolUseOutcome>
  readonly postToolBatch: (request: {
    readonly context: ToolUseContext.ToolUseContext
    readonly results: ReadonlyArray<Messages.ToolResultBlock>
  }) => Effect.Effect<LoopHookOutcome>
  readonly userPromptSubmit: (request: {
    readonly context: ToolUseContext.ToolUseContext
    readonly prompt: string
  }) => Effect.Effect<LoopHookOutcome>
  readonly stop: (request: {
    readonly context: ToolUseContext.ToolUseContext
    readonly stopHookActive: boolean
  }) => Effect.Effect<LoopHookOutcome>
  /** Whether any hook is configured for this event and tool (lets the engine skip work). */
  readonly has: (event: HookEvent, toolName?: string) => boolean
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const HookEvent = Schema.Literal(
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "UserPromptSubmit",
  "Stop"
)
/**
 * @since 0.1.0
 * @category models
 */
export type HookEvent = Schema.Schema.Type<typeof HookEvent>

/**
 * One hook command in Claude Code's settings format.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookCommand = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String,
  /** Seconds; default 600. */
  timeout: Schema.optional(Schema.Number.pipe(Schema.positive())),
  /**
   * Switchyard's opt-in: run the hook in the sandbox (core `Sandbox`), like a
   * sandboxed Bash command; when the sandbox cannot run here, the hook does
   * not run and gives no decision.
   */
  sandbox: Schema.optional(Schema.Boolean)
})

/**
 * `{ matcher, hooks: [...] }`: the matcher is a tool name, `a|b`, a regex, or
 * empty / `*` for every tool (ignored for events without a tool).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookMatcher = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(HookCommand)
})

/**
 * The `hooks` key of a settings file: `hooks.<Event>[] = {matcher, hooks}`.
 * Events Switchyard does not know are kept out of the type but do not make
 * the file invalid.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HooksSettings = Schema.partial(Schema.Record({ key: HookEvent, value: Schema.Array(HookMatcher) }))
/**
 * @since 0.1.0
 * @category models
 */
export type HooksSettings = Schema.Schema.Type<typeof HooksSettings>

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyPreToolUse: PreToolUseOutcome = {
  decision: undefined,
  reason: undefined,
  updatedInput: undefined,
  additionalContext: [],
  messages: [],
  stop: undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyPostToolUse: PostToolUseOutcome = {
  additionalContext: [],
  updatedToolOutput: undefined,
  blockReason: undefined,
  messages: [],
  stop: undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyLoopHook: LoopHookOutcome = {
  blockReason: undefined,
  additionalContext: [],
  messages: [],
  stop: undefined
}

/**
 * Hooks that do nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const none: Service = {
  preToolUse: () => Effect.succeed(emptyPreToolUse),
  postToolUse: () => Effect.succeed(emptyPostToolUse),
  postToolBatch: () => Effect.succeed(emptyLoopHook),
  userPromptSubmit: () => Effect.succeed(emptyLoopHook),
  stop: () => Effect.succeed(emptyLoopHook),
  has: () => false
}

/**
 * @since 0.1.0
 * @category services
 */
export class Hooks extends Context.Reference<Hooks>()("@switchyard/core/Hooks/Hooks", {
  defaultValue: (): Service => none
}) {}
