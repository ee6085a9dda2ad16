/**
 * Every shell Switchyard starts runs only its command, wherever the CLI was
 * started from. Debian's bash reads `~/.bashrc` when its stdin is a socket
 * (Node's pipes are socket pairs) and `SHLVL` is unset, taking itself for a
 * shell sshd started; a CLI started by a service, cron, an IDE or `env -i`
 * has no `SHLVL`. Judged by what ran: the `.bashrc` of the fixture's HOME
 * appends to a log and prints a line, and the test reads both.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as BashMode from "@switchyard/cli/BashMode"
import * as ShellEnvironment from "@switchyard/core/ShellEnvironment"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandboxed case needs bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}

interface Fixture {
  readonly root: string
  readonly project: string
  readonly home: string
  /** What the `.bashrc` appended to, once per shell that read it. */
  readonly log: string
}

const makeFixture = (settings: Record<string, unknown>): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-shell-startup-")))
  const project = path.join(root, "project")
  const home = path.join(root, "home")
  // In the project: the one place a sandboxed command may write.
  const log = path.join(project, "bashrc.log")
  fs.mkdirSync(path.join(project, ".claude"), { recursive: true })
  fs.mkdirSync(home)
  fs.writeFileSync(path.join(home, ".bashrc"), `echo BASHRC-RAN\necho "$BASH_EXECUTION_STRING" >> '${log}'\n`)
  fs.writeFileSync(path.join(project, ".claude", "settings.json"), JSON.stringify(settings))
  return { root, project, home, log }
}

const ranBashrc = (fixture: Fixture): ReadonlyArray<string> =>
  fs.existsSync(fixture.log) ? fs.readFileSync(fixture.log, "utf8").split("\n").filter((l) => l !== "") : []

/** `switchyard dispatch` of one Bash call with SHLVL unset, as a service would start it. */
const dispatchWithoutShlvl = async (fixture: Fixture, command: string) => {
  const result = await runCli(
    ["dispatch", "-", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"],
    {
      cwd: fixture.project,
      input: JSON.stringify([{ type: "tool_use", id: "t1", name: "Bash", input: { command } }]),
      env: {
        SHLVL: undefined,
        HOME: fixture.home,
        SWITCHYARD_HOME: path.join(fixture.root, "state"),
        CLAUDE_CONFIG_DIR: path.join(fixture.root, "claude")
      }
    }
  )
  expect(result.code, result.stderr).toBe(0)
  const line = jsonLines(result).find((l) => l["type"] === "result")
  return String(line?.["content"])
}

describe("shells run only their command", () => {
  it("SHLVL below 1, missing or not a whole number becomes 1; a terminal's value passes on", () => {
    for (const value of [undefined, "", "0", "-1", "abc", "1abc", "1.5"]) {
      expect(ShellEnvironment.nonInteractive({ SHLVL: value })).toEqual({ SHLVL: "1" })
    }
    for (const value of ["1", "2", " 3 ", "+4"]) expect(ShellEnvironment.nonInteractive({ SHLVL: value })).toEqual({})
  })

  it("the fixture's .bashrc runs in a bash with a socket stdin and no SHLVL (the case being guarded)", () => {
    const fixture = makeFixture({})
    try {
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "SHLVL") env[k] = v
      env["HOME"] = fixture.home
      // Node's "pipe" stdio is a socket pair.
      const shell = spawnSync("bash", ["-c", "echo command"], { env, stdio: ["pipe", "pipe", "pipe"], input: "" })
      const sourced = String(shell.stdout).includes("BASHRC-RAN")
      if (!sourced) console.log("notice: this bash does not read ~/.bashrc for a socket stdin (not built so)")
      const guarded = spawnSync("bash", ["-c", "echo command"], {
        env: { ...env, ...ShellEnvironment.nonInteractive(env) },
        stdio: ["pipe", "pipe", "pipe"],
        input: ""
      })
      expect(String(guarded.stdout)).toBe("command\n")
    } finally {
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  })

  it("the Bash tool and a PreToolUse hook, started by a CLI without SHLVL, do not read ~/.bashrc", async () => {
    const fixture = makeFixture({
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo hook >> hook.log" }] }]
      }
    })
    try {
      expect(await dispatchWithoutShlvl(fixture, "echo only-this")).toBe("only-this")
      expect(fs.readFileSync(path.join(fixture.project, "hook.log"), "utf8")).toBe("hook\n")
      expect(ranBashrc(fixture)).toEqual([])
    } finally {
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(!probed.available)(
    "a sandboxed Bash call, started by a CLI without SHLVL, does not read ~/.bashrc",
    async () => {
      const fixture = makeFixture({ sandbox: { enabled: true } })
      try {
        expect(await dispatchWithoutShlvl(fixture, "echo only-this")).toBe("only-this")
        expect(ranBashrc(fixture)).toEqual([])
      } finally {
        fs.rmSync(fixture.root, { recursive: true, force: true })
      }
    },
    60_000
  )

  it.effect("a `!` command of the terminal does not read ~/.bashrc without SHLVL", () =>
    Effect.gen(function*() {
      const fixture = makeFixture({})
      const saved = { HOME: process.env["HOME"], SHLVL: process.env["SHLVL"] }
      process.env["HOME"] = fixture.home
      delete process.env["SHLVL"]
      const ran = yield* BashMode.run("echo only-this", fixture.project).pipe(
        Effect.ensuring(Effect.sync(() => {
          for (const [key, value] of Object.entries(saved)) {
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
          }
          fs.rmSync(fixture.root, { recursive: true, force: true })
        }))
      )
      expect(ran.stdout).toBe("only-this\n")
    }).pipe(Effect.provide(NodeContext.layer)))
})
