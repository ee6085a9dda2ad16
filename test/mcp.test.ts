/**
 * MCP servers (issue 11) against real servers from npm over stdio —
 * `@modelcontextprotocol/server-everything` and `server-filesystem` — and a
 * server of our own that misbehaves on purpose (test/fixtures/mcp).
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
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.join(__dirname, "..")
const EVERYTHING = Path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const FILESYSTEM = Path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
const MISBEHAVING = Path.join(root, "test/fixtures/mcp/misbehavingServer.mjs")

const stdio = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): McpConfig.ServerConfig => ({
  name,
  source: "test",
  transport: { _tag: "stdio", command: process.execPath, args, env, cwd: undefined },
  timeoutMs: undefined
})

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-"))

const engine = (
  configs: ReadonlyArray<McpConfig.ServerConfig>,
  options: McpServers.Options = {},
  hooks: ReadonlyArray<HookRunner.ProgrammaticHook> = []
) =>
  McpServers.layer(configs, { connectTimeout: "10 seconds", killGrace: "300 millis", ...options }).pipe(
    Layer.provideMerge(Registry.layer()),
    Layer.merge(Results.layerMemory),
    Layer.merge(PermissionChain.layer()),
    Layer.merge(HookRunner.layer({ hooks: {}, projectDir: root, programmatic: hooks })),
    Layer.provideMerge(NodeContext.layer)
  )

const context = (deny: ReadonlyArray<string> = [], allow: ReadonlyArray<string> = ["mcp__bad"]) =>
  ToolUseContext.make({
    cwd: root,
    sessionId: "mcp-test",
    permissions: {
      ...PermissionContext.empty,
      rules: [
        ...deny.map((raw) => PermissionContext.parseRule(raw, "deny", "test")!),
        ...allow.map((raw) => PermissionContext.parseRule(raw, "allow", "test")!)
      ]
    }
  })

const dispatch = (calls: ReadonlyArray<Messages.ToolUseBlock>, ctx: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(ctx)
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(StreamingExecutor.runAll(calls, env)))
    const results = new Map(events.filter(DispatchEvent.isResult).map((e) => [e.toolUseId, e]))
    return { events, results, env }
  })

const text = (result: DispatchEvent.Result | undefined) => Messages.contentText(result?.block.content ?? "")

const processesWith = (marker: string): Array<number> =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      return Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) ? [Number(pid)] : []
    } catch {
      return []
    }
  })

const waitFor = <A>(probe: () => A | undefined): Effect.Effect<A, Error> =>
  Effect.suspend(() => {
    const value = probe()
    return value === undefined ? Effect.fail(new Error("the condition never held")) : Effect.succeed(value)
  }).pipe(Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("10 seconds"))))

describe("MCP servers over stdio", () => {
  it.live("real servers: deferred, found by ToolSearch, then validation error, deny rule and success through the pipeline", () => {
    const dir = tempDir()
    Fs.writeFileSync(Path.join(dir, "note.txt"), "hello from the filesystem server")
    return Effect.gen(function*() {
      const ctx = context(["mcp__everything__get-env"])
      const env = yield* Execution.makeEnvironment(ctx)
      const names = env.tools.map((t) => t.name)
      expect(names).toContain("mcp__everything__echo")
      expect(names).toContain("mcp__filesystem__read_text_file")
      expect(env.tools.filter((t) => t.isMcp).every(Tool.isDeferred)).toBe(true)
      expect(names.filter((n) => n === "ToolSearch")).toHaveLength(1)
      const status = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers)
      expect(status.map((s) => [s.name, s.state])).toEqual([["everything", "connected"], ["filesystem", "connected"]])

      const { results } = yield* dispatch([
        Messages.toolUse("t1", "ToolSearch", { query: "add two numbers sum" }),
        Messages.toolUse("t2", "mcp__everything__get-sum", { a: "one", b: 2 }),
        Messages.toolUse("t3", "mcp__everything__get-env", {}),
        Messages.toolUse("t4", "mcp__everything__get-sum", { a: 40, b: 2 }),
        Messages.toolUse("t5", "mcp__filesystem__read_text_file", { path: Path.join(dir, "note.txt") })
      ], ctx)
      const search = results.get("t1")!.block.content
      expect(Array.isArray(search) && search[0]).toEqual({
        type: "tool_reference",
        tool_name: "mcp__everything__get-sum"
      })
      expect(results.get("t2")!.status).toBe("error")
      expect(text(results.get("t2"))).toContain("InputValidationError")
      expect(text(results.get("t2"))).toContain("`a`")
      expect(text(results.get("t2"))).toContain("select:mcp__everything__get-sum")
      // A blanket deny rule hides the tool from the model; a call to it does not run.
      expect(results.get("t3")!.status).toBe("error")
      expect(text(results.get("t3"))).toContain("No such tool available: mcp__everything__get-env")
      expect(names).not.toContain("mcp__everything__get-env")
      expect(results.get("t4")!.status).toBe("success")
      expect(text(results.get("t4"))).toContain("42")
      expect(results.get("t5")!.status).toBe("success")
      expect(text(results.get("t5"))).toContain("hello from the filesystem server")
    }).pipe(Effect.provide(engine([stdio("everything", [EVERYTHING]), stdio("filesystem", [FILESYSTEM, dir])])))
  })

  it.live("trigger-long-running-operation streams progress events", () =>
    Effect.gen(function*() {
      const { events, results } = yield* dispatch([
        Messages.toolUse("p1", "mcp__everything__trigger-long-running-operation", { duration: 0.4, steps: 4 })
      ], context())
      expect(results.get("p1")!.status).toBe("success")
      const progress = events.filter(DispatchEvent.isProgress)
      expect(progress.length).toBeGreaterThanOrEqual(3)
      expect(progress[0]!.data).toMatchObject({ progress: 1, total: 4 })
    }).pipe(Effect.provide(engine([stdio("everything", [EVERYTHING])]))))

  it.live("interrupting a call sends notifications/cancelled, and no server process is left", () => {
    const log = Path.join(tempDir(), "received.jsonl")
    const marker = `marker-${process.pid}-cancel`
    return Effect.gen(function*() {
      yield* Effect.scoped(
        Effect.gen(function*() {
          const env = yield* Execution.makeEnvironment(context())
          const progressed = yield* Deferred.make<void>()
          const fiber = yield* Execution.runToolUse(Messages.toolUse("s1", "mcp__bad__slow", {}), env).pipe(
            Stream.runForEach((
              event
            ) => (DispatchEvent.isProgress(event) ? Deferred.succeed(progressed, undefined) : Effect.void)),
            Effect.fork
          )
          yield* Deferred.await(progressed)
          yield* Fiber.interrupt(fiber)
          const cancelled = yield* waitFor(() =>
            (Fs.existsSync(log) ? Fs.readFileSync(log, "utf8") : "").split("\n").filter((l) => l !== "").map((l) =>
              JSON.parse(l)
            )
              .find((m: { method?: string }) => m.method === "notifications/cancelled")
          )
          expect(cancelled.params.requestId).toBeDefined()
          expect(processesWith(marker)).toHaveLength(1)
        }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING, "normal", marker], { MCP_LOG: log })])))
      )
      expect(processesWith(marker)).toEqual([])
    })
  })

  it.live("a server killed mid-call fails that call; the other server's calls succeed; the next call reconnects", () =>
    Effect.gen(function*() {
      const before = (yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers))[0]!.pid
      const { results } = yield* dispatch([
        Messages.toolUse("d1", "mcp__bad__die", {}),
        Messages.toolUse("d2", "mcp__everything__echo", { message: "still here" })
      ], context())
      expect(results.get("d1")!.status).toBe("error")
      expect(text(results.get("d1"))).toContain("MCP server \"bad\"")
      expect(results.get("d2")!.status).toBe("success")
      expect(text(results.get("d2"))).toContain("still here")
      const again = yield* dispatch([Messages.toolUse("d3", "mcp__bad__echo", { text: "back" })], context())
      expect(again.results.get("d3")!.status).toBe("success")
      expect(text(again.results.get("d3"))).toBe("back")
      const after = (yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers))[0]!.pid
      expect(after).not.toBe(before)
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING]), stdio("everything", [EVERYTHING])]))))

  it.live("a server that never answers initialize is reported failed after the connect timeout; the others work", () => {
    const marker = `marker-${process.pid}-silent`
    return Effect.gen(function*() {
      const failures: Array<string> = []
      yield* Effect.scoped(
        Effect.gen(function*() {
          const status = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers)
          expect(status.map((s) => [s.name, s.state])).toEqual([["silent", "failed"], ["everything", "connected"]])
          expect(status[0]!.error).toContain("initialize")
          expect(status[0]!.tools).toEqual([])
          expect(failures).toHaveLength(1)
          // Its process was ended when connecting gave up.
          expect(processesWith(marker)).toEqual([])
          const { results } = yield* dispatch(
            [Messages.toolUse("e1", "mcp__everything__echo", { message: "hi" })],
            context()
          )
          expect(results.get("e1")!.status).toBe("success")
        }).pipe(
          Effect.provide(engine([stdio("silent", [MISBEHAVING, "silent", marker]), stdio("everything", [EVERYTHING])], {
            connectTimeout: "10 seconds",
            onFailure: (s) => Effect.sync(() => void failures.push(s.name))
          }))
        )
      )
    })
  })

  it.live("tools/list_changed refreshes the server's tools before the next turn reads them; read-only hints make calls safe", () =>
    Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(context())
      const echo = env.tools.find((t) => t.name === "mcp__bad__echo")!
      expect(yield* Tool.evaluate(echo.isConcurrencySafe({ text: "" }, context()) as boolean)).toBe(true)
      expect(env.tools.find((t) => t.name === "mcp__bad__slow")!.isConcurrencySafe({}, context())).toBe(false)
      expect(env.tools.some((t) => t.name === "mcp__bad__extra")).toBe(false)
      yield* dispatch([Messages.toolUse("a1", "mcp__bad__add", {})], context())
      // The next turn's tools, at once: reading the pool waits for the refresh the notification started.
      const next = yield* Execution.makeEnvironment(context())
      expect(next.tools.some((t) => t.name === "mcp__bad__extra")).toBe(true)
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING])]))))

  it.live("footprints: a call to one server waits for that server's earlier write, not for another server's", () =>
    Effect.gen(function*() {
      const ctx = context([], ["mcp__bad", "mcp__other"])
      const env = yield* Execution.makeEnvironment(ctx)
      const footprintOf = (name: string) => {
        const footprint = env.tools.find((t) => t.name === name)!.footprint!({}, ctx)
        return Effect.isEffect(footprint) ? Effect.orDie(footprint) : Effect.succeed(footprint)
      }
      expect(yield* footprintOf("mcp__bad__slow")).toEqual({ writes: ["mcp:bad"] })
      expect(yield* footprintOf("mcp__bad__echo")).toEqual({ reads: ["mcp:bad"] })
      // Call order: bad.slow (runs until cancelled), bad.fail (same server, must wait), other.fail
      // (another server, runs at once). Started events come in call order, so a bad.fail that did
      // not wait would have started before other.fail finished.
      const events: Array<DispatchEvent.DispatchEvent> = []
      const fiber = yield* StreamingExecutor.runAll([
        Messages.toolUse("w1", "mcp__bad__slow", {}),
        Messages.toolUse("w2", "mcp__bad__fail", {}),
        Messages.toolUse("w3", "mcp__other__fail", {})
      ], env).pipe(Stream.runForEach((event) => Effect.sync(() => void events.push(event))), Effect.fork)
      yield* waitFor(() => events.find((e) => DispatchEvent.isResult(e) && e.toolUseId === "w3"))
      expect(events.filter((e) => "toolUseId" in e && e.toolUseId === "w2")).toEqual([])
      expect(events.some((e) => DispatchEvent.isResult(e) && e.toolUseId === "w1")).toBe(false)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING]), stdio("other", [MISBEHAVING])]))))

  it.live("timeouts are error results naming the server, the tool and the limit; progress resets only the idle timer", () =>
    Effect.gen(function*() {
      const { results } = yield* dispatch([
        Messages.toolUse("w1", "mcp__bad__hang", {}),
        Messages.toolUse("w2", "mcp__bad__slow", {})
      ], context())
      expect(results.get("w1")!.status).toBe("error")
      expect(text(results.get("w1"))).toMatch(
        /mcp__bad__hang .*server "bad".*no progress for 700 ms \(MCP_TOOL_IDLE_TIMEOUT\)/
      )
      // `slow` reports progress every 50 ms: the idle timer never fires, the wall-clock limit does.
      expect(results.get("w2")!.status).toBe("error")
      expect(text(results.get("w2"))).toMatch(
        /mcp__bad__slow .*server "bad".*timed out after 1500 ms \(MCP_TOOL_TIMEOUT\)/
      )
    }).pipe(
      Effect.provide(engine([stdio("bad", [MISBEHAVING])], { toolTimeout: "1500 millis", idleTimeout: "700 millis" }))
    ))

  it.live("without MCP_TOOL_IDLE_TIMEOUT a silent call may run to the wall-clock limit (Claude Code's MCP_TOOL_TIMEOUT)", () =>
    Effect.gen(function*() {
      const { results } = yield* dispatch([Messages.toolUse("i1", "mcp__bad__hang", {})], context())
      expect(text(results.get("i1"))).toMatch(/mcp__bad__hang .*timed out after 1200 ms \(MCP_TOOL_TIMEOUT\)/)
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING])], { toolTimeout: "1200 millis" }))))

  it.live("output past 10 000 tokens warns (as progress); _meta maxResultSizeChars raises a tool's limit", () =>
    Effect.gen(function*() {
      const { events, results } = yield* dispatch([
        Messages.toolUse("o1", "mcp__bad__big", { chars: 40_004 }),
        Messages.toolUse("o2", "mcp__bad__roomy", { chars: 60_000 }),
        Messages.toolUse("o3", "mcp__bad__big", { chars: 39_000 })
      ], context())
      const warnings = events.filter(DispatchEvent.isProgress).filter((e) =>
        (e.data as { warning?: string }).warning !== undefined
      )
      expect(warnings.map((w) => w.toolUseId).sort()).toEqual(["o1", "o2"])
      expect((warnings[0]!.data as { warning: string }).warning).toMatch(
        /Large MCP response from mcp__bad__\w+ \(~\d+k tokens\)/
      )
      // MAX_MCP_OUTPUT_TOKENS 10 000 is 40 000 characters: o1 is persisted, `roomy` sets its own limit.
      expect(text(results.get("o1"))).toContain("Output too large (40004 characters)")
      expect(text(results.get("o2"))).toBe("x".repeat(60_000))
      expect(text(results.get("o3"))).toBe("x".repeat(39_000))
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING])], { maxOutputTokens: 10_000 }))))

  it.live("results: images, resource links, embedded resources, structuredContent, isError, and large output persisted", () =>
    Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(context())
      // `_meta["anthropic/alwaysLoad"]` keeps a tool loaded.
      expect(Tool.isDeferred(env.tools.find((t) => t.name === "mcp__bad__big")!)).toBe(false)
      expect(Tool.isDeferred(env.tools.find((t) => t.name === "mcp__bad__echo")!)).toBe(true)
      const { results } = yield* dispatch([
        Messages.toolUse("r1", "mcp__everything__get-tiny-image", {}),
        Messages.toolUse("r2", "mcp__everything__get-resource-links", { count: 2 }),
        Messages.toolUse("r3", "mcp__everything__get-resource-reference", { resourceType: "Text", resourceId: 1 }),
        Messages.toolUse("r4", "mcp__bad__structured", {}),
        Messages.toolUse("r5", "mcp__bad__fail", {}),
        Messages.toolUse("r6", "mcp__bad__big", { chars: 500 }),
        Messages.toolUse("r7", "mcp__bad__big", { chars: 50 })
      ], context())
      const image = results.get("r1")!.block.content
      expect(Array.isArray(image) && image.some((b) => b.type === "image" && b.source.type === "base64")).toBe(true)
      expect(text(results.get("r2"))).toContain("[Resource link:")
      expect(text(results.get("r3"))).toContain("[Resource ")
      expect(JSON.parse(text(results.get("r4")))).toEqual({ temperature: 21, unit: "C" })
      expect(results.get("r5")!.status).toBe("error")
      expect(text(results.get("r5"))).toBe("it broke")
      expect(text(results.get("r6"))).toContain("Output too large (500 characters)")
      expect(text(results.get("r7"))).toBe("x".repeat(50))
    }).pipe(
      Effect.provide(engine([stdio("bad", [MISBEHAVING]), stdio("everything", [EVERYTHING])], { maxOutputTokens: 50 }))
    ))

  it.live("permission rules mcp__server, mcp__server__* and mcp__server__tool apply to MCP tools", () =>
    Effect.gen(function*() {
      const exact = yield* dispatch([
        Messages.toolUse("q1", "mcp__bad__fail", {}),
        Messages.toolUse("q2", "mcp__bad__structured", {})
      ], context([], ["mcp__bad__fail"]))
      expect(text(exact.results.get("q1"))).toBe("it broke")
      // Not read-only and no rule allows it: it would ask, and nobody can answer here.
      expect(exact.results.get("q2")!.status).toBe("denied")
      const server = yield* dispatch([Messages.toolUse("q3", "mcp__bad__structured", {})], context([], ["mcp__bad"]))
      expect(server.results.get("q3")!.status).toBe("success")
      const wildcard = yield* dispatch(
        [Messages.toolUse("q4", "mcp__bad__structured", {})],
        context([], ["mcp__bad__*"])
      )
      expect(wildcard.results.get("q4")!.status).toBe("success")
      const denied = yield* dispatch(
        [Messages.toolUse("q5", "mcp__bad__echo", { text: "x" })],
        context(["mcp__bad__*"])
      )
      expect(text(denied.results.get("q5"))).toContain("No such tool available: mcp__bad__echo")
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING])]))))

  it.live("hooks with matchers on MCP names apply to MCP tools", () =>
    Effect.gen(function*() {
      const { results } = yield* dispatch([
        Messages.toolUse("h1", "mcp__bad__echo", { text: "blocked?" })
      ], context())
      expect(results.get("h1")!.status).toBe("denied")
      expect(text(results.get("h1"))).toContain("no MCP today")
    }).pipe(Effect.provide(engine([stdio("bad", [MISBEHAVING])], {}, [{
      event: "PreToolUse",
      matcher: "mcp__bad__.*",
      run: () =>
        Effect.succeed({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: "no MCP today"
          }
        })
    }]))))

  it.live("streamable HTTP: a server on 127.0.0.1 lists and runs its tools", () =>
    Effect.gen(function*() {
      const port = yield* Effect.async<number>((resume) => {
        const probe = Net.createServer().listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as Net.AddressInfo
          probe.close(() => resume(Effect.succeed(port)))
        })
      })
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
            env: { ...process.env, PORT: String(port) },
            stdio: ["ignore", "ignore", "pipe"]
          })
        ),
        (child) => Effect.sync(() => void child.kill("SIGKILL"))
      )
      yield* Effect.async<void>((resume) => {
        child.stderr!.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("listening")) resume(Effect.void)
        })
      })
      const http: McpConfig.ServerConfig = {
        name: "remote",
        source: "test",
        transport: { _tag: "http", url: `http://127.0.0.1:${port}/mcp`, headers: {} },
        timeoutMs: undefined
      }
      const { results } = yield* Effect.scoped(
        dispatch([Messages.toolUse("h1", "mcp__remote__echo", { message: "over http" })], context()).pipe(
          Effect.provide(engine([http]))
        )
      )
      expect(results.get("h1")!.status).toBe("success")
      expect(text(results.get("h1"))).toContain("over http")
    }).pipe(Effect.scoped))
})
