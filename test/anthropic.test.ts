/**
 * The Anthropic adapter, running the real `@anthropic-ai/sdk` against a local
 * server that speaks the Messages API streaming protocol.
 */
import type { ReplayModel } from "@switchyard/core"
import { Messages, Model, Tool } from "@switchyard/core"
import * as AnthropicModel from "@switchyard/core/anthropic"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Server from "./support/messagesServer.js"

const apiKey = "sk-ant-test-0123456789"

/** Retries without waiting, so retry tests run fast. */
const immediateRetries = Schedule.recurs(7)

const setup = (options: Partial<AnthropicModel.Options> = {}) =>
  Effect.gen(function*() {
    const server = yield* Server.start()
    const model = yield* AnthropicModel.make({
      apiKey: Redacted.make(apiKey),
      baseUrl: server.url,
      model: "claude-test",
      retrySchedule: immediateRetries,
      ...options
    })
    return { server, model }
  })

const prompt = (text: string): Model.ModelRequest => ({
  messages: [{ role: "user", content: [Messages.text(text)] }],
  tools: []
})

const collect = (stream: Stream.Stream<Model.ModelStreamEvent, Model.ModelError>) =>
  Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))

/** Runs a stream, keeping what arrived before it failed. */
const collectUntilFailure = (stream: Stream.Stream<Model.ModelStreamEvent, Model.ModelError>) =>
  Effect.gen(function*() {
    const seen: Array<Model.ModelStreamEvent> = []
    const error = yield* stream.pipe(
      Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
      Effect.flip,
      // A hang would be the bug; fail fast instead of at the test timeout.
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the stream hung") })
    )
    return { seen, error }
  })

const inputOf = (events: ReadonlyArray<Model.ModelStreamEvent>, index: number): unknown =>
  JSON.parse(
    events.flatMap((e) =>
      e.type === "content_block_delta" && e.index === index && e.delta.type === "input_json_delta"
        ? [e.delta.partial_json]
        : []
    ).join("")
  )

const readInput = {
  file_path: "/home/user/project/src/some/deeply/nested/module.ts",
  offset: 120,
  limit: 40,
  note: "unicode ✓ and \"quotes\""
}
const textAndTool: ReplayModel.Turn = {
  blocks: [
    { block: Messages.text("I'll read the module first."), chunks: 4 },
    { block: Messages.toolUse("toolu_01", "Read", readInput), chunks: 40 }
  ],
  usage: { input_tokens: 321, output_tokens: 54 }
}

