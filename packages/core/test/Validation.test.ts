import {
  DispatchEvent,
  Execution,
  Hooks,
  Messages,
  PermissionChain,
  Permissions,
  Results,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as Validation from "@switchyard/core/Validation"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const seen: Array<{ readonly observable: unknown; readonly call: unknown }> = []

const EditInput = Schema.Struct({
  file_path: Schema.String,
  offset: Schema.optional(Schema.Int.pipe(Schema.positive())),
  mode: Schema.optional(Schema.Literal("replace", "insert")),
  edits: Schema.optional(Schema.Array(Schema.Struct({ old_string: Schema.String, new_string: Schema.String })))
})

const editor = Tool.make("Editor", {
  description: "edits",
  input: EditInput,
  validateInput: (input) =>
    input.file_path.includes("missing")
      ? Effect.fail(new Tool.ToolError({ message: `File does not exist: ${input.file_path}` }))
      : Effect.void,
  backfillObservableInput: (input, context) =>
    input.file_path.startsWith("/") ? input : { ...input, file_path: `${context.cwd}/${input.file_path}` },
  checkPermissions: () => Effect.succeed({ behavior: "allow" as const }),
  call: (input) => Effect.sync(() => `edited ${input.file_path}`)
})

const resultOf = (input: unknown, name = "Editor", layer: Layer.Layer<never> = Layer.empty) =>
  Effect.gen(function*() {
    const env: Execution.Environment = {
      tools: [editor],
      pool: [editor],
      context: yield* Ref.make(ToolUseContext.make({ cwd: "/work", sessionId: "s" }))
    }
    const events = Chunk.toArray(
      yield* Stream.runCollect(Execution.runToolUse(Messages.toolUse("t", name, input), env))
    )
    const results = events.filter(DispatchEvent.isResult)
    expect(results).toHaveLength(1)
    return results[0]!
  }).pipe(Effect.provide(Layer.merge(Results.layerMemory, layer)))

const text = (result: DispatchEvent.Result) => Messages.contentText(result.block.content)

describe("Validation (SPEC §4.4)", () => {
  describe("level 1: schema decode, one readable line per parameter", () => {
    const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<string>]> = [
      ["wrong type", { file_path: 42 }, ["`file_path`", "string", "number 42"]],
      ["missing required", {}, ["The required parameter `file_path` is missing"]],
      ["null input", null, ["must be a JSON object", "null"]],
      ["array input", [{ file_path: "a" }], ["must be a JSON object", "array"]],
      ["string input", "a.txt", ["must be a JSON object", "string"]],
      ["number input", 7, ["must be a JSON object", "number"]],
      ["extra nesting", { file_path: { path: "a.txt" } }, ["`file_path`", "string", "object"]],
      ["unexpected parameter", { file_path: "a", filePath: "a" }, ["An unexpected parameter `filePath` was provided"]],
      ["refinement", { file_path: "a", offset: -3 }, ["`offset`", "positive", "-3"]],
      ["non-integer", { file_path: "a", offset: 1.5 }, ["`offset`", "integer"]],
      ["numeric string", { file_path: "a", offset: "10" }, ["`offset`", "number", "string \"10\""]],
      ["bad literal", { file_path: "a", mode: "append" }, ["`mode`", "\"replace\" or \"insert\""]],
      ["nested array item", { file_path: "a", edits: [{ old_string: "x", new_string: 1 }] }, ["`edits[0].new_string`"]],
      ["null field", { file_path: null }, ["`file_path`", "null"]]
    ]
    for (const [label, input, fragments] of cases) {
      it.effect(`${label}: one error result naming the parameter`, () =>
        Effect.gen(function*() {
          const result = yield* resultOf(input)
          expect(result.status).toBe("error")
          expect(result.block.is_error).toBe(true)
          const message = text(result)
          expect(message.startsWith("InputValidationError: Editor failed due to the following issue")).toBe(true)
          for (const fragment of fragments) expect(message).toContain(fragment)
        }))
    }

    it.effect("a huge string is shown clipped, not dumped", () =>
      Effect.gen(function*() {
        const huge = "x".repeat(1_000_000)
        const message = text(yield* resultOf({ file_path: 1, mode: huge }))
        expect(message).toContain("`mode`")
        expect(message).toContain("1000002 characters")
        expect(message.length).toBeLessThan(2_000)
      }))

    it.effect("several issues give several lines", () =>
      Effect.gen(function*() {
        const message = text(yield* resultOf({ offset: "1", extra: true }))
        expect(message.split("\n").length).toBe(4)
      }))

    it.effect("an unknown tool name is an error result, with suggestions", () =>
      Effect.gen(function*() {
        const result = yield* resultOf({ file_path: "a" }, "Edtor")
        expect(result.status).toBe("error")
        expect(text(result).split("\n")[0]).toBe("No such tool available: Edtor")
        expect(text(result).split("\n")[1]).toContain("Editor")
      }))
  })

  it.effect("level 2: validateInput failures become the error result", () =>
    Effect.gen(function*() {
      const result = yield* resultOf({ file_path: "/work/missing.txt" })
      expect(result.status).toBe("error")
      expect(text(result)).toBe("File does not exist: /work/missing.txt")
    }))

  describe("observable vs call input", () => {
    const recordingPolicy = (updatedInput?: unknown) =>
      Layer.succeed(Permissions.PermissionPolicy, {
        decide: (request) =>
          Effect.sync(() => {
            seen.push({ observable: request.input, call: undefined })
            return updatedInput === undefined
              ? { behavior: "allow" as const, source: "default" }
              : {
                behavior: "allow" as const,
                source: "default",
                updatedInput: { input: updatedInput, source: "test rule X" }
              }
          })
      })

    it.effect("permissions see the backfilled copy; call gets the decoded original", () =>
      Effect.gen(function*() {
        seen.length = 0
        const result = yield* resultOf({ file_path: "a.txt" }, "Editor", recordingPolicy())
        expect(seen[0]!.observable).toEqual({ file_path: "/work/a.txt" })
        expect(text(result)).toBe("edited a.txt")
      }))

    it.effect("updatedInput becomes the call input after passing validation again", () =>
      Effect.gen(function*() {
        const result = yield* resultOf({ file_path: "a.txt" }, "Editor", recordingPolicy({ file_path: "/safe/b.txt" }))
        expect(result.status).toBe("success")
        expect(text(result)).toBe("edited /safe/b.txt")
      }))

    it.effect("an invalid updatedInput is an error naming who supplied it", () =>
      Effect.gen(function*() {
        const result = yield* resultOf({ file_path: "a.txt" }, "Editor", recordingPolicy({ file_path: 3 }))
        expect(result.status).toBe("error")
        expect(text(result)).toContain("test rule X")
        expect(text(result)).toContain("`file_path`")
      }))

    it.effect("an updatedInput failing validateInput is an error naming who supplied it", () =>
      Effect.gen(function*() {
        const result = yield* resultOf({ file_path: "a.txt" }, "Editor", recordingPolicy({ file_path: "/missing" }))
        expect(text(result)).toContain("test rule X")
        expect(text(result)).toContain("File does not exist: /missing")
      }))
  })

  describe("a hook's updatedInput is validated before any rule or checkPermissions sees it", () => {
    const setup = (updatedInput: unknown) => {
      const checked: Array<unknown> = []
      const called: Array<unknown> = []
      const posted: Array<unknown> = []
      const tool = Tool.make("Writer", {
        description: "writes",
        input: Schema.Struct({ file_path: Schema.String }),
        backfillObservableInput: (input, context) =>
          input.file_path.startsWith("/") ? input : { ...input, file_path: `${context.cwd}/${input.file_path}` },
        // A check that assumes a valid input (as real ones do): a number here would be a TypeError.
        checkPermissions: (input) =>
          Effect.sync(() => {
            checked.push(input)
            return input.file_path.endsWith(".lock")
              ? { behavior: "deny" as const, message: "lock files are off limits" }
              : { behavior: "allow" as const }
          }),
        call: (input) => Effect.sync(() => void called.push(input)).pipe(Effect.as(`wrote ${input.file_path}`))
      })
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: (event) => event === "PreToolUse" || event === "PostToolUse",
        preToolUse: () =>
          Effect.succeed({
            ...Hooks.emptyPreToolUse,
            decision: "allow" as const,
            updatedInput: { input: updatedInput, source: "PreToolUse hook rewrite.sh" }
          }),
        postToolUse: (request) =>
          Effect.sync(() => void posted.push(request.input)).pipe(Effect.as(Hooks.emptyPostToolUse))
      }
      const run = (policy: Layer.Layer<never, never, never>) =>
        Effect.gen(function*() {
          const env: Execution.Environment = {
            tools: [tool],
            pool: [tool],
            context: yield* Ref.make(ToolUseContext.make({ cwd: "/work", sessionId: "s" }))
          }
          const events = Chunk.toArray(
            yield* Stream.runCollect(Execution.runToolUse(Messages.toolUse("t", "Writer", { file_path: "a.txt" }), env))
          )
          return events.filter(DispatchEvent.isResult)[0]!
        }).pipe(Effect.provideService(Hooks.Hooks, hooks), Effect.provide(Layer.merge(Results.layerMemory, policy)))
      return { checked, called, posted, run }
    }
    const policies: ReadonlyArray<readonly [string, Layer.Layer<never, never, never>]> = [
      ["the default policy", Layer.empty],
      [
        "the permission chain",
        Layer.provide(
          PermissionChain.layer({ home: "/nonexistent-home" }),
          NodeContext.layer
        ) as unknown as Layer.Layer<never>
      ]
    ]
    for (const [label, policy] of policies) {
      it.effect(`${label}: an invalid replacement is an error naming the hook; nothing checks or runs it`, () =>
        Effect.gen(function*() {
          const { called, checked, run } = setup({ file_path: 3 })
          const result = yield* run(policy)
          expect(result.status).toBe("error")
          expect(text(result)).toContain("The input supplied by PreToolUse hook rewrite.sh is invalid")
          expect(text(result)).toContain("`file_path`")
          expect(text(result)).not.toContain("TypeError")
          expect(checked).toEqual([])
          expect(called).toEqual([])
        }))

      it.effect(`${label}: a valid replacement is what the check judges, what runs and what post hooks see`, () =>
        Effect.gen(function*() {
          const { called, checked, posted, run } = setup({ file_path: "b.txt" })
          const result = yield* run(policy)
          expect(text(result)).toBe("wrote b.txt")
          expect(checked).toEqual([{ file_path: "/work/b.txt" }])
          expect(called).toEqual([{ file_path: "b.txt" }])
          expect(posted).toEqual([{ file_path: "/work/b.txt" }])
          const denied = yield* setup({ file_path: "x.lock" }).run(policy)
          expect(denied.status).toBe("denied")
          expect(text(denied)).toBe("lock files are off limits")
        }))
    }
  })

  describe("messages say what was expected in words", () => {
    const decodeMessage = (schema: Schema.Schema.AnyNoContext, input: unknown) => {
      const tool = Tool.make("T", { description: "", input: schema, call: () => Effect.succeed("") })
      const decoded = Validation.decodeInput(tool, input, ToolUseContext.make({ cwd: "/" }), [])
      return decoded._tag === "Left" ? decoded.left.message : ""
    }
    const cases: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext, unknown, string]> = [
      [
        "an optional transformed field",
        Schema.Struct({ n: Schema.optional(Schema.NumberFromString) }),
        { n: "abc" },
        "Unable to decode \"abc\" into a number"
      ],
      ["null", Schema.Struct({ s: Schema.String }), { s: null }, "The parameter `s` must be a string, but was null"],
      [
        "nested arrays",
        Schema.Struct({ m: Schema.Array(Schema.Array(Schema.Number)) }),
        { m: "x" },
        "must be an array of arrays of numbers, but was the string \"x\""
      ],
      [
        "an array of objects",
        Schema.Struct({ e: Schema.Array(Schema.Struct({ a: Schema.String })) }),
        { e: 1 },
        "must be an array of objects with `a`"
      ],
      ["a nullable number", Schema.Struct({ s: Schema.NullOr(Schema.Number) }), { s: "x" }, "must be a number or null"],
      [
        "an optional literal",
        Schema.Struct({ m: Schema.optional(Schema.Literal("a", "b")) }),
        { m: 3 },
        "must be \"a\" or \"b\", but was the number 3"
      ],
      [
        "a nested object",
        Schema.Struct({ o: Schema.Struct({ x: Schema.Number }) }),
        { o: 5 },
        "must be an object with `x`"
      ]
    ]
    for (const [label, schema, input, fragment] of cases) {
      it(label, () => {
        const message = decodeMessage(schema, input)
        expect(message).toContain(fragment)
        expect(message).not.toMatch(/Expected undefined|null null|ReadonlyArray|readonly |\{ readonly/)
      })
    }
  })

  describe("deferred tools", () => {
    const deferred = Tool.make("mcp__db__query", {
      description: "query",
      input: Schema.Struct({ sql: Schema.String }),
      isMcp: true,
      call: () => Effect.succeed("rows")
    })
    const search = Tool.make("ToolSearch", {
      description: "search",
      input: Schema.Struct({}),
      call: () => Effect.succeed("")
    })
    const context = ToolUseContext.make({ cwd: "/" })

    it("hints at ToolSearch when the schema was never loaded", () => {
      const failure = Validation.decodeInput(deferred, { query: "x" }, context, [deferred, search])
      expect(failure._tag === "Left" && failure.left.message).toContain("select:mcp__db__query")
    })

    it("no hint once a tool_reference loaded it, or without ToolSearch", () => {
      const loaded = ToolUseContext.make({
        cwd: "/",
        messages: [{
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "x",
            content: [{ type: "tool_reference", tool_name: "mcp__db__query" }]
          }]
        }]
      })
      const withRef = Validation.decodeInput(deferred, {}, loaded, [deferred, search])
      expect(withRef._tag === "Left" && withRef.left.message).not.toContain("ToolSearch")
      const noSearch = Validation.decodeInput(deferred, {}, context, [deferred])
      expect(noSearch._tag === "Left" && noSearch.left.message).not.toContain("ToolSearch")
    })
  })
})
