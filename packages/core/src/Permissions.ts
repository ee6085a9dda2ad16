/**
 * The permission port (SPEC §4.5): given a validated call and what the
 * PreToolUse hooks said, decide `allow` (optionally with `updatedInput`) or
 * `deny`. An `ask` is resolved inside the policy (classifier, user prompt), so
 * the engine only ever sees the final answer.
 *
 * The default policy honours hook blocks and otherwise allows; the full chain
 * of rules, modes, classifier and user lives in `PermissionChain`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as DispatchEvent from "./DispatchEvent.js"
import type * as Hooks from "./Hooks.js"
import type * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface PermissionRequest {
  readonly tool: Tool.Any
  readonly toolUseId: string
  /** The observable input (after backfill); what rules and hooks see. */
  readonly input: unknown
  readonly context: ToolUseContext.ToolUseContext
  readonly hook: Hooks.PreToolUseOutcome
  /** Publish `PermissionRequested` while waiting for a user. */
  readonly emit: (event: DispatchEvent.DispatchEvent) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionDecision =
  | {
    readonly behavior: "allow"
    readonly source: string
    readonly reason?: string | undefined
    /** A replacement call input, with who supplied it (named in errors if it fails validation). */
    readonly updatedInput?: { readonly input: unknown; readonly source: string } | undefined
  }
  | {
    readonly behavior: "deny"
    readonly source: string
    readonly message: string
    /** The user said no: the turn is aborted with reason `permission_rejected` (SPEC §4.9). */
    readonly rejectedByUser?: boolean | undefined
  }

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly decide: (request: PermissionRequest) => Effect.Effect<PermissionDecision>
}

/**
 * Allow everything a hook did not block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const allowAll: Service = {
  decide: ({ hook }) =>
    Effect.succeed<PermissionDecision>(
      hook.decision === "deny"
        ? { behavior: "deny", source: "hook", message: hook.reason ?? "Blocked by a PreToolUse hook" }
        : { behavior: "allow", source: hook.decision === "allow" ? "hook" : "default", updatedInput: hook.updatedInput }
    )
}

/**
 * @since 0.1.0
 * @category services
 */
export class PermissionPolicy extends Context.Reference<PermissionPolicy>()("@switchyard/core/PermissionPolicy", {
  defaultValue: (): Service => allowAll
}) {}
