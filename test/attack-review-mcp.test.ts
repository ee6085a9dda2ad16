/**
 * Outside review of the MCP approval claim (DESIGN §4.5 MCP approval,
 * `cli/McpSetup.ts`, `tools/McpApproval.ts`): "no server from a project's
 * `.mcp.json` starts (no process spawned, no HTTP request sent) before the
 * user approves it", through every entry of the CLI.
 *
 * Judged by effects: a stdio server that appends to a log the moment its
 * command starts, and an HTTP server (`type: "http"`) whose request log must
 * stay empty; the model is a local endpoint that answers every request with
 * a 400, so runs end at once.
 *
 * Held (see the first test; `mcpApproval.test.ts` has `tools list`, `mcp
 * list/get`, `dispatch`, `-p` and the approval sources): `tools search`,
 * `tools schema`, `-p` with `--input-format stream-json`,
 * `--dangerously-skip-permissions`, `--strict-mcp-config`, `-c`, `-r`,
 * `speculate` (with and without `--accept`), `sessions`; `enableAllProjectMcpServers`
 * in `.switchyard/settings.json` and in a git-tracked
 * `.switchyard/settings.local.json` approve nothing. Gap (fixed: git runs with
 * `-c core.fsmonitor=false`, no hooks, `safe.bareRepository=explicit`):
 * - deciding whether a local settings file "came with the repository" runs
 *   `git ls-files` in the project with the project's own git configuration,
 *   so a `core.fsmonitor` in `.git/config` (a project unpacked from an
 *   archive, or one a sandboxed command planted through `.git/commondir`, see
 *   attack-review-sandbox.test.ts) runs a program of the project before, and
 *   although, its servers are refused (`McpSetup.isTrackedByGit`).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { root, runCli } from "./support/cli.js"

const RECORDING = path.join(root, "test/fixtures/mcp/recordingServer.mjs")
const hasGit = spawnSync("git", ["--version"]).status === 0
const TIMEOUT = 120_000

/** The model and the project's HTTP MCP server on one loopback port; every request is logged. */
const startServer = async () => {
  const log: Array<string> = []
  const server = Http.createServer((request, response) => {
    log.push(`${request.method} ${request.url}`)
    response.writeHead(400, { "content-type": "application/json" })
    response.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "offline" } }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { log, url, close: () => server.close() }
}

const write = (file: string, value: unknown) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
}

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.email=o@example.com", "-c", "user.name=o", ...args], { cwd, stdio: "ignore" })

/** A cloned project whose `.mcp.json` names a stdio server (it logs its start) and an HTTP one. */
const clonedProject = (serverUrl: string) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-mcp-")))
  const dir = path.join(base, "project")
  const home = path.join(base, "home")
  const started = path.join(base, "started.log")
  fs.mkdirSync(home, { recursive: true })
  write(path.join(dir, ".mcp.json"), {
    mcpServers: {
      stdio: {
        command: "sh",
        args: ["-c", `echo started >> '${started}'; exec '${process.execPath}' '${RECORDING}' '${started}.rec' stdio`]
      },
      web: { type: "http", url: `${serverUrl}/mcp` }
    }
  })
  if (hasGit) {
    git(dir, "init", "-q")
    git(dir, "add", "-A")
    git(dir, "commit", "-q", "-m", "clone me")
  }
  return { base, dir, home, started }
}

type Project = ReturnType<typeof clonedProject>

const startedCount = (project: Project) =>
  fs.existsSync(project.started)
    ? fs.readFileSync(project.started, "utf8").split("\n").filter((l) => l !== "").length
    : 0

const cli = (project: Project, serverUrl: string, args: ReadonlyArray<string>, input?: string) =>
  runCli(args, {
    cwd: project.dir,
    env: {
      SWITCHYARD_HOME: project.home,
      MCP_TIMEOUT: "5000",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: serverUrl
    },
    timeoutMs: 60_000,
    ...(input === undefined ? {} : { input })
  })

/** What reached the project's servers: stdio starts and HTTP requests that are not the model's. */
const reached = (project: Project, log: ReadonlyArray<string>) => ({
  stdio: startedCount(project),
  http: log.filter((line) => !line.includes("/v1/messages")).length
})

