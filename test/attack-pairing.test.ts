/**
 * Adversarial review (issue 10, item 2 and the pairing promise): malformed
 * tool_use JSON, duplicate and unknown tools, and streams cut mid-block, sent
 * by the local Messages server to the real CLI (`run -p --output-format
 * stream-json`). Judged by the transcript the CLI sends back to the server:
 * every `tool_use` of an assistant message is answered by exactly one
 * `tool_result` in the next user message, and nothing else is answered.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-pairing-"))
  fs.writeFileSync(path.join(dir, "a.txt"), "alpha\n")
  return dir
}

const envFor = (server: Server.MessagesServer) => ({
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: server.url,
  SWITCHYARD_HOME: tempDir(),
  SWITCHYARD_MODEL: undefined,
  ANTHROPIC_MODEL: undefined
})

type Block = { readonly type: string; readonly id?: string; readonly tool_use_id?: string }
type Body = {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<Block> }>
}

const start = (id: string) => [
  Server.event({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 }
    }
  }),
  Server.event({ type: "ping" })
]
const toolBlock = (index: number, id: string, name: string, fragments: ReadonlyArray<string>) => [
  Server.event({ type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } }),
  ...fragments.map((partial_json) =>
    Server.event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
  ),
  Server.event({ type: "content_block_stop", index })
]
const end = (reason: string) => [
  Server.event({
    type: "message_delta",
    delta: { stop_reason: reason, stop_sequence: null },
    usage: { output_tokens: 5 }
  }),
  Server.event({ type: "message_stop" })
]
const finalText = (text: string) =>
  Server.events([
    ...start("msg_final"),
    Server.event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    Server.event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
    Server.event({ type: "content_block_stop", index: 0 }),
    ...end("end_turn")
  ])

/** Every assistant tool_use must be answered once, in the user message right after it; nothing else answered. */
const pairingProblems = (body: Body): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const messages = body.messages
  const blocks = (i: number): ReadonlyArray<Block> => {
    const content = messages[i]?.content
    return typeof content === "string" || content === undefined ? [] : content
  }
  for (let i = 0; i < messages.length; i++) {
    const uses = blocks(i).filter((b) => b.type === "tool_use").map((b) => b.id!)
    const results = messages[i]!.role === "user"
      ? blocks(i).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!)
      : []
    if (messages[i]!.role === "user") {
      const previous = i > 0 ? blocks(i - 1).filter((b) => b.type === "tool_use").map((b) => b.id!) : []
      for (const id of results) {
        if (!previous.includes(id)) problems.push(`result for ${id} answers no tool_use of message ${i - 1}`)
      }
    }
    if (uses.length === 0) continue
    if (new Set(uses).size !== uses.length) problems.push(`message ${i} repeats a tool_use id: ${uses.join(",")}`)
    const next = i + 1 < messages.length
      ? blocks(i + 1).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id!)
      : undefined
    if (next === undefined) continue
    for (const id of new Set(uses)) {
      const count = next.filter((x) => x === id).length
      if (count !== 1) problems.push(`tool_use ${id} of message ${i} has ${count} results`)
    }
  }
  return problems
}

const run = (server: Server.MessagesServer, dir: string) =>
  Effect.promise(() =>
    runCli([
      "run",
      "-p",
      "go",
      "--cwd",
      dir,
      "--output-format",
      "stream-json",
      "--model",
      "claude-test",
      "--permission-mode",
      "bypassPermissions"
    ], {
      env: envFor(server),
      timeoutMs: 60_000
    })
  )

describe("attack: exactly one tool_result per tool_use through the CLI", () => {
  it.scoped("malformed JSON, an unknown tool and a valid call in one message: three results, the loop goes on", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      server.enqueue(
        Server.events([
          ...start("msg_1"),
          ...toolBlock(0, "toolu_bad", "Read", ["{\"file_path\": ", "\"a.txt"]),
          ...toolBlock(1, "toolu_unknown", "NoSuchTool", ["{}"]),
          ...toolBlock(2, "toolu_ok", "Read", ["{\"file_path\": \"a.txt\"}"]),
          ...end("tool_use")
        ]),
        finalText("Done.")
      )
      const result = yield* run(server, dir)
      expect(server.requests.length, result.stderr).toBe(2)
      const body = server.requests[1]!.body as Body
      expect(pairingProblems(body)).toEqual([])
      const last = body.messages.at(-1)!.content as ReadonlyArray<Block & { content?: unknown; is_error?: boolean }>
      expect(last.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)).toEqual([
        "toolu_bad",
        "toolu_unknown",
        "toolu_ok"
      ])
      expect(JSON.stringify(last.find((b) => b.tool_use_id === "toolu_bad"))).toContain("not valid JSON")
      expect(JSON.stringify(last.find((b) => b.tool_use_id === "toolu_ok"))).toContain("alpha")
    }))

  it.scoped("a repeated tool_use id: the first call runs, the repeat is renamed and answered without running", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      server.enqueue(
        Server.events([
          ...start("msg_1"),
          ...toolBlock(0, "toolu_same", "Read", ["{\"file_path\": \"a.txt\"}"]),
          ...toolBlock(1, "toolu_same", "Bash", ["{\"command\": \"touch second.txt\"}"]),
          ...end("tool_use")
        ]),
        finalText("Done.")
      )
      const result = yield* run(server, dir)
      expect(server.requests.length, result.stderr).toBe(2)
      const body = server.requests[1]!.body as Body
      expect(pairingProblems(body)).toEqual([])
      const uses = (body.messages.at(-2)!.content as ReadonlyArray<Block>).filter((b) => b.type === "tool_use")
      expect(uses.map((b) => b.id)).toEqual(["toolu_same", "toolu_same_2"])
      const last = body.messages.at(-1)!.content as ReadonlyArray<Block & { content?: unknown; is_error?: boolean }>
      expect(JSON.stringify(last.find((b) => b.tool_use_id === "toolu_same"))).toContain("alpha")
      const repeat = last.find((b) => b.tool_use_id === "toolu_same_2")!
      expect(repeat.is_error).toBe(true)
      expect(JSON.stringify(repeat)).toContain("repeats the id toolu_same")
      // Judged by the effect: the repeated call never ran.
      expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(false)
    }))

  it.scoped("a stream cut inside a tool_use block leaves no unanswered tool_use in the next request", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const dir = tempDir()
      server.enqueue(
        Server.broken([
          ...start("msg_1"),
          ...toolBlock(0, "toolu_done", "Read", ["{\"file_path\": \"a.txt\"}"]),
          Server.event({
            type: "content_block_start",
            index: 1,
            content_block: { type: "tool_use", id: "toolu_cut", name: "Bash", input: {} }
          }),
          Server.event({
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json: "{\"command\": \"touch cut.txt" }
          })
        ]),
        finalText("Recovered."),
        finalText("Recovered again.")
      )
      const result = yield* run(server, dir)
      for (const request of server.requests.slice(1)) {
        expect(pairingProblems(request.body as Body), result.stderr).toEqual([])
      }
      // The cut call never ran.
      expect(fs.existsSync(path.join(dir, "cut.txt"))).toBe(false)
    }))
})
