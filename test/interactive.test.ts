/**
 * `switchyard run` in a real terminal (tmux): permission questions answered
 * 3 (no, with what to do instead: the model hears it and goes on, as in
 * Claude Code) then 2 (yes, and don't ask again), and ESC
 * in the middle of a long Bash command leaving no process behind. Skipped
 * where tmux is missing (CI installs it).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "./support/messagesServer.js"
import * as Tmux from "./support/tmux.js"

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

describe.skipIf(!Tmux.hasTmux)("interactive run in a terminal (tmux)", () => {
  it.scoped(
    "answers n then always; ESC interrupts a long Bash command and leaves no process",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-tty-"))
        fs.writeFileSync(path.join(dir, "notes.txt"), "keep me\n")
        const marker = `sleep 37.${process.pid % 1000}`
        server.enqueue(
          bash("toolu_rm", "rm notes.txt"),
          text("Keeping the notes, then."),
          bash("toolu_touch", "touch created.txt"),
          text("Created the file."),
          bash("toolu_sleep", `${marker} && echo finished`)
        )
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
        const terminal = yield* Tmux.start(["run", "--cwd", dir], {
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url,
          SWITCHYARD_HOME: home
        })

        yield* terminal.waitFor(/^> /m)
        terminal.send("delete the notes", "Enter")
        yield* terminal.waitFor(
          /1\. Yes\n.*2\. Yes, and don't ask again for Bash\(rm[^\n]*\n.*3\. No, and tell the model what to do instead/
        )
        terminal.send("3")
        yield* terminal.waitFor(/What should the model do instead\?/)
        terminal.type("keep the notes")
        terminal.send("Enter")
        yield* terminal.waitFor(/denied/)
        // The feedback went to the model in the same turn, and it answered.
        yield* terminal.waitFor(/Keeping the notes, then\.[\s\S]*^> $/m)
        expect(fs.existsSync(path.join(dir, "notes.txt"))).toBe(true)
        expect(server.requests).toHaveLength(2)
        expect(JSON.stringify(server.requests[1]!.body)).toContain("keep the notes")

        terminal.send("create a file", "Enter")
        yield* terminal.waitFor(/Bash\(touch created\.txt\)[\s\S]*3\. No/)
        terminal.send("2")
        yield* terminal.waitFor(/Created the file\./)
        expect(fs.existsSync(path.join(dir, "created.txt"))).toBe(true)
        const local = JSON.parse(fs.readFileSync(path.join(dir, ".switchyard/settings.local.json"), "utf8"))
        expect(local.permissions.allow).toEqual(expect.arrayContaining([expect.stringMatching(/^Bash\(touch/)]))

        terminal.send("wait a bit", "Enter")
        yield* terminal.waitFor(new RegExp(`Bash\\(${marker.replace(".", "\\.")}`))
        yield* Effect.promise(async () => {
          const deadline = Date.now() + 10_000
          while (!processRunning(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
        })
        expect(processRunning(marker)).toBe(true)
        terminal.send("Escape")
        yield* terminal.waitFor(/interrupting/)
        yield* terminal.waitFor(/Interrupted by user/)
        yield* terminal.waitFor(/stopped: interrupted[\s\S]*^> $/m)
        expect(processRunning(marker)).toBe(false)

        terminal.send("C-d")
        expect(yield* terminal.exited(20_000)).toBe(true)
      }),
    60_000
  )
})
