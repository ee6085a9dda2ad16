/**
 * Issue 20 item 1: hard links meet. Keys were path strings, so a Bash append
 * to `a.txt` and a Read of its hard link `h` ran side by side and the Read
 * missed the append. Judged by the result the Read and the Grep return under
 * the default footprint schedule, against what the sequential run returns.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import {
  DispatchEvent,
  Execution,
  Messages,
  PermissionContext,
  Permissions,
  Registry,
  Results,
  StreamingExecutor,
  ToolUseContext
} from "@switchyard/core"
import * as Builtins from "@switchyard/tools/Builtins"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

const layer = Builtins.layer().pipe(
  Layer.provideMerge(Registry.layer()),
  Layer.provide(FetchHttpClient.layer),
  // The engine's default policy runs only read-only calls; these tests are about scheduling.
  Layer.provideMerge(Layer.mergeAll(
    ShellCommand.layer,
    Results.layerMemory,
    Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)
  )),
  Layer.provideMerge(NodeContext.layer)
)

const dispatch = (cwd: string, calls: ReadonlyArray<Messages.ToolUseBlock>, scheduling: "footprints" | "greedy") =>
  Effect.gen(function*() {
    const context = ToolUseContext.make({
      cwd,
      permissions: { ...PermissionContext.empty, mode: "bypassPermissions" }
    })
    const env = yield* Execution.makeEnvironment(context)
    const events = Chunk.toArray(yield* Stream.runCollect(StreamingExecutor.runAll(calls, env, { scheduling })))
    // Results spelled from the root, so the runs on two copies compare.
    return new Map(
      events.filter(DispatchEvent.isResult).map((r) => [
        r.toolUseId,
        Messages.contentText(r.block.content).split(cwd).join("<root>")
      ])
    )
  }).pipe(Effect.provide(layer))

const tree = () => {
  const root = NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), "hard-links-")))
  NFS.writeFileSync(NPath.join(root, "a.txt"), "first\n")
  NFS.mkdirSync(NPath.join(root, "sub"))
  NFS.linkSync(NPath.join(root, "a.txt"), NPath.join(root, "h"))
  NFS.linkSync(NPath.join(root, "a.txt"), NPath.join(root, "sub", "h"))
  return root
}

describe("hard links meet (SPEC §4.13)", () => {
  it.live("a Read of a hard link waits for a Bash append to another name of the file", () =>
    Effect.gen(function*() {
      const calls = [
        Messages.toolUse("w", "Bash", { command: "sleep 0.3; echo added >> a.txt" }),
        Messages.toolUse("r", "Read", { file_path: "h" })
      ]
      const footprints = yield* dispatch(tree(), calls, "footprints")
      const sequential = yield* dispatch(tree(), calls, "greedy")
      expect(sequential.get("r")).toContain("added")
      expect(footprints.get("r")).toBe(sequential.get("r"))
    }))

  it.live("a Grep of a directory waits for a write to a file that has another name in it", () =>
    Effect.gen(function*() {
      const calls = [
        Messages.toolUse("w", "Bash", { command: "sleep 0.3; echo added >> a.txt" }),
        Messages.toolUse("g", "Grep", { pattern: "added", path: "sub", output_mode: "files_with_matches" })
      ]
      const footprints = yield* dispatch(tree(), calls, "footprints")
      const sequential = yield* dispatch(tree(), calls, "greedy")
      expect(sequential.get("g")).toContain("sub/h")
      expect(footprints.get("g")).toBe(sequential.get("g"))
    }))
})
