/**
 * Deferred tools in the query loop on the real `@anthropic-ai/sdk` against the
 * local Messages server (issue 11): the request carries the deferred tools
 * with `defer_loading: true` and lists them in the system prompt; after a
 * ToolSearch turn the transcript has the `tool_reference` blocks, and the
 * loaded tool is then called.
 */
import { Messages, QueryLoop, Registry, Results, Tool, ToolUseContext } from "@switchyard/core"
import * as AnthropicModel from "@switchyard/core/anthropic"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Server from "./support/messagesServer.js"

const weather = Tool.make("mcp__weather__get_forecast", {
  description: "Get the weather forecast for a city",
  input: Schema.Struct({ city: Schema.String }),
  isMcp: true,
  // A read (an MCP server's readOnlyHint): the default policy, with no permission layer here, runs it.
  isReadOnly: () => true,
  call: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})
const tickets = Tool.make("mcp__jira__create_ticket", {
  description: "Create a Jira ticket",
  input: Schema.Struct({ title: Schema.String }),
  isMcp: true,
  call: () => Effect.succeed("created")
})
const echo = Tool.make("Echo", {
  description: "Echo the text",
  input: Schema.Struct({ text: Schema.String }),
  call: ({ text }) => Effect.succeed(text)
})

interface Body {
  readonly system?: string
  readonly tools: ReadonlyArray<{ readonly name: string; readonly defer_loading?: boolean }>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }>
}

describe("deferred tools in the query loop", () => {
  it.live("defer_loading on the request, ToolSearch's tool_reference blocks in the transcript, then the call", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(
        Server.message({
          blocks: [{ block: Messages.toolUse("toolu_search", "ToolSearch", { query: "weather forecast" }) }]
        }),
        Server.message({
          blocks: [{ block: Messages.toolUse("toolu_weather", "mcp__weather__get_forecast", { city: "Oslo" }) }]
        }),
        Server.message({ blocks: [{ block: { type: "text", text: "It is sunny." } }] })
      )
      const events = yield* QueryLoop.collect(
        QueryLoop.run("what is the weather in Oslo?", ToolUseContext.make({ cwd: "/", sessionId: "defer" }), {
          system: "You are helpful."
        })
      ).pipe(
        Effect.provide(Layer.mergeAll(
          AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseUrl: server.url }),
          Registry.layerTools([echo, weather, tickets], { deferral: { _tag: "Always" } }),
          Results.layerMemory
        ))
      )
      expect(events.at(-1)).toMatchObject({ _tag: "Stopped", reason: "end_turn" })
      const first = server.requests[0]!.body as Body
      expect(first.tools.map((t) => [t.name, t.defer_loading ?? false])).toEqual([
        ["Echo", false],
        ["mcp__weather__get_forecast", true],
        ["mcp__jira__create_ticket", true],
        ["ToolSearch", false]
      ])
      expect(first.system).toContain("mcp__weather__get_forecast: Get the weather forecast for a city")
      const second = server.requests[1]!.body as Body
      const searchResult = second.messages[2]!.content[0]!
      expect(searchResult).toEqual({
        type: "tool_result",
        tool_use_id: "toolu_search",
        content: [{ type: "tool_reference", tool_name: "mcp__weather__get_forecast" }]
      })
      expect(second.tools.find((t) => t.name === "mcp__weather__get_forecast")?.defer_loading).toBe(true)
      const third = server.requests[2]!.body as Body
      expect(third.messages[4]!.content[0]).toMatchObject({ tool_use_id: "toolu_weather", content: "Sunny in Oslo" })
      expect(third.system).toContain("mcp__weather__get_forecast: Get the weather forecast for a city (loaded)")
    })))
})
