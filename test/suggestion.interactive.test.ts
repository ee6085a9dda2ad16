/**
 * Speculation in the interactive session (SPEC §4.12), in a real terminal
 * (tmux): after a turn the suggestion is shown dimmed with its speculation's
 * status, Tab accepts it, and the finished work appears at once — the file it
 * wrote reaches the real tree only then. Skipped where tmux is missing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "./support/messagesServer.js"
import * as Tmux from "./support/tmux.js"

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text", text: t } }] })

describe.skipIf(!Tmux.hasTmux)("suggestions in the interactive session (tmux)", () => {
  it.scoped(
    "the suggestion is shown with its speculation's status; Tab accepts and the result appears",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-suggest-"))
        server.enqueue(
          text("Hello! What shall we build?"),
          // The suggestion generator's answer, then the speculation's two turns, then the next suggestion.
          text("Create the shopping list"),
          Server.message({
            blocks: [{
              block: {
                type: "tool_use",
                id: "toolu_w",
                name: "Write",
                input: { file_path: "shopping.txt", content: "buy milk\n" }
              }
            }]
          }),
          text("Created shopping.txt with one item."),
          text("NONE")
        )
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
        // Suggestions on: this test is about them.
        const terminal = yield* Tmux.start(["run", "--cwd", dir, "--permission-mode", "acceptEdits"], {
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url,
          SWITCHYARD_HOME: home,
          SWITCHYARD_SUGGESTIONS: "1"
        })

        yield* terminal.waitFor(/^> /m)
        terminal.send("hi", "Enter")
        yield* terminal.waitFor(/Hello! What shall we build\?/)
        yield* terminal.waitFor(/^> Create the shopping list {2}· ready .*Tab to accept/m)
        // The speculation's write is in the overlay, not in the real tree.
        expect(fs.existsSync(path.join(dir, "shopping.txt"))).toBe(false)
        terminal.send("Tab")
        yield* terminal.waitFor(
          /Created shopping\.txt with one item\.[\s\S]*accepted speculation \(time saved \d+\.\ds; 1 file\(s\) written\)/
        )
        expect(fs.readFileSync(path.join(dir, "shopping.txt"), "utf8")).toBe("buy milk\n")
        yield* terminal.waitFor(/^> $/m)
        terminal.send("C-d")
      }),
    90_000
  )
})
