/**
 * The CLI with MCP servers (issue 11): `.mcp.json` and `--mcp-config`,
 * `--strict-mcp-config`, `switchyard mcp list`, `tools list` marking deferred
 * tools and listing ToolSearch, `tools search`, and `dispatch` calling an MCP
 * tool, all as a process.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { execFileSync } from "node:child_process"
import { flags as snapshotFlags } from "../packages/cli/scripts/snapshot.mjs"
import { bin, jsonLines, root, runCli } from "./support/cli.js"

const hasStrace = (() => {
  try {
    execFileSync("strace", ["-o", "/dev/null", "true"], { stdio: "ignore" })
    return true
  } catch {
    console.log("skipped: the bundled-SDK file check needs strace (Debian package strace)")
    return false
  }
})()

const EVERYTHING = Path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const MISBEHAVING = Path.join(root, "test/fixtures/mcp/misbehavingServer.mjs")

const project = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-cli-"))
  Fs.writeFileSync(
    Path.join(dir, ".mcp.json"),
    JSON.stringify({
      mcpServers: {
        everything: { command: "${NODE_BIN}", args: [EVERYTHING] },
        silent: { command: process.execPath, args: [MISBEHAVING, "silent"] },
        broken: { type: "stdio", args: ["no command"] }
      }
    })
  )
  const extra = Path.join(dir, "extra.json")
  // `normal` is the default mode; the directory marks this test's server in the process table.
  Fs.writeFileSync(
    extra,
    JSON.stringify({ mcpServers: { bad: { command: process.execPath, args: [MISBEHAVING, "normal", dir] } } })
  )
  return { dir, extra }
}

// The user approves every project server (issue 21: a project's servers start only once approved).
const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-cli-home-"))
Fs.writeFileSync(Path.join(home, "settings.json"), JSON.stringify({ enableAllProjectMcpServers: true }))

// Long enough for server-everything to start on a loaded machine; the silent server takes this long to fail.
const env = { NODE_BIN: process.execPath, MCP_TIMEOUT: "10000", SWITCHYARD_HOME: home }

describe("switchyard with MCP servers", () => {
  it("mcp list shows every server: connected with its tool count, failed with why; a bad entry names file and field", async () => {
    const { dir } = project()
    // Both wait out the silent server's connect timeout: side by side, they wait for it once.
    const [result, text] = await Promise.all([
      runCli(["mcp", "list", "--json"], { cwd: dir, env, timeoutMs: 60_000 }),
      runCli(["mcp", "list"], { cwd: dir, env, timeoutMs: 60_000 })
    ])
    expect(result.code).toBe(0)
    const servers = JSON.parse(result.stdout) as ReadonlyArray<Record<string, unknown>>
    expect(servers.map((s) => [s["name"], s["status"]])).toEqual([["everything", "connected"], ["silent", "failed"]])
    expect(servers[0]!["tools"]).toBeGreaterThan(5)
    expect(String(servers[1]!["error"])).toContain("initialize")
    expect(result.stderr).toContain(`${Path.join(dir, ".mcp.json")}: mcpServers.broken.command`)
    expect(text.stdout).toMatch(/everything connected · stdio · project · \d+ tools/)
    expect(text.stdout).toMatch(/silent failed · stdio · project · no answer to initialize/)
  })

  it("tools list marks MCP tools deferred and lists ToolSearch; --strict-mcp-config uses only --mcp-config", async () => {
    const { dir, extra } = project()
    const result = await runCli(["tools", "list", "--strict-mcp-config", "--mcp-config", extra], { cwd: dir, env })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/mcp__bad__echo\s+\[deferred\] Echoes its text/)
    expect(result.stdout).toMatch(/^ToolSearch\s/m)
    expect(result.stdout).not.toContain("mcp__everything__")
    expect(result.stdout).not.toMatch(/^Read\s+\[deferred\]/m)
    const search = await runCli(["tools", "search", "echo text", "--strict-mcp-config", "--mcp-config", extra], {
      cwd: dir,
      env
    })
    expect(search.lines[0]).toMatch(/^mcp__bad__echo/)
    const none = await runCli(["tools", "list", "--strict-mcp-config"], { cwd: dir, env })
    expect(none.stdout).not.toMatch(/^ToolSearch\s/m)
  })

  it("dispatch runs MCP tool calls through the pipeline; the server process is gone afterwards", async () => {
    const { dir, extra } = project()
    const calls = JSON.stringify([
      { type: "tool_use", id: "m1", name: "mcp__bad__echo", input: { text: "through the cli" } },
      { type: "tool_use", id: "m2", name: "mcp__bad__echo", input: { text: 3 } }
    ])
    const result = await runCli([
      "dispatch",
      "-",
      "--output-format",
      "stream-json",
      "--strict-mcp-config",
      "--mcp-config",
      extra
    ], {
      cwd: dir,
      env,
      input: calls
    })
    const results = jsonLines(result).filter((line) => line["type"] === "result")
    expect(results.map((r) => [r["tool_use_id"], r["status"]])).toEqual([["m1", "success"], ["m2", "error"]])
    expect(String(results[1]!["content"])).toContain("`text`")
    expect(result.code).toBe(1)
    const left = Fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        const cmdline = Fs.readFileSync(`/proc/${p}/cmdline`, "utf8")
        return cmdline.includes(MISBEHAVING) && cmdline.includes(dir)
      } catch {
        return false
      }
    })
    expect(left).toEqual([])
  })

  it("the MCP client SDK is imported only when servers are configured", async () => {
    const { dir, extra } = project()
    const trace = { ...env, NODE_OPTIONS: `--import ${Path.join(root, "test/fixtures/mcp/traceImports.mjs")}` }
    const without = await runCli(["tools", "list", "--strict-mcp-config"], { cwd: dir, env: trace })
    expect(without.code).toBe(0)
    expect(without.stderr).not.toContain("MCP-SDK-IMPORTED")
    const withServers = await runCli(["tools", "list", "--strict-mcp-config", "--mcp-config", extra], {
      cwd: dir,
      env: trace
    })
    expect(withServers.stderr).toMatch(/MCP-SDK-IMPORTED \S*mcpSdk-[A-Z0-9]+\.js/)
  })

  it.skipIf(!hasStrace)(
    "the installed binary reads the SDK from the bundle's one file and its code cache, nothing of the package",
    async () => {
      const { dir, extra } = project()
      const log = Path.join(dir, "opened.log")
      const traced = await runCli(
        [
          "-f",
          "-qq",
          "-e",
          "trace=open,openat",
          "-o",
          log,
          bin,
          "tools",
          "list",
          "--strict-mcp-config",
          "--mcp-config",
          extra
        ],
        { cwd: dir, env, bin: "strace" }
      )
      expect(traced.code, traced.stderr).toBe(0)
      expect(traced.stdout).toMatch(/^mcp__bad__echo\s/m)
      const opened = Fs.readFileSync(log, "utf8").split("\n").filter((line) => !line.includes("ENOENT"))
      const named = (needle: string) => opened.filter((line) => line.includes(needle))
      expect(named("/bundle/mcp-sdk.cjs\"").length).toBeGreaterThan(0)
      expect(named("/bundle/mcp-sdk.cjs.cache\"").length).toBeGreaterThan(0)
      // The SDK's own package files (the server the test starts is not from it).
      expect(named("/node_modules/@modelcontextprotocol/client/")).toEqual([])
      expect(named("/node_modules/zod/")).toEqual([])
      // And V8 takes that cache in a process with the launcher's flags (one it refuses is only a slower start).
      const compiled = Path.join(root, "packages/cli/dist/internal/compiledScript.js")
      const sdk = Path.join(root, "packages/cli/bundle/mcp-sdk.cjs")
      const use = execFileSync(process.execPath, [
        ...snapshotFlags,
        "--input-type=module",
        "-e",
        `import * as C from ${JSON.stringify(compiled)}; process.stdout.write(C.run(${JSON.stringify(sdk)}).cache)`
      ], { encoding: "utf8" })
      expect(use).toBe("accepted")
    }
  )

  it(
    "settings env sets MCP_TOOL_TIMEOUT and ENABLE_TOOL_SEARCH; a proxy base URL turns tool search off unless it is set",
    async () => {
      const { dir, extra } = project()
      const settingsHome = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcp-cli-env-"))
      const withSettings = (values: Record<string, string>) =>
        Fs.writeFileSync(Path.join(settingsHome, "settings.json"), JSON.stringify({ env: values }))
      const args = ["--strict-mcp-config", "--mcp-config", extra]
      const cli = (command: ReadonlyArray<string>, more: Record<string, string> = {}, input?: string) =>
        runCli([...command, ...args], {
          cwd: dir,
          env: { ...env, SWITCHYARD_HOME: settingsHome, ...more },
          ...(input === undefined ? {} : { input })
        })
      withSettings({ MCP_TOOL_TIMEOUT: "1000" })
      const hang = await cli(
        ["dispatch", "-", "--output-format", "json", "--allowed-tools", "mcp__bad"],
        {},
        JSON.stringify([{ type: "tool_use", id: "h1", name: "mcp__bad__hang", input: {} }])
      )
      expect(JSON.parse(hang.stdout)[0].content).toMatch(/timed out after 1000 ms \(MCP_TOOL_TIMEOUT\)/)
      expect((await cli(["tools", "list"])).stdout).toMatch(/mcp__bad__echo\s+\[deferred\]/)
      withSettings({ ENABLE_TOOL_SEARCH: "false" })
      const loaded = await cli(["tools", "list"])
      expect(loaded.stdout).toMatch(/^mcp__bad__echo\s+Echoes its text/m)
      expect(loaded.stdout).not.toMatch(/^ToolSearch\s/m)
      withSettings({})
      const proxied = await cli(["tools", "list"], { ANTHROPIC_BASE_URL: "http://127.0.0.1:9/proxy" })
      expect(proxied.stdout).toMatch(/^mcp__bad__echo\s+Echoes its text/m)
      withSettings({ ENABLE_TOOL_SEARCH: "true" })
      const forced = await cli(["tools", "list"], { ANTHROPIC_BASE_URL: "http://127.0.0.1:9/proxy" })
      expect(forced.stdout).toMatch(/mcp__bad__echo\s+\[deferred\]/)
      withSettings({})
      const haiku = await cli(["tools", "list"], { SWITCHYARD_MODEL: "claude-haiku-4-5" })
      expect(haiku.stdout).toMatch(/^mcp__bad__echo\s+Echoes its text/m)
    },
    120_000
  )

  it("a missing --mcp-config file is bad input", async () => {
    const { dir } = project()
    const result = await runCli(["tools", "list", "--mcp-config", "nope.json"], { cwd: dir, env })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("MCP config file not found")
  })
})
