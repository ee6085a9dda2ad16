/**
 * Issue 14: the tool span as the OpenTelemetry GenAI conventions name it, read
 * by a real OpenTelemetry SDK (an in-memory exporter), with a child span for
 * the time blocked on the user's permission answer.
 */
import { Batches, DispatchEvent, Execution, Messages, PermissionChain, Tool, ToolUseContext } from "@switchyard/core"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { MemoryAllowAll } from "./fixtures.js"

class OutOfStock extends Data.TaggedError("OutOfStock")<{ readonly sku: string }> {}

const lookup = Tool.make("Lookup", {
  description: "a plain function tool",
  input: Schema.Struct({ sku: Schema.String }),
  isReadOnly: () => true,
  call: ({ sku }) => (sku === "gone" ? Effect.fail(new OutOfStock({ sku })) : Effect.succeed(`found ${sku}`))
})
const mcpTool = Tool.make("mcp__shop__order", {
  description: "an MCP tool",
  input: Schema.Struct({}),
  isMcp: true,
  call: () => Effect.succeed("ordered")
})
const tools = [lookup, mcpTool]

/** Run calls with a real OpenTelemetry SDK; the spans it exported. */
const traced = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  layer: Layer.Layer<never> = Layer.empty,
  tracing = true
) =>
  Effect.gen(function*() {
    const exporter = new InMemorySpanExporter()
    const run = Effect.gen(function*() {
      const env: Execution.Environment = {
        tools,
        pool: tools,
        context: yield* Ref.make(ToolUseContext.make({ cwd: "/tmp", sessionId: "trace" }))
      }
      for (const call of calls) {
        yield* Stream.runDrain(Execution.runToolUse(call, env))
      }
      // Read before the SDK shuts down: shutting down empties the in-memory exporter.
      return exporter.getFinishedSpans()
    })
    return yield* (tracing ? run : Effect.withTracerEnabled(run, false)).pipe(
      Effect.provide(Layer.mergeAll(
        NodeSdk.layer(() => ({
          resource: { serviceName: "switchyard-test" },
          spanProcessor: new SimpleSpanProcessor(exporter)
        })),
        MemoryAllowAll,
        layer
      ))
    )
  })

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => {
  const found = spans.filter((span) => span.name === name)
  expect(found).toHaveLength(1)
  return found[0]!
}

