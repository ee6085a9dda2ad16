/**
 * A project's `.mcp.json` servers start only once approved (issue 21, item
 * 1), judged by the marker file a server of the tests' own
 * (fixtures/mcp/recordingServer.mjs) writes the moment it starts: a cloned
 * project starts nothing in `tools list`, `mcp list`, `mcp get`, `dispatch`,
 * `run -p` or when the completion script is asked for tool names; the warning
 * names the servers and says how to approve them; each approval source works
 * (user settings, a local settings file, `--settings`, `--mcp-config`), a
 * project's shared settings and a local file the repository ships cannot
 * approve, and `disabledMcpjsonServers` wins over every approval.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { bin, root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const RECORDING = Path.join(root, "test/fixtures/mcp/recordingServer.mjs")

const temp = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

/** A project as cloned: `.mcp.json` names a server that writes a marker when it starts. */
const clonedProject = (servers: ReadonlyArray<string> = ["marker"]) => {
  const dir = temp("switchyard-approval-")
  const marker = Path.join(dir, "started.log")
  Fs.writeFileSync(
    Path.join(dir, ".mcp.json"),
    JSON.stringify({
      mcpServers: Object.fromEntries(
        servers.map((name) => [name, { command: process.execPath, args: [RECORDING, marker, name] }])
      )
    })
  )
  const home = temp("switchyard-approval-home-")
  return { dir, marker, home }
}

/** Which servers started (the marker's `started <pid> <name>` lines). */
const started = (marker: string): ReadonlyArray<string> =>
  Fs.existsSync(marker)
    ? Fs.readFileSync(marker, "utf8").split("\n").filter((l) => l.startsWith("started ")).map((l) => l.split(" ")[2]!)
    : []

const writeJson = (file: string, value: unknown) => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, JSON.stringify(value))
}

const cli = (
  args: ReadonlyArray<string>,
  project: { dir: string; home: string },
  env: Record<string, string> = {},
  input?: string
) =>
  runCli(args, {
    cwd: project.dir,
    env: { SWITCHYARD_HOME: project.home, MCP_TIMEOUT: "10000", ...env },
    timeoutMs: 60_000,
    ...(input === undefined ? {} : { input })
  })

const readCall = JSON.stringify([{ type: "tool_use", id: "r1", name: "Glob", input: { pattern: "*.json" } }])

