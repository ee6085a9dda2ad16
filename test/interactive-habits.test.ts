/**
 * Claude Code's interactive habits (issue 24, item 5) in a real terminal
 * (tmux), judged by what the Messages server received, the files left and
 * the screen: Enter on an empty line does nothing; Shift+Tab cycles the
 * permission mode and the next call runs in it; /permissions is live after
 * "don't ask again"; `!command` runs and joins the conversation; `@file`
 * completes with Tab and carries the file; `#` adds a memory note and
 * /memory edits one; /compact replaces the history by a summary but for the
 * last turns; ESC keeps the streamed text and records the interruption;
 * suggestions are off by default (/cost says so) and a long one is cut to
 * the width, never wrapped.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "./support/messagesServer.js"
import * as Tmux from "./support/tmux.js"

const tempDir = (files: Record<string, string> = {}) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-habits-tty-")))
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}
const text = (t: string) => Server.message({ blocks: [{ block: { type: "text" as const, text: t } }] })
const call = (id: string, name: string, input: unknown) =>
  Server.message({ blocks: [{ block: { type: "tool_use" as const, id, name, input } }] })
type Body = { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<{ type: string; text?: string }> }> }
const body = (server: Server.MessagesServer, i: number) => server.requests[i]!.body as Body
const sentText = (server: Server.MessagesServer, i: number) => JSON.stringify(body(server, i).messages)

const envOf = (server: Server.MessagesServer, extra: Record<string, string> = {}) => ({
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: server.url,
  SWITCHYARD_HOME: tempDir(),
  ...extra
})

describe.skipIf(!Tmux.hasTmux)("interactive habits (tmux, issue 24 item 5)", () => {
  it.scoped("empty Enter, Shift+Tab, live /permissions, /cost, !command and @file", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "notes.md": "the secret word is plover\n" })
      server.enqueue(
        call("toolu_w", "Write", { file_path: "a.txt", content: "A\n" }),
        text("Wrote a.txt."),
        call("toolu_t", "Bash", { command: "touch b.txt" }),
        text("Touched b.txt."),
        text("The word is plover."),
        text("It said hello-bang.")
      )
      const term = yield* Tmux.start(["--cwd", dir], envOf(server))
      yield* term.waitFor(/^> /m)
      // Enter on an empty line sends nothing and prints no new prompt.
      term.send("Enter")
      term.send("Enter")
      term.type("/status")
      term.send("Enter")
      yield* term.waitFor(/^messages: 0$/m)
      expect(server.requests).toHaveLength(0)
      expect(term.screen().match(/^> /gm)).toHaveLength(2)

      // Shift+Tab: accept edits; the Write runs without a question.
      term.send("BTab")
      yield* term.waitFor(/accept edits on \(shift\+tab to cycle\)/)
      term.type("write a")
      term.send("Enter")
      yield* term.waitFor(/Wrote a\.txt\.[\s\S]*^> $/m)
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("A\n")
      term.send("BTab")
      yield* term.waitFor(/plan mode on/)
      term.send("BTab")
      yield* term.waitFor(/mode default \(shift\+tab to cycle\)/)

      // "Yes, and don't ask again": /permissions lists the rule at once.
      term.type("touch b")
      term.send("Enter")
      yield* term.waitFor(/2\. Yes, and don't ask again/)
      term.send("2")
      yield* term.waitFor(/Touched b\.txt\.[\s\S]*^> $/m)
      term.type("/permissions")
      term.send("Enter")
      yield* term.waitFor(/^allow:\n\s+Bash\(touch[^\n]*\(session\)/m)
      yield* term.waitFor(/^permission mode now: default$/m)

      // Suggestions are off by default, and /cost says so.
      term.type("/cost")
      term.send("Enter")
      yield* term.waitFor(/Next-prompt suggestions are off \(SWITCHYARD_SUGGESTIONS=1/)

      // @file: Tab completes, and the prompt carries the file.
      term.type("what does @no")
      term.send("Tab")
      yield* term.waitFor(/^> what does @notes\.md$/m)
      term.type(" say?")
      term.send("Enter")
      yield* term.waitFor(/The word is plover\.[\s\S]*^> $/m)
      expect(sentText(server, 4)).toContain("Result of calling the Read tool")
      expect(sentText(server, 4)).toContain("the secret word is plover")

      // !command: runs without the model; the next prompt sees it.
      const before = server.requests.length
      term.type("!echo hello-bang > bang.txt; cat bang.txt")
      term.send("Enter")
      yield* term.waitFor(/^hello-bang$[\s\S]*^> $/m)
      expect(server.requests).toHaveLength(before)
      expect(fs.readFileSync(path.join(dir, "bang.txt"), "utf8")).toBe("hello-bang\n")
      term.type("what did it say?")
      term.send("Enter")
      yield* term.waitFor(/It said hello-bang\./)
      const last = body(server, before).messages.at(-1)!
      expect(last.role).toBe("user")
      expect(JSON.stringify(last.content)).toContain(
        "<bash-input>echo hello-bang > bang.txt; cat bang.txt</bash-input>"
      )
      expect(JSON.stringify(last.content)).toContain("<bash-stdout>hello-bang</bash-stdout>")
      term.send("C-d")
      expect(yield* term.exited(20_000)).toBe(true)
    }), 120_000)

  it.scoped(
    "# adds a memory note and /memory edits a file; the next requests carry them; /compact keeps the last turns",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempDir()
        const editor = path.join(dir, "editor.sh")
        fs.writeFileSync(editor, "#!/bin/sh\necho '- written in the editor' >> \"$1\"\n", { mode: 0o755 })
        server.enqueue(text("One."), text("Two."), text("Three."), text("SUMMARY: the user counted."), text("Four."))
        const term = yield* Tmux.start(["--cwd", dir], envOf(server, { EDITOR: editor }))
        yield* term.waitFor(/^> /m)
        term.type("# always answer in French")
        term.send("Enter")
        yield* term.waitFor(/Where should this memory go\?[\s\S]*3\. User memory/)
        term.send("1")
        yield* term.waitFor(/Saved to .*CLAUDE\.md/)
        expect(fs.readFileSync(path.join(dir, "CLAUDE.md"), "utf8")).toBe("- always answer in French\n")
        term.type("/memory")
        term.send("Enter")
        yield* term.waitFor(/Edit which memory file/)
        term.send("2")
        yield* term.waitFor(/memory reloaded: 2 file\(s\)/)
        expect(fs.readFileSync(path.join(dir, "CLAUDE.local.md"), "utf8")).toBe("- written in the editor\n")
        expect(server.requests).toHaveLength(0)

        term.type("one")
        term.send("Enter")
        yield* term.waitFor(/One\.[\s\S]*^> $/m)
        const reminder = body(server, 0).messages[0]!.content[0]!.text!
        expect(reminder).toContain("- always answer in French")
        expect(reminder).toContain("- written in the editor")
        expect(body(server, 0).messages[0]!.content[1]).toEqual({ type: "text", text: "one" })
        term.type("two")
        term.send("Enter")
        yield* term.waitFor(/Two\.[\s\S]*^> $/m)
        term.type("three")
        term.send("Enter")
        yield* term.waitFor(/Three\.[\s\S]*^> $/m)
        term.type("/compact")
        term.send("Enter")
        yield* term.waitFor(/compacted 6 messages into 5[\s\S]*^> $/m)
        // The summary request saw the first turn; the last two turns stay as they were.
        expect(sentText(server, 3)).toContain("\"one\"")
        term.type("four")
        term.send("Enter")
        yield* term.waitFor(/Four\./)
        const after = body(server, 4).messages
        expect(JSON.stringify(after[0])).toContain("This session is being continued from a previous conversation")
        expect(JSON.stringify(after[0])).toContain("SUMMARY: the user counted.")
        expect(JSON.stringify(after)).not.toContain("\"one\"")
        expect(JSON.stringify(after)).toContain("\"two\"")
        expect(JSON.stringify(after)).toContain("\"three\"")
        term.send("C-d")
        expect(yield* term.exited(20_000)).toBe(true)
      }),
    120_000
  )

  it.scoped(
    "ESC while text streams keeps the text; the interruption is recorded and joins the next prompt",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempDir()
        server.enqueue(
          Server.message({
            blocks: [{ block: { type: "text", text: "alpha beta gamma delta epsilon" }, chunks: 5, chunkDelayMs: 400 }]
          }),
          text("Continuing.")
        )
        const term = yield* Tmux.start(["--cwd", dir], envOf(server))
        yield* term.waitFor(/^> /m)
        term.type("stream something")
        term.send("Enter")
        yield* term.waitFor(/alpha beta/)
        term.send("Escape")
        yield* term.waitFor(/stopped: interrupted[\s\S]*^> $/m)
        const kept = (term.screen().match(/alpha[^\n]*/) ?? [""])[0]
        term.type("go on")
        term.send("Enter")
        yield* term.waitFor(/Continuing\./)
        const messages = body(server, 1).messages
        expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
        const partial = messages[1]!.content[0]!.text!
        expect(partial.startsWith("alpha beta")).toBe(true)
        expect("alpha beta gamma delta epsilon".startsWith(partial)).toBe(true)
        expect(kept).toContain(partial.trim())
        expect(messages[2]!.content).toEqual([
          { type: "text", text: "[Request interrupted by user]" },
          { type: "text", text: "go on" }
        ])
        term.send("C-d")
      }),
    90_000
  )

  it.scoped(
    "a suggestion wider than the terminal is cut to one line; Enter leaves it, Tab accepts it",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempDir()
        const long =
          "Now write a very long and detailed plan covering every module, every test and every file we touched"
        server.enqueue(text("Hello."), text(long), text("Planned."), text("NONE"))
        const term = yield* Tmux.start(
          ["--cwd", dir],
          envOf(server, { SWITCHYARD_SUGGESTIONS: "1" }),
          { width: 60, height: 30 }
        )
        yield* term.waitFor(/^> /m)
        term.type("hi")
        term.send("Enter")
        yield* term.waitFor(/Hello\./)
        const screen = yield* term.waitFor(/^> Now write[^\n]*…$/m)
        const line = screen.split("\n").find((l) => l.startsWith("> Now write"))!
        expect(line.length).toBeLessThanOrEqual(60)
        // The next screen line is not the rest of the suggestion.
        expect(screen).not.toMatch(/^every file we touched/m)
        // Enter on the empty line leaves the suggestion where it is; Tab accepts it.
        // The speculation is done once the next suggestion has been asked for (the status is cut off).
        yield* (yield* server.request(3)).settled
        term.send("Enter")
        const still = yield* term.waitFor(/^> Now write[^\n]*…$/m)
        expect(still.match(/^> Now write/gm)).toHaveLength(1)
        term.send("Tab")
        yield* term.waitFor(/Planned\.[\s\S]*accepted speculation/)
        // The first turn's prompt, the suggestion, the speculation, the next suggestion: nothing sent twice.
        expect(server.requests).toHaveLength(4)
        term.send("C-d")
      }),
    90_000
  )
})
