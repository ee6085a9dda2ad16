/**
 * The query loop on the real `@anthropic-ai/sdk` (through the adapter) against
 * a local server speaking the Messages streaming protocol (issue 5): tools
 * start before the message ends, the next request carries the assistant turn
 * and the tool_results in call order, interrupting the loop aborts the HTTP
 * request, and deferred tools are sent with defer_loading.
 */
import type { Model } from "@switchyard/core"
import { DispatchEvent, QueryLoop, Registry, Results, Tool, ToolUseContext } from "@switchyard/core"
import * as AnthropicModel from "@switchyard/core/anthropic"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Server from "./support/messagesServer.js"

const sleeper = Tool.make("Sleep", {
  description: "sleeps",
  input: Schema.Struct({ ms: Schema.Number }),
  isConcurrencySafe: () => true,
  // It changes nothing: the default policy (no permission layer here) runs it.
  isReadOnly: () => true,
  call: (input) => Effect.as(Effect.sleep(input.ms), `slept ${input.ms}`)
})
const deferredTool = Tool.make("mcp__db__query", {
  description: "query the database",
  input: Schema.Struct({ sql: Schema.String }),
  isMcp: true,
  call: () => Effect.succeed("rows")
})

const environment = (server: Server.MessagesServer) =>
  Layer.mergeAll(
    AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseUrl: server.url }),
    Registry.layerTools([sleeper, deferredTool]),
    Results.layerMemory
  )

const use = (id: string, input: unknown, delayMs = 0, chunks = 12) => ({
  block: { type: "tool_use" as const, id, name: "Sleep", input },
  delayMs,
  chunks,
  chunkDelayMs: 2
})

describe("QueryLoop on the real Anthropic SDK", () => {
  it.live("tools start before the message ends; the next request carries results in call order", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(
        Server.message({
          blocks: [
            use("toolu_a", { ms: 50 }),
            use("toolu_b", { ms: "soon" }, 50),
            use("toolu_c", { ms: 20 }, 50),
            { block: { type: "text", text: "and some closing words" }, delayMs: 400 }
          ]
        }),
        Server.message({ blocks: [{ block: { type: "text", text: "Done." } }] })
      )
      const events = yield* QueryLoop.collect(
        QueryLoop.run("go", ToolUseContext.make({ cwd: "/", sessionId: "sdk" }))
      ).pipe(Effect.provide(environment(server)))
      expect(events.at(-1)).toMatchObject({ _tag: "Stopped", reason: "end_turn" })
      const firstStart = Math.min(
        ...events.flatMap((e) => (e._tag === "Tool" && DispatchEvent.isStarted(e.event) ? [e.event.at] : []))
      )
      const responseEnd = server.requests[0]!.endedAt()!
      // The first tool started while the server was still sending the message.
      expect(firstStart).toBeLessThan(responseEnd - 200)
      const second = server.requests[1]!.body as {
        readonly messages: ReadonlyArray<
          { readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }
        >
      }
      const assistant = second.messages[1]!
      expect(assistant.role).toBe("assistant")
      expect(assistant.content.filter((b) => b["type"] === "tool_use").map((b) => [b["id"], b["input"]])).toEqual([
        ["toolu_a", { ms: 50 }],
        ["toolu_b", { ms: "soon" }],
        ["toolu_c", { ms: 20 }]
      ])
      const results = second.messages[2]!.content
      expect(results.map((r) => [r["tool_use_id"], r["is_error"] ?? false])).toEqual([
        ["toolu_a", false],
        ["toolu_b", true],
        ["toolu_c", false]
      ])
      expect(String(results[1]!["content"])).toContain("`ms`")
    })))

  it.live("interrupting the loop aborts the HTTP request and pairs the started calls", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(
        Server.message({
          blocks: [use("toolu_a", { ms: 5_000 }), { block: { type: "text", text: "still talking" }, delayMs: 5_000 }]
        })
      )
      const session = yield* QueryLoop.makeSession(ToolUseContext.make({ cwd: "/", sessionId: "sdk" })).pipe(
        Effect.provide(environment(server))
      )
      // Interrupt once the call has started (an event, not a guess at how long that takes).
      const started = yield* Deferred.make<void>()
      const fiber = yield* session.run("go").pipe(
        Stream.tap((event) =>
          event._tag === "Tool" && event.event._tag === "Started" ? Deferred.succeed(started, undefined) : Effect.void
        ),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Effect.fork
      )
      const request = yield* server.request(0)
      yield* Deferred.await(started)
      yield* session.interrupt("user_interrupt")
      const events = yield* Fiber.join(fiber)
      expect(yield* request.settled).toBe("aborted")
      expect(events.at(-1)).toMatchObject({ _tag: "Stopped", reason: "interrupted" })
      const messages = yield* session.messages
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
      const result =
        (messages[2]!.content as ReadonlyArray<{ readonly tool_use_id: string; readonly content: unknown }>)[0]!
      expect(result).toMatchObject({ tool_use_id: "toolu_a", content: "Interrupted by user" })
    })))

  it.live("deferred tools are sent with defer_loading", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "ok" } }] }))
      yield* QueryLoop.collect(QueryLoop.run("go", ToolUseContext.make({ cwd: "/", sessionId: "sdk" }))).pipe(
        Effect.provide(environment(server))
      )
      const tools = (server.requests[0]!.body as { readonly tools: ReadonlyArray<Model.ToolDefinition> }).tools
      expect(tools.find((t) => t.name === "mcp__db__query")?.defer_loading).toBe(true)
      expect(tools.find((t) => t.name === "Sleep")?.defer_loading).toBeUndefined()
    })))
})
