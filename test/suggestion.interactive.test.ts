/**
 * Speculation in the interactive session (SPEC §4.12), in a real terminal
 * (tmux): after a turn the suggestion is shown dimmed with its speculation's
 * status, Tab accepts it, and the finished work appears at once — the file it
 * wrote reaches the real tree only then. Skipped where tmux is missing.
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
const socket = `switchyard-suggest-${process.pid}`
const tmux = (...args: ReadonlyArray<string>) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" })
const capture = (session: string) => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)

const paneDead = (session: string) => tmux("display-message", "-p", "-t", session, "#{pane_dead}").trim() === "1"

const waitFor = (session: string, pattern: RegExp, timeoutMs = 30_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    let screen = ""
    while (Date.now() < deadline) {
      screen = capture(session)
      if (pattern.test(screen)) return screen
      // The pane is kept after the program exits, so its last words are in the error.
      if (paneDead(session)) throw new Error(`switchyard exited before ${pattern} showed up:\n${screen}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`timed out waiting for ${pattern} in the terminal:\n${screen}`)
  })

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text", text: t } }] })

describe.skipIf(!hasTmux)("suggestions in the interactive session (tmux)", () => {
  it.scoped("the suggestion is shown with its speculation's status; Tab accepts and the result appears", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-suggest-"))
      server.enqueue(
        text("Hello! What shall we build?"),
        // The suggestion generator's answer, then the speculation's two turns, then the next suggestion.
        text("Create the shopping list"),
        Server.message({
          blocks: [{ block: { type: "tool_use", id: "toolu_w", name: "Write", input: { file_path: "shopping.txt", content: "buy milk\n" } } }]
        }),
        text("Created shopping.txt with one item."),
        text("NONE")
      )
      const session = "sg"
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
      const command = [
        "env",
        "ANTHROPIC_API_KEY=test-key",
        `ANTHROPIC_BASE_URL=${server.url}`,
        `SWITCHYARD_HOME=${home}`,
        "NO_COLOR=1",
        process.execPath,
        bin,
        "run",
        "--cwd",
        dir,
        "--permission-mode",
        "acceptEdits"
      ].map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(" ")
      // remain-on-exit in the same tmux call, so even a program that dies at once leaves its pane to read.
      tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command, ";", "set-option", "-t", session, "remain-on-exit", "on")
      yield* Effect.addFinalizer(() => Effect.sync(() => spawnSync("tmux", ["-L", socket, "kill-server"])))

      yield* waitFor(session, /^> /m)
      tmux("send-keys", "-t", session, "hi", "Enter")
      yield* waitFor(session, /Hello! What shall we build\?/)
      yield* waitFor(session, /^> Create the shopping list {2}· ready .*Tab to accept/m)
      // The speculation's write is in the overlay, not in the real tree.
      expect(fs.existsSync(path.join(dir, "shopping.txt"))).toBe(false)
      tmux("send-keys", "-t", session, "Tab")
      yield* waitFor(session, /Created shopping\.txt with one item\.[\s\S]*accepted speculation \(time saved \d+\.\ds; 1 file\(s\) written\)/)
      expect(fs.readFileSync(path.join(dir, "shopping.txt"), "utf8")).toBe("buy milk\n")
      yield* waitFor(session, /^> $/m)
      tmux("send-keys", "-t", session, "C-d")
    }), 90_000)
})
