/**
 * Remote MCP servers (issue 21, item 3), against real servers on 127.0.0.1:
 * server-everything over streamable HTTP and SSE, and a small streamable HTTP
 * server of the tests' own (fixtures/mcp/httpServer.mjs) that logs every
 * request it receives. Judged by the servers' own logs (sessions initialized,
 * requests received, DELETE) and the files a tool writes, not by what the
 * client says it did.
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
  ToolUseContext
} from "@switchyard/core"
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.join(__dirname, "..")
const EVERYTHING = Path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const HTTP_SERVER = Path.join(root, "test/fixtures/mcp/httpServer.mjs")

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-http-"))

const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

interface Running {
  readonly child: ChildProcess
  /** Everything it wrote to stdout so far. */
  readonly stdout: () => string
  /** SIGKILL, and wait until it has exited. */
  readonly kill: Effect.Effect<void>
}

/** Start a server process and wait until its stderr says it listens; it is killed when the scope closes. */
const startServer = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.gen(function*() {
    let out = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
      ),
      (child) => Effect.sync(() => void child.kill("SIGKILL"))
    )
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()))
    yield* Effect.async<void>((resume) => {
      let err = ""
      child.stderr!.on("data", (chunk: Buffer) => {
        err += chunk.toString()
        if (/listening|running on port/i.test(err)) resume(Effect.void)
      })
    })
    const exited = Effect.async<void>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
    })
    return {
      child,
      stdout: () => out,
      kill: Effect.zipRight(Effect.sync(() => void child.kill("SIGKILL")), exited)
    } satisfies Running
  })

const remote = (
  name: string,
  url: string,
  type: "http" | "sse" = "http",
  headers: Record<string, string> = {}
): McpConfig.ServerConfig => ({
  name,
  source: "test",
  transport: { _tag: type, url, headers },
  timeoutMs: undefined
})

const engine = (configs: ReadonlyArray<McpConfig.ServerConfig>) =>
  McpServers.layer(configs, { connectTimeout: "10 seconds", killGrace: "1 second" }).pipe(
    Layer.provideMerge(Registry.layer()),
    Layer.merge(Results.layerMemory),
    Layer.merge(PermissionChain.layer()),
    Layer.merge(HookRunner.layer({ hooks: {}, projectDir: root })),
    Layer.provideMerge(NodeContext.layer)
  )

const context = ToolUseContext.make({
  cwd: root,
  sessionId: "mcp-http-test",
  permissions: {
    ...PermissionContext.empty,
    rules: ["mcp__remote", "mcp__ev"].map((raw) => PermissionContext.parseRule(raw, "allow", "test")!)
  }
})

const dispatch = (calls: ReadonlyArray<Messages.ToolUseBlock>) =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(context)
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(StreamingExecutor.runAll(calls, env)))
    return new Map(events.filter(DispatchEvent.isResult).map((e) => [e.toolUseId, e]))
  })

const text = (result: DispatchEvent.Result | undefined) => Messages.contentText(result?.block.content ?? "")

const logOf = (
  file: string
): ReadonlyArray<{ pid: number; method: string; session: string | null; rpc: string | null }> =>
  Fs.existsSync(file) ? Fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)) : []

const sessionsIn = (stdout: string) => [...stdout.matchAll(/Session initialized with ID: (\S+)/g)].map((m) => m[1]!)

