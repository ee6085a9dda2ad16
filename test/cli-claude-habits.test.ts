/**
 * Claude Code's habits for scripts (issue 24, items 1, 3 and 4), through the
 * CLI as a child process against the local Messages server, judged by what
 * the server received, the files the tools left and the lines printed:
 * piped stdin with a prompt, variadic list options, model aliases,
 * ANTHROPIC_AUTH_TOKEN, `-v`, a misspelt command with arguments, the
 * stream-json protocol field for field (stream_event lines, sub-agent
 * messages), and the flags --max-budget-usd, --fallback-model, --json-schema,
 * --tools, --setting-sources, --permission-prompt-tool and --fork-session.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tempDir = (files: Record<string, string> = {}) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-habits-")))
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), content)
  }
  return dir
}

const envFor = (server: Server.MessagesServer, home = tempDir()) => ({
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_AUTH_TOKEN: undefined,
  ANTHROPIC_BASE_URL: server.url,
  SWITCHYARD_HOME: home,
  SWITCHYARD_MODEL: undefined,
  ANTHROPIC_MODEL: undefined
})

const text = (t: string, usage?: Record<string, number>) =>
  Server.message({ blocks: [{ block: { type: "text" as const, text: t } }], ...(usage === undefined ? {} : { usage }) })
const toolCall = (id: string, name: string, input: unknown, usage?: Record<string, number>) =>
  Server.message({
    blocks: [{ block: { type: "tool_use" as const, id, name, input } }],
    ...(usage === undefined ? {} : { usage })
  })

type Body = {
  model: string
  system?: string
  messages: ReadonlyArray<{ role: string; content: ReadonlyArray<{ type: string; text?: string; content?: unknown }> }>
  tools?: ReadonlyArray<{ name: string; input_schema?: unknown }>
}
const body = (server: Server.MessagesServer, i: number) => server.requests[i]!.body as Body
const lastResult = (server: Server.MessagesServer, i: number): string =>
  JSON.stringify(body(server, i).messages.at(-1)!.content)

describe("input (issue 24, 1)", () => {
  it.scoped("piped stdin and a prompt are both sent, stdin first", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(text("Looks fine."))
      const diff = "diff --git a/x b/x\n+added line\n"
      const result = yield* Effect.promise(() =>
        runCli(["-p", "review this"], { env: envFor(server), input: diff, cwd: tempDir() })
      )
      expect(result.code).toBe(0)
      const first = body(server, 0).messages[0]!
      expect(first.role).toBe("user")
      const sent = first.content.flatMap((b) => (b.type === "text" ? [b.text!] : [])).join("")
      expect(sent).toContain("diff --git a/x b/x\n+added line")
      expect(sent.indexOf("+added line")).toBeLessThan(sent.indexOf("review this"))
    }))

  it.scoped("--allowedTools A B is variadic, with the prompt before it, as in Claude Code", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "notes.md": "the notes\n" })
      server.enqueue(
        toolCall("toolu_t", "Bash", { command: "touch made.txt" }),
        toolCall("toolu_r", "Read", { file_path: "notes.md" }),
        text("Done.")
      )
      const result = yield* Effect.promise(() =>
        runCli(["-p", "make it", "--allowedTools", "Bash(touch *)", "Read", "--output-format", "json"], {
          env: envFor(server),
          cwd: dir
        })
      )
      expect(result.code).toBe(0)
      // The prompt is the prompt; both rules allowed their calls (the file exists, the notes were read).
      expect(JSON.stringify(body(server, 0).messages[0])).toContain("make it")
      expect(JSON.stringify(body(server, 0).messages[0])).not.toContain("Read")
      expect(fs.existsSync(path.join(dir, "made.txt"))).toBe(true)
      expect(lastResult(server, 2)).toContain("the notes")
      expect(JSON.parse(result.stdout).permission_denials).toEqual([])

      // A prompt after the list is one of its values: the run has no prompt and says where to put it.
      const swallowed = yield* Effect.promise(() =>
        runCli(["-p", "--allowedTools", "Read", "fix it"], { env: envFor(server), cwd: dir })
      )
      expect(swallowed.code).toBe(2)
      expect(swallowed.stderr).toContain("put PROMPT before it")
      expect(server.requests).toHaveLength(3)
    }))

  it.scoped("--add-dir A B and --mcp-config a.json b.json are variadic too, with the prompt before them", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      const first = tempDir()
      const second = tempDir({ "far.txt": "far away\n" })
      // Servers that exit at once: the init line names each configured one with its state.
      const config = (name: string) => {
        const file = path.join(tempDir(), `${name}.json`)
        fs.writeFileSync(file, JSON.stringify({ mcpServers: { [name]: { command: "false" } } }))
        return file
      }
      server.enqueue(toolCall("toolu_f", "Read", { file_path: path.join(second, "far.txt") }), text("Read it."))
      const result = yield* Effect.promise(() =>
        runCli([
          "-p",
          "read far.txt",
          "--add-dir",
          first,
          second,
          "--mcp-config",
          config("alpha"),
          config("beta"),
          "--output-format",
          "stream-json"
        ], { env: envFor(server), cwd: dir })
      )
      expect(result.code).toBe(0)
      expect(JSON.stringify(body(server, 0).messages[0])).toContain("read far.txt")
      // The second directory is a working directory: the read outside the cwd ran without a prompt.
      expect(lastResult(server, 1)).toContain("far away")
      const init = jsonLines(result)[0]!
      const servers = (init["mcp_servers"] as ReadonlyArray<{ name: string }>).map((s) => s.name)
      expect(servers).toEqual(expect.arrayContaining(["alpha", "beta"]))
    }))

  it.scoped("model aliases resolve from one table; [1m] sends the long-context beta; -v prints the version", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(text("a"), text("b"), text("c"))
      const env = envFor(server)
      const sonnet = yield* Effect.promise(() => runCli(["-p", "hi", "--model", "sonnet"], { env }))
      expect(sonnet.code).toBe(0)
      expect(body(server, 0).model).toBe("claude-sonnet-5-5")
      yield* Effect.promise(() => runCli(["-p", "hi", "--model", "opus[1m]"], { env }))
      expect(body(server, 1).model).toBe("claude-opus-5-5")
      expect(String(server.requests[1]!.headers["anthropic-beta"])).toContain("context-1m")
      // Claude Code's override variable for an alias.
      yield* Effect.promise(() =>
        runCli(["-p", "hi", "--model", "haiku"], { env: { ...env, ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-haiku-4-5" } })
      )
      expect(body(server, 2).model).toBe("claude-haiku-4-5")
      expect(server.requests[2]!.headers["anthropic-beta"]).toBeUndefined()

      const version = yield* Effect.promise(() => runCli(["-v"]))
      expect(version.code).toBe(0)
      expect(version.stdout.trim()).toBe(
        JSON.parse(fs.readFileSync(path.join(root, "packages/cli/package.json"), "utf8")).version
      )
    }))

  it.scoped("ANTHROPIC_AUTH_TOKEN is sent as a bearer token, and wins over ANTHROPIC_API_KEY", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(text("one"), text("two"))
      const env = { ...envFor(server), ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: "gateway-token" }
      const only = yield* Effect.promise(() => runCli(["-p", "hi", "--output-format", "stream-json"], { env }))
      expect(only.code).toBe(0)
      expect(server.requests[0]!.headers["authorization"]).toBe("Bearer gateway-token")
      expect(jsonLines(only)[0]).toMatchObject({ type: "system", apiKeySource: "none" })
      yield* Effect.promise(() => runCli(["-p", "hi"], { env: { ...env, ANTHROPIC_API_KEY: "sk-other" } }))
      expect(server.requests[1]!.headers["authorization"]).toBe("Bearer gateway-token")
    }))

  it.scoped("a misspelt command with arguments is a usage error with a suggestion; nothing reaches the model", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const result = yield* Effect.promise(() => runCli(["dispach", "calls.json"], { env: envFor(server) }))
      expect(result.code).toBe(2)
      expect(result.stderr.trim()).toMatch(/^switchyard: unknown command `dispach`; did you mean `dispatch`\?/)
      expect(result.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1)
      expect(server.requests).toHaveLength(0)
    }))
})

describe("the headless protocol (issue 24, 3)", () => {
  it.scoped("--include-partial-messages: the raw stream events, before the assistant line of their response", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const events = Server.messageEvents({ blocks: [{ block: { type: "text", text: "Hello there." }, chunks: 3 }] })
      server.enqueue(Server.events(events))
      const result = yield* Effect.promise(() =>
        runCli(["-p", "hi", "--output-format", "stream-json", "--include-partial-messages"], { env: envFor(server) })
      )
      expect(result.code).toBe(0)
      const lines = jsonLines(result)
      const streamed = lines.filter((l) => l["type"] === "stream_event")
      // Every event the API sent but the pings, as sent.
      expect(streamed.map((l) => l["event"])).toEqual(
        events.map((e) => e.data).filter((d) => (d as { type: string }).type !== "ping")
      )
      for (const line of streamed) {
        expect(Object.keys(line)).toEqual(["type", "event", "parent_tool_use_id", "uuid", "session_id"])
        expect(line["parent_tool_use_id"]).toBeNull()
        expect(line["session_id"]).toBe(lines[0]!["session_id"])
      }
      const types = lines.map((l) => l["type"])
      expect(types.lastIndexOf("stream_event")).toBeLessThan(types.indexOf("assistant"))
      // Without the flag, none.
      server.enqueue(Server.events(events))
      const plain = yield* Effect.promise(() =>
        runCli(["-p", "hi", "--output-format", "stream-json"], { env: envFor(server) })
      )
      expect(jsonLines(plain).map((l) => l["type"])).toEqual(["system", "assistant", "result"])
    }))

  it.scoped("a sub-agent's messages carry the Agent call's id in parent_tool_use_id, after the call's line", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(
        toolCall("toolu_agent", "Agent", { description: "look", prompt: "Say what is here." }),
        text("Nothing much is here."),
        text("The agent found nothing much.")
      )
      const result = yield* Effect.promise(() =>
        runCli(["-p", "delegate", "--output-format", "stream-json"], { env: envFor(server), cwd: tempDir() })
      )
      expect(result.code).toBe(0)
      const lines = jsonLines(result)
      expect(lines.map((l) => [l["type"], l["parent_tool_use_id"] ?? null])).toEqual([
        ["system", null],
        ["assistant", null],
        ["assistant", "toolu_agent"],
        ["user", null],
        ["assistant", null],
        ["result", null]
      ])
      const sub = lines[2]!["message"] as { content: ReadonlyArray<{ text?: string }>; model: string }
      expect(sub.content[0]!.text).toBe("Nothing much is here.")
      expect(lines.at(-1)!["result"]).toBe("The agent found nothing much.")
    }))
})

describe("flags (issue 24, 4)", () => {
  it.scoped("--max-budget-usd: once the cost reaches the limit no further request is sent; error_max_budget_usd, exit 1", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      // 1M input tokens on Sonnet: $3.
      server.enqueue(
        toolCall("toolu_w", "Write", { file_path: "out.txt", content: "x\n" }, {
          input_tokens: 1_000_000,
          output_tokens: 10
        }),
        text("never sent")
      )
      const result = yield* Effect.promise(() =>
        runCli(
          [
            "-p",
            "go",
            "--model",
            "claude-sonnet-4-6",
            "--max-budget-usd",
            "1",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits"
          ],
          { env: envFor(server), cwd: dir }
        )
      )
      expect(result.code).toBe(1)
      expect(server.requests).toHaveLength(1)
      // The response's tool still ran; only the next request was not sent.
      expect(fs.readFileSync(path.join(dir, "out.txt"), "utf8")).toBe("x\n")
      const json = JSON.parse(result.stdout)
      expect(json).toMatchObject({ type: "result", subtype: "error_max_budget_usd", is_error: true })
      expect(json.total_cost_usd).toBeGreaterThanOrEqual(1)
      expect(json.errors).toEqual([expect.stringContaining("budget")])
      const bad = yield* Effect.promise(() =>
        runCli(["-p", "go", "--max-budget-usd", "cheap"], { env: envFor(server) })
      )
      expect(bad.code).toBe(2)
    }))

  it.scoped("--fallback-model: after three overloaded attempts the fallback answers, and keeps answering", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "a.txt": "alpha\n" })
      server.enqueue(
        Server.overloaded(),
        Server.overloaded(),
        Server.overloaded(),
        toolCall("toolu_r", "Read", { file_path: "a.txt" }),
        text("Alpha.")
      )
      const result = yield* Effect.promise(() =>
        runCli(["-p", "read", "--model", "opus", "--fallback-model", "sonnet", "--output-format", "json"], {
          env: envFor(server),
          cwd: dir
        })
      )
      expect(result.code).toBe(0)
      expect(server.requests.map((r) => (r.body as Body).model)).toEqual([
        "claude-opus-5-5",
        "claude-opus-5-5",
        "claude-opus-5-5",
        "claude-sonnet-5-5",
        "claude-sonnet-5-5"
      ])
      expect(result.stderr).toMatch(/claude-opus-5-5 is overloaded; switched to the fallback model claude-sonnet-5-5/)
      const json = JSON.parse(result.stdout)
      expect(json.result).toBe("Alpha.")
      expect(Object.keys(json.modelUsage)).toEqual(["claude-sonnet-5-5"])
    }))

  it.scoped("--json-schema: the answer comes through StructuredOutput, validated; without one, reminders then an error", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const schema = JSON.stringify({
        type: "object",
        properties: { city: { type: "string" }, temperature: { type: "number" } },
        required: ["city", "temperature"]
      })
      server.enqueue(
        toolCall("toolu_bad", "StructuredOutput", { city: "Oslo" }),
        toolCall("toolu_good", "StructuredOutput", { city: "Oslo", temperature: 4 }),
        text("Oslo is at 4 degrees.")
      )
      const result = yield* Effect.promise(() =>
        runCli(["-p", "weather?", "--json-schema", schema, "--output-format", "json"], { env: envFor(server) })
      )
      expect(result.code).toBe(0)
      const tool = body(server, 0).tools!.find((t) => t.name === "StructuredOutput")!
      expect(tool.input_schema).toEqual(JSON.parse(schema))
      // The invalid answer was an error result naming what was missing; the model tried again.
      expect(lastResult(server, 1)).toContain("temperature")
      expect(lastResult(server, 1)).toContain("\"is_error\":true")
      const json = JSON.parse(result.stdout)
      expect(json).toMatchObject({ subtype: "success", structured_output: { city: "Oslo", temperature: 4 } })

      server.enqueue(text("It is cold."), text("Still cold."), text("Cold."), text("Very cold."))
      const missing = yield* Effect.promise(() =>
        runCli(["-p", "weather?", "--json-schema", schema, "--output-format", "json"], { env: envFor(server) })
      )
      expect(missing.code).toBe(1)
      // One answer and three reminders, then it gives up.
      expect(server.requests).toHaveLength(3 + 4)
      expect(JSON.stringify(body(server, 4).messages.at(-1))).toContain("StructuredOutput")
      expect(JSON.parse(missing.stdout)).toMatchObject({
        subtype: "error_max_structured_output_retries",
        is_error: true
      })
      const invalid = yield* Effect.promise(() =>
        runCli(["-p", "x", "--json-schema", "{not json"], { env: envFor(server) })
      )
      expect(invalid.code).toBe(2)
      expect(invalid.stderr).toContain("--json-schema is not valid JSON")
    }))

  it.scoped("--tools: only the built-ins named exist; a call to another is no such tool", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "a.txt": "alpha\n" })
      server.enqueue(toolCall("toolu_b", "Bash", { command: "touch nope.txt" }), text("I could not."))
      const result = yield* Effect.promise(() =>
        runCli(
          ["-p", "go", "--tools", "Read,Grep", "--dangerously-skip-permissions", "--output-format", "stream-json"],
          {
            env: envFor(server),
            cwd: dir
          }
        )
      )
      expect(result.code).toBe(0)
      expect(body(server, 0).tools!.map((t) => t.name).sort()).toEqual(["Grep", "Read"])
      expect(jsonLines(result)[0]!["tools"]).toEqual(["Grep", "Read"])
      expect(fs.existsSync(path.join(dir, "nope.txt"))).toBe(false)
      expect(lastResult(server, 1)).toContain("No such tool available: Bash")
      const none = yield* Effect.promise(() => runCli(["tools", "list", "--json", "--tools", ""], { cwd: dir }))
      expect(JSON.parse(none.stdout)).toEqual([])
      const typo = yield* Effect.promise(() => runCli(["tools", "list", "--tools", "Raed"], { cwd: dir }))
      expect(typo.code).toBe(2)
      expect(typo.stderr).toContain("did you mean Read?")
    }))

  it.scoped("--setting-sources: a source left out is not read (its deny rule does not apply)", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const home = tempDir({ "settings.json": JSON.stringify({ permissions: { deny: ["Read"] } }) })
      const dir = tempDir({ "a.txt": "alpha\n" })
      const script = () => [toolCall("toolu_r", "Read", { file_path: "a.txt" }), text("ok")]
      server.enqueue(...script())
      yield* Effect.promise(() => runCli(["-p", "read"], { env: envFor(server, home), cwd: dir }))
      expect(lastResult(server, 1)).not.toContain("alpha")
      server.enqueue(...script())
      const project = yield* Effect.promise(() =>
        runCli(["-p", "read", "--setting-sources", "project,local"], { env: envFor(server, home), cwd: dir })
      )
      expect(project.code).toBe(0)
      expect(lastResult(server, 3)).toContain("alpha")
      const bad = yield* Effect.promise(() =>
        runCli(["-p", "read", "--setting-sources", "team"], { env: envFor(server, home) })
      )
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("\"team\" is not a settings source")
    }))

  it.scoped("--permission-prompt-tool: an MCP tool answers, with Claude Code's input and output shapes", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      const log = path.join(dir, "approvals.jsonl")
      const config = JSON.stringify({
        mcpServers: {
          approval: {
            command: process.execPath,
            args: [path.join(root, "test/fixtures/mcp/approvalServer.mjs")],
            env: { MCP_LOG: log }
          }
        }
      })
      server.enqueue(
        toolCall("toolu_1", "Bash", { command: "echo allowed > allowed.txt" }),
        toolCall("toolu_2", "Bash", { command: "touch refused.txt" }),
        toolCall("toolu_3", "Bash", { command: "touch rewrite-me.txt" }),
        text("Done.")
      )
      const result = yield* Effect.promise(() =>
        runCli(
          [
            "-p",
            "go",
            "--mcp-config",
            config,
            "--permission-prompt-tool",
            "mcp__approval__approve",
            "--output-format",
            "json"
          ],
          { env: envFor(server), cwd: dir }
        )
      )
      expect(result.code).toBe(0)
      expect(fs.readFileSync(path.join(dir, "allowed.txt"), "utf8")).toBe("allowed\n")
      expect(fs.existsSync(path.join(dir, "refused.txt"))).toBe(false)
      // updatedInput replaced the command that ran.
      expect(fs.readFileSync(path.join(dir, "rewritten.txt"), "utf8")).toBe("rewritten\n")
      expect(fs.existsSync(path.join(dir, "rewrite-me.txt"))).toBe(false)
      expect(lastResult(server, 2)).toContain("The approver refused Bash: touch refused.txt")
      const asked = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
      expect(asked[0]).toEqual({
        tool_name: "Bash",
        input: { command: "echo allowed > allowed.txt" },
        tool_use_id: "toolu_1"
      })
      expect(asked).toHaveLength(3)
      expect(JSON.parse(result.stdout).permission_denials).toEqual([
        { tool_name: "Bash", tool_use_id: "toolu_2", tool_input: { command: "touch refused.txt" } }
      ])
    }))

  it.scoped("--fork-session: the resumed conversation goes on in a new session; the old transcript is untouched", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const home = tempDir()
      const dir = tempDir()
      server.enqueue(text("First answer."), text("Forked answer."))
      const first = yield* Effect.promise(() =>
        runCli(["-p", "first", "--output-format", "json"], { env: envFor(server, home), cwd: dir })
      )
      const firstId = JSON.parse(first.stdout).session_id as string
      const projects = path.join(home, "projects")
      const sessionDir = path.join(projects, fs.readdirSync(projects)[0]!)
      const before = fs.readFileSync(path.join(sessionDir, `${firstId}.jsonl`), "utf8")
      const forked = yield* Effect.promise(() =>
        runCli(["-p", "second", "--continue", "--fork-session", "--output-format", "json"], {
          env: envFor(server, home),
          cwd: dir
        })
      )
      expect(forked.code).toBe(0)
      const forkId = JSON.parse(forked.stdout).session_id as string
      expect(forkId).not.toBe(firstId)
      expect(fs.readFileSync(path.join(sessionDir, `${firstId}.jsonl`), "utf8")).toBe(before)
      const copy = fs.readFileSync(path.join(sessionDir, `${forkId}.jsonl`), "utf8")
      expect(copy).toContain("First answer.")
      expect(copy).toContain("Forked answer.")
      // The model saw the old conversation.
      expect(JSON.stringify(body(server, 1).messages)).toContain("First answer.")
      const alone = yield* Effect.promise(() =>
        runCli(["-p", "x", "--fork-session"], { env: envFor(server, home), cwd: dir })
      )
      expect(alone.code).toBe(2)
    }))
})
