/**
 * `switchyard run -p` as Claude Code's headless users script it (issue 13):
 * the json result object and the stream-json lines field by field, usage
 * equal to what the server reported, the price, exit codes, stream-json
 * input, the system prompt and permission flags, and API failures — all
 * through the CLI as a child process against the local Messages server.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tempDir = (files: Record<string, string> = {}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-headless-"))
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

const envFor = (server: Server.MessagesServer, home = tempDir()) => ({
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: server.url,
  SWITCHYARD_HOME: home,
  SWITCHYARD_MODEL: undefined,
  ANTHROPIC_MODEL: undefined
})

interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
}

/**
 * A response whose `message_start` and `message_delta` report usage as the
 * API does: the start with the input side and 1 output token, the delta the
 * final (cumulative) output count.
 */
const withUsage = (turn: Parameters<typeof Server.messageEvents>[0], usage: Usage): Server.ScriptedResponse =>
  Server.events(Server.messageEvents(turn).map((sse) => {
    const data = sse.data as { type: string; message?: Record<string, unknown>; usage?: unknown }
    if (data.type === "message_start") {
      return { ...sse, data: { ...data, message: { ...data.message, usage: { ...usage, output_tokens: 1 } } } }
    }
    if (data.type === "message_delta") return { ...sse, data: { ...data, usage: { output_tokens: usage.output_tokens } } }
    return sse
  }))

const text = (t: string) => ({ blocks: [{ block: { type: "text" as const, text: t } }] })
const toolCall = (id: string, name: string, input: unknown) => ({
  blocks: [{ block: { type: "tool_use" as const, id, name, input } }]
})

const resultKeys = [
  "type",
  "subtype",
  "is_error",
  "result",
  "session_id",
  "num_turns",
  "duration_ms",
  "duration_api_ms",
  "total_cost_usd",
  "usage",
  "permission_denials"
]

type Body = { system?: string; messages: ReadonlyArray<{ role: string; content: unknown }> }
const body = (server: Server.MessagesServer, i: number) => server.requests[i]!.body as Body

