import type { ToolUseContext } from "@switchyard/core"
import { Batches, DispatchEvent, Messages, StreamingExecutor } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { call, chapterCalls, environment, RunLog, scriptedTool, type ScriptInput, MemoryAllowAll } from "./fixtures.js"

const chapterTools = (log: RunLog) => [
  scriptedTool("Read", log, { safe: true }),
  scriptedTool("Grep", log, { safe: true }),
  scriptedTool("Edit", log)
]

const overlaps = (log: RunLog, a: string, b: string) => {
  const x = log.get(a)!
  const y = log.get(b)!
  return x.start < y.end! && y.start < x.end!
}

describe("Batches (SPEC §4.7)", () => {
  it.effect("the chapter's example partitions into three batches", () =>
    Effect.gen(function*() {
      const env = yield* environment(chapterTools(new RunLog()))
      const batches = yield* Batches.partitionToolCalls(chapterCalls, env)
      expect(batches.map((b) => [b.isConcurrencySafe, b.calls.map((c) => c.id)])).toEqual([
        [true, ["A", "B", "C"]],
        [false, ["D"]],
        [true, ["E", "F"]]
      ])
    }))

  it.effect("safe batches overlap, the unsafe call runs alone (TestClock)", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(chapterTools(log))
      const fiber = yield* Batches.runTools(chapterCalls, env).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(1_000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      expect(overlaps(log, "A", "B") && overlaps(log, "B", "C") && overlaps(log, "A", "C")).toBe(true)
      expect(overlaps(log, "E", "F")).toBe(true)
      for (const other of ["A", "B", "C", "E", "F"]) expect(overlaps(log, "D", other)).toBe(false)
      expect(log.get("D")!.start).toBe(120)
      expect(log.get("E")!.start).toBe(170)
      // First ready, first out within a concurrent batch.
      expect(events.filter(DispatchEvent.isResult).map((e) => e.toolUseId)).toEqual(["C", "A", "B", "D", "E", "F"])
      expect(yield* TestClock.currentTimeMillis).toBe(1_000)
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("safety is input-dependent; unknown tools and undecodable input are unsafe", () =>
    Effect.gen(function*() {
      const shell = scriptedTool("Bash", new RunLog(), { safe: (input: ScriptInput) => input.label === "ls" })
      const env = yield* environment([shell])
      const batches = yield* Batches.partitionToolCalls([
        call("1", "Bash", { label: "ls" }),
        call("2", "Bash", { label: "ls" }),
        call("3", "Bash", { label: "mkdir" }),
        call("4", "Bash", { label: "ls" }),
        call("5", "Nope", {}),
        call("6", "Bash", { label: 42 }),
        call("7", "Bash", { label: "ls" })
      ], env)
      expect(batches.map((b) => b.calls.map((c) => c.id))).toEqual([["1", "2"], ["3"], ["4"], ["5"], ["6"], ["7"]])
    }))

  it.effect("the cap holds: 25 safe tools with cap 10 never have more than 10 executing", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment([scriptedTool("Read", log, { safe: true })])
      const calls = Array.from({ length: 25 }, (_, i) => call(`r${i}`, "Read", { ms: 10 + (i % 7) * 5 }))
      const fiber = yield* Batches.runTools(calls, env, { concurrency: 10 }).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(1_000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      expect(events.filter(DispatchEvent.isResult)).toHaveLength(25)
      expect(log.maxConcurrent.value).toBe(10)
    }).pipe(Effect.provide(MemoryAllowAll)))

  for (
    const [name, run] of [["runTools", Batches.runTools], [
      "StreamingExecutor.runAll",
      StreamingExecutor.runAll
    ]] as const
  ) {
    it.effect(`${name}: a repeated tool_use id is renamed and answered with an error, as the query loop does`, () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment([scriptedTool("Edit", log)])
        const calls = [call("x", "Edit", { label: "first" }), call("x", "Edit", { label: "second" }), call("y", "Edit")]
        const fiber = yield* run(calls, env).pipe(Stream.runCollect, Effect.fork)
        yield* TestClock.adjust(1_000)
        const results = Chunk.toArray(yield* Fiber.join(fiber)).filter(DispatchEvent.isResult)
        // Every block gets its own id and exactly one result; the repeat never ran.
        expect(results.map((r) => r.toolUseId).sort()).toEqual(["x", "x_2", "y"])
        expect(log.spans.map((span) => span.id).sort()).toEqual(["x", "y"])
        const repeat = results.find((r) => r.toolUseId === "x_2")!
        expect(repeat.status).toBe("error")
        expect(Messages.contentText(repeat.block.content)).toContain("repeats the id x")
        expect(Messages.contentText(results.find((r) => r.toolUseId === "x")!.block.content)).toBe("first done")
      }).pipe(Effect.provide(MemoryAllowAll)))
  }

  it.effect("the cap is read from SWITCHYARD_MAX_TOOL_USE_CONCURRENCY, then the Claude Code spelling", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.withConfigProvider(
          Batches.concurrencyCap(undefined),
          ConfigProvider.fromMap(new Map(Object.entries(env)))
        )
      expect(yield* read({})).toBe(10)
      expect(yield* read({ SWITCHYARD_MAX_TOOL_USE_CONCURRENCY: "3" })).toBe(3)
      expect(yield* read({ CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: "4" })).toBe(4)
      expect(yield* read({ SWITCHYARD_MAX_TOOL_USE_CONCURRENCY: "2", CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: "4" })).toBe(
        2
      )
      // An invalid value falls back to the default (and is warned about once).
      expect(yield* read({ SWITCHYARD_MAX_TOOL_USE_CONCURRENCY: "0" })).toBe(10)
    }))

  it.effect("context modifiers of a concurrent batch apply after it, in call order; serial ones at once", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const appendTask = (input: ScriptInput): ToolUseContext.ContextModifier => (context) => ({
        ...context,
        todos: [...context.todos, { content: input.label ?? "?", status: "pending", activeForm: "" }]
      })
      const seenAtStart: Record<string, ReadonlyArray<string>> = {}
      const read = scriptedTool("Read", log, { safe: true, modifier: appendTask })
      const edit = scriptedTool("Edit", log, { modifier: appendTask })
      const env = yield* environment([read, edit])
      // Snapshot what each call saw: the context at its start.
      const spy = {
        ...edit,
        name: "Spy",
        call: (_: unknown, ctx: { readonly toolUseId: string; readonly context: ToolUseContext.ToolUseContext }) =>
          Effect.sync(() => {
            seenAtStart[ctx.toolUseId] = ctx.context.todos.map((t) => t.content)
            return "ok"
          })
      }
      const envWithSpy = { ...env, tools: [...env.tools, spy], pool: [...env.pool, spy] }
      const fiber = yield* Batches.runTools([
        call("1", "Read", { ms: 30, label: "first" }),
        call("2", "Read", { ms: 10, label: "second" }),
        call("3", "Spy", {}),
        call("4", "Edit", { label: "third" }),
        call("5", "Spy", {})
      ], envWithSpy).pipe(Stream.runDrain, Effect.fork)
      yield* TestClock.adjust(100)
      yield* Fiber.join(fiber)
      expect(seenAtStart["3"]).toEqual(["first", "second"])
      expect(seenAtStart["5"]).toEqual(["first", "second", "third"])
      expect((yield* Ref.get(env.context)).todos.map((t) => t.content)).toEqual(["first", "second", "third"])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("runTools does no sibling cancellation", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment([scriptedTool("Bash", log, { safe: true })])
      const fiber = yield* Batches.runTools([
        call("1", "Bash", { ms: 10, fail: true }),
        call("2", "Bash", { ms: 50 })
      ], env).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(100)
      const results = Chunk.toArray(yield* Fiber.join(fiber)).filter(DispatchEvent.isResult)
      expect(results.map((r) => [r.toolUseId, r.status])).toEqual([["1", "error"], ["2", "success"]])
    }).pipe(Effect.provide(MemoryAllowAll)))
})
