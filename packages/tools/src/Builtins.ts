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
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Tool from "@switchyard/core/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
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

/** Every built-in tool but Agent, registered in this order by one Layer. */
const tools = [
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
] as const

/**
 * Every built-in tool. Background shells live as long as the layer. The Agent
 * tool is enabled when a `LanguageModel` is in the layer's context.
 *
 * One Layer builds the others in turn into its scope (each Layer costs every start: a memo entry, a scope,
 * fiber-ref diffs, and a fiber for each side of a merge): the background shells, then Agent with them, then the
 * rest with them and the shell analysis, as the merge this replaces registered them (Agent first).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly agent?: Agent.Options } = {}): Layer.Layer<never, never, Requirements> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    const build = <ROut, RIn>(layer: Layer.Layer<ROut, never, RIn>, context: Context.Context<RIn>) =>
      Effect.provide(Layer.buildWithMemoMap(layer, memoMap, scope), context)
    const outer = yield* Effect.context<Requirements>()
    const shells = Context.merge(outer, yield* build(BackgroundShells.layer, outer))
    yield* build(Agent.layer(options.agent), shells)
    yield* build(Tool.layerAll(tools), Context.add(shells, ShellAnalysis.ShellAnalysis, ShellCommand.service))
  }))
