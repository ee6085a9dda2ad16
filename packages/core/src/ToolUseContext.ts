/**
 * The state a tool call runs in and may change (SPEC §4.7): the conversation so
 * far, the permission context, the file-read-state cache and the todo list.
 *
 * Tools never mutate it; they emit context modifiers that the batch runner and
 * the streaming executor apply in call order.
 *
 * @since 0.1.0
 */
import type * as Messages from "./Messages.js"
import * as PermissionContext from "./PermissionContext.js"

/**
 * What Read recorded about a file, so that Write and Edit can refuse stale
 * writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileState {
  readonly mtimeMs: number
  readonly hash: string
  /** Whether only part of the file was read (offset/limit). */
  readonly partial: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Todo {
  readonly content: string
  readonly status: "pending" | "in_progress" | "completed"
  readonly activeForm: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolUseContext {
  readonly sessionId: string
  readonly cwd: string
  readonly messages: ReadonlyArray<Messages.Message>
  readonly permissions: PermissionContext.PermissionContext
  readonly fileState: ReadonlyMap<string, FileState>
  readonly todos: ReadonlyArray<Todo>
  /** How many Agent calls deep this dispatch is (0 for the main loop). */
  readonly agentDepth: number
  /** Where the conversation is recorded, if anywhere (hooks get it as `transcript_path`). */
  readonly transcriptPath: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type ContextModifier = (context: ToolUseContext) => ToolUseContext

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly cwd: string
  readonly sessionId?: string
  readonly messages?: ReadonlyArray<Messages.Message>
  readonly permissions?: PermissionContext.PermissionContext
  readonly fileState?: ReadonlyMap<string, FileState>
  readonly todos?: ReadonlyArray<Todo>
  readonly agentDepth?: number
  readonly transcriptPath?: string | undefined
}): ToolUseContext => ({
  sessionId: options.sessionId ?? crypto.randomUUID(),
  cwd: options.cwd,
  messages: options.messages ?? [],
  permissions: options.permissions ?? PermissionContext.empty,
  fileState: options.fileState ?? new Map(),
  todos: options.todos ?? [],
  agentDepth: options.agentDepth ?? 0,
  transcriptPath: options.transcriptPath
})

/**
 * Record (or forget, with `undefined`) the read state of a file.
 *
 * @since 0.1.0
 * @category modifiers
 */
export const setFileState = (path: string, state: FileState | undefined): ContextModifier => (context) => {
  const fileState = new Map(context.fileState)
  if (state === undefined) fileState.delete(path)
  else fileState.set(path, state)
  return { ...context, fileState }
}

/**
 * @since 0.1.0
 * @category modifiers
 */
export const setTodos = (todos: ReadonlyArray<Todo>): ContextModifier => (context) => ({ ...context, todos })

/**
 * Apply modifiers left to right.
 *
 * @since 0.1.0
 * @category modifiers
 */
export const applyAll = (context: ToolUseContext, modifiers: ReadonlyArray<ContextModifier>): ToolUseContext =>
  modifiers.reduce((acc, modify) => modify(acc), context)
