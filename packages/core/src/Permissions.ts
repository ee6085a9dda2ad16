/**
 * The permission port (SPEC §4.5): given a validated call and what the
 * PreToolUse hooks said, decide `allow` (optionally with `updatedInput`) or
 * `deny`. An `ask` is resolved inside the policy (classifier, user prompt), so
 * the engine only ever sees the final answer.
 *
 * The default policy fails closed (SPEC §5): it runs only read-only calls. It
 * honours a hook's block and the tool's own `checkPermissions`; a call that
 * would change something, and an ask (nobody can be asked), is a denial that
 * says how to provide a policy. The full chain of rules, modes,
 * classifier and user lives in `PermissionChain`; `allowAll` is the
 * permissive policy, by name only.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as DispatchEvent from "./DispatchEvent.js"
import type * as Hooks from "./Hooks.js"
import type { ToolPermissionCheck } from "./PermissionContext.js"
import * as Tool from "./Tool.js"
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
 * Who decided a call: a PreToolUse hook, a permission rule (`session`: one
 * added this session by an "always" answer), the tool's own
 * `checkPermissions`, the permission mode, the classifier (mode `auto`), the
 * user, the sandbox (`autoAllowBashIfSandboxed`), speculation's checker, or
 * the default policy.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionSource =
  | "hook"
  | "rule"
  | "session"
  | "tool"
  | "mode"
  | "classifier"
  | "user"
  | "sandbox"
  | "speculation"
  | "default"

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionDecision =
  | {
    readonly behavior: "allow"
    readonly source: DecisionSource
    readonly reason?: string | undefined
    /** A replacement call input, with who supplied it (named in errors if it fails validation). */
    readonly updatedInput?: { readonly input: unknown; readonly source: string } | undefined
  }
  | {
    readonly behavior: "deny"
    readonly source: DecisionSource
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
 * Allow everything a hook did not block (the tool's own check is not asked).
 * Never the default: provide it by name where everything may run.
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
 * How to give the engine a permission policy, for the default policy's
 * denials. Library words only: an embedder reads it, not a CLI user.
 *
 * @since 0.1.0
 * @category constants
 */
export const HOW_TO_PROVIDE_POLICY = "Provide a permission policy to decide such calls: " +
  "`ClaudeCodePermissions.layer({ cwd })` from @switchyard/tools (Claude Code's settings, rules, modes, hooks and " +
  "sandbox in one Layer), `PermissionChain.layer()` (rules, modes and a user prompt), " +
  "`Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)` to allow everything, or your own " +
  "`Permissions.PermissionPolicy` service."

const readOnlyOf = (tool: Tool.Any, input: unknown, context: ToolUseContext.ToolUseContext): Effect.Effect<boolean> => {
  try {
    return Tool.evaluate(tool.isReadOnly(input, context)).pipe(Effect.catchAllDefect(() => Effect.succeed(false)))
  } catch {
    return Effect.succeed(false)
  }
}

/**
 * The default policy (SPEC §5 fail-closed): a hook's deny or the tool's
 * `checkPermissions` deny denies; an ask (from a hook or the tool) denies
 * with a message saying no permission policy is provided; a hook's allow
 * allows; otherwise only a read-only call runs, and one that is not
 * read-only is denied with a message saying how to provide a policy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failClosed: Service = {
  decide: ({ context, hook, input, tool }) => {
    if (hook.decision === "deny") {
      return Effect.succeed<PermissionDecision>({
        behavior: "deny",
        source: "hook",
        message: hook.reason ?? "Blocked by a PreToolUse hook"
      })
    }
    // The tool judges the input that will run: a hook's replacement, if any.
    const checked = hook.updatedInput !== undefined ? hook.updatedInput.input : input
    const judge = (check: ToolPermissionCheck, readOnly: boolean): PermissionDecision => {
      if (check.behavior === "deny") return { behavior: "deny", source: "tool", message: check.message }
      if (hook.decision === "ask" || check.behavior === "ask") {
        const why = check.behavior === "ask" ? check.message : hook.reason ?? "a PreToolUse hook asks for approval"
        return {
          behavior: "deny",
          source: "default",
          message: `Permission to use ${tool.name} requires approval (${why}), and no permission policy is ` +
            `provided, so nobody can be asked. ${HOW_TO_PROVIDE_POLICY}`
        }
      }
      const updatedInput = hook.updatedInput ??
        (check.updatedInput !== undefined
          ? { input: check.updatedInput, source: `${tool.name}.checkPermissions` }
          : undefined)
      if (hook.decision === "allow") return { behavior: "allow", source: "hook", updatedInput }
      if (!readOnly) {
        return {
          behavior: "deny",
          source: "default",
          message: `This ${tool.name} call would change something (it is not read-only), and no permission ` +
            `policy is provided, so only read-only calls run. ${HOW_TO_PROVIDE_POLICY}`
        }
      }
      return { behavior: "allow", source: "default", updatedInput }
    }
    const unchecked = (defect: unknown): ToolPermissionCheck => ({
      behavior: "deny",
      message: `${tool.name} could not check its permissions: ${String(defect)}`
    })
    let check: Effect.Effect<ToolPermissionCheck>
    try {
      check = tool.checkPermissions(checked, context)
    } catch (defect) {
      return Effect.succeed(judge(unchecked(defect), false))
    }
    const readOnly = readOnlyOf(tool, checked, context)
    // Most checks and predicates answer at once (`Effect.succeed`): judge without running them.
    if (Exit.isExit(check) && Exit.isExit(readOnly)) {
      const checkExit = check as Exit.Exit<ToolPermissionCheck>
      const readOnlyExit = readOnly as Exit.Exit<boolean>
      if (Exit.isSuccess(checkExit) && Exit.isSuccess(readOnlyExit)) {
        return Effect.succeed(judge(checkExit.value, readOnlyExit.value))
      }
    }
    return Effect.zipWith(
      check.pipe(Effect.catchAllDefect((defect) => Effect.succeed(unchecked(defect)))),
      readOnly,
      judge
    )
  }
}

/**
 * @since 0.1.0
 * @category services
 */
export class PermissionPolicy extends Context.Reference<PermissionPolicy>()(
  "@switchyard/core/Permissions/PermissionPolicy",
  { defaultValue: (): Service => failClosed }
) {}
