/**
 * The Node platform every command runs on: NodeContext's services (file
 * system, path, command executor, terminal, worker manager), the same
 * implementations, built in one Layer. `NodeContext.layer` is a merge of
 * five Layers over a sixth; each merge forks a fiber for each side and each
 * node takes a memo entry, a scope and fiber-ref diffs: built once per
 * process, before any command runs, it cost about three times as much CPU as
 * these Layers built one after another (a cold start and a warm one alike).
 *
 * @internal
 */
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** NodeContext.layer's services, each Layer built in turn (the file system first: the executor uses it). */
export const layer: Layer.Layer<NodeContext.NodeContext> = Layer.scopedContext(Effect.gen(function*() {
  const memoMap = yield* Layer.CurrentMemoMap
  const scope = yield* Effect.scope
  const fileSystem = yield* Layer.buildWithMemoMap(NodeFileSystem.layer, memoMap, scope)
  const path = yield* Layer.buildWithMemoMap(NodePath.layer, memoMap, scope)
  const executor = yield* Effect.provide(Layer.buildWithMemoMap(NodeCommandExecutor.layer, memoMap, scope), fileSystem)
  const terminal = yield* Layer.buildWithMemoMap(NodeTerminal.layer, memoMap, scope)
  const workers = yield* Layer.buildWithMemoMap(NodeWorker.layerManager, memoMap, scope)
  return Context.merge(fileSystem, path).pipe(Context.merge(executor), Context.merge(terminal), Context.merge(workers))
}))
