/**
 * Sessions through the CLI (issue 13): every run's transcript as JSON lines
 * under the state dir, `--continue` and `--resume` sending the earlier
 * conversation exactly as it was (checked in the server's received request),
 * `--session-id`, and a conversation interrupted mid-tool resumed with its
 * synthetic result: a run killed with SIGKILL while a tool runs has its
 * assistant message and the finished results in the file already.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Sessions from "@switchyard/cli/Sessions"
import * as Messages from "@switchyard/core/Messages"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tempDir = (files: Record<string, string> = {}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-sessions-"))
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text" as const, text: t } }] })
const read = (id: string, file: string) =>
  Server.message({ blocks: [{ block: { type: "tool_use" as const, id, name: "Read", input: { file_path: file } } }] })

type Message = { readonly role: string; readonly content: unknown }
const messagesOf = (server: Server.MessagesServer, i: number) =>
  (server.requests[i]!.body as { messages: ReadonlyArray<Message> }).messages

const sessionsDir = (home: string, cwd: string) => path.join(home, "projects", cwd.replace(/[^A-Za-z0-9_-]/g, "-"))

const transcript = (file: string) =>
  fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)

describe("sessions", () => {
  it.scoped(
    "a run's transcript, then --continue and --resume send the earlier conversation exactly as it was",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const home = tempDir()
        const dir = tempDir({ "notes.md": "remember the milk\n" })
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        const cli = (args: ReadonlyArray<string>) => Effect.promise(() => runCli([...args, "--cwd", dir], { env }))

        server.enqueue(read("toolu_1", "notes.md"), text("It says to remember the milk."))
        const first = yield* cli(["-p", "What does notes.md say?", "--output-format", "json"])
        expect(first.code).toBe(0)
        const firstId = JSON.parse(first.stdout).session_id as string
        const file = path.join(sessionsDir(home, dir), `${firstId}.jsonl`)
        const lines = transcript(file)
        expect(lines.map((l) => l["type"])).toEqual(["user", "assistant", "user", "assistant"])
        for (const line of lines) {
          expect(line).toMatchObject({ session_id: firstId, cwd: dir })
          expect(Number.isNaN(Date.parse(line["timestamp"] as string))).toBe(false)
        }
        // The transcript is the conversation the model saw, plus its last answer.
        const sent = messagesOf(server, 1)
        const conversation = [...sent, {
          role: "assistant",
          content: [{ type: "text", text: "It says to remember the milk." }]
        }]
        expect(lines.map((l) => l["message"])).toEqual(conversation)

        // A second session in the same directory, so that --continue has to pick the newest.
        server.enqueue(text("Hello."))
        const second = yield* cli(["-p", "hi", "--output-format", "json"])
        const secondId = JSON.parse(second.stdout).session_id as string
        expect(secondId).not.toBe(firstId)

        server.enqueue(text("Still hello."))
        const continued = yield* cli(["-p", "again", "-c", "--output-format", "json"])
        expect(continued.code).toBe(0)
        expect(JSON.parse(continued.stdout).session_id).toBe(secondId)
        expect(messagesOf(server, 3)).toEqual([
          { role: "user", content: [{ type: "text", text: "hi" }] },
          { role: "assistant", content: [{ type: "text", text: "Hello." }] },
          { role: "user", content: [{ type: "text", text: "again" }] }
        ])

        server.enqueue(text("Yes, the milk."))
        const resumed = yield* cli(["-p", "and the milk?", "--resume", firstId, "--output-format", "json"])
        expect(resumed.code).toBe(0)
        expect(JSON.parse(resumed.stdout).session_id).toBe(firstId)
        expect(messagesOf(server, 4)).toEqual([...conversation, {
          role: "user",
          content: [{ type: "text", text: "and the milk?" }]
        }])
        expect(transcript(file)).toHaveLength(6)
      }),
    120_000
  )

  it.scoped(
    "--session-id names a new session; an existing one, a bad id or a missing one is bad input",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const home = tempDir()
        const dir = tempDir()
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        const id = "0b4f6f2e-8d4c-4b43-9f4e-6a4d1c2b3a10"
        server.enqueue(text("Hi."))
        const made = yield* Effect.promise(() => runCli(["-p", "hi", "--cwd", dir, "--session-id", id], { env }))
        expect(made.code).toBe(0)
        expect(fs.existsSync(path.join(sessionsDir(home, dir), `${id}.jsonl`))).toBe(true)
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [["--session-id", id], `--resume ${id}`],
          [["--session-id", "../escape"], "--session-id ../escape"],
          [["--resume", "no-such-session"], "no such session"],
          [["--resume"], "--resume needs a session id"],
          [["-c", "--resume", id], "cannot be used together"]
        ]
        for (const [args, fragment] of cases) {
          const result = yield* Effect.promise(() =>
            runCli(["-p", "hi", "--cwd", dir, ...args], { env, timeoutMs: 60_000 })
          )
          expect(result.code).toBe(2)
          expect(result.stderr).toContain(fragment)
          expect(result.stderr.trim().split("\n")).toHaveLength(1)
        }
        const fresh = tempDir()
        const nothing = yield* Effect.promise(() => runCli(["-p", "hi", "--cwd", fresh, "--continue"], { env }))
        expect(nothing.code).toBe(2)
        expect(nothing.stderr).toContain("no earlier session")
        expect(server.requests).toHaveLength(1)
      }),
    120_000
  )

  it.scoped("a conversation interrupted mid-tool is resumed with every tool_use paired", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const home = tempDir()
      const dir = tempDir()
      const id = "interrupted-session"
      const folder = sessionsDir(home, dir)
      fs.mkdirSync(folder, { recursive: true })
      const line = (type: string, message: Message) =>
        JSON.stringify({ type, session_id: id, cwd: dir, timestamp: new Date().toISOString(), message })
      const user = { role: "user", content: [{ type: "text", text: "run the tests" }] }
      const assistant = {
        role: "assistant",
        content: [
          { type: "text", text: "Running them." },
          { type: "tool_use", id: "toolu_a", name: "Bash", input: { command: "npm test" } },
          { type: "tool_use", id: "toolu_b", name: "Read", input: { file_path: "x" } }
        ]
      }
      // The process died while the tools ran: a torn last line too.
      fs.writeFileSync(
        path.join(folder, `${id}.jsonl`),
        `${line("user", user)}\n${line("assistant", assistant)}\n{"type":"us`
      )
      server.enqueue(text("Resumed."))
      const result = yield* Effect.promise(() =>
        runCli(["-p", "what happened?", "--cwd", dir, "-r", id], {
          env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        })
      )
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      const sent = messagesOf(server, 0)
      expect(sent.slice(0, 2)).toEqual([user, assistant])
      // The repaired results and the new prompt are consecutive user messages: requests join them.
      const content = sent[2]!.content as ReadonlyArray<Record<string, unknown>>
      const results = content.filter((b) => b["type"] === "tool_result")
      expect(sent[2]!.role).toBe("user")
      expect(results.map((b) => [b["type"], b["tool_use_id"], b["is_error"]])).toEqual([
        ["tool_result", "toolu_a", true],
        ["tool_result", "toolu_b", true]
      ])
      expect(String(results[0]!["content"])).toContain("Interrupted")
      expect(content.at(-1)).toEqual({ type: "text", text: "what happened?" })
      expect(sent).toHaveLength(3)
      // The file now holds the repaired conversation and the new turn, every line valid.
      const lines = transcript(path.join(folder, `${id}.jsonl`))
      expect(lines.map((l) => l["type"])).toEqual(["user", "assistant", "user", "user", "assistant"])
    }))

  it.scoped(
    "a run killed (SIGKILL) while a tool runs: the transcript has the prompt, the assistant message and the finished result; --continue pairs the rest",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const home = tempDir()
        const dir = tempDir({ "notes.md": "remember the milk\n" })
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        const id = "killed-mid-tool"
        const file = path.join(sessionsDir(home, dir), `${id}.jsonl`)
        const slow = "echo $$ > shell.pid; sleep 30"
        server.enqueue(Server.message({
          blocks: [
            { block: { type: "text" as const, text: "Reading, then waiting." } },
            { block: { type: "tool_use" as const, id: "toolu_read", name: "Read", input: { file_path: "notes.md" } } },
            { block: { type: "tool_use" as const, id: "toolu_sleep", name: "Bash", input: { command: slow } } }
          ]
        }))
        const childEnv: Record<string, string> = {}
        for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v
        const child = spawn(
          bin,
          ["-p", "read the notes, then wait", "--cwd", dir, "--session-id", id, "--allowed-tools", "Bash"],
          { cwd: dir, env: childEnv, stdio: ["ignore", "ignore", "pipe"] }
        )
        let stderr = ""
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_, signal) => resolve(signal)))
        const shellPid = path.join(dir, "shell.pid")
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            // The killed CLI cannot end the sleep it started; end its process group here.
            const pid = Number(fs.existsSync(shellPid) ? fs.readFileSync(shellPid, "utf8") : NaN)
            if (Number.isInteger(pid) && pid > 0) {
              try {
                process.kill(-pid, "SIGKILL")
              } catch {
                // already gone
              }
            }
            child.kill("SIGKILL")
          })
        )
        // Wait until the Bash call is running and the Read result is in the file.
        const recorded = () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")
        yield* Effect.promise(async () => {
          for (let i = 0; i < 600; i++) {
            if (fs.existsSync(shellPid) && recorded().includes("toolu_read") && recorded().split("\n").length > 3) {
              return
            }
            if (child.exitCode !== null) throw new Error(`switchyard exited early: ${stderr}`)
            await new Promise((r) => setTimeout(r, 50))
          }
          throw new Error(`the call never started or the transcript stayed short:\n${recorded()}\n${stderr}`)
        })
        child.kill("SIGKILL")
        expect(yield* Effect.promise(() => exited)).toBe("SIGKILL")

        const lines = transcript(file)
        expect(lines.map((l) => l["type"])).toEqual(["user", "assistant", "user"])
        expect(lines[0]!["message"]).toEqual({
          role: "user",
          content: [{ type: "text", text: "read the notes, then wait" }]
        })
        const assistant = lines[1]!["message"] as Message
        expect(assistant).toEqual({
          role: "assistant",
          content: [
            { type: "text", text: "Reading, then waiting." },
            { type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: "notes.md" } },
            { type: "tool_use", id: "toolu_sleep", name: "Bash", input: { command: slow } }
          ]
        })
        const readResult = (lines[2]!["message"] as { content: ReadonlyArray<Record<string, unknown>> }).content
        expect(readResult).toHaveLength(1)
        expect(readResult[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_read" })
        expect(String(readResult[0]!["content"])).toContain("remember the milk")

        server.enqueue(text("The wait was interrupted."))
        const continued = yield* Effect.promise(() =>
          runCli(["-p", "what happened?", "--cwd", dir, "--continue"], { env })
        )
        expect(continued.stderr).toBe("")
        expect(continued.code).toBe(0)
        const sent = messagesOf(server, 1)
        expect(sent.slice(0, 2)).toEqual([lines[0]!["message"], assistant])
        const content = sent[2]!.content as ReadonlyArray<Record<string, unknown>>
        const results = content.filter((b) => b["type"] === "tool_result")
        expect(sent[2]!.role).toBe("user")
        expect(results.map((b) => [b["tool_use_id"], b["is_error"] === true])).toEqual([["toolu_read", false], [
          "toolu_sleep",
          true
        ]])
        expect(results[0]).toEqual(readResult[0])
        // Journaled (SPEC §4.14): a Bash call that is not read-only and was in flight is not run again.
        expect(String(results[1]!["content"])).toContain("The process stopped while this ran; its effect is unknown.")
        expect(String(results[1]!["content"])).toContain(`The command: ${slow}`)
        // Requests join consecutive user messages: the prompt follows the repaired results.
        expect(content.at(-1)).toEqual({ type: "text", text: "what happened?" })
        expect(sent).toHaveLength(3)
      }),
    120_000
  )

  it.scoped(
    "one line per tool result as each completes; --continue sends them joined as the model saw them",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const home = tempDir()
        const dir = tempDir({ "a.md": "alpha\n", "b.md": "beta\n" })
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
        server.enqueue(
          Server.message({
            blocks: [
              { block: { type: "tool_use" as const, id: "toolu_a", name: "Read", input: { file_path: "a.md" } } },
              { block: { type: "tool_use" as const, id: "toolu_b", name: "Read", input: { file_path: "b.md" } } }
            ]
          }),
          text("Alpha and beta.")
        )
        const first = yield* Effect.promise(() =>
          runCli(["-p", "read both", "--cwd", dir, "--output-format", "json"], { env })
        )
        expect(first.code).toBe(0)
        const id = JSON.parse(first.stdout).session_id as string
        const lines = transcript(path.join(sessionsDir(home, dir), `${id}.jsonl`))
        expect(lines.map((l) => l["type"])).toEqual(["user", "assistant", "user", "user", "assistant"])
        const resultIds = lines.slice(2, 4).map((l) =>
          (l["message"] as { content: ReadonlyArray<{ tool_use_id: string }> }).content.map((b) => b.tool_use_id)
        )
        expect(resultIds.flat().sort()).toEqual(["toolu_a", "toolu_b"])
        for (const ids of resultIds) expect(ids).toHaveLength(1)
        // What the model was sent in the second request: both results in one message, in call order.
        const seen = messagesOf(server, 1)
        server.enqueue(text("Still alpha and beta."))
        const continued = yield* Effect.promise(() => runCli(["-p", "again", "--cwd", dir, "-c"], { env }))
        expect(continued.code).toBe(0)
        expect(messagesOf(server, 2)).toEqual([
          ...seen,
          { role: "assistant", content: [{ type: "text", text: "Alpha and beta." }] },
          { role: "user", content: [{ type: "text", text: "again" }] }
        ])
      }),
    120_000
  )

  it("a turn's result lines (one per result, as each completed) join into the message the model was sent", () => {
    const use = (id: string) => ({ type: "tool_use" as const, id, name: "Read", input: { file_path: id } })
    const result = (id: string, content: string) => ({ type: "tool_result" as const, tool_use_id: id, content })
    const prompt = { role: "user" as const, content: [{ type: "text" as const, text: "go" }] }
    const assistant = { role: "assistant" as const, content: [use("a"), use("b")] }
    // b finished first; then the whole message with a hook's extra text was recorded too.
    const joined = Sessions.joinResults([
      prompt,
      assistant,
      { role: "user", content: [result("b", "B")] },
      { role: "user", content: [result("a", "A")] },
      { role: "user", content: [result("a", "A2"), result("b", "B"), { type: "text", text: "extra" }] },
      { role: "user", content: [{ type: "text", text: "next prompt" }] }
    ])
    expect(joined).toEqual([
      prompt,
      assistant,
      { role: "user", content: [result("a", "A2"), result("b", "B"), { type: "text", text: "extra" }] },
      { role: "user", content: [{ type: "text", text: "next prompt" }] }
    ])
    // One result line and a crash: repair adds the missing one in call order.
    const repaired = Sessions.repair(
      Sessions.joinResults([prompt, assistant, { role: "user", content: [result("b", "B")] }])
    )
    expect(repaired[2]!.content).toEqual([
      Messages.toolResult("a", Sessions.INTERRUPTED_RESULT, true),
      result("b", "B")
    ])
  })
})