describe("tracing (issue 14)", () => {
  it.effect("a call is a span `execute_tool {name}`, kind internal, with the GenAI attributes", () =>
    Effect.gen(function*() {
      const spans = yield* traced([Messages.toolUse("toolu_1", "Lookup", { sku: "a-1" })])
      const span = named(spans, "execute_tool Lookup")
      expect(span.kind).toBe(SpanKind.INTERNAL)
      expect(span.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Lookup",
        "gen_ai.tool.call.id": "toolu_1",
        "gen_ai.tool.type": "function",
        "switchyard.status": "success"
      })
      expect(span.attributes["error.type"]).toBeUndefined()
    }))

  it.effect("an MCP tool is of type extension; a failure carries error.type", () =>
    Effect.gen(function*() {
      const spans = yield* traced([
        Messages.toolUse("toolu_1", "mcp__shop__order", {}),
        Messages.toolUse("toolu_2", "Lookup", { sku: "gone" }),
        Messages.toolUse("toolu_3", "Lookup", { sku: 3 }),
        Messages.toolUse("toolu_4", "Lokup", {})
      ])
      expect(named(spans, "execute_tool mcp__shop__order").attributes["gen_ai.tool.type"]).toBe("extension")
      const failures = spans.filter((span) => span.attributes["gen_ai.tool.name"] !== "mcp__shop__order")
      expect(
        failures.map((
          span
        ) => [
          span.attributes["gen_ai.tool.call.id"],
          span.attributes["error.type"],
          span.attributes["switchyard.status"]
        ])
      )
        .toEqual([
          ["toolu_2", "OutOfStock", "error"],
          ["toolu_3", "InputValidationError", "error"],
          ["toolu_4", "tool_not_found", "error"]
        ])
      expect(named(spans, "execute_tool Lokup").attributes["gen_ai.tool.name"]).toBe("Lokup")
    }))

  it.effect("waiting for the user's permission answer is a child span of the call's span", () =>
    Effect.gen(function*() {
      const prompt = Layer.succeed(PermissionChain.PermissionPrompt, {
        ask: () => Effect.succeed({ answer: "yes" as const })
      })
      const chain = Layer.provide(PermissionChain.layer({ home: "/nonexistent-home" }), NodeContext.layer)
      const spans = yield* traced([Messages.toolUse("toolu_1", "mcp__shop__order", {})], Layer.merge(chain, prompt))
      const call = named(spans, "execute_tool mcp__shop__order")
      const wait = named(spans, "await_permission mcp__shop__order")
      expect(wait.parentSpanContext?.spanId).toBe(call.spanContext().spanId)
      expect(wait.attributes).toMatchObject({ "gen_ai.tool.call.id": "toolu_1", "switchyard.permission.answer": "yes" })
      expect(call.attributes["switchyard.status"]).toBe("success")
    }))

  it.effect("calls run one after another in one fiber: each span is a root, a tool's own span is its call's child", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      // Waits before answering, so its call is not answered at once and runs under its span.
      const slow = Tool.make("Slow", {
        description: "a tool that waits and opens its own span",
        input: Schema.Struct({}),
        call: () => Effect.zipRight(Effect.yieldNow(), Effect.withSpan(Effect.succeed("slow done"), "inside Slow"))
      })
      const serial = [lookup, slow]
      const calls = [
        Messages.toolUse("toolu_1", "Lookup", { sku: "a-1" }),
        Messages.toolUse("toolu_2", "Slow", {}),
        Messages.toolUse("toolu_3", "Lookup", { sku: "a-2" }),
        Messages.toolUse("toolu_4", "Slow", {})
      ]
      const spans = yield* Effect.gen(function*() {
        const env: Execution.Environment = {
          tools: serial,
          pool: serial,
          context: yield* Ref.make(ToolUseContext.make({ cwd: "/tmp", sessionId: "trace" }))
        }
        // Neither tool is concurrency-safe: runTools runs each call alone, in its own fiber.
        const events = yield* Stream.runCollect(Batches.runTools(calls, env))
        expect(Chunk.toReadonlyArray(events).filter(DispatchEvent.isResult).map((e) => e.status)).toEqual([
          "success",
          "success",
          "success",
          "success"
        ])
        return exporter.getFinishedSpans()
      }).pipe(
        Effect.provide(Layer.mergeAll(
          NodeSdk.layer(() => ({
            resource: { serviceName: "switchyard-test" },
            spanProcessor: new SimpleSpanProcessor(exporter)
          })),
          MemoryAllowAll
        ))
      )
      const calledSpans = spans.filter((span) => span.name.startsWith("execute_tool "))
      expect(calledSpans.map((span) => span.attributes["gen_ai.tool.call.id"]).sort()).toEqual([
        "toolu_1",
        "toolu_2",
        "toolu_3",
        "toolu_4"
      ])
      for (const span of calledSpans) {
        expect(span.parentSpanContext).toBeUndefined()
        expect(span.attributes["switchyard.status"]).toBe("success")
      }
      const inner = spans.filter((span) => span.name === "inside Slow")
      expect(inner).toHaveLength(2)
      const byId = new Map(
        calledSpans.map((span) => [span.spanContext().spanId, span.attributes["gen_ai.tool.call.id"]])
      )
      expect(inner.map((span) => byId.get(span.parentSpanContext!.spanId)).sort()).toEqual(["toolu_2", "toolu_4"])
    }))

  it.effect("with tracing off no span is made, and the call still runs", () =>
    Effect.gen(function*() {
      const spans = yield* traced([Messages.toolUse("toolu_1", "Lookup", { sku: "a-1" })], Layer.empty, false)
      expect(spans).toEqual([])
    }))
})
