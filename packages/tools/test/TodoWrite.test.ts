import { describe, expect, it } from "@effect/vitest"
import { Messages, ToolUseContext } from "@switchyard/core"
import * as TodoWrite from "@switchyard/tools/TodoWrite"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { dispatch, expectPlainObjectSchema, makeContext, runBatches, toolsLayer } from "./fixtures/toolHarness.js"

const todo = (content: string, status: ToolUseContext.Todo["status"]): ToolUseContext.Todo => ({
  content,
  status,
  activeForm: `${content}ing`
})

describe("TodoWrite", () => {
  it.effect("keeps the list in the context, replacing it on each call", () =>
    Effect.gen(function*() {
      const ctx = yield* makeContext("/tmp")
      const first = [todo("Build", "in_progress"), todo("Test", "pending")]
      const result = yield* dispatch(ctx, "TodoWrite", { todos: first })
      expect(result.status).toBe("success")
      expect(result.text).toContain("Todos have been modified successfully")
      expect((yield* Ref.get(ctx)).todos).toEqual(first)
      const second = [todo("Build", "completed"), todo("Test", "in_progress")]
      yield* dispatch(ctx, "TodoWrite", { todos: second })
      expect((yield* Ref.get(ctx)).todos).toEqual(second)
    }).pipe(Effect.provide(toolsLayer(TodoWrite.layer))))

  it.effect("a list where everything is completed is cleared", () =>
    Effect.gen(function*() {
      const ctx = yield* makeContext("/tmp", { todos: [todo("Ship", "in_progress")] })
      yield* dispatch(ctx, "TodoWrite", { todos: [todo("Ship", "completed")] })
      expect((yield* Ref.get(ctx)).todos).toEqual([])
    }).pipe(Effect.provide(toolsLayer(TodoWrite.layer))))

  it.effect("two calls in one concurrent batch leave the later list (modifiers apply in call order)", () =>
    Effect.gen(function*() {
      const ctx = yield* makeContext("/tmp")
      const results = yield* runBatches(ctx, [
        Messages.toolUse("a", "TodoWrite", { todos: [todo("A", "pending")] }),
        Messages.toolUse("b", "TodoWrite", { todos: [todo("B", "pending")] })
      ])
      expect([results.get("a")?.status, results.get("b")?.status]).toEqual(["success", "success"])
      expect((yield* Ref.get(ctx)).todos).toEqual([todo("B", "pending")])
    }).pipe(Effect.provide(toolsLayer(TodoWrite.layer))))

  it.effect("an invalid status or an empty content is an input error naming the field", () =>
    Effect.gen(function*() {
      const ctx = yield* makeContext("/tmp")
      const status = yield* dispatch(ctx, "TodoWrite", { todos: [{ content: "x", status: "done", activeForm: "x" }] })
      expect(status.status).toBe("error")
      expect(status.text).toContain("InputValidationError")
      expect(status.text).toContain("status")
      const empty = yield* dispatch(ctx, "TodoWrite", { todos: [{ content: "", status: "pending", activeForm: "x" }] })
      expect(empty.text).toContain("content")
      expect((yield* Ref.get(ctx)).todos).toEqual([])
    }).pipe(Effect.provide(toolsLayer(TodoWrite.layer))))

  it("is concurrency-safe and read-only (its only effect is a context modifier)", () => {
    const context = ToolUseContext.make({ cwd: "/" })
    expect(TodoWrite.TodoWrite.isConcurrencySafe({ todos: [] }, context)).toBe(true)
    expect(TodoWrite.TodoWrite.isReadOnly({ todos: [] }, context)).toBe(true)
  })

  it("sends a plain inlined object schema with the items inlined", () => {
    const schema = expectPlainObjectSchema(TodoWrite.TodoWrite)
    const todos =
      (schema.properties as Record<string, { items?: { properties?: object; required?: unknown } }>)["todos"]
    expect(Object.keys(todos?.items?.properties ?? {})).toEqual(["content", "status", "activeForm"])
    expect(todos?.items?.required).toEqual(["content", "status", "activeForm"])
  })
})