describe("approval of a project's .mcp.json servers", () => {
  it("a cloned project starts nothing until approved, in every command; one warning names the server and says how to approve", async () => {
    const project = clonedProject(["marker", "second"])
    const list = await cli(["tools", "list"], project)
    expect(list.code).toBe(0)
    expect(list.stdout).not.toContain("mcp__marker__")
    const warnings = list.stderr.split("\n").filter((l) => l.includes("approve"))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("\"marker\"")
    expect(warnings[0]).toContain("\"second\"")
    expect(warnings[0]).toContain("enabledMcpjsonServers")
    const mcpList = await cli(["mcp", "list", "--json"], project)
    expect(JSON.parse(mcpList.stdout).map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ["marker", "not-approved"],
      ["second", "not-approved"]
    ])
    expect((await cli(["mcp", "get", "marker"], project)).stdout).toContain("not approved")
    const dispatched = await cli(["dispatch", "-", "--output-format", "json"], project, {}, readCall)
    expect(dispatched.code).toBe(0)
    expect(await completeToolNames(project)).toContain("Read")
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "done" } }] }))
      const ran = yield* Effect.promise(() =>
        cli(["-p", "hello", "--output-format", "stream-json"], project, {
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url
        })
      )
      expect(ran.code).toBe(0)
      const init = JSON.parse(ran.lines[0]!)
      expect(init.mcp_servers).toEqual([])
      // The model was not offered the server's tools either.
      const body = server.requests[0]!.body as { tools: ReadonlyArray<{ name: string }> }
      expect(body.tools.some((t) => t.name.startsWith("mcp__"))).toBe(false)
    })))
    expect(started(project.marker)).toEqual([])
  })

  it("approved in the user's settings: enabledMcpjsonServers starts that server only; enableAllProjectMcpServers all", async () => {
    const project = clonedProject(["marker", "second"])
    writeJson(Path.join(project.home, "settings.json"), { enabledMcpjsonServers: ["marker"] })
    const list = await cli(["tools", "list"], project)
    expect(list.stdout).toContain("mcp__marker__echo")
    expect(list.stdout).not.toContain("mcp__second__echo")
    expect(started(project.marker)).toEqual(["marker"])
    expect(list.stderr).toContain("\"second\"")
    // Completion offers the approved server's tools from the names cached when it connected, starting nothing.
    const names = await completeToolNames(project)
    expect(names).toContain("mcp__marker__echo")
    expect(names).toContain("Read")
    expect(started(project.marker)).toEqual(["marker"])
    writeJson(Path.join(project.home, "settings.json"), { enableAllProjectMcpServers: true })
    await cli(["tools", "list"], project)
    expect([...started(project.marker)].sort()).toEqual(["marker", "marker", "second"])
  })

  it("a local settings file, a --settings file and --mcp-config approve; a project's shared settings cannot", async () => {
    const shared = clonedProject()
    writeJson(Path.join(shared.dir, ".claude", "settings.json"), {
      enableAllProjectMcpServers: true,
      enabledMcpjsonServers: ["marker"]
    })
    const ignored = await cli(["tools", "list"], shared)
    expect(started(shared.marker)).toEqual([])
    expect(ignored.stderr).toContain("a project's own settings cannot approve its MCP servers")

    const local = clonedProject()
    writeJson(Path.join(local.dir, ".claude", "settings.local.json"), { enabledMcpjsonServers: ["marker"] })
    await cli(["tools", "list"], local)
    expect(started(local.marker)).toEqual(["marker"])

    const flag = clonedProject()
    const settings = Path.join(temp("switchyard-flag-settings-"), "settings.json")
    writeJson(settings, { enabledMcpjsonServers: ["marker"] })
    await cli(["tools", "list", "--settings", settings], flag)
    expect(started(flag.marker)).toEqual(["marker"])

    const dynamic = clonedProject()
    const config = Fs.readFileSync(Path.join(dynamic.dir, ".mcp.json"), "utf8")
    const listed = await cli(["tools", "list", "--mcp-config", config], dynamic)
    expect(listed.stdout).toContain("mcp__marker__echo")
    expect(started(dynamic.marker)).toEqual(["marker"])
  })

  it.skipIf(spawnSync("git", ["--version"]).status !== 0)(
    "a local settings file the repository tracks in git is the project's, so it cannot approve",
    async () => {
      const project = clonedProject()
      writeJson(Path.join(project.dir, ".claude", "settings.local.json"), { enableAllProjectMcpServers: true })
      const git = (...args: ReadonlyArray<string>) =>
        spawnSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: project.dir })
      git("init", "-q")
      git("add", ".claude/settings.local.json", ".mcp.json")
      git("commit", "-qm", "clone me")
      const list = await cli(["tools", "list"], project)
      expect(started(project.marker)).toEqual([])
      expect(list.stderr).toContain("settings.local.json: enableAllProjectMcpServers")
    }
  )

  it("disabledMcpjsonServers wins over every approval, wherever it is; a list that cannot be read disables them all", async () => {
    const project = clonedProject(["marker", "second"])
    writeJson(Path.join(project.home, "settings.json"), {
      enableAllProjectMcpServers: true,
      enabledMcpjsonServers: ["marker"]
    })
    writeJson(Path.join(project.dir, ".claude", "settings.json"), { disabledMcpjsonServers: ["marker"] })
    const list = await cli(["mcp", "list", "--json"], project)
    expect(JSON.parse(list.stdout).map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ["second", "connected"],
      ["marker", "rejected"]
    ])
    expect(started(project.marker)).toEqual(["second"])
    writeJson(Path.join(project.dir, ".claude", "settings.json"), { disabledMcpjsonServers: "marker" })
    const broken = await cli(["tools", "list"], project)
    expect(broken.stderr).toContain("disabledMcpjsonServers")
    expect(started(project.marker)).toEqual(["second"])
  })

  it("mcp reset-project-choices forgets remembered answers and names the settings that still decide", async () => {
    const project = clonedProject()
    const key = Path.resolve(project.dir)
    // An answer given in a terminal earlier, remembered for this content of .mcp.json.
    const digest = (await import("node:crypto")).createHash("sha256")
      .update(Fs.readFileSync(Path.join(project.dir, ".mcp.json"), "utf8")).digest("hex")
    writeJson(Path.join(project.home, ".switchyard.json"), {
      projects: { [key]: { mcpjsonChoices: { files: { [digest]: { enabled: ["marker"], disabled: [] } } } } }
    })
    await cli(["tools", "list"], project)
    expect(started(project.marker)).toEqual(["marker"])
    // Another content of the file is asked about again: without a terminal, not started.
    const changed = JSON.parse(Fs.readFileSync(Path.join(project.dir, ".mcp.json"), "utf8"))
    changed.mcpServers.marker.env = { CHANGED: "1" }
    const original = Fs.readFileSync(Path.join(project.dir, ".mcp.json"), "utf8")
    Fs.writeFileSync(Path.join(project.dir, ".mcp.json"), JSON.stringify(changed))
    await cli(["tools", "list"], project)
    expect(started(project.marker)).toEqual(["marker"])
    Fs.writeFileSync(Path.join(project.dir, ".mcp.json"), original)
    writeJson(Path.join(project.dir, ".claude", "settings.local.json"), { disabledMcpjsonServers: [] })
    const reset = await cli(["mcp", "reset-project-choices"], project)
    expect(reset.code).toBe(0)
    expect(reset.stdout).toContain("have been reset")
    expect(reset.stdout).toContain(`Still set in ${Path.join(project.dir, ".claude", "settings.local.json")}`)
    await cli(["tools", "list"], project)
    expect(started(project.marker)).toEqual(["marker"])
    const stored = JSON.parse(Fs.readFileSync(Path.join(project.home, ".switchyard.json"), "utf8"))
    expect(stored.projects[key].mcpjsonChoices).toBeUndefined()
  })
})

/** What bash completion offers for `switchyard tools schema <TAB>` in the project. */
const completeToolNames = async (project: { dir: string; home: string }): Promise<ReadonlyArray<string>> => {
  const shim = temp("switchyard-approval-shim-")
  Fs.writeFileSync(Path.join(shim, "switchyard"), `#!/bin/sh\nexec '${bin}' "$@"\n`, {
    mode: 0o755
  })
  const script = Path.join(shim, "switchyard.bash")
  Fs.writeFileSync(script, (await runCli(["completions", "bash"])).stdout)
  const program = [
    `source ${JSON.stringify(script)}`,
    "COMP_WORDS=(switchyard tools schema '')",
    "COMP_CWORD=3",
    "COMPREPLY=()",
    "_switchyard",
    "printf '%s\\n' \"${COMPREPLY[@]}\""
  ].join("\n")
  const result = spawnSync("bash", ["--norc", "--noprofile", "-c", program], {
    cwd: project.dir,
    env: { ...process.env, PATH: `${shim}:${process.env["PATH"]}`, SWITCHYARD_HOME: project.home },
    encoding: "utf8"
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.split("\n").filter((l) => l !== "")
}
