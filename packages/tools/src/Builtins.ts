/**
 * Every built-in tool as one Layer: what `switchyard run` and `dispatch` give
 * the model, and what an embedder provides for a Claude Code-like tool set.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Path from "@effect/platform/Path"
import type * as Registry from "@switchyard/core/Registry"
import type * as Results from "@switchyard/core/Results"
import * as Tool from "@switchyard/core/Tool"
import * as Layer from "effect/Layer"
import * as Agent from "./Agent.js"
import * as BackgroundShells from "./BackgroundShells.js"
import * as Bash from "./Bash.js"
import * as Edit from "./Edit.js"
import * as Glob from "./Glob.js"
import * as Grep from "./Grep.js"
import * as NotebookEdit from "./NotebookEdit.js"
import * as Read from "./Read.js"
import * as ShellCommand from "./ShellCommand.js"
import * as TodoWrite from "./TodoWrite.js"
import * as WebFetch from "./WebFetch.js"
import * as Write from "./Write.js"

/**
 * The names of the built-in tools, in the order the model sees them.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<string> = [
  "Agent",
  "Bash",
  "Glob",
  "Grep",
  "Read",
  "Edit",
  "MultiEdit",
  "Write",
  "NotebookEdit",
  "WebFetch",
  "TodoWrite",
  "TaskOutput",
  "TaskStop"
]

/**
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | Tool.ToolPool
  | Registry.ToolRegistry
  | Results.ResultStore
  | FileSystem.FileSystem
  | Path.Path
  | CommandExecutor.CommandExecutor
  | HttpClient.HttpClient

/**
 * Every built-in tool. Background shells live as long as the layer. The Agent
 * tool is enabled when a `LanguageModel` is in the layer's context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly agent?: Agent.Options } = {}): Layer.Layer<never, never, Requirements> =>
  Layer.merge(
    Agent.layer(options.agent),
    // One Layer for the rest (each tool's own Layer registers it alike): a Layer per tool costs every start.
    Tool.layerAll([
      Bash.Bash,
      Glob.Glob,
      Grep.Grep,
      Read.Read,
      Edit.Edit,
      Edit.MultiEdit,
      Write.Write,
      NotebookEdit.NotebookEdit,
      WebFetch.WebFetch,
      TodoWrite.TodoWrite,
      BackgroundShells.TaskOutput,
      BackgroundShells.TaskStop
    ]).pipe(Layer.provide(ShellCommand.layer))
  ).pipe(Layer.provide(BackgroundShells.layer))
