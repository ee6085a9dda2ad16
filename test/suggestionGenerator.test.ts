/**
 * The SuggestionGenerator port (SPEC §4.12): a replay list handed out in
 * order, and the model-backed generator — through the real Anthropic SDK
 * against the local Messages server — asking a small model for one short
 * line, with `NONE`, an empty answer or a failure meaning no suggestion.
 */
import { Messages, SuggestionGenerator } from "@switchyard/core"
import * as AnthropicModel from "@switchyard/core/anthropic"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Server from "./support/messagesServer.js"

const conversation: ReadonlyArray<Messages.Message> = [
  { role: "user", content: [Messages.text("Fix the failing test")] },
  { role: "assistant", content: [Messages.toolUse("t1", "Read", { file_path: "a.ts" })] },
  { role: "user", content: [Messages.toolResult("t1", "export const a = 1")] },
  { role: "assistant", content: [Messages.text("Fixed: the test passes.")] }
]

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text", text: t } }] })

const generatorFor = (server: Server.MessagesServer, env: Record<string, string> = {}) =>
  SuggestionGenerator.SuggestionGenerator.pipe(
    Effect.provide(
      AnthropicModel.layerSuggestionGenerator({ baseUrl: server.url }).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ ANTHROPIC_API_KEY: "test-key", ...env })))
      )
    )
  )

describe("SuggestionGenerator (SPEC §4.12)", () => {
  it.effect("a list hands out its suggestions in order, then none", () =>
    Effect.gen(function*() {
      const generator = yield* SuggestionGenerator.fromList(["one", "two"])
      expect(yield* generator.next([])).toEqual(Option.some("one"))
      expect(yield* generator.next([])).toEqual(Option.some("two"))
      expect(yield* generator.next([])).toEqual(Option.none())
    }))

  it.scopedLive("the Anthropic generator asks a small model for one short line, with the conversation as text", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(text("\"Run the whole test suite\"\nand more"))
      const generator = yield* generatorFor(server)
      expect(yield* generator.next(conversation)).toEqual(Option.some("Run the whole test suite"))
      const body = server.requests[0]!.body as {
        model: string
        max_tokens: number
        tools?: unknown
        messages: Array<{ role: string }>
      }
      expect(body.model).toBe(AnthropicModel.defaultSuggestionModel)
      expect(body.tools).toBeUndefined()
      expect(body.max_tokens).toBeLessThanOrEqual(64)
      // Roles alternate and the instruction comes last.
      const roles = body.messages.map((m) => m.role)
      expect(roles.every((role, i) => i === 0 || role !== roles[i - 1])).toBe(true)
      expect(JSON.stringify(body.messages.at(-1))).toContain("NONE")
      expect(JSON.stringify(body.messages)).toContain("[called Read]")
    }))

  it.scopedLive("SWITCHYARD_SUGGESTION_MODEL picks the model; NONE, an empty answer and a failure are no suggestion", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      server.enqueue(text("NONE"), text("   "), Server.httpError(400, "invalid_request_error", "bad"))
      const generator = yield* generatorFor(server, { SWITCHYARD_SUGGESTION_MODEL: "claude-tiny" })
      expect(yield* generator.next(conversation)).toEqual(Option.none())
      expect(yield* generator.next(conversation)).toEqual(Option.none())
      expect(yield* generator.next(conversation)).toEqual(Option.none())
      expect((server.requests[0]!.body as { model: string }).model).toBe("claude-tiny")
    }))
})
