/**
 * The interactive session in a real terminal (tmux), issue 13: `switchyard
 * "prompt"` opens it with that first message, API retries show in the
 * session, slash commands never reach the model, the permission dialog takes
 * arrows and Enter and ignores other keys, and `--resume` without an id picks
 * a recent session whose conversation is then sent as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "./support/messagesServer.js"
import * as Tmux from "./support/tmux.js"

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-tty-"))
const text = (t: string) => Server.message({ blocks: [{ block: { type: "text" as const, text: t } }] })
const bash = (id: string, command: string) =>
  Server.message({ blocks: [{ block: { type: "tool_use" as const, id, name: "Bash", input: { command } } }] })

type Body = { model: string; messages: ReadonlyArray<{ role: string; content: unknown }> }
const body = (server: Server.MessagesServer, i: number) => server.requests[i]!.body as Body

describe.skipIf(!Tmux.hasTmux)("interactive session (tmux)", () => {
  it.scoped(
    "a first prompt, a retry notice, slash commands, and the dialog by arrows and Enter",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempDir()
        server.enqueue(Server.overloaded(), text("Hello from the model."))
        const term = yield* Tmux.start(["hello there", "--cwd", dir], {
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url,
          SWITCHYARD_HOME: tempDir()
        })
        yield* term.waitFor(/⟳ API 529 overloaded .*retrying, attempt 2/)
        yield* term.waitFor(/Hello from the model\.[\s\S]*^> $/m)
        expect(body(server, 1).messages).toEqual([{ role: "user", content: [{ type: "text", text: "hello there" }] }])

        term.type("/frobnicate")
        term.send("Enter")
        yield* term.waitFor(/Unknown command \/frobnicate; \/help lists them\. Nothing was sent to the model\./)
        term.type("/stauts")
        term.send("Enter")
        yield* term.waitFor(/Unknown command \/stauts \(did you mean \/status\?\)/)
        term.type("/help")
        term.send("Enter")
        yield* term.waitFor(/\/permissions +The permission mode/)
        term.type("/status")
        term.send("Enter")
        const status = yield* term.waitFor(/^messages: 2$/m)
        expect(status).toMatch(new RegExp(`^directory: ${dir.replace(/[.]/g, "\\.")}$`, "m"))
        term.type("/cost")
        term.send("Enter")
        yield* term.waitFor(/Tokens: \d+ in, \d+ out.* over 1 model turn\./)
        term.type("/permissions")
        term.send("Enter")
        yield* term.waitFor(/^permission mode: default$/m)
        term.type("/model claude-opus-4-6")
        term.send("Enter")
        yield* term.waitFor(/Model: claude-opus-4-6 from the next turn on\./)
        expect(server.requests).toHaveLength(2)

        // The dialog: letters are not answers; Down twice and Enter is "No".
        server.enqueue(bash("toolu_rm", "rm nothing.txt"), text("unused"))
        term.type("remove it")
        term.send("Enter")
        yield* term.waitFor(/❯ 1\. Yes[\s\S]*3\. No, and tell the model/)
        expect(body(server, 2).model).toBe("claude-opus-4-6")
        term.type("banana")
        term.send("Down")
        term.send("Down")
        yield* term.waitFor(/❯ 3\. No/)
        expect(term.screen()).not.toMatch(/What should the model do instead/)
        term.send("Enter")
        yield* term.waitFor(/What should the model do instead\?/)
        term.send("Enter")
        yield* term.waitFor(/denied[\s\S]*^> $/m)
        expect(server.requests).toHaveLength(3)

        term.type("/exit")
        term.send("Enter")
        expect(yield* term.exited()).toBe(true)
      }),
    120_000
  )

  it.scoped(
    "--resume without an id opens a picker of recent sessions; the picked conversation is sent as it was",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempDir()
        const home = tempDir()
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        // An earlier session, recorded by a print-mode run.
        server.enqueue(text("Noted: the cat is called Tom."))
        const { runCli } = yield* Effect.promise(() => import("./support/cli.js"))
        const first = yield* Effect.promise(() => runCli(["-p", "my cat is called Tom", "--cwd", dir], { env }))
        expect(first.code).toBe(0)

        server.enqueue(text("Tom."))
        const term = yield* Tmux.start(["--resume", "--cwd", dir], env)
        yield* term.waitFor(/Resume which session\?[\s\S]*1\. .*2 messages +my cat is called Tom/)
        term.send("1")
        yield* term.waitFor(/resumed session .*: 2 messages/)
        term.type("what is my cat called?")
        term.send("Enter")
        yield* term.waitFor(/^Tom\.\n> $/m)
        expect(body(server, 1).messages).toEqual([
          { role: "user", content: [{ type: "text", text: "my cat is called Tom" }] },
          { role: "assistant", content: [{ type: "text", text: "Noted: the cat is called Tom." }] },
          { role: "user", content: [{ type: "text", text: "what is my cat called?" }] }
        ])
        term.send("C-d")
        expect(yield* term.exited()).toBe(true)
      }),
    120_000
  )
})
