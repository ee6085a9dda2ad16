/**
 * MCP resources and prompts (issue 21, item 4), a server's `alwaysLoad`, and
 * workspace footprints (issue 20): against server-everything,
 * server-filesystem and the recording server of fixtures/mcp, through the
 * real pipeline.
 */
import {
  DispatchEvent,
  Execution,
  HookRunner,
  Messages,
  PermissionChain,
  PermissionContext,
  Registry,
  Results,
  StreamingExecutor,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Read from "@switchyard/tools/Read"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.join(__dirname, "..")
const EVERYTHING = Path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const FILESYSTEM = Path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
const RECORDING = Path.join(root, "test/fixtures/mcp/recordingServer.mjs")

const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-res-")))

const stdio = (
  name: string,
  args: ReadonlyArray<string>,
  extra: Partial<McpConfig.ServerConfig> = {}
): McpConfig.ServerConfig => {
  const transport: McpConfig.Transport = { _tag: "stdio", command: process.execPath, args, env: {}, cwd: undefined }
  return {
    name,
    source: "test",
    transport,
    timeoutMs: undefined,
    footprint: McpConfig.isFilesystemServer(transport) ? "workspace" : "server",
    ...extra
  }
}

const engine = (configs: ReadonlyArray<McpConfig.ServerConfig>) =>
  Layer.merge(McpServers.layer(configs, { connectTimeout: "10 seconds", killGrace: "300 millis" }), Read.layer).pipe(
    Layer.provideMerge(Registry.layer()),
    Layer.merge(Results.layerMemory),
    Layer.merge(PermissionChain.layer()),
    Layer.merge(HookRunner.layer({ hooks: {}, projectDir: root })),
    Layer.provideMerge(NodeContext.layer)
  )

const contextIn = (cwd: string) =>
  ToolUseContext.make({
    cwd,
    sessionId: "mcp-resources",
    permissions: { ...PermissionContext.empty, rules: [PermissionContext.parseRule("mcp__fs", "allow", "test")!] }
  })

const run = (calls: ReadonlyArray<Messages.ToolUseBlock>, ctx = contextIn(root)) =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(ctx)
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(StreamingExecutor.runAll(calls, env)))
    return { events, results: new Map(events.filter(DispatchEvent.isResult).map((e) => [e.toolUseId, e])), env }
  })

const text = (result: DispatchEvent.Result | undefined) => Messages.contentText(result?.block.content ?? "")

describe("ListMcpResourcesTool and ReadMcpResourceTool", () => {
  it.live("list every server's resources (or one server's), read one; read-only calls run in parallel", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const { events, results, env } = yield* run([
        Messages.toolUse("l1", "ListMcpResourcesTool", {}),
        Messages.toolUse("l2", "ListMcpResourcesTool", { server: "rec" }),
        Messages.toolUse("r1", "ReadMcpResourceTool", { server: "rec", uri: "note://greeting" }),
        Messages.toolUse("r2", "ReadMcpResourceTool", {
          server: "ev",
          uri: "demo://resource/static/document/architecture.md"
        }),
        Messages.toolUse("r3", "ReadMcpResourceTool", { server: "nope", uri: "x://y" })
      ])
      const tool = env.tools.find((t) => t.name === "ReadMcpResourceTool")!
      expect(yield* Tool.evaluate(tool.isReadOnly({ server: "rec", uri: "" }, contextIn(root)) as boolean)).toBe(true)
      const all = JSON.parse(text(results.get("l1"))) as ReadonlyArray<
        { uri: string; name: string; server: string; mimeType?: string }
      >
      expect(all).toEqual(expect.arrayContaining([
        {
          uri: "note://greeting",
          name: "greeting",
          mimeType: "text/plain",
          description: "A friendly note",
          server: "rec"
        },
        expect.objectContaining({ uri: "demo://resource/static/document/architecture.md", server: "ev" })
      ]))
      const one = JSON.parse(text(results.get("l2"))) as ReadonlyArray<{ server: string }>
      expect(one.map((r) => r.server)).toEqual(["rec", "rec"])
      expect(text(results.get("r1"))).toContain("hello from rec")
      expect(text(results.get("r2"))).toContain("# Everything Server")
      expect(results.get("r3")!.status).toBe("error")
      expect(text(results.get("r3"))).toContain("Server \"nope\" not found. Available servers: ev, rec")
      // All five are read-only: every one started before the first result.
      const firstResult = events.findIndex(DispatchEvent.isResult)
      const starts = events.flatMap((e, i) => (e._tag === "Started" ? [i] : []))
      expect(starts).toHaveLength(5)
      expect(Math.max(...starts)).toBeLessThan(firstResult)
      // The recording server saw the reads it was asked for.
      const received = Fs.readFileSync(Path.join(dir, "rec.log"), "utf8")
      expect(received).toContain("\"method\":\"resources/read\"")
      expect(received).toContain("note://greeting")
    }).pipe(Effect.provide(engine([
      stdio("ev", [EVERYTHING]),
      stdio("rec", [RECORDING, Path.join(dir, "rec.log"), "rec"])
    ])))
  })

  it.live("the resource tools are absent when no connected server offers resources", () =>
    Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(contextIn(root))
      expect(env.tools.some((t) => t.name === "ListMcpResourcesTool")).toBe(false)
      expect(env.tools.some((t) => t.name === "mcp__fs__read_text_file")).toBe(true)
    }).pipe(Effect.provide(engine([stdio("fs", [FILESYSTEM, tempDir()])]))))

  it.live("a prompt's messages, for the slash command /mcp__rec__review; readResource for @rec:note://greeting", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const service = yield* McpServers.McpServers
      const status = yield* service.servers
      expect(status[0]!.prompts.map((p) => [p.name, p.arguments.map((a) => a.name)])).toEqual([["review", ["file"]]])
      const messages = yield* service.getPrompt("rec", "review", { file: "src/a.ts" })
      expect(messages).toEqual([{
        role: "user",
        content: [{ type: "text", text: "Please review src/a.ts carefully." }]
      }])
      const content = yield* service.readResource("rec", "note://farewell")
      expect(Messages.contentText(content)).toContain("goodbye from rec")
    }).pipe(Effect.provide(engine([stdio("rec", [RECORDING, Path.join(dir, "rec.log"), "rec"])])))
  })

  it.live("a server's alwaysLoad keeps its tools loaded; the others stay deferred", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(contextIn(root))
      expect(Tool.isDeferred(env.tools.find((t) => t.name === "mcp__loaded__echo")!)).toBe(false)
      expect(Tool.isDeferred(env.tools.find((t) => t.name === "mcp__other__echo")!)).toBe(true)
    }).pipe(Effect.provide(engine([
      stdio("loaded", [RECORDING, Path.join(dir, "a.log"), "loaded"], { alwaysLoad: true }),
      stdio("other", [RECORDING, Path.join(dir, "b.log"), "other"])
    ])))
  })
})

