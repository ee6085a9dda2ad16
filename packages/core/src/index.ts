/**
 * @switchyard/core — the dispatch engine.
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
export * as Messages from "./Messages.js"
export * as Model from "./Model.js"
export * as PermissionChain from "./PermissionChain.js"
export * as PermissionContext from "./PermissionContext.js"
export * as PermissionRules from "./PermissionRules.js"
export * as Permissions from "./Permissions.js"
export * as QueryLoop from "./QueryLoop.js"
export * as Registry from "./Registry.js"
export * as ReplayModel from "./ReplayModel.js"
export * as Results from "./Results.js"
export * as Settings from "./Settings.js"
export * as ShellAnalysis from "./ShellAnalysis.js"
export * as StreamingExecutor from "./StreamingExecutor.js"
export * as Tool from "./Tool.js"
export * as ToolUseContext from "./ToolUseContext.js"
export * as Validation from "./Validation.js"