describe("Anthropic adapter (SPEC §4.11)", () => {
  describe("streaming", () => {
    it.scopedLive("text and a tool_use whose input arrives in many input_json_delta fragments decode in order", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(Server.message(textAndTool, { id: "msg_01", model: "claude-test" }))
        const events = yield* collect(model.stream(prompt("read the module")))
        // Exactly the sequence the API sent, minus the `ping` (the SDK drops it); fields the port's
        // schemas do not name are kept (the CLI relays the raw events).
        expect(events).toEqual(
          Server.messageEvents(textAndTool, { id: "msg_01", model: "claude-test" }).map((sse) => sse.data)
            .filter((data) => (data as { type: string }).type !== "ping")
        )
        const fragments = events.filter((e) => e.type === "content_block_delta" && e.delta.type === "input_json_delta")
        expect(fragments).toHaveLength(40)
        expect(inputOf(events, 1)).toEqual(readInput)
        expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use" } })
        expect(server.requests).toHaveLength(1)
        expect(yield* server.requests[0]!.settled).toBe("completed")
      }))

    it.scopedLive("thinking blocks stream as thinking_delta and signature_delta", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(
          Server.message({
            blocks: [
              { block: { type: "thinking", thinking: "Let me think about this.", signature: "EqQBCkYIAxgCIkB" } },
              { block: Messages.text("Done.") }
            ]
          })
        )
        const events = yield* collect(model.stream(prompt("think")))
        const deltas = events.flatMap((e) => (e.type === "content_block_delta" ? [e.delta.type] : []))
        expect(deltas).toEqual([
          "thinking_delta",
          "thinking_delta",
          "thinking_delta",
          "signature_delta",
          "text_delta",
          "text_delta",
          "text_delta"
        ])
      }))
  })

  describe("the request", () => {
    it.scopedLive("the key, model, system prompt, messages and tools arrive as sent; deferred tools carry defer_loading", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup({ maxTokens: 2048 })
        const Read = Tool.make("Read", {
          description: "Read a file",
          input: Schema.Struct({ file_path: Schema.String.annotations({ description: "Absolute path" }) }),
          call: () => Effect.succeed("")
        })
        const NotebookEdit = Tool.make("NotebookEdit", {
          description: "Edit a notebook cell",
          input: Schema.Struct({ notebook_path: Schema.String, new_source: Schema.String }),
          call: () => Effect.succeed("")
        })
        const messages: ReadonlyArray<Messages.Message> = [
          { role: "user", content: "What is in a.txt?" },
          {
            role: "assistant",
            content: [Messages.text("Reading it."), Messages.toolUse("toolu_1", "Read", { file_path: "/a.txt" })]
          },
          {
            role: "user",
            content: [
              Messages.toolResult("toolu_1", "     1\thello"),
              Messages.toolResult("toolu_2", [Messages.text("boom")], true)
            ]
          }
        ]
        const tools = [Model.toolDefinition(Read), Model.toolDefinition(NotebookEdit, { deferred: true })]
        server.enqueue(Server.message({ blocks: [{ block: Messages.text("hello") }] }))
        yield* collect(model.stream({ system: "You are a careful assistant.", messages, tools }))

        const [request] = server.requests
        expect(request!.method).toBe("POST")
        expect(request!.path).toBe("/v1/messages")
        // SDK 1.14 sends the API key as a bearer token.
        expect(request!.headers["authorization"]).toBe(`Bearer ${apiKey}`)
        expect(request!.body).toEqual({
          model: "claude-test",
          max_tokens: 2048,
          system: "You are a careful assistant.",
          messages,
          tools,
          stream: true
        })
        const sentTools = (request!.body as { tools: ReadonlyArray<Record<string, unknown>> }).tools
        expect(sentTools[0]).not.toHaveProperty("defer_loading")
        expect(sentTools[1]).toMatchObject({
          name: "NotebookEdit",
          defer_loading: true,
          input_schema: { type: "object", required: ["notebook_path", "new_source"] }
        })
      }))

    it.scopedLive("a request's model and maxTokens win; no tools and no system prompt are left out", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(Server.message({ blocks: [{ block: Messages.text("hi") }] }))
        yield* collect(model.stream({ ...prompt("hi"), model: "claude-other", maxTokens: 100 }))
        const body = server.requests[0]!.body as Record<string, unknown>
        expect(body).toMatchObject({ model: "claude-other", max_tokens: 100 })
        expect(body).not.toHaveProperty("tools")
        expect(body).not.toHaveProperty("system")
      }))

    it.scopedLive("layerConfig reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and SWITCHYARD_MODEL", () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const env = (entries: ReadonlyArray<readonly [string, string]>) =>
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries)))
        const model = yield* Layer.build(AnthropicModel.layerConfig({ retrySchedule: immediateRetries })).pipe(
          Effect.map(Context.get(Model.LanguageModel)),
          env([
            ["ANTHROPIC_API_KEY", "sk-from-env"],
            ["ANTHROPIC_BASE_URL", server.url],
            ["SWITCHYARD_MODEL", "claude-from-env"],
            ["ANTHROPIC_MODEL", "claude-loses"]
          ])
        )
        server.enqueue(Server.message({ blocks: [{ block: Messages.text("hi") }] }))
        yield* collect(model.stream(prompt("hi")))
        expect(server.requests[0]!.headers["authorization"]).toBe("Bearer sk-from-env")
        expect(server.requests[0]!.body).toMatchObject({ model: "claude-from-env" })

        const missingKey = yield* Layer.build(AnthropicModel.layerConfig()).pipe(
          env([["ANTHROPIC_BASE_URL", server.url]]),
          Effect.flip
        )
        expect(String(missingKey)).toContain("ANTHROPIC_API_KEY")
      }))
  })

  describe("retries (before the first event only)", () => {
    it.scopedLive("a 529 overloaded response is retried, then the stream succeeds", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(Server.overloaded(), Server.message(textAndTool))
        const events = yield* collect(model.stream(prompt("go")))
        expect(events.at(-1)).toEqual({ type: "message_stop" })
        expect(server.requests).toHaveLength(2)
        expect(server.requests[1]!.body).toEqual(server.requests[0]!.body)
      }))

    it.scopedLive("retries stop when the schedule is exhausted: 8 attempts, then an overloaded ModelError", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(...Array.from({ length: 9 }, () => Server.overloaded()))
        const error = yield* Effect.flip(collect(model.stream(prompt("go"))))
        expect(error).toMatchObject({ _tag: "ModelError", reason: "overloaded", status: 529, retryable: true })
        expect(error.message).toContain("Overloaded")
        expect(server.requests).toHaveLength(8)
      }))

    it.scopedLive("a 400 is not retried", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(
          Server.httpError(400, "invalid_request_error", "messages: roles must alternate"),
          Server.message(textAndTool)
        )
        const error = yield* Effect.flip(collect(model.stream(prompt("go"))))
        expect(error).toMatchObject({ reason: "invalid_request", status: 400, retryable: false })
        expect(error.message).toContain("roles must alternate")
        expect(error.message).toContain("req_test_0")
        expect(server.requests).toHaveLength(1)
      }))

    it.scopedLive("a 401 is an authentication error and is not retried", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(Server.httpError(401, "authentication_error", "invalid x-api-key"))
        const error = yield* Effect.flip(collect(model.stream(prompt("go"))))
        expect(error).toMatchObject({ reason: "authentication", status: 401, retryable: false })
        expect(server.requests).toHaveLength(1)
      }))

    it.scoped("a 429 waits at least its retry-after before the next attempt", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup({ retrySchedule: AnthropicModel.defaultRetrySchedule })
        server.enqueue(Server.rateLimited(20), Server.message(textAndTool))
        const fiber = yield* Effect.fork(collect(model.stream(prompt("go"))))
        // The HTTP exchange is real; wait (in real time) until the retry is scheduled.
        const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        while (Chunk.isEmpty(yield* TestClock.sleeps())) yield* realPause
        expect(Chunk.toReadonlyArray(yield* TestClock.sleeps())).toEqual([20_000])
        expect(server.requests).toHaveLength(1)
        yield* TestClock.adjust("20 seconds")
        const events = yield* Fiber.join(fiber)
        expect(events.at(-1)).toEqual({ type: "message_stop" })
        expect(server.requests).toHaveLength(2)
      }))

    it.scopedLive("an error event before any other event is retried like an HTTP error", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(
          Server.events([Server.errorEvent("overloaded_error", "Overloaded")]),
          Server.message(textAndTool)
        )
        const events = yield* collect(model.stream(prompt("go")))
        expect(events.at(-1)).toEqual({ type: "message_stop" })
        expect(server.requests).toHaveLength(2)
      }))

    it.scopedLive("a refused connection is a retryable network error", () =>
      Effect.gen(function*() {
        const url = yield* Effect.scoped(Effect.map(Server.start(), (server) => server.url))
        const model = yield* AnthropicModel.make({
          apiKey: Redacted.make(apiKey),
          baseUrl: url,
          retrySchedule: Schedule.recurs(1)
        })
        const error = yield* Effect.flip(collect(model.stream(prompt("go"))))
        expect(error).toMatchObject({ reason: "network", retryable: true })
        expect(error.message).toContain("cannot reach the Anthropic API")
      }))
  })

  describe("cancellation and broken streams", () => {
    it.scopedLive("interrupting the consuming fiber aborts the HTTP request", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        server.enqueue(
          Server.message({
            blocks: [
              { block: Messages.text("Starting.") },
              { block: Messages.toolUse("toolu_1", "Read", readInput), delayMs: 10_000 }
            ]
          })
        )
        const firstEvent = yield* Deferred.make<void>()
        const fiber = yield* model.stream(prompt("go")).pipe(
          Stream.tap(() => Deferred.succeed(firstEvent, undefined)),
          Stream.runDrain,
          Effect.fork
        )
        yield* Deferred.await(firstEvent)
        expect(server.requests[0]!.outcome()).toBeUndefined()
        yield* Fiber.interrupt(fiber)
        const outcome = yield* server.requests[0]!.settled.pipe(Effect.timeout("2 seconds"))
        expect(outcome).toBe("aborted")
      }))

    it.scopedLive("a stream broken mid-block fails with a network ModelError saying where, instead of hanging", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        const all = Server.messageEvents(textAndTool)
        // message_start, ping, the text block (6 events), the tool_use start and 5 fragments.
        const cut = all.slice(0, 14)
        expect(cut.at(-1)!.data).toMatchObject({ type: "content_block_delta", index: 1 })
        server.enqueue(Server.broken(cut))
        const { error, seen } = yield* collectUntilFailure(model.stream(prompt("go")))
        expect(seen).toHaveLength(13)
        expect(error).toBeInstanceOf(Model.ModelError)
        expect(error).toMatchObject({ reason: "network", retryable: false })
        expect(error.message).toContain("after 13 event(s), inside content block 1")
        expect(server.requests).toHaveLength(1)
        expect(yield* server.requests[0]!.settled).toBe("destroyed")
      }))

    it.scopedLive("a stream that ends without message_stop fails", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        const all = Server.messageEvents(textAndTool)
        server.enqueue(Server.events(all.slice(0, -1)))
        const { error, seen } = yield* collectUntilFailure(model.stream(prompt("go")))
        expect(seen.at(-1)?.type).toBe("message_delta")
        expect(error).toMatchObject({ reason: "network", retryable: false })
        expect(error.message).toContain("ended without message_stop")
      }))

    it.scopedLive("an error event mid-stream fails the stream with its reason, after the events before it", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        const all = Server.messageEvents(textAndTool)
        server.enqueue(Server.events([...all.slice(0, 5), Server.errorEvent("overloaded_error", "Overloaded")]))
        const { error, seen } = yield* collectUntilFailure(model.stream(prompt("go")))
        expect(seen.map((e) => e.type)).toEqual([
          "message_start",
          "content_block_start",
          "content_block_delta",
          "content_block_delta"
        ])
        expect(error).toMatchObject({ reason: "overloaded", retryable: false })
        expect(error.message).toContain("error event")
        expect(error.message).toContain("overloaded_error: Overloaded")
        expect(error.message).toContain("inside content block 0")
        // Never retried once events were emitted.
        expect(server.requests).toHaveLength(1)
      }))

    it.scopedLive("an undecodable event is a protocol error naming the event type", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup()
        const all = Server.messageEvents(textAndTool)
        server.enqueue(
          Server.events([
            ...all.slice(0, 3),
            Server.event({ type: "content_block_delta", index: 0, delta: { type: "hologram_delta", beam: 1 } })
          ])
        )
        const { error } = yield* collectUntilFailure(model.stream(prompt("go")))
        expect(error).toMatchObject({ reason: "protocol", retryable: false })
        expect(error.message).toContain("undecodable \"content_block_delta\" event")
      }))

    it.scopedLive("a stream that stalls longer than idleTimeout fails instead of hanging", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup({ idleTimeout: "1 second" })
        server.enqueue(
          Server.message({
            blocks: [{ block: Messages.text("a") }, { block: Messages.text("b"), delayMs: 10_000 }]
          })
        )
        const { error } = yield* collectUntilFailure(model.stream(prompt("go")))
        expect(error).toMatchObject({ reason: "network", retryable: false })
        expect(error.message).toContain("no event from the Anthropic API")
        expect(yield* server.requests[0]!.settled.pipe(Effect.timeout("2 seconds"))).toBe("aborted")
      }))
  })
})
