/**
 * Safe defaults for embedders (issue 18 item 5), judged by the files: the
 * README's way of embedding (`Builtins.layer()` + `QueryLoop.run`, no
 * permission layer) must not let the model's `rm` or a write outside the
 * working directory happen; and `ClaudeCodePermissions.layer` gives the whole
 * Claude Code chain from the project's settings in one Layer, the sandbox
 * included when the settings enable it.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Messages, QueryLoop, Registry, ReplayModel, Results, ToolUseContext } from "@switchyard/core"
import * as Builtins from "@switchyard/tools/Builtins"
import * as ClaudeCodePermissions from "@switchyard/tools/ClaudeCodePermissions"
import * as Sandbox from "@switchyard/tools/Sandbox"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const probed = await Effect.runPromise(Sandbox.probe())

const tempDir = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const use = (id: string, name: string, input: Record<string, unknown>) => ({
  block: { type: "tool_use" as const, id, name, input }
})

/** The README's layers, with `Builtins.layer()` in place of `Read.layer`. */
const readmeTools = Builtins.layer().pipe(
  Layer.provideMerge(Registry.layer()),
  Layer.provideMerge(Results.layerMemory),
  Layer.provide(FetchHttpClient.layer),
  Layer.provideMerge(NodeContext.layer)
)

const runLoop = (cwd: string, calls: ReadonlyArray<ReturnType<typeof use>>, extra: Layer.Layer<never> = Layer.empty) =>
  QueryLoop.run("Clean up.", ToolUseContext.make({ cwd })).pipe(
    QueryLoop.collect,
    Effect.map((events) =>
      events.flatMap((event) =>
        event._tag === "ToolResults"
          ? Messages.blocks(event.message).flatMap((block) =>
            block.type === "tool_result" ? [Messages.contentText(block.content)] : []
          )
          : []
      )
    ),
    Effect.provide(Layer.mergeAll(
      readmeTools,
      // One call per turn: a failed Bash call would cancel its siblings.
      ReplayModel.layer({
        turns: [...calls.map((call) => ({ blocks: [call] })), { blocks: [{ block: { type: "text", text: "Done." } }] }]
      }),
      extra
    ))
  )

const setup = () => {
  const root = tempDir("switchyard-embedder-")
  const project = path.join(root, "project")
  fs.mkdirSync(project)
  fs.writeFileSync(path.join(project, "precious.txt"), "keep me\n")
  fs.writeFileSync(path.join(project, "notes.md"), "read me\n")
  return { root, project, outside: path.join(root, "outside.txt") }
}

describe("embedding without a permission layer (the README's way)", () => {
  it.live("the model's rm and a write outside cwd do not happen; reads still run", () =>
    Effect.gen(function*() {
      const { outside, project } = setup()
      const results = yield* runLoop(project, [
        use("toolu_rm", "Bash", { command: "rm -f precious.txt" }),
        use("toolu_write", "Write", { file_path: outside, content: "escaped\n" }),
        use("toolu_edit", "Write", { file_path: path.join(project, "precious.txt"), content: "gone\n" }),
        use("toolu_read", "Read", { file_path: path.join(project, "notes.md") })
      ])
      expect(fs.readFileSync(path.join(project, "precious.txt"), "utf8")).toBe("keep me\n")
      expect(fs.existsSync(outside)).toBe(false)
      // The denials say how to provide a policy, in library words.
      const denials = results.filter((text) => text.includes("no permission policy is provided"))
      expect(denials.length).toBe(2)
      for (const denial of denials) {
        expect(denial).toContain("ClaudeCodePermissions.layer")
        expect(denial).not.toMatch(/ --[a-z]/)
      }
      expect(results.some((text) => text.includes("read me"))).toBe(true)
    }))
})

const sandboxSuite = probed.available ? describe : describe.skip

sandboxSuite("ClaudeCodePermissions.layer: Claude Code's chain from the project's settings", () => {
  it.live("deny rules, the sandbox the project enables, and no prompt to ask", () =>
    Effect.gen(function*() {
      const { outside, project, root } = setup()
      fs.writeFileSync(path.join(project, ".env"), "TOKEN=embedder-secret-61c0\n")
      fs.mkdirSync(path.join(project, ".claude"))
      fs.writeFileSync(
        path.join(project, ".claude", "settings.json"),
        JSON.stringify({ permissions: { deny: ["Read(./.env)"] }, sandbox: { enabled: true } })
      )
      const permissions = ClaudeCodePermissions.layer({ cwd: project, home: root, stateDir: path.join(root, "state") })
        .pipe(Layer.provide(NodeContext.layer), Layer.orDie)
      const results = yield* runLoop(project, [
        // Sandboxed and no rule matches: auto-allowed, and it runs (inside cwd).
        use("toolu_make", "Bash", { command: "echo made > made.txt" }),
        // Sandboxed: the write outside fails; the denied file reads empty to a program the rules cannot see into.
        use("toolu_escape", "Bash", { command: `echo escaped > ${outside}` }),
        use("toolu_node", "Bash", { command: `node -e 'console.log(require("fs").readFileSync(".env", "utf8"))'` }),
        // Not Bash: outside the working directory asks, and nobody can be asked.
        use("toolu_write", "Write", { file_path: outside, content: "escaped\n" }),
        use("toolu_read", "Read", { file_path: path.join(project, ".env") })
      ], permissions)
      expect(fs.readFileSync(path.join(project, "made.txt"), "utf8")).toBe("made\n")
      expect(fs.existsSync(outside)).toBe(false)
      expect(results.join("\n")).not.toContain("embedder-secret-61c0")
      expect(results.some((text) => text.startsWith("Cancelled"))).toBe(false)
      expect(results[2]).toBe("(no output)")
      expect(results.join("\n")).toContain("Sandbox: a write to")
    }))
})
