/**
 * @switchyard/core — the dispatch engine.
 *
 * The modules an embedder uses: tools and their registry (`Tool`, `Registry`,
 * `ToolSearch`, `Footprint`, `ToolUseContext`, `Results`), the wire shapes
 * (`Messages`, `DispatchEvent`), the model port and loop (`Model`,
 * `ReplayModel`, `QueryLoop`; the Anthropic adapter is the separate entry
 * point `@switchyard/core/anthropic`), dispatch without a model (`Execution`,
 * `ToolCall`, `Batches`, `StreamingExecutor`, `Interruption`), permissions and hooks
 * (`Permissions`, `PermissionChain`, `PermissionContext`, `Hooks`,
 * `HookRunner`, `Settings`, `ShellAnalysis`, the `Sandbox` port), and
 * speculation (`Speculation`,
 * `OverlayFileSystem`, `SuggestionGenerator`).
 *
 * Internal — steps of the pipeline that the Switchyard packages share but an
 * embedder does not call, reachable as `@switchyard/core/<Module>` for
 * `@switchyard/tools` and `@switchyard/cli` and not part of the supported
 * surface: `Validation` (the decode and `validateInput` step), `Deferral`
 * (which tools are deferred), `PermissionRules` (rule matching, which
 * `PermissionChain` drives), `RealPath` (paths resolved component by component
 * as the kernel does, for the tools' opens and footprints), and the small
 * shared helpers `EditDistance`, `Text` (`clip`) and `Digest` (`sha256`).
 * Everything under `internal/` is private to this package (`"./internal/*":
 * null` in its exports).
 *
 * @since 0.1.0
 */
export * as Batches from "./Batches.js"
export * as DispatchEvent from "./DispatchEvent.js"
export * as Execution from "./Execution.js"
export * as Footprint from "./Footprint.js"
export * as HookRunner from "./HookRunner.js"
export * as Hooks from "./Hooks.js"
export * as Interruption from "./Interruption.js"
export * as Journal from "./Journal.js"
export * as Messages from "./Messages.js"
export * as Model from "./Model.js"
export * as OverlayFileSystem from "./OverlayFileSystem.js"
export * as PermissionChain from "./PermissionChain.js"
export * as PermissionContext from "./PermissionContext.js"
export * as Permissions from "./Permissions.js"
export * as QueryLoop from "./QueryLoop.js"
export * as Registry from "./Registry.js"
export * as ReplayModel from "./ReplayModel.js"
export * as Results from "./Results.js"
export * as Sandbox from "./Sandbox.js"
export * as Settings from "./Settings.js"
export * as Speculation from "./Speculation.js"
export * as SuggestionGenerator from "./SuggestionGenerator.js"
export * as ShellAnalysis from "./ShellAnalysis.js"
export * as StreamingExecutor from "./StreamingExecutor.js"
export * as Tool from "./Tool.js"
export * as ToolCall from "./ToolCall.js"
export * as ToolSearch from "./ToolSearch.js"
export * as ToolUseContext from "./ToolUseContext.js"