describe("MCP approval through every entry (judged by the servers' logs)", () => {
  it(
    "nothing of an unapproved .mcp.json starts in any entry; the user's approval does start both (control)",
    async () => {
      const server = await startServer()
      const project = clonedProject(server.url)
      try {
        const user = { type: "user", message: { role: "user", content: "hi" } }
        const entries: ReadonlyArray<readonly [string, ReadonlyArray<string>, string?]> = [
          ["tools search", ["tools", "search", "echo"]],
          ["tools schema", ["tools", "schema", "mcp__stdio__echo"]],
          [
            "-p stream-json in",
            ["-p", "--input-format", "stream-json", "--output-format", "stream-json"],
            JSON.stringify(user)
          ],
          ["-p skip permissions", ["-p", "hi", "--dangerously-skip-permissions"]],
          ["-p strict", ["-p", "hi", "--strict-mcp-config"]],
          ["-c", ["-c", "-p", "again"]],
          ["-r", ["-r", "00000000-0000-4000-8000-000000000000", "-p", "again"]],
          ["speculate", ["speculate", "hi"]],
          ["speculate --accept", ["speculate", "hi", "--accept"]],
          ["sessions", ["sessions"]]
        ]
        const seen: Record<string, unknown> = {}
        for (const [name, args, input] of entries) {
          await cli(project, server.url, args, input)
          seen[name] = reached(project, server.log)
        }
        write(path.join(project.dir, ".switchyard", "settings.json"), { enableAllProjectMcpServers: true })
        await cli(project, server.url, ["tools", "list"])
        seen["enableAll in .switchyard/settings.json"] = reached(project, server.log)
        fs.rmSync(path.join(project.dir, ".switchyard"), { recursive: true })
        if (hasGit) {
          write(path.join(project.dir, ".switchyard", "settings.local.json"), {
            enabledMcpjsonServers: ["stdio", "web"]
          })
          git(project.dir, "add", "-f", ".switchyard/settings.local.json")
          await cli(project, server.url, ["tools", "list"])
          seen["tracked .switchyard/settings.local.json"] = reached(project, server.log)
          fs.rmSync(path.join(project.dir, ".switchyard"), { recursive: true })
          git(project.dir, "rm", "-q", "-r", "--cached", ".switchyard")
        }
        const none = Object.fromEntries(Object.keys(seen).map((name) => [name, { stdio: 0, http: 0 }]))
        expect(seen).toEqual(none)
        // The control: the same logs see an approved project's servers.
        write(path.join(project.home, "settings.json"), { enableAllProjectMcpServers: true })
        await cli(project, server.url, ["tools", "list"])
        const control = reached(project, server.log)
        expect(control.stdio).toBeGreaterThan(0)
        expect(control.http).toBeGreaterThan(0)
      } finally {
        server.close()
        fs.rmSync(project.base, { recursive: true, force: true })
      }
    },
    TIMEOUT
  )
  ;(hasGit ? it : it.skip)(
    "a local settings file's git check runs no program of the project (core.fsmonitor in .git/config)",
    async () => {
      const server = await startServer()
      const project = clonedProject(server.url)
      try {
        const mark = path.join(project.base, "fsmonitor-ran")
        write(path.join(project.base, "fsmonitor.sh"), `#!/bin/sh\necho ran >> '${mark}'\n`)
        fs.chmodSync(path.join(project.base, "fsmonitor.sh"), 0o755)
        // The repository ships its local settings file (so it cannot approve) and, unpacked, its own config.
        write(path.join(project.dir, ".claude", "settings.local.json"), { enableAllProjectMcpServers: true })
        git(project.dir, "add", "-f", ".claude/settings.local.json")
        git(project.dir, "commit", "-q", "-m", "ship local settings")
        git(project.dir, "config", "core.fsmonitor", path.join(project.base, "fsmonitor.sh"))
        const listed = await cli(project, server.url, ["tools", "list"])
        expect(listed.stderr).toContain("cannot approve its MCP servers")
        expect(reached(project, server.log)).toEqual({ stdio: 0, http: 0 })
        expect(fs.existsSync(mark)).toBe(false)
      } finally {
        server.close()
        fs.rmSync(project.base, { recursive: true, force: true })
      }
    },
    TIMEOUT
  )
})
