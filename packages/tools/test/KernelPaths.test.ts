/**
 * Issue 19 class 7: a link followed by `..`. The kernel follows LINK first and
 * then climbs from its target; the permission check, the file tools and the
 * footprints resolve paths the same way, never lexically first. Judged by
 * what the tools read and wrote on a real tree and by what `cat` (the kernel)
 * reads at the same path.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import {
  DispatchEvent,
  Execution,
  Footprint,
  Messages,
  PermissionChain,
  PermissionContext,
  Registry,
  Results,
  ToolUseContext
} from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as Builtins from "@switchyard/tools/Builtins"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

/**
 * root/work/proj is the working directory, with secrets/a.txt; proj/l is a link to proj/decoy/x, so the
 * kernel reads `l/../../secrets/a.txt` as proj/secrets/a.txt while a lexical `..` gives root/work/secrets/a.txt
 * (a public file). proj/up is a link to root/elsewhere/a/b: `up/../x.txt` is outside, lexically inside.
 */
const fixture = () => {
  const root = NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), "kernel-paths-")))
  const proj = NPath.join(root, "work", "proj")
  NFS.mkdirSync(NPath.join(proj, "secrets"), { recursive: true })
  NFS.mkdirSync(NPath.join(proj, "decoy", "x"), { recursive: true })
  NFS.mkdirSync(NPath.join(root, "work", "secrets"), { recursive: true })
  NFS.mkdirSync(NPath.join(root, "elsewhere", "a", "b"), { recursive: true })
  NFS.writeFileSync(NPath.join(proj, "secrets", "a.txt"), "SECRET-5d1e\n")
  NFS.writeFileSync(NPath.join(root, "work", "secrets", "a.txt"), "public\n")
  NFS.symlinkSync(NPath.join(proj, "decoy", "x"), NPath.join(proj, "l"))
  NFS.symlinkSync(NPath.join(root, "elsewhere", "a", "b"), NPath.join(proj, "up"))
  return { root, proj }
}

const tools = Builtins.layer().pipe(Layer.provideMerge(Registry.layer()), Layer.provide(FetchHttpClient.layer))

const run = (
  proj: string,
  mode: PermissionContext.PermissionMode,
  rules: ReadonlyArray<[string, PermissionContext.RuleBehavior]>,
  block: Messages.ToolUseBlock
) =>
  Effect.gen(function*() {
    const context = ToolUseContext.make({
      cwd: proj,
      permissions: {
        ...PermissionContext.empty,
        mode,
        rules: rules.map(([raw, behavior]) => PermissionContext.parseRule(raw, behavior, "test", proj)!)
      }
    })
    const env = yield* Execution.makeEnvironment(context)
    const events = Chunk.toArray(yield* Stream.runCollect(Execution.runToolUse(block, env)))
    return events.filter(DispatchEvent.isResult)[0]!
  }).pipe(
    Effect.provide(Layer.mergeAll(tools, PermissionChain.layer({ projectDir: proj }), ShellCommand.layer)),
    Effect.provide(Layer.merge(NodeContext.layer, Results.layerMemory))
  )