describe("run -p: the headless protocol", () => {
  it.scoped("json: one result object with exactly Claude Code's fields; usage counted once per response; the price", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "notes.md": "remember the milk\n" })
      const first = { input_tokens: 100, output_tokens: 57, cache_creation_input_tokens: 20, cache_read_input_tokens: 30 }
      const second = { input_tokens: 180, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 120 }
      server.enqueue(
        withUsage(toolCall("toolu_1", "Read", { file_path: "notes.md" }), first),
        withUsage(text("It says: remember the milk."), second)
      )
      const home = tempDir()
      const result = yield* Effect.promise(() =>
        runCli(["-p", "What does notes.md say?", "--cwd", dir, "--output-format", "json", "--model", "claude-sonnet-4-6"], {
          env: envFor(server, home)
        })
      )
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(result.lines).toHaveLength(1)
      const json = JSON.parse(result.stdout) as Record<string, unknown>
      expect(Object.keys(json)).toEqual(resultKeys)
      expect(json).toMatchObject({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "It says: remember the milk.",
        num_turns: 2,
        permission_denials: []
      })
      const usage = {
        input_tokens: 280,
        output_tokens: 69,
        cache_creation_input_tokens: 20,
        cache_read_input_tokens: 150
      }
      expect(json["usage"]).toEqual(usage)
      // Sonnet: $3 in, $15 out per million; cache writes 1.25×, reads 0.1× the input price.
      const expected = (280 * 3 + 69 * 15 + 20 * 3.75 + 150 * 0.3) / 1e6
      expect(json["total_cost_usd"]).toBeCloseTo(expected, 9)
      expect(typeof json["duration_ms"]).toBe("number")
      expect(json["duration_api_ms"] as number).toBeGreaterThanOrEqual(0)
      expect(json["duration_api_ms"] as number).toBeLessThanOrEqual(json["duration_ms"] as number)
      // One Messages request per model turn, nothing else (no title or token-counting calls).
      expect(server.requests.map((r) => r.path.split("?")[0])).toEqual(["/v1/messages", "/v1/messages"])
      // The session id names the transcript.
      const projects = path.join(home, "projects")
      const files = fs.readdirSync(projects).flatMap((d) => fs.readdirSync(path.join(projects, d)))
      expect(files).toEqual([`${json["session_id"]}.jsonl`])
    }))

  it.scoped("a denied call is listed with its input and is not fatal (exit 0)", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "f.txt": "one\n" })
      const input = { command: "rm f.txt" }
      server.enqueue(Server.message(toolCall("toolu_rm", "Bash", input)), Server.message(text("I could not delete it.")))
      const result = yield* Effect.promise(() =>
        runCli(["run", "-p", "delete f.txt", "--cwd", dir, "--output-format", "json", "--model", "claude-test"], { env: envFor(server) })
      )
      expect(result.code).toBe(0)
      const json = JSON.parse(result.stdout)
      expect(json.subtype).toBe("success")
      expect(json.permission_denials).toEqual([{ tool_name: "Bash", tool_use_id: "toolu_rm", tool_input: input }])
      expect(fs.readFileSync(path.join(dir, "f.txt"), "utf8")).toBe("one\n")
      // An unknown model has no price: 0, and a warning on stderr.
      expect(json.total_cost_usd).toBe(0)
      expect(result.stderr).toMatch(/warning: no price known for the model .+; total_cost_usd is 0/)
    }))

  it.scoped("stream-json: system/init first, assistant and user messages, the result last; dispatch events only with --verbose", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "a.txt": "alpha\n" })
      const script = () => [Server.message(toolCall("toolu_r", "Read", { file_path: "a.txt" })), Server.message(text("Alpha."))]
      server.enqueue(...script())
      const plain = yield* Effect.promise(() =>
        runCli(["run", "-p", "read a.txt", "--cwd", dir, "--output-format", "stream-json", "--model", "claude-haiku-4-5"], {
          env: envFor(server)
        })
      )
      expect(plain.code).toBe(0)
      const lines = jsonLines(plain)
      expect(lines.map((l) => l["type"])).toEqual(["system", "assistant", "user", "assistant", "result"])
      const init = lines[0]!
      expect(Object.keys(init)).toEqual([
        "type", "subtype", "session_id", "cwd", "model", "permissionMode", "tools", "mcp_servers", "sandbox"
      ])
      // The sandbox is off by default; whether it could run here is bubblewrap's to say.
      expect(init["sandbox"]).toMatchObject({ enabled: false, available: expect.any(Boolean) })
      expect(init).toMatchObject({ subtype: "init", cwd: fs.realpathSync(dir), model: "claude-haiku-4-5", permissionMode: "default", mcp_servers: [] })
      expect(init["tools"]).toEqual(expect.arrayContaining(["Read", "Bash", "Edit"]))
      const sessionId = init["session_id"]
      for (const line of lines) expect(line["session_id"]).toBe(sessionId)
      expect(lines[1]).toEqual({
        type: "assistant",
        message: { role: "assistant", content: [{ type: "tool_use", id: "toolu_r", name: "Read", input: { file_path: "a.txt" } }] },
        session_id: sessionId
      })
      const user = lines[2]!["message"] as { role: string; content: ReadonlyArray<Record<string, unknown>> }
      expect(user.role).toBe("user")
      expect(user.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_r" })
      expect(Object.keys(lines[4]!)).toEqual(resultKeys)
      expect(lines[4]).toMatchObject({ subtype: "success", result: "Alpha.", num_turns: 2 })
      // What the stream says was sent is what the server got.
      expect(body(server, 1).messages.slice(1)).toEqual([lines[1]!["message"], lines[2]!["message"]])

      server.enqueue(...script())
      const verbose = yield* Effect.promise(() =>
        runCli(["run", "-p", "read a.txt", "--cwd", dir, "--output-format", "stream-json", "--verbose"], { env: envFor(server) })
      )
      const types = jsonLines(verbose).map((l) => l["type"])
      expect(types[0]).toBe("system")
      expect(types.at(-1)).toBe("result")
      expect(types).toContain("started")
      expect(types.filter((t) => t === "result")).toHaveLength(1)
    }))

  it.scoped("the turn limit: error_max_turns, exit 1; an API error: error_during_execution, exit 1", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir({ "a.txt": "alpha\n" })
      server.enqueue(Server.message(toolCall("toolu_r", "Read", { file_path: "a.txt" })))
      const limited = yield* Effect.promise(() =>
        runCli(["-p", "read", "--cwd", dir, "--output-format", "json", "--max-turns", "1"], { env: envFor(server) })
      )
      expect(limited.code).toBe(1)
      expect(JSON.parse(limited.stdout)).toMatchObject({ subtype: "error_max_turns", is_error: true, num_turns: 1 })
      server.enqueue(Server.httpError(400, "invalid_request_error", "messages: bad"))
      const failed = yield* Effect.promise(() =>
        runCli(["-p", "hello", "--cwd", dir, "--output-format", "json"], { env: envFor(server) })
      )
      expect(failed.code).toBe(1)
      expect(JSON.parse(failed.stdout)).toMatchObject({ subtype: "error_during_execution", is_error: true })
      expect(failed.stderr).toContain("invalid_request_error")
    }))

  it.scoped("--input-format stream-json: one turn per stdin line in one session", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.message(text("First answer.")), Server.message(text("Second answer.")))
      const input = [
        JSON.stringify({ type: "user", message: { role: "user", content: "first question" } }),
        JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text: "second question" }] } })
      ].join("\n") + "\n"
      const result = yield* Effect.promise(() =>
        runCli(["-p", "--input-format", "stream-json", "--output-format", "stream-json"], { env: envFor(server), input })
      )
      expect(result.code).toBe(0)
      const lines = jsonLines(result)
      expect(lines.map((l) => l["type"])).toEqual(["system", "assistant", "result", "assistant", "result"])
      expect(lines.filter((l) => l["type"] === "result").map((l) => l["result"])).toEqual(["First answer.", "Second answer."])
      expect(body(server, 1).messages).toEqual([
        { role: "user", content: [{ type: "text", text: "first question" }] },
        { role: "assistant", content: [{ type: "text", text: "First answer." }] },
        { role: "user", content: [{ type: "text", text: "second question" }] }
      ])
      const bad = yield* Effect.promise(() =>
        runCli(["-p", "--input-format", "stream-json", "--output-format", "stream-json"], {
          env: envFor(server),
          input: "{\"type\":\"assistant\"}\n"
        })
      )
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("stdin line 1")
    }))

  it.scoped("--append-system-prompt, --system-prompt, --add-dir and --dangerously-skip-permissions", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      const other = tempDir({ "outside.txt": "from the other directory\n" })
      const outside = path.join(other, "outside.txt")
      server.enqueue(Server.message(toolCall("toolu_o", "Read", { file_path: outside })), Server.message(text("Read it.")))
      const added = yield* Effect.promise(() =>
        runCli(["-p", "read it", "--cwd", dir, "--add-dir", other, "--append-system-prompt", "Answer in French."], {
          env: envFor(server)
        })
      )
      expect(added.code).toBe(0)
      expect(body(server, 0).system).toMatch(/working directory[\s\S]*\n\nAnswer in French\.$/)
      expect(JSON.stringify(body(server, 1).messages.at(-1))).toContain("from the other directory")

      server.enqueue(Server.message(toolCall("toolu_o2", "Read", { file_path: outside })), Server.message(text("Denied.")))
      yield* Effect.promise(() => runCli(["-p", "read it", "--cwd", dir, "--system-prompt", "Only this."], { env: envFor(server) }))
      expect(body(server, 2).system).toBe("Only this.")
      expect(JSON.stringify(body(server, 3).messages.at(-1))).not.toContain("from the other directory")

      server.enqueue(Server.message(toolCall("toolu_b", "Bash", { command: "touch made.txt" })), Server.message(text("Made.")))
      const bypass = yield* Effect.promise(() =>
        runCli(["-p", "make it", "--cwd", dir, "--dangerously-skip-permissions"], { env: envFor(server) })
      )
      expect(bypass.code).toBe(0)
      expect(fs.existsSync(path.join(dir, "made.txt"))).toBe(true)
    }))
})