describe("workspace servers take path footprints (issue 20)", () => {
  it.live("server-filesystem: paths inside its roots, writes * outside them or without a path; edits of different files do not wait", () => {
    const dir = tempDir()
    const outside = tempDir()
    Fs.writeFileSync(Path.join(dir, "a.txt"), "A")
    Fs.symlinkSync(outside, Path.join(dir, "link"))
    return Effect.gen(function*() {
      const ctx = contextIn(dir)
      const env = yield* Execution.makeEnvironment(ctx)
      const footprintOf = (name: string, input: unknown) => {
        const result = env.tools.find((t) => t.name === name)!.footprint!(input, ctx)
        return Effect.isEffect(result) ? Effect.orDie(result) : Effect.succeed(result)
      }
      expect(yield* footprintOf("mcp__fs__read_text_file", { path: Path.join(dir, "a.txt") })).toEqual({
        reads: [Path.join(dir, "a.txt")]
      })
      // Only path-like arguments count: `content` is text.
      expect(yield* footprintOf("mcp__fs__write_file", { path: Path.join(dir, "b.txt"), content: "notes/x.txt" }))
        .toEqual({
          reads: [Path.join(dir, "b.txt")],
          writes: [Path.join(dir, "b.txt")]
        })
      // Anything outside the roots, or a write naming no path, is a barrier.
      expect(yield* footprintOf("mcp__fs__move_file", { source: Path.join(dir, "a.txt"), destination: "/etc/x" }))
        .toEqual({
          writes: ["*"]
        })
      expect(yield* footprintOf("mcp__fs__write_file", { content: "" })).toEqual({ writes: ["*"] })
      // A link inside the root to a directory outside it is judged by its target.
      expect(yield* footprintOf("mcp__fs__write_file", { path: Path.join(dir, "link", "x"), content: "" })).toEqual({
        writes: ["*"]
      })
      expect(yield* footprintOf("mcp__fs__list_allowed_directories", {})).toEqual({ reads: [`${dir}/**`] })
      // Two writes of different (existing) files, then a Read of the first: the Read waits for its writer only.
      Fs.writeFileSync(Path.join(dir, "one.txt"), "")
      Fs.writeFileSync(Path.join(dir, "two.txt"), "")
      const { events } = yield* run([
        Messages.toolUse("w1", "mcp__fs__write_file", { path: Path.join(dir, "one.txt"), content: "1" }),
        Messages.toolUse("w2", "mcp__fs__write_file", { path: Path.join(dir, "two.txt"), content: "2" }),
        Messages.toolUse("r1", "Read", { file_path: Path.join(dir, "one.txt") })
      ], ctx)
      const started = events.filter((e): e is Extract<DispatchEvent.DispatchEvent, { _tag: "Started" }> =>
        e._tag === "Started"
      )
      // The second write never waits for the first; the Read (when it had to wait) waited for its writer only.
      expect(started.find((e) => e.toolUseId === "w2")!.waitedFor ?? []).toEqual([])
      expect((started.find((e) => e.toolUseId === "r1")!.waitedFor ?? []).map((w) => w.toolUseId)).not.toContain("w2")
      const read = events.find((e): e is DispatchEvent.Result => DispatchEvent.isResult(e) && e.toolUseId === "r1")!
      expect(Messages.contentText(read.block.content)).toMatch(/1\s*1/)
      expect(Fs.readFileSync(Path.join(dir, "two.txt"), "utf8")).toBe("2")
    }).pipe(Effect.provide(engine([stdio("fs", [FILESYSTEM, dir])])))
  })
})
