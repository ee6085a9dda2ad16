/**
 * Ctrl-C in `switchyard dispatch` and `switchyard replay` (issue 21, item 5):
 * the process gets SIGINT while a call runs; every call still gets a result
 * line, the exit code is 1, and the interrupted command's process is gone.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { bin } from "./support/cli.js"

const temp = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-sigint-")))

/** Run switchyard, send SIGINT once `when` holds (checked as output arrives and every 20 ms), and collect how it ended. */
const interrupted = (args: ReadonlyArray<string>, cwd: string, when: (stdout: string) => boolean, input = "") =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd,
      env: { ...process.env, SWITCHYARD_HOME: temp() },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let sent = false
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`switchyard ${args.join(" ")} did not end\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, 60_000)
    const check = () => {
      if (!sent && when(stdout)) {
        sent = true
        clearInterval(poll)
        child.kill("SIGINT")
      }
    }
    const poll = setInterval(check, 20)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      check()
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => {
      clearTimeout(timer)
      clearInterval(poll)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })

const sleepers = (marker: string) =>
  Fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      // Arguments are NUL-separated (`bash -c "sleep 31"` may exec `sleep` itself).
      return Fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").includes(marker)
    } catch {
      return false
    }
  })

describe("Ctrl-C in dispatch and replay", () => {
  it("dispatch: every call gets a result line, the sleeping command is gone, exit 1", async () => {
    const dir = temp()
    Fs.writeFileSync(Path.join(dir, "a.txt"), "hello")
    const marker = `sleep 31.${process.pid}`
    const calls = JSON.stringify([
      { type: "tool_use", id: "b1", name: "Bash", input: { command: marker } },
      { type: "tool_use", id: "r1", name: "Read", input: { file_path: Path.join(dir, "a.txt") } },
      // A write: it waits for the calls before it (sleep and Read are safe and run together), so it never starts.
      { type: "tool_use", id: "b2", name: "Bash", input: { command: "echo after > after.txt" } }
    ])
    const result = await interrupted(
      [
        "dispatch",
        "-",
        "--output-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions",
        "--scheduling",
        "greedy"
      ],
      dir,
      (out) => /"type":"started","tool_use_id":"b1"/.test(out) && sleepers(marker).length > 0,
      calls
    )
    expect(result.code).toBe(1)
    const lines = result.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)
    const results = new Map(lines.filter((l) => l["type"] === "result").map((l) => [l["tool_use_id"], l]))
    expect([...results.keys()].sort()).toEqual(["b1", "b2", "r1"])
    expect(results.get("b1")!["status"]).not.toBe("success")
    expect(String(results.get("b1")!["content"]).toLowerCase()).toContain("interrupt")
    expect(results.get("b2")!["status"]).not.toBe("success")
    expect(Fs.existsSync(Path.join(dir, "after.txt"))).toBe(false)
    expect(sleepers(marker)).toEqual([])
  }, 90_000)

  it("replay: the interrupted call is paired with a result, the run ends interrupted, exit 1", async () => {
    const dir = temp()
    const marker = `sleep 32.${process.pid}`
    const transcript = Path.join(dir, "transcript.json")
    Fs.writeFileSync(
      transcript,
      JSON.stringify({
        turns: [
          { blocks: [{ block: { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: marker } } }] },
          { blocks: [{ block: { type: "text", text: "never reached" } }] }
        ]
      })
    )
    const result = await interrupted(
      ["replay", transcript, "--output-format", "stream-json", "--permission-mode", "bypassPermissions"],
      dir,
      // The command is running.
      () => sleepers(marker).length > 0
    )
    expect(result.code).toBe(1)
    const lines = result.stdout.split("\n").filter((l) => l !== "").map((l) =>
      JSON.parse(l) as { readonly type?: string; readonly message?: { readonly content?: unknown } }
    )
    const user = lines.find((l) => l.type === "user")
    // As in Claude Code: the result, then the note that the user interrupted the tool use.
    expect(user?.message?.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_1", is_error: true }),
      { type: "text", text: "[Request interrupted by user for tool use]" }
    ])
    expect(lines.at(-1)).toMatchObject({ type: "result", is_error: true })
    expect(sleepers(marker)).toEqual([])
  }, 90_000)
})
