/**
 * What users would pick instead of Switchyard, set up to dispatch the same
 * calls: `@effect/ai` (a mock `LanguageModel` whose one response holds every
 * tool call, resolved by a `Toolkit`) and the Vercel AI SDK (`generateText`
 * with a mock model and `tools` with `execute`). Each peer gets a call list
 * of `{ id, name, input }` and the handlers by tool name.
 */
import * as AiLanguageModel from "@effect/ai/LanguageModel"
import * as AiTool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { generateText, tool as aiTool, type ToolSet } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { z } from "zod"

export interface Call {
  readonly id: string
  readonly name: string
  readonly input: { readonly n: number }
}

/** A handler per tool name; it gets the call's `n`. */
export type Handlers = Record<string, (n: number) => Promise<unknown>>

// ---- @effect/ai ------------------------------------------------------------------------------

const effectTool = (name: string) => AiTool.make(name, { parameters: { n: Schema.Number }, success: Schema.Unknown })

/** `LanguageModel.generateText` resolving every call of one response; `resolve: false` decodes the response only. */
export const effectAi = (
  names: ReadonlyArray<string>,
  handlers: Handlers,
  options: { readonly concurrency?: number; readonly resolve?: boolean } = {}
) => {
  const toolkit = AiToolkit.make(...names.map(effectTool))
  const layer = toolkit.toLayer(
    Object.fromEntries(
      names.map((name) => [name, ({ n }: { readonly n: number }) => Effect.promise(() => handlers[name]!(n))])
    ) as never
  )
  return (calls: ReadonlyArray<Call>): Effect.Effect<unknown> =>
    Effect.gen(function*() {
      const model = yield* AiLanguageModel.make({
        generateText: () =>
          Effect.succeed([
            ...calls.map((call) => ({ type: "tool-call" as const, id: call.id, name: call.name, params: call.input })),
            {
              type: "finish" as const,
              reason: "tool-calls" as const,
              usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
            }
          ]),
        streamText: () => Stream.die("not used")
      })
      return yield* model.generateText({
        prompt: "go",
        toolkit,
        disableToolCallResolution: options.resolve === false,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency })
      })
    }).pipe(Effect.provide(layer), Effect.orDie) as Effect.Effect<unknown>
}

// ---- Vercel AI SDK ---------------------------------------------------------------------------

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 }
}

/** `generateText` with a mock model returning every call in one response; `execute: false` leaves the calls unrun. */
export const aiSdk =
  (names: ReadonlyArray<string>, handlers: Handlers, options: { readonly execute?: boolean } = {}) =>
  (calls: ReadonlyArray<Call>) => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: calls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.id,
          toolName: call.name,
          input: JSON.stringify(call.input)
        })),
        finishReason: { unified: "tool-calls" as const, raw: undefined },
        usage,
        warnings: []
      })
    })
    // The SDK's ToolSet type does not survive exactOptionalPropertyTypes; the tools are plain `tool(...)` values.
    const tools: ToolSet = Object.fromEntries(names.map((name) => [
      name,
      options.execute === false
        ? aiTool({ description: name, inputSchema: z.object({ n: z.number() }) })
        : aiTool({
          description: name,
          inputSchema: z.object({ n: z.number() }),
          execute: ({ n }) => handlers[name]!(n)
        })
    ])) as never
    return generateText({ model, tools, prompt: "go" })
  }
