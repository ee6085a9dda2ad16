/**
 * Speculation through the library for the tests (SPEC §4.12): a project in a
 * temp dir, a replayed transcript run as a speculation over the built-in
 * tools, and snapshots of the real tree to judge isolation by.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import {
  Messages,
  PermissionContext,
  Registry,
  ReplayModel,
  Results,
  Speculation,
  type SuggestionGenerator,
  ToolUseContext
} from "@switchyard/core"
import * as Builtins from "@switchyard/tools/Builtins"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

export const tempDir = (prefix: string) => NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), prefix)))

export const snapshot = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (dir: string, rel: string) => {
    for (const name of NFS.readdirSync(dir).sort()) {
      const abs = NPath.join(dir, name)
      const childRel = rel === "" ? name : `${rel}/${name}`
      const info = NFS.lstatSync(abs)
      if (info.isSymbolicLink()) out[childRel] = `-> ${NFS.readlinkSync(abs)}`
      else if (info.isDirectory()) {
        out[childRel] = "<dir>"
        visit(abs, childRel)
      } else out[childRel] = NFS.readFileSync(abs, "utf8")
    }
  }
  visit(root, "")
  return out
}
export const treeHash = (root: string) => createHash("sha256").update(JSON.stringify(snapshot(root))).digest("hex")

/** A project: two source files, a notes file, a nested directory. */
export const project = () => {
  const root = tempDir("spec-project-")
  NFS.writeFileSync(NPath.join(root, "greet.ts"), "export const greet = () => \"hello\"\n")
  NFS.writeFileSync(NPath.join(root, "notes.txt"), "remember the milk\n")
  NFS.mkdirSync(NPath.join(root, "src"))
  NFS.writeFileSync(NPath.join(root, "src", "main.ts"), "import { greet } from \"../greet\"\nconsole.log(greet())\n")
  return root
}

export const use = (id: string, name: string, input: Record<string, unknown>) => ({
  block: { type: "tool_use" as const, id, name, input }
})
export const say = (text: string) => ({ block: { type: "text" as const, text } })
export const turn = (...blocks: ReadonlyArray<ReplayModel.ReplayBlock>): ReplayModel.Turn => ({ blocks })

export const toolsLayer = Builtins.layer().pipe(
  Layer.provideMerge(Registry.layer()),
  Layer.provide(FetchHttpClient.layer)
)

export const state = tempDir("spec-state-")

/** The sandbox a speculation's Bash runs in (off by the settings: speculation uses it whenever bubblewrap works). */
export const sandboxLayer = Layer.orDie(Sandbox.layer())

export const environment = (transcript: ReplayModel.Transcript, sandbox = sandboxLayer) =>
  Layer.mergeAll(ReplayModel.layer(transcript), Results.layerMemory, ShellCommand.layer, sandbox).pipe(
    Layer.provideMerge(NodeContext.layer)
  )

export const contextFor = (
  cwd: string,
  mode: PermissionContext.PermissionMode,
  rules: ReadonlyArray<[string, PermissionContext.RuleBehavior]> = []
) =>
  ToolUseContext.make({
    cwd,
    permissions: {
      ...PermissionContext.empty,
      mode,
      rules: rules.map(([raw, behavior]) => PermissionContext.parseRule(raw, behavior, "test", cwd)!)
    }
  })

export const startIn = (
  cwd: string,
  transcript: ReplayModel.Transcript,
  mode: PermissionContext.PermissionMode,
  options: {
    readonly rules?: ReadonlyArray<[string, PermissionContext.RuleBehavior]>
    readonly generator?: SuggestionGenerator.Service
    readonly onEvent?: Speculation.Options<never, never>["onEvent"]
  } = {}
) =>
  Speculation.start("Do the task", contextFor(cwd, mode, options.rules), {
    tools: toolsLayer,
    directory: NPath.join(state, `overlay-${Math.random().toString(36).slice(2)}`),
    generator: options.generator,
    onEvent: options.onEvent
  })

/** Run a transcript as a speculation; the outcome and the tool results by id. */
export const speculate = (
  transcript: ReplayModel.Transcript,
  mode: PermissionContext.PermissionMode,
  options: {
    readonly rules?: ReadonlyArray<[string, PermissionContext.RuleBehavior]>
    readonly cwd?: string
    /** The sandbox service (default: bubblewrap, off by the settings). */
    readonly sandbox?: typeof sandboxLayer
  } = {}
) =>
  Effect.gen(function*() {
    const cwd = options.cwd ?? project()
    const before = treeHash(cwd)
    const speculation = yield* startIn(cwd, transcript, mode, options)
    const outcome = yield* speculation.await
    const results = new Map<string, Messages.ToolResultBlock>()
    for (const message of yield* speculation.messages) {
      for (const block of Messages.blocks(message)) {
        if (block.type === "tool_result") results.set(block.tool_use_id, block)
      }
    }
    // Until accept, nothing reaches the real tree.
    expect(treeHash(cwd)).toBe(before)
    return { cwd, speculation, outcome, results, before }
  }).pipe(Effect.provide(environment(transcript, options.sandbox)))

export const resultText = (block: Messages.ToolResultBlock | undefined) =>
  block === undefined ? "(none)" : Messages.contentText(block.content)
