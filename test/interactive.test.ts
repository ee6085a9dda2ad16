/**
 * `switchyard run` in a real terminal (tmux): permission questions answered
 * 3 (no, with what to do instead) then 2 (yes, and don't ask again), and ESC
 * in the middle of a long Bash command leaving no process behind. Skipped
 * where tmux is missing (CI installs it).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const hasTmux = spawnSync("tmux", ["-V"]).status === 0
const socket = `switchyard-test-${process.pid}`
const tmux = (...args: ReadonlyArray<string>) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" })
const capture = (session: string) => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)

/** Poll the pane until `pattern` shows up (or fail with what the pane shows). */
const waitFor = (session: string, pattern: RegExp, timeoutMs = 15_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    let screen = ""
    while (Date.now() < deadline) {
      screen = capture(session)
      if (pattern.test(screen)) return screen
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`timed out waiting for ${pattern} in the terminal:\n${screen}`)
  })

const bash = (id: string, command: string) =>
  Server.message({ blocks: [{ block: { type: "tool_use", id, name: "Bash", input: { command } } }] })
const text = (t: string) => Server.message({ blocks: [{ block: { type: "text", text: t } }] })

/** Whether a live (non-zombie) process has `marker` in its command line, read from /proc. */
const processRunning = (marker: string) =>
  fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).some((pid) => {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")
      const state = /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
      return cmdline.includes(marker) && state !== "Z"
    } catch {
      return false
    }
  })

describe.skipIf(!hasTmux)("interactive run in a terminal (tmux)", () => {
  it.scoped("answers n then always; ESC interrupts a long Bash command and leaves no process", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-tty-"))
      fs.writeFileSync(path.join(dir, "notes.txt"), "keep me\n")
      const marker = `sleep 37.${process.pid % 1000}`
      server.enqueue(
        bash("toolu_rm", "rm notes.txt"),
        bash("toolu_touch", "touch created.txt"),
        text("Created the file."),
        bash("toolu_sleep", `${marker} && echo finished`)
      )
      const session = "sy"
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
      const command = [
        "env",
        `ANTHROPIC_API_KEY=test-key`,
        `ANTHROPIC_BASE_URL=${server.url}`,
        `SWITCHYARD_HOME=${home}`,
        "NO_COLOR=1",
        process.execPath,
        bin,
        "run",
        "--cwd",
        dir
      ].map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(" ")
      tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command)
      yield* Effect.addFinalizer(() => Effect.sync(() => spawnSync("tmux", ["-L", socket, "kill-server"])))

      yield* waitFor(session, /^> /m)
      tmux("send-keys", "-t", session, "delete the notes", "Enter")
      yield* waitFor(session, /1\. Yes\n.*2\. Yes, and don't ask again for Bash\(rm[^\n]*\n.*3\. No, and tell the model what to do instead/)
      tmux("send-keys", "-t", session, "3")
      yield* waitFor(session, /What should the model do instead\?/)
      tmux("send-keys", "-t", session, "-l", "keep the notes")
      tmux("send-keys", "-t", session, "Enter")
      yield* waitFor(session, /denied/)
      yield* waitFor(session, /^> $/m)
      expect(fs.existsSync(path.join(dir, "notes.txt"))).toBe(true)
      expect(server.requests).toHaveLength(1)

      tmux("send-keys", "-t", session, "create a file", "Enter")
      yield* waitFor(session, /Bash\(touch created\.txt\)[\s\S]*3\. No/)
      tmux("send-keys", "-t", session, "2")
      yield* waitFor(session, /Created the file\./)
      // The rejected call's result told the model what the user said.
      expect(JSON.stringify(server.requests[1]!.body)).toContain("keep the notes")
      expect(fs.existsSync(path.join(dir, "created.txt"))).toBe(true)
      const local = JSON.parse(fs.readFileSync(path.join(dir, ".switchyard/settings.local.json"), "utf8"))
      expect(local.permissions.allow).toEqual(expect.arrayContaining([expect.stringMatching(/^Bash\(touch/)]))

      tmux("send-keys", "-t", session, "wait a bit", "Enter")
      yield* waitFor(session, new RegExp(`Bash\\(${marker.replace(".", "\\.")}`))
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 10_000
        while (!processRunning(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      })
      expect(processRunning(marker)).toBe(true)
      tmux("send-keys", "-t", session, "Escape")
      yield* waitFor(session, /interrupting/)
      yield* waitFor(session, /Interrupted by user/)
      yield* waitFor(session, /stopped: interrupted[\s\S]*^> $/m)
      expect(processRunning(marker)).toBe(false)

      tmux("send-keys", "-t", session, "C-d")
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 20_000
        while (Date.now() < deadline && spawnSync("tmux", ["-L", socket, "has-session", "-t", session]).status === 0) {
          await new Promise((r) => setTimeout(r, 100))
        }
      })
      expect(spawnSync("tmux", ["-L", socket, "has-session", "-t", session]).status).not.toBe(0)
    }), 60_000)
})
