/**
 * The dispatcher's output (SPEC §3, §4.6): one stream of events per dispatch.
 * Times are epoch milliseconds from the Effect `Clock`, so tests under
 * `TestClock` see exact values.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Hooks from "./Hooks.js"
import type * as Messages from "./Messages.js"
import type * as Permissions from "./Permissions.js"

/**
 * @since 0.1.0
 * @category models
 */
export type ResultStatus = "success" | "error" | "cancelled" | "denied"

/**
 * @since 0.1.0
 * @category models
 */
export type HookMessageLevel = "info" | "warning" | "error"

/**
 * An earlier call a call had to wait for before it could start, and why: the
 * earlier call's conflicting access (`"writes /repo/a.ts"`, `"writes *"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Wait {
  readonly toolUseId: string
  readonly name: string
  readonly reason: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type DispatchEvent = Data.TaggedEnum<{
  /**
   * The tool begins executing (the runner started it). `waitedFor`: the
   * earlier calls the streaming executor held it back for, if any.
   */
  Started: {
    readonly toolUseId: string
    readonly name: string
    readonly input: unknown
    readonly at: number
    readonly waitedFor?: ReadonlyArray<Wait> | undefined
  }
  Progress: { readonly toolUseId: string; readonly name: string; readonly data: unknown; readonly at: number }
  PermissionRequested: {
    readonly toolUseId: string
    readonly name: string
    readonly input: unknown
    readonly message: string
    readonly at: number
  }
  PermissionDecided: {
    readonly toolUseId: string
    readonly name: string
    readonly behavior: "allow" | "deny"
    /** Who decided. */
    readonly source: Permissions.DecisionSource
    readonly reason: string | undefined
    readonly at: number
  }
  HookAttachment: {
    readonly toolUseId: string
    readonly name: string
    readonly hookEvent: Hooks.HookEvent
    readonly content: string
    readonly level: HookMessageLevel
    readonly at: number
  }
  Result: {
    readonly toolUseId: string
    readonly name: string
    readonly status: ResultStatus
    readonly block: Messages.ToolResultBlock
    readonly startedAt: number
    readonly endedAt: number
  }
}>

/**
 * Constructors and matchers: `DispatchEvent.Result({...})`, `DispatchEvent.$is("Result")`,
 * `DispatchEvent.$match(event, {...})`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { $is, $match, HookAttachment, PermissionDecided, PermissionRequested, Progress, Result, Started } = Data
  .taggedEnum<DispatchEvent>()

/**
 * @since 0.1.0
 * @category models
 */
export type Result = Data.TaggedEnum.Value<DispatchEvent, "Result">

/**
 * @since 0.1.0
 * @category guards
 */
export const isResult = $is("Result")

/**
 * @since 0.1.0
 * @category guards
 */
export const isProgress = $is("Progress")

/**
 * @since 0.1.0
 * @category guards
 */
export const isStarted = $is("Started")