describe("a link followed by `..` (issue 19 class 7)", () => {
  it.effect("Read opens what the kernel opens, and a deny rule on that target denies it", () =>
    Effect.gen(function*() {
      const { proj } = fixture()
      const spelled = "l/../../secrets/a.txt"
      const kernelReads = execFileSync("cat", [spelled], { cwd: proj, encoding: "utf8" })
      expect(kernelReads).toBe("SECRET-5d1e\n")
      const read = Messages.toolUse("r1", "Read", { file_path: spelled })
      const open = yield* run(proj, "bypassPermissions", [], read)
      expect(Messages.contentText(open.block.content)).toContain("SECRET-5d1e")
      const denied = yield* run(proj, "bypassPermissions", [["Read(./secrets/**)", "deny"]], read)
      expect(denied.status).toBe("denied")
      expect(Messages.contentText(denied.block.content)).not.toContain("SECRET-5d1e")
    }))

  it.effect("acceptEdits does not auto-allow a write that the kernel lands outside the working directory", () =>
    Effect.gen(function*() {
      const { proj, root } = fixture()
      const result = yield* run(
        proj,
        "acceptEdits",
        [],
        Messages.toolUse("w1", "Write", { file_path: "up/../x.txt", content: "escaped\n" })
      )
      expect(result.status).toBe("denied")
      expect(NFS.existsSync(NPath.join(root, "elsewhere", "a", "x.txt"))).toBe(false)
      expect(NFS.existsSync(NPath.join(proj, "x.txt"))).toBe(false)
    }))

  it.effect("the permission environment and footprints resolve LINK/.. as the kernel does", () =>
    Effect.gen(function*() {
      const { proj, root } = fixture()
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      for (const realPaths of ["kernel", "fileSystem"] as const) {
        const env = PermissionRules.makeEnvironment({
          cwd: proj,
          home: os.homedir(),
          additionalDirectories: [],
          path,
          fileSystem: fs,
          realPaths
        })
        const resolved = yield* env.resolvePath(`${proj}/l/../../secrets/a.txt`)
        expect(resolved.real).toContain(`${proj}/secrets/a.txt`)
        const outside = yield* env.resolvePath(`${proj}/up/../x.txt`)
        expect(outside.real).toEqual([`${root}/elsewhere/a/x.txt`])
      }
      // A Write through the link and a Read of its real target are one resource.
      const write = yield* Effect.flatMap(
        Builtins.layer().pipe(Layer.provideMerge(Registry.layer()), Layer.provide(FetchHttpClient.layer), Layer.build),
        (context) =>
          Effect.gen(function*() {
            const registry = yield* Registry.ToolRegistry
            const tool = (yield* registry.modelPool).find((t) => t.name === "Write")!
            const declared = tool.footprint!(
              { file_path: "up/../x.txt", content: "" },
              ToolUseContext.make({ cwd: proj })
            )
            return yield* (Effect.isEffect(declared) ? declared : Effect.succeed(declared))
          }).pipe(Effect.provide(context))
      )
      expect(Footprint.conflict(write as Footprint.Footprint, { reads: [`${root}/elsewhere/a/x.txt`] })).toBeDefined()
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(NodeContext.layer, Results.layerMemory))))
})

describe("Glob is judged by the directory it searches (issue 20 item 2)", () => {
  it.effect("in default mode an absolute or `..` pattern outside cwd asks, like `path` outside cwd does", () =>
    Effect.gen(function*() {
      const { proj, root } = fixture()
      NFS.writeFileSync(NPath.join(root, "elsewhere", "a", "b", "found.conf"), "x\n")
      const outside = NPath.join(root, "elsewhere", "a", "b")
      const inputs = [
        { pattern: "*.conf", path: outside },
        { pattern: `${outside}/*.conf` },
        { pattern: "../../elsewhere/a/b/*.conf" }
      ]
      for (const [i, input] of inputs.entries()) {
        const result = yield* run(proj, "default", [], Messages.toolUse(`g${i}`, "Glob", input))
        // Without anyone to ask, asking is a denial; judged by the result: no listing of the outside directory.
        expect(result.status, JSON.stringify(input)).toBe("denied")
        expect(Messages.contentText(result.block.content)).not.toContain("found.conf")
      }
      // Inside cwd the same patterns list without asking.
      NFS.writeFileSync(NPath.join(proj, "decoy", "inside.conf"), "x\n")
      const inside = yield* run(
        proj,
        "default",
        [],
        Messages.toolUse("g9", "Glob", { pattern: `${proj}/decoy/*.conf` })
      )
      expect(Messages.contentText(inside.block.content)).toContain("inside.conf")
    }))

  it.effect("the footprint of an absolute or `..` pattern is its base directory's subtree", () =>
    Effect.gen(function*() {
      const { proj, root } = fixture()
      const footprintOf = (input: { readonly pattern: string; readonly path?: string }) =>
        Effect.flatMap(
          Builtins.layer().pipe(
            Layer.provideMerge(Registry.layer()),
            Layer.provide(FetchHttpClient.layer),
            Layer.build
          ),
          (context) =>
            Effect.gen(function*() {
              const registry = yield* Registry.ToolRegistry
              const tool = (yield* registry.modelPool).find((t) => t.name === "Glob")!
              const declared = tool.footprint!(input, ToolUseContext.make({ cwd: proj }))
              return (yield* (Effect.isEffect(declared) ? declared : Effect.succeed(declared))) as Footprint.Footprint
            }).pipe(Effect.provide(context))
        )
      expect(yield* footprintOf({ pattern: "/etc/*.conf" })).toEqual({ reads: ["/etc/**"] })
      // The base's subtree, and the directories its `..` climbed out of (what the path means depends on them).
      expect(yield* footprintOf({ pattern: "../../elsewhere/**/*.conf" })).toEqual({
        reads: [`${root}/elsewhere/**`, proj, `${root}/work`]
      })
      expect(yield* footprintOf({ pattern: "src/**/*.ts" })).toEqual({ reads: [`${proj}/**`] })
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(NodeContext.layer, Results.layerMemory))))
})
