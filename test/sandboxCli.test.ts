/**
 * The sandbox on the command line (issue 18 item 2): `--sandbox` for
 * `dispatch` and `run`, the sandbox's state in the stream-json `init` line,
 * and a missing bubblewrap following `failIfUnavailable` (simulated with a
 * `PATH` that has no `bwrap`). Judged by the files and the printed lines.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox CLI tests need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

const setup = (settings?: unknown) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-sandbox-cli-")))
  const project = path.join(root, "project")
  const state = path.join(root, "state")
  fs.mkdirSync(project)
  fs.mkdirSync(state)
  if (settings !== undefined) fs.writeFileSync(path.join(state, "settings.json"), JSON.stringify(settings))
  return { root, project, state, outside: path.join(root, "outside.txt") }
}

/** A PATH with bash and touch but no bwrap. */
const pathWithoutBwrap = (root: string) => {
  const bin = path.join(root, "bin")
  fs.mkdirSync(bin)
  for (const program of ["bash", "touch", "cat"]) fs.symlinkSync(`/usr/bin/${program}`, path.join(bin, program))
  return bin
}

const writeOutside = (outside: string) =>
  JSON.stringify([{ type: "tool_use", id: "toolu_w", name: "Bash", input: { command: `touch ${outside}` } }])

suite("switchyard and the sandbox", () => {
  it(
    "dispatch --sandbox: a write outside is blocked and named, even in bypassPermissions; without it, it lands",
    async () => {
      const { outside, project, state } = setup()
      const args = [
        "dispatch",
        "-",
        "--cwd",
        project,
        "--output-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions"
      ]
      const sandboxed = await runCli([...args, "--sandbox"], {
        input: writeOutside(outside),
        env: { SWITCHYARD_HOME: state }
      })
      const result = jsonLines(sandboxed).find((line) => line["type"] === "result")!
      expect(result["status"]).toBe("error")
      expect(String(result["content"])).toContain(`Sandbox: a write to ${outside} was blocked`)
      expect(fs.existsSync(outside)).toBe(false)
      const plain = await runCli(args, { input: writeOutside(outside), env: { SWITCHYARD_HOME: state } })
      expect(plain.code).toBe(0)
      expect(fs.existsSync(outside)).toBe(true)
    },
    120_000
  )

  it.scoped("run -p --sandbox: the init line says the sandbox is on and available", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hi." } }] }))
      const { project, state } = setup()
      const result = yield* Effect.promise(() =>
        runCli(["run", "-p", "hello", "--cwd", project, "--output-format", "stream-json", "--sandbox"], {
          env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: state }
        })
      )
      expect(result.code, result.stderr).toBe(0)
      expect(jsonLines(result)[0]).toMatchObject({ subtype: "init", sandbox: { enabled: true, available: true } })
    }), 120_000)

  it(
    "no bwrap on PATH: failIfUnavailable fails the command; without it, one warning and Bash runs unsandboxed",
    async () => {
      const strict = setup({ sandbox: { enabled: true, failIfUnavailable: true } })
      const PATH = pathWithoutBwrap(strict.root)
      const failed = await runCli(
        ["dispatch", "-", "--cwd", strict.project, "--permission-mode", "bypassPermissions"],
        {
          input: writeOutside(strict.outside),
          env: { SWITCHYARD_HOME: strict.state, PATH }
        }
      )
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain("sandbox.failIfUnavailable")
      expect(failed.stderr).toContain("apt-get install bubblewrap")
      expect(fs.existsSync(strict.outside)).toBe(false)
      const lenient = setup({ sandbox: { enabled: true } })
      const ran = await runCli(["dispatch", "-", "--cwd", lenient.project, "--permission-mode", "bypassPermissions"], {
        input: writeOutside(lenient.outside),
        env: { SWITCHYARD_HOME: lenient.state, PATH: pathWithoutBwrap(lenient.root) }
      })
      expect(ran.stderr.match(/warning: sandbox: enabled but unavailable/g)?.length).toBe(1)
      expect(fs.existsSync(lenient.outside)).toBe(true)
    },
    120_000
  )
})
