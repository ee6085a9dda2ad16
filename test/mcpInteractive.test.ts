/**
 * MCP in a real terminal (tmux), issue 21: the one-time question about a
 * project's new `.mcp.json` server (remembered, so a later run without a
 * terminal starts it; "use all" answers for every server), `/mcp`, a server
 * prompt as the slash command `/mcp__server__prompt ARGS`, and an
 * `@server:uri` mention attaching the resource — judged by the recording
 * server's marker file and by what the scripted Messages server received.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"
import * as Tmux from "./support/tmux.js"

const RECORDING = Path.join(root, "test/fixtures/mcp/recordingServer.mjs")

const temp = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))

const project = (names: ReadonlyArray<string>) => {
  const dir = temp("switchyard-mcp-tty-")
  const marker = Path.join(dir, "started.log")
  Fs.writeFileSync(
    Path.join(dir, ".mcp.json"),
    JSON.stringify({
      mcpServers: Object.fromEntries(
        names.map((name) => [name, { command: process.execPath, args: [RECORDING, marker, name] }])
      )
    })
  )
  return { dir, marker, home: temp("switchyard-mcp-tty-home-") }
}

const started = (marker: string): ReadonlyArray<string> =>
  Fs.existsSync(marker)
    ? Fs.readFileSync(marker, "utf8").split("\n").filter((l) => l.startsWith("started ")).map((l) => l.split(" ")[2]!)
    : []

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text" as const, text: t } }] })

type Body = { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<{ type: string; text?: string }> }> }
const lastUserText = (server: Server.MessagesServer) => {
  const body = server.requests.at(-1)!.body as Body
  return body.messages.at(-1)!.content.map((b) => b.text ?? "").join("\n")
}

describe.skipIf(!Tmux.hasTmux)("MCP in a terminal (tmux)", () => {
  it.scoped(
    "asked once about a new .mcp.json server; the answer is remembered for runs without a terminal",
    () =>
      Effect.gen(function*() {
        const p = project(["rec"])
        const term = yield* Tmux.start(["tools", "list", "--cwd", p.dir], { SWITCHYARD_HOME: p.home })
        yield* term.waitFor(
          /New MCP server found in \.mcp\.json: rec[\s\S]*1\. Use this MCP server[\s\S]*Choose 1, 2 or 3/
        )
        expect(started(p.marker)).toEqual([])
        term.type("1")
        term.send("Enter")
        yield* term.waitFor(/mcp__rec__echo/)
        expect(started(p.marker)).toEqual(["rec"])
        const again = yield* Effect.promise(() =>
          runCli(["tools", "list"], { cwd: p.dir, env: { SWITCHYARD_HOME: p.home } })
        )
        expect(again.stdout).toContain("mcp__rec__echo")
        expect(again.stderr).not.toContain("approve")
        expect(started(p.marker)).toEqual(["rec", "rec"])
      }),
    90_000
  )

  it.scoped(
    "\"use all\" approves this server and every later one of the project; \"don't use\" is remembered too",
    () =>
      Effect.gen(function*() {
        const p = project(["one", "two"])
        const term = yield* Tmux.start(["tools", "list", "--cwd", p.dir], { SWITCHYARD_HOME: p.home })
        yield* term.waitFor(/New MCP server found in \.mcp\.json: one/)
        term.type("2")
        term.send("Enter")
        yield* term.waitFor(/mcp__two__echo/)
        expect(term.screen()).not.toContain("New MCP server found in .mcp.json: two")
        expect([...started(p.marker)].sort()).toEqual(["one", "two"])

        const q = project(["no"])
        const declined = yield* Tmux.start(["tools", "list", "--cwd", q.dir], { SWITCHYARD_HOME: q.home })
        yield* declined.waitFor(/New MCP server found in \.mcp\.json: no/)
        declined.type("3")
        declined.send("Enter")
        yield* declined.waitFor(/TaskStop/)
        const later = yield* Effect.promise(() =>
          runCli(["mcp", "list", "--json"], { cwd: q.dir, env: { SWITCHYARD_HOME: q.home } })
        )
        expect(JSON.parse(later.stdout)).toMatchObject([{
          name: "no",
          status: "rejected",
          error: "not used: you chose not to use it"
        }])
        expect(started(q.marker)).toEqual([])
      }),
    90_000
  )

  it.scoped(
    "/mcp, a server prompt as /mcp__rec__review ARGS, and an @rec:uri mention, as the model receives them",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const p = project(["rec"])
        Fs.writeFileSync(Path.join(p.home, "settings.json"), JSON.stringify({ enabledMcpjsonServers: ["rec"] }))
        server.enqueue(text("Reviewed."), text("It says hello."))
        const term = yield* Tmux.start(["--cwd", p.dir], {
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url,
          SWITCHYARD_HOME: p.home
        })
        yield* term.waitFor(/^> $/m)
        term.type("/mcp")
        term.send("Enter")
        yield* term.waitFor(/rec · connected · stdio · 1 tool, prompts: review, resources[\s\S]*^> $/m)
        // Reconnecting starts the server again (a second start in its marker) and it is connected.
        term.type("/mcp reconnect rec")
        term.send("Enter")
        yield* term.waitFor(/> \/mcp reconnect rec\s+rec · connected[\s\S]*^> $/m)
        expect(started(p.marker)).toEqual(["rec", "rec"])
        term.type("/mcp__rec__review")
        term.send("Enter")
        yield* term.waitFor(/Usage: \/mcp__rec__review FILE \(missing file\)[\s\S]*^> $/m)
        expect(server.requests).toHaveLength(0)
        term.type("/mcp__rec__review src/a.ts")
        term.send("Enter")
        yield* term.waitFor(/Reviewed\.[\s\S]*^> $/m)
        expect(lastUserText(server)).toBe("Please review src/a.ts carefully.")
        term.type("what does @rec:note://greeting say?")
        term.send("Enter")
        yield* term.waitFor(/It says hello\.[\s\S]*^> $/m)
        const sent = lastUserText(server)
        expect(sent).toContain("what does @rec:note://greeting say?")
        expect(sent).toContain("hello from rec")
        // The server was asked for exactly that resource.
        expect(Fs.readFileSync(p.marker, "utf8")).toMatch(/"method":"resources\/read".*note:\/\/greeting/)
        term.type("/exit")
        term.send("Enter")
        expect(yield* term.exited()).toBe(true)
      }),
    120_000
  )
})