describe("run -p: API failures", () => {
  it.scoped("a retry is announced on stderr with the status, the attempt and the wait", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.overloaded(), Server.message(text("Fine now.")))
      const result = yield* Effect.promise(() => runCli(["-p", "hello"], { env: envFor(server) }))
      expect(result.code).toBe(0)
      expect(result.stdout.trim()).toBe("Fine now.")
      expect(result.stderr).toMatch(/^switchyard: API 529 overloaded .*retrying, attempt 2, in \d+\.\d s$/m)
      expect(server.requests).toHaveLength(2)
    }))

  it.scoped("401 and 403 are never retried, even when the response says to, and point at ANTHROPIC_API_KEY", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.httpError(401, "authentication_error", "invalid x-api-key", { "x-should-retry": "true" }))
      const result = yield* Effect.promise(() => runCli(["-p", "hello"], { env: envFor(server) }))
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("check ANTHROPIC_API_KEY")
      expect(result.stderr).not.toContain("retrying")
      server.enqueue(Server.httpError(403, "permission_error", "forbidden"))
      const forbidden = yield* Effect.promise(() => runCli(["-p", "hello"], { env: envFor(server) }))
      expect(forbidden.code).toBe(1)
      expect(forbidden.stderr).toContain("check ANTHROPIC_API_KEY")
      expect(server.requests).toHaveLength(2)
    }))

  it.scoped("an unreachable endpoint is named and given up after a few connection failures", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.map(Server.start(), (server) => server.url))
      const result = yield* Effect.promise(() =>
        runCli(["-p", "hello"], {
          env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url, SWITCHYARD_HOME: tempDir() }
        })
      )
      expect(result.code).toBe(1)
      const retries = result.stderr.split("\n").filter((l) => l.includes("retrying"))
      expect(retries).toHaveLength(2)
      expect(result.stderr.trim().split("\n").at(-1)).toMatch(new RegExp(`cannot reach the Anthropic API.* at ${url.replace(/[.]/g, "\\.")}`))
    }))
})
