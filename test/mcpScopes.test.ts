/**
 * MCP scopes and `switchyard mcp add|add-json|get|remove|list` (issue 21,
 * item 2), as a process: local (this project, only you), project
 * (`.mcp.json`) and user (every project) resolve local > project > user, and
 * a local server is not seen from another directory. Judged by which server
 * actually starts (the recording server writes its name to its marker file
 * when it starts) and by the files written; also the init line's
 * `mcp_servers` and names that collide once sanitised.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { jsonLines, root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const RECORDING = Path.join(root, "test/fixtures/mcp/recordingServer.mjs")
const MISBEHAVING = Path.join(root, "test/fixtures/mcp/misbehavingServer.mjs")

const temp = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))

const started = (marker: string): ReadonlyArray<string> =>
  Fs.existsSync(marker)
    ? Fs.readFileSync(marker, "utf8").split("\n").filter((l) => l.startsWith("started ")).map((l) => l.split(" ")[2]!)
    : []

describe("MCP scopes", () => {
  it(
    "local > project > user, per directory; get shows the winner; remove asks for a scope when the name is in several",
    async () => {
      const home = temp("switchyard-scopes-home-")
      // The user approves every project server, so only precedence decides here.
      Fs.writeFileSync(Path.join(home, "settings.json"), JSON.stringify({ enableAllProjectMcpServers: true }))
      const a = temp("switchyard-scopes-a-")
      const b = temp("switchyard-scopes-b-")
      const marker = Path.join(temp("switchyard-scopes-marker-"), "started.log")
      const env = { SWITCHYARD_HOME: home, MCP_TIMEOUT: "10000" }
      const cli = (cwd: string, ...args: ReadonlyArray<string>) => runCli(args, { cwd, env, timeoutMs: 60_000 })
      const server = (name: string) => [process.execPath, RECORDING, marker, name]

      const addedUser = await cli(a, "mcp", "add", "--scope", "user", "shared", "--", ...server("user-shared"))
      expect(addedUser.code).toBe(0)
      expect(addedUser.stdout).toContain("Added stdio MCP server shared with command:")
      expect(addedUser.stdout).toContain(`File modified: ${Path.join(home, ".switchyard.json")}`)
      const addedLocal = await cli(a, "mcp", "add", "mine", "-e", "GREETING=hi", "--", ...server("local-mine"))
      expect(addedLocal.stdout).toContain(
        `to local config\nFile modified: ${Path.join(home, ".switchyard.json")} [project: ${a}]`
      )
      const stored = JSON.parse(Fs.readFileSync(Path.join(home, ".switchyard.json"), "utf8"))
      expect(stored.mcpServers.shared).toEqual({
        type: "stdio",
        command: process.execPath,
        args: server("user-shared").slice(1),
        env: {}
      })
      expect(stored.projects[a].mcpServers.mine.env).toEqual({ GREETING: "hi" })
      // The project's own server of the same name: project scope, in a's .mcp.json.
      const addedProject = await cli(a, "mcp", "add", "--scope", "project", "shared", "--", ...server("project-shared"))
      expect(addedProject.stdout).toContain(`File modified: ${Path.join(a, ".mcp.json")}`)

      const listA = JSON.parse((await cli(a, "mcp", "list", "--json")).stdout) as ReadonlyArray<
        { name: string; scope: string }
      >
      expect(listA.map((s) => [s.name, s.scope]).sort()).toEqual([["mine", "local"], ["shared", "project"]])
      expect([...started(marker)].sort()).toEqual(["local-mine", "project-shared"])
      const listB = JSON.parse((await cli(b, "mcp", "list", "--json")).stdout) as ReadonlyArray<
        { name: string; scope: string }
      >
      expect(listB.map((s) => [s.name, s.scope])).toEqual([["shared", "user"]])
      expect([...started(marker)].sort()).toEqual(["local-mine", "project-shared", "user-shared"])

      // A local server of the same name wins in a, and only in a.
      await cli(a, "mcp", "add", "shared", "--", ...server("local-shared"))
      const tools = await cli(a, "tools", "list")
      expect(tools.stdout).toMatch(/mcp__shared__echo\s+\[deferred\] Echoes its text \(server local-shared\)/)
      expect([...started(marker).slice(-2)].sort()).toEqual(["local-mine", "local-shared"])
      const get = await cli(a, "mcp", "get", "shared")
      expect(get.stdout).toContain("Scope: Local config (private to you in this project)")
      expect(get.stdout).toContain("Status: connected (1 tools)")
      expect(get.stdout).toContain(`Args: ${RECORDING} ${marker} local-shared`)
      expect(get.stdout).toContain("Also configured in: project, user (shadowed)")
      expect((await cli(b, "mcp", "get", "shared", "--json")).stdout).toContain("\"scope\": \"user\"")

      const ambiguous = await cli(a, "mcp", "remove", "shared")
      expect(ambiguous.code).toBe(2)
      expect(ambiguous.stderr).toContain(
        "MCP server \"shared\" is in several scopes (local, project, user); say which with --scope"
      )
      const removed = await cli(a, "mcp", "remove", "shared", "--scope", "local")
      expect(removed.stdout).toContain("Removed MCP server shared from local config")
      const afterRemove = JSON.parse((await cli(a, "mcp", "get", "shared", "--json")).stdout)
      expect(afterRemove.scope).toBe("project")
      expect(JSON.parse(Fs.readFileSync(Path.join(home, ".switchyard.json"), "utf8")).projects[a].mcpServers).toEqual({
        mine: expect.anything()
      })
    },
    180_000
  )

  it("add-json and --header for remote servers; bad names and entries are bad input", async () => {
    const home = temp("switchyard-scopes-home-")
    const dir = temp("switchyard-scopes-json-")
    const env = { SWITCHYARD_HOME: home }
    const cli = (...args: ReadonlyArray<string>) => runCli(args, { cwd: dir, env })
    const http = await cli(
      "mcp",
      "add",
      "--transport",
      "http",
      "--header",
      "Authorization: Bearer t0k",
      "remote",
      "http://127.0.0.1:9/mcp"
    )
    expect(http.code).toBe(0)
    const json = await cli(
      "mcp",
      "add-json",
      "--scope",
      "user",
      "events",
      "{\"type\":\"sse\",\"url\":\"http://127.0.0.1:9/sse\"}"
    )
    expect(json.stdout).toContain("Added sse MCP server events to user config")
    const store = JSON.parse(Fs.readFileSync(Path.join(home, ".switchyard.json"), "utf8"))
    expect(store.projects[dir].mcpServers.remote).toEqual({
      type: "http",
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: "Bearer t0k" }
    })
    expect(store.mcpServers.events).toEqual({ type: "sse", url: "http://127.0.0.1:9/sse" })
    // The state file holds that token: only the user may read it. A project's file keeps the bits it had.
    expect(Fs.statSync(Path.join(home, ".switchyard.json")).mode & 0o777).toBe(0o600)
    Fs.writeFileSync(Path.join(dir, ".mcp.json"), "{}", { mode: 0o640 })
    Fs.chmodSync(Path.join(dir, ".mcp.json"), 0o640)
    expect((await cli("mcp", "add", "--scope", "project", "p", "--", "node")).code).toBe(0)
    expect(Fs.statSync(Path.join(dir, ".mcp.json")).mode & 0o777).toBe(0o640)
    expect(JSON.parse(Fs.readFileSync(Path.join(dir, ".mcp.json"), "utf8")).mcpServers.p.command).toBe("node")
    const bad = await cli("mcp", "add", "x.y", "--", "node")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("\"x.y\" is not a valid server name")
    const badJson = await cli("mcp", "add-json", "w", "{\"type\":\"websocket\"}")
    expect(badJson.code).toBe(2)
    expect(badJson.stderr).toContain("expected \"stdio\", \"http\" or \"sse\"")
    const badHeader = await cli("mcp", "add", "--transport", "http", "-H", "nocolon", "r", "http://x/mcp")
    expect(badHeader.code).toBe(2)
    const dash = await cli("mcp", "add", "n", "npx", "-y", "pkg")
    expect(dash.code).toBe(2)
    expect(dash.stderr).toContain("put -- before the server's command")
  }, 60_000)

  it("names that collide once sanitised are reported, and only one of them starts", async () => {
    const home = temp("switchyard-scopes-home-")
    const dir = temp("switchyard-scopes-collide-")
    const marker = Path.join(dir, "started.log")
    Fs.writeFileSync(Path.join(home, "settings.json"), JSON.stringify({ enableAllProjectMcpServers: true }))
    Fs.writeFileSync(
      Path.join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: { "x.y": { command: process.execPath, args: [RECORDING, marker, "dotted"] } }
      })
    )
    await runCli(["mcp", "add", "x_y", "--", process.execPath, RECORDING, marker, "underscored"], {
      cwd: dir,
      env: { SWITCHYARD_HOME: home }
    })
    const list = await runCli(["tools", "list"], { cwd: dir, env: { SWITCHYARD_HOME: home }, timeoutMs: 60_000 })
    expect(list.stderr).toContain("MCP servers \"x_y\" (local: ")
    expect(list.stderr).toContain("and \"x.y\" (project: ")
    expect(list.stderr).toContain("both name their tools mcp__x_y__…")
    expect(started(marker)).toEqual(["underscored"])
  }, 60_000)

  it.live("the init line names the servers with their status", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "ok" } }] }))
      const dir = temp("switchyard-scopes-init-")
      const config = JSON.stringify({
        mcpServers: {
          rec: { command: process.execPath, args: [RECORDING, Path.join(dir, "m.log"), "rec"] },
          silent: { command: process.execPath, args: [MISBEHAVING, "silent"] }
        }
      })
      const result = yield* Effect.promise(() =>
        runCli(["-p", "hi", "--output-format", "stream-json", "--mcp-config", config], {
          cwd: dir,
          env: {
            ANTHROPIC_API_KEY: "test-key",
            ANTHROPIC_BASE_URL: server.url,
            SWITCHYARD_HOME: temp("switchyard-scopes-home-"),
            MCP_TIMEOUT: "3000"
          },
          timeoutMs: 60_000
        })
      )
      const init = jsonLines(result)[0]!
      expect(init["mcp_servers"]).toEqual([{ name: "rec", status: "connected" }, { name: "silent", status: "failed" }])
      expect(init["tools"]).toContain("mcp__rec__echo")
    })), 90_000)
})