describe("streamable HTTP: sessions that outlive a restart", () => {
  it.live("server-everything killed and started again on the same port: the next call succeeds on a new session", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      const first = yield* startServer([EVERYTHING, "streamableHttp"], { PORT: String(port) })
      yield* Effect.gen(function*() {
        const before = yield* dispatch([Messages.toolUse("e1", "mcp__ev__echo", { message: "before" })])
        expect(text(before.get("e1"))).toContain("before")
        expect(sessionsIn(first.stdout())).toHaveLength(1)
        // Restarted while no call was in flight: the old session is gone with the process.
        yield* first.kill
        const second = yield* startServer([EVERYTHING, "streamableHttp"], { PORT: String(port) })
        const after = yield* dispatch([Messages.toolUse("e2", "mcp__ev__echo", { message: "after" })])
        expect(after.get("e2")!.status).toBe("success")
        expect(text(after.get("e2"))).toContain("after")
        // The restarted server saw the stale session's request (answered 400) and then a new session.
        expect(sessionsIn(second.stdout())).toHaveLength(1)
        expect(sessionsIn(second.stdout())[0]).not.toBe(sessionsIn(first.stdout())[0])
        const status = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers)
        expect(status.map((s) => s.state)).toEqual(["connected"])
      }).pipe(Effect.provide(engine([remote("ev", `http://127.0.0.1:${port}/mcp`)])))
    })))

  it.live("404 for a lost session: the call is sent once more on a new session, and runs once; DELETE on close", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      const dir = tempDir()
      const log = Path.join(dir, "requests.jsonl")
      const appended = Path.join(dir, "appended.txt")
      const env = { PORT: String(port), MCP_LOG: log, MCP_APPEND: appended }
      const first = yield* startServer([HTTP_SERVER], env)
      let second: Running | undefined
      yield* Effect.gen(function*() {
        const one = yield* dispatch([Messages.toolUse("a1", "mcp__remote__append", { text: "one" })])
        expect(one.get("a1")!.status).toBe("success")
        yield* first.kill
        second = yield* startServer([HTTP_SERVER], env)
        const two = yield* dispatch([Messages.toolUse("a2", "mcp__remote__append", { text: "two" })])
        expect(two.get("a2")!.status).toBe("success")
      }).pipe(Effect.provide(engine([remote("remote", `http://127.0.0.1:${port}/mcp`)])))
      expect(Fs.readFileSync(appended, "utf8")).toBe("one\ntwo\n")
      // The restarted server: the call on the old session (404), a new session, the call again, and DELETE of
      // that session when the layer's scope closed. (GET, the optional event stream, is left out.)
      const secondLog = logOf(log).filter((entry) => entry.pid === second!.child.pid && entry.method !== "GET")
      const oldSession = logOf(log).find((entry) =>
        entry.pid === first.child.pid && entry.rpc === "tools/call"
      )!.session
      expect(secondLog.map((e) => [e.rpc ?? e.method, e.session === oldSession ? "old" : "new"])).toEqual([
        ["tools/call", "old"],
        ["initialize", "new"],
        ["notifications/initialized", "new"],
        ["tools/list", "new"],
        ["tools/call", "new"],
        ["DELETE", "new"]
      ])
      expect(new Set(secondLog.slice(2).map((e) => e.session)).size).toBe(1)
    })))

  it.live("a server that is down: the call fails saying it was not run, and nothing ran", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      const dir = tempDir()
      const appended = Path.join(dir, "appended.txt")
      const server = yield* startServer([HTTP_SERVER], { PORT: String(port), MCP_APPEND: appended })
      yield* Effect.gen(function*() {
        const one = yield* dispatch([Messages.toolUse("d1", "mcp__remote__append", { text: "one" })])
        expect(one.get("d1")!.status).toBe("success")
        yield* server.kill
        const down = yield* dispatch([Messages.toolUse("d2", "mcp__remote__append", { text: "two" })])
        expect(down.get("d2")!.status).toBe("error")
        expect(text(down.get("d2"))).toMatch(
          /MCP server "remote" cannot be reached \(cannot connect .*ECONNREFUSED.*was not run/
        )
      }).pipe(Effect.provide(engine([remote("remote", `http://127.0.0.1:${port}/mcp`)])))
      expect(Fs.readFileSync(appended, "utf8")).toBe("one\n")
    })))

  it.live("a call in flight when the server dies fails saying it may have run, and is not sent again; the next call works", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      const dir = tempDir()
      const log = Path.join(dir, "requests.jsonl")
      const env = { PORT: String(port), MCP_LOG: log, MCP_APPEND: Path.join(dir, "appended.txt") }
      const first = yield* startServer([HTTP_SERVER], env)
      yield* Effect.gen(function*() {
        const calls = yield* Effect.fork(dispatch([Messages.toolUse("h1", "mcp__remote__hang", {})]))
        // Wait for the server to have received the call, then kill it.
        yield* Effect.repeat(Effect.sync(() => logOf(log).some((e) => e.rpc === "tools/call")), {
          until: (seen) => seen,
          schedule: Schedule.spaced("20 millis")
        })
        yield* first.kill
        const results = yield* calls.await.pipe(Effect.flatten)
        expect(results.get("h1")!.status).toBe("error")
        expect(text(results.get("h1"))).toMatch(/lost during mcp__remote__hang .*may or may not have run/)
        expect(logOf(log).filter((e) => e.rpc === "tools/call")).toHaveLength(1)
        yield* startServer([HTTP_SERVER], env)
        const next = yield* dispatch([Messages.toolUse("e1", "mcp__remote__echo", { text: "back" })])
        expect(text(next.get("e1"))).toBe("back")
      }).pipe(Effect.provide(engine([remote("remote", `http://127.0.0.1:${port}/mcp`)])))
    })))

  it.live("401: needs-auth, saying OAuth is not supported and how to pass a header; with the header it connects", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      yield* startServer([HTTP_SERVER], { PORT: String(port), MCP_TOKEN: "s3cret" })
      const url = `http://127.0.0.1:${port}/mcp`
      const without = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers).pipe(
        Effect.provide(engine([remote("remote", url)]))
      )
      expect(without[0]!.state).toBe("needs-auth")
      expect(without[0]!.error).toContain("OAuth")
      expect(without[0]!.error).toContain("--header \"Authorization: Bearer")
      const withHeader = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers).pipe(
        Effect.provide(engine([remote("remote", url, "http", { Authorization: "Bearer s3cret" })]))
      )
      expect(withHeader[0]!.state).toBe("connected")
      expect(withHeader[0]!.tools).toContain("mcp__remote__echo")
    })))
})

describe("the SSE transport (deprecated, still common)", () => {
  it.live("server-everything over SSE lists and runs its tools", () =>
    Effect.scoped(Effect.gen(function*() {
      const port = yield* freePort
      yield* startServer([EVERYTHING, "sse"], { PORT: String(port) })
      yield* Effect.gen(function*() {
        const status = yield* Effect.flatMap(McpServers.McpServers, (s) => s.servers)
        expect(status[0]).toMatchObject({ transport: "sse", state: "connected" })
        const results = yield* dispatch([Messages.toolUse("s1", "mcp__ev__echo", { message: "over sse" })])
        expect(results.get("s1")!.status).toBe("success")
        expect(text(results.get("s1"))).toContain("over sse")
      }).pipe(Effect.provide(engine([remote("ev", `http://127.0.0.1:${port}/sse`, "sse")])))
    })))
})
