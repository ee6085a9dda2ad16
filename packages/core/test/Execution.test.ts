import {
  Batches,
  DispatchEvent,
  Execution,
  Hooks,
  Messages,
  type PermissionContext,
  Permissions,
  Results,
  StreamingExecutor,
  Tool,
  ToolCall,
  ToolUseContext
} from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import { call, environment, RunLog, scriptedTool, MemoryAllowAll } from "./fixtures.js"

const collect = (block: ToolCall.Any, tools: ReadonlyArray<Tool.Any>) =>
  Effect.gen(function*() {
    const env = yield* environment(tools)
    return Chunk.toArray(yield* Stream.runCollect(Execution.runToolUse(block, env)))
  })

const onlyResult = (events: ReadonlyArray<DispatchEvent.DispatchEvent>) => {
  const results = events.filter(DispatchEvent.isResult)
  expect(results).toHaveLength(1)
  return results[0]!
}

describe("Execution (SPEC §4.6)", () => {
  it.effect("one call is a stream: Started, progress, then one Result with start/end times", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const tool = scriptedTool("Slow", log)
      const seen: Array<DispatchEvent.DispatchEvent> = []
      const fiber = yield* collect(call("a", "Slow", { ms: 1000, progress: 3 }), [tool]).pipe(Effect.fork)
      // The real consumer: observe events as they arrive.
      const env = yield* environment([tool])
      const live = yield* Execution.runToolUse(call("b", "Slow", { ms: 1000, progress: 3 }), env).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.fork
      )
      yield* TestClock.adjust(300)
      expect(seen.map((e) => e._tag)).toEqual(["Started", "Progress", "Progress"])
      expect(seen.some(DispatchEvent.isResult)).toBe(false)
      yield* TestClock.adjust(1000)
      yield* Fiber.join(live)
      const events = yield* Fiber.join(fiber)
      expect(events.map((e) => e._tag)).toEqual(["Started", "Progress", "Progress", "Progress", "Result"])
      const result = onlyResult(events)
      expect(result.status).toBe("success")
      expect(result.startedAt).toBe(0)
      expect(result.endedAt).toBe(1000)
      expect(result.block).toEqual({ type: "tool_result", tool_use_id: "a", content: "Slow done" })
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a failing call is an error result with the tool's message", () =>
    Effect.gen(function*() {
      const result = onlyResult(
        yield* collect(call("a", "T", { fail: true, label: "disk" }), [scriptedTool("T", new RunLog())])
      )
      expect(result.status).toBe("error")
      expect(result.block.is_error).toBe(true)
      expect(result.block.content).toBe("disk failed")
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a call that dies or throws is an error result; the engine does not crash", () =>
    Effect.gen(function*() {
      const died = onlyResult(yield* collect(call("a", "T", { die: true }), [scriptedTool("T", new RunLog())]))
      expect(died.status).toBe("error")
      expect(Messages.contentText(died.block.content)).toContain("T failed unexpectedly (Error: T exploded)")
      const thrower = Tool.make("Thrower", {
        description: "throws synchronously",
        input: Schema.Struct({}),
        call: () => {
          throw new TypeError("cannot read properties of undefined")
        }
      })
      const thrown = onlyResult(yield* collect(call("b", "Thrower"), [thrower]))
      expect(thrown.status).toBe("error")
      expect(Messages.contentText(thrown.block.content)).toContain("TypeError: cannot read properties of undefined")
      const badPredicate = Tool.make("BadValidate", {
        description: "validateInput throws",
        input: Schema.Struct({}),
        validateInput: () => Effect.die("boom"),
        call: () => Effect.succeed("never")
      })
      const validateDied = onlyResult(yield* collect(call("c", "BadValidate"), [badPredicate]))
      expect(validateDied.status).toBe("error")
      expect(Messages.contentText(validateDied.block.content)).toContain("boom")
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a streaming call: progress items become events, the Output item the result", () =>
    Effect.gen(function*() {
      const streamer = Tool.make("Streamer", {
        description: "streams",
        input: Schema.Struct({}),
        call: () =>
          Stream.make<Array<Tool.StreamItem<string, string>>>(
            Tool.progress("one"),
            Tool.progress("two"),
            Tool.output("final")
          )
      })
      const events = yield* collect(call("a", "Streamer"), [streamer])
      expect(events.filter(DispatchEvent.isProgress).map((e) => e.data)).toEqual(["one", "two"])
      expect(onlyResult(events).block.content).toBe("final")
      const silent = Tool.make<{}, string>("Silent", {
        description: "",
        input: Schema.Struct({}),
        call: () => Stream.empty
      })
      expect(onlyResult(yield* collect(call("b", "Silent"), [silent])).block.content).toContain("ended without output")
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a denial is a 'denied' result with the message, and PermissionDecided is published", () =>
    Effect.gen(function*() {
      const events = yield* collect(call("a", "T"), [scriptedTool("T", new RunLog())]).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: () => Effect.succeed({ behavior: "deny" as const, source: "rule", message: "Denied by rule T" })
        }))
      )
      const decided = events.find(DispatchEvent.$is("PermissionDecided"))
      expect(decided?.behavior).toBe("deny")
      const result = onlyResult(events)
      expect(result.status).toBe("denied")
      expect(result.block).toEqual({
        type: "tool_result",
        tool_use_id: "a",
        content: "Denied by rule T",
        is_error: true
      })
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a user's 'no' asks the runner to abort the turn", () =>
    Effect.gen(function*() {
      const env = yield* environment([scriptedTool("T", new RunLog())])
      const outcome = yield* Execution.execute(call("a", "T"), env, () => Effect.void).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: () =>
            Effect.succeed({ behavior: "deny" as const, source: "user", message: "no", rejectedByUser: true })
        }))
      )
      expect(outcome.abort).toBe("permission_rejected")
      expect(outcome.result.block.content).toBe(Results.REJECTED_BY_USER)
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("hook messages, additional context and updatedToolOutput flow through the result", () =>
    Effect.gen(function*() {
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: () => true,
        preToolUse: () =>
          Effect.succeed({ ...Hooks.emptyPreToolUse, messages: [{ content: "checked", level: "info" as const }] }),
        postToolUse: ({ response }) =>
          Effect.succeed({
            ...Hooks.emptyPostToolUse,
            updatedToolOutput: `redacted(${Messages.contentText(response)})`,
            additionalContext: ["remember the style guide"],
            stop: "budget exhausted"
          })
      }
      const env = yield* environment([scriptedTool("T", new RunLog())])
      const events: Array<DispatchEvent.DispatchEvent> = []
      const outcome = yield* Execution.execute(call("a", "T"), env, (e) => Effect.sync(() => void events.push(e))).pipe(
        Effect.provide(Layer.succeed(Hooks.Hooks, hooks))
      )
      expect(events.find(DispatchEvent.$is("HookAttachment"))?.content).toBe("checked")
      expect(outcome.result.block.content).toBe("redacted(T done)\n\nremember the style guide")
      expect(outcome.stop).toBe("budget exhausted")
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("events keep their order whether the emit publishes at once, refuses, or runs Effects", () =>
    Effect.gen(function*() {
      // A tool that answers at once: the whole pipeline after the hooks runs in one step.
      const sync = Tool.make("Sync", {
        description: "answers at once",
        input: Schema.Struct({}),
        call: () => Effect.succeed("ok")
      })
      const hooks: Hooks.Service = {
        ...Hooks.none,
        has: () => true,
        preToolUse: () =>
          Effect.succeed({ ...Hooks.emptyPreToolUse, messages: [{ content: "pre", level: "info" as const }] }),
        postToolUse: () =>
          Effect.succeed({ ...Hooks.emptyPostToolUse, messages: [{ content: "post", level: "info" as const }] })
      }
      const policy: Permissions.Service = {
        decide: () =>
          Effect.succeed({
            behavior: "allow" as const,
            source: "rule",
            reason: "allowed by a rule",
            updatedInput: undefined
          })
      }
      const env = yield* environment([sync])
      const orders: Record<string, ReadonlyArray<string>> = {}
      for (const kind of ["effects", "at once", "refusing"] as const) {
        const events: Array<DispatchEvent.DispatchEvent> = []
        const plain = (event: DispatchEvent.DispatchEvent) => Effect.sync(() => void events.push(event))
        const emit: Execution.Emit = kind === "effects"
          ? plain
          : Object.assign(plain, {
            unsafeOffer: (event: DispatchEvent.DispatchEvent) => kind === "at once" && events.push(event) > 0
          })
        const outcome = yield* Execution.execute(call("a", "Sync"), env, emit).pipe(
          Effect.provide(
            Layer.mergeAll(Layer.succeed(Hooks.Hooks, hooks), Layer.succeed(Permissions.PermissionPolicy, policy))
          )
        )
        expect(outcome.result.block.content).toBe("ok")
        orders[kind] = events.map((event) => event._tag === "HookAttachment" ? `Hook ${event.content}` : event._tag)
      }
      const expected = ["Started", "Hook pre", "PermissionDecided", "Hook post", "Result"]
      expect(orders).toEqual({ effects: expected, "at once": expected, refusing: expected })
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("every call runs in a span `execute_tool {name}`, with its id and outcome", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const base = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (...args) => {
          const span = base.span(...args)
          spans.push(span)
          return span
        },
        context: base.context
      })
      yield* collect(call("a", "T", { fail: true }), [scriptedTool("T", new RunLog())]).pipe(Effect.withTracer(tracer))
      const span = spans.find((s) => s.name === "execute_tool T")!
      expect(span.attributes.get("gen_ai.tool.call.id")).toBe("a")
      expect(span.attributes.get("switchyard.status")).toBe("error")
      expect(span.attributes.get("error.type")).toBe("ToolError")
    }).pipe(Effect.provide(MemoryAllowAll)))
})

describe("the default permission policy fails closed (SPEC §5)", () => {
  const guarded = (check: PermissionContext.ToolPermissionCheck, readOnly = false) => {
    const ran: Array<string> = []
    const tool = Tool.make("Guarded", {
      description: "checks its own permissions",
      input: Schema.Struct({}),
      isReadOnly: () => readOnly,
      checkPermissions: () => Effect.succeed(check),
      call: (_, ctx) => Effect.sync(() => void ran.push(ctx.toolUseId)).pipe(Effect.as("ran"))
    })
    return { tool, ran }
  }

  it.effect("the tool's own deny denies, and the tool does not run", () =>
    Effect.gen(function*() {
      const { ran, tool } = guarded({ behavior: "deny", message: "Guarded refuses /etc" })
      const result = onlyResult(yield* collect(call("a", "Guarded"), [tool]))
      expect(result.status).toBe("denied")
      expect(result.block.content).toBe("Guarded refuses /etc")
      expect(ran).toEqual([])
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("an ask denies, saying no permission policy is provided and how to provide one", () =>
    Effect.gen(function*() {
      const { ran, tool } = guarded({ behavior: "ask", message: "writes outside the project" })
      const result = onlyResult(yield* collect(call("a", "Guarded"), [tool]))
      expect(result.status).toBe("denied")
      const text = Messages.contentText(result.block.content)
      expect(text).toContain("writes outside the project")
      expect(text).toContain("no permission policy is provided")
      expect(text).toContain("PermissionChain.layer()")
      expect(text).toContain("Permissions.allowAll")
      expect(ran).toEqual([])
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a hook's ask denies too; a hook's deny denies", () =>
    Effect.gen(function*() {
      const { ran, tool } = guarded({ behavior: "allow" })
      const withHook = (decision: "ask" | "deny") =>
        collect(call("a", "Guarded"), [tool]).pipe(
          Effect.provideService(Hooks.Hooks, {
            ...Hooks.none,
            has: (event) => event === "PreToolUse",
            preToolUse: () => Effect.succeed({ ...Hooks.emptyPreToolUse, decision, reason: `hook says ${decision}` })
          })
        )
      const asked = onlyResult(yield* withHook("ask"))
      expect(asked.status).toBe("denied")
      expect(Messages.contentText(asked.block.content)).toContain("no permission policy is provided")
      const denied = onlyResult(yield* withHook("deny"))
      expect(denied.block.content).toBe("hook says deny")
      expect(ran).toEqual([])
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("a call that is not read-only is denied, saying how to provide a policy; a read-only one runs", () =>
    Effect.gen(function*() {
      const writing = guarded({ behavior: "allow" })
      const denied = onlyResult(yield* collect(call("a", "Guarded"), [writing.tool]))
      expect(denied.status).toBe("denied")
      const text = Messages.contentText(denied.block.content)
      expect(text).toContain("not read-only")
      expect(text).toContain("ClaudeCodePermissions.layer")
      expect(text).toContain("PermissionChain.layer()")
      // Library words: no command-line flags.
      expect(text).not.toMatch(/ --[a-z]/)
      expect(writing.ran).toEqual([])
      const reading = guarded({ behavior: "allow" }, true)
      expect(onlyResult(yield* collect(call("b", "Guarded"), [reading.tool])).block.content).toBe("ran")
      expect(reading.ran).toEqual(["b"])
    }).pipe(Effect.provide(Results.layerMemory)))

  it.effect("Permissions.allowAll, provided by name, runs even an ask", () =>
    Effect.gen(function*() {
      const asking = guarded({ behavior: "ask", message: "asks" })
      const result = onlyResult(
        yield* collect(call("b", "Guarded"), [asking.tool]).pipe(
          Effect.provideService(Permissions.PermissionPolicy, Permissions.allowAll)
        )
      )
      expect(result.status).toBe("success")
      expect(asking.ran).toEqual(["b"])
    }).pipe(Effect.provide(Results.layerMemory)))
})

describe("bad input and bad settings never stop a dispatch (SPEC §6)", () => {
  it.effect("a tagged error without a message gives its tag and fields", () =>
    Effect.gen(function*() {
      class OutOfStock extends Data.TaggedError("OutOfStock")<{ readonly sku: string; readonly left: number }> {}
      class Discontinued extends Schema.TaggedError<Discontinued>()("Discontinued", { sku: Schema.String }) {}
      const failing = (name: string, error: unknown) =>
        Tool.make<{}, string>(name, { description: "fails", input: Schema.Struct({}), call: () => Effect.fail(error) })
      const text = (name: string, error: unknown) =>
        Effect.map(collect(call("a", name), [failing(name, error)]), (events) => onlyResult(events).block.content)
      expect(yield* text("Shop", new OutOfStock({ sku: "a-1", left: 0 }))).toBe(
        "Error: OutOfStock {\"sku\":\"a-1\",\"left\":0}"
      )
      expect(yield* text("Shop", new Discontinued({ sku: "b-2" }))).toBe("Error: Discontinued {\"sku\":\"b-2\"}")
      expect(yield* text("Shop", new Error("disk full"))).toBe("Error: disk full")
      expect(yield* text("Shop", { code: 7 })).toBe("Error: {\"code\":7}")
      class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {
        override get message() {
          return `No order ${this.id}`
        }
      }
      expect(yield* text("Shop", new NotFound({ id: "o-9" }))).toBe("Error: No order o-9")
      const died = Tool.make<{}, string>("Dies", {
        description: "dies",
        input: Schema.Struct({}),
        call: () => Effect.die(new OutOfStock({ sku: "c", left: 1 }))
      })
      const content = onlyResult(yield* collect(call("a", "Dies"), [died])).block.content
      expect(content).toContain("Dies failed unexpectedly")
      expect(content).toContain("OutOfStock")
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("an output that cannot be encoded is an error result naming the tool and why, not a crash", () =>
    Effect.gen(function*() {
      const returnsFunction = Tool.make("Fn", {
        description: "returns a function",
        input: Schema.Struct({}),
        call: () => Effect.succeed(() => 1)
      })
      const mapsToUndefined = Tool.make("Undef", {
        description: "mapResult gives undefined",
        input: Schema.Struct({}),
        call: () => Effect.succeed({ a: 1 }),
        mapResult: () => undefined as unknown as string
      })
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      const returnsCycle = Tool.make("Cycle", {
        description: "returns a cyclic object",
        input: Schema.Struct({}),
        call: () => Effect.succeed(cyclic)
      })
      const cases = [
        [returnsFunction, "the output is a function, which has no JSON form"],
        [mapsToUndefined, "mapResult gave undefined"],
        [returnsCycle, "mapResult threw TypeError"]
      ] as const
      for (const [tool, reason] of cases) {
        const result = onlyResult(yield* collect(call("a", tool.name), [tool]))
        expect(result.status).toBe("error")
        const text = Messages.contentText(result.block.content)
        expect(text).toContain(`Error: ${tool.name} returned an output that cannot be sent to the model: ${reason}`)
        expect(text).not.toContain("failed unexpectedly")
      }
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("an unparsed tool_use is an InputValidationError result and the tool never runs", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const call = ToolCall.unparsed("a", "T", "Unexpected token , in JSON at position 9")
      expect(call.block.input).toEqual({})
      const result = onlyResult(yield* collect(call, [scriptedTool("T", log)]))
      expect(result.status).toBe("error")
      expect(result.block.content).toBe(
        "InputValidationError: the input is not valid JSON: Unexpected token , in JSON at position 9"
      )
      expect(log.spans).toHaveLength(0)
    }).pipe(Effect.provide(MemoryAllowAll)))

  for (const value of ["0", "-1", "abc", "2.5"]) {
    it.effect(`SWITCHYARD_MAX_TOOL_USE_CONCURRENCY=${value}: warned once, the default cap is used`, () =>
      Effect.gen(function*() {
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(message))
        })
        const log = new RunLog()
        const env = yield* environment([scriptedTool("Read", log, { safe: true })])
        const calls = Array.from({ length: 12 }, (_, i) => call(`r${i}`, "Read", { ms: 10 }))
        const provider = ConfigProvider.fromMap(new Map([["SWITCHYARD_MAX_TOOL_USE_CONCURRENCY", value]]))
        const dispatch = (run: typeof Batches.runTools) =>
          run(calls, env).pipe(
            Stream.runCollect,
            Effect.fork,
            Effect.tap(() => TestClock.adjust(1_000)),
            Effect.flatMap(Fiber.join),
            Effect.map((events) => Chunk.toArray(events).filter(DispatchEvent.isResult)),
            Effect.withConfigProvider(provider),
            Effect.provide(Logger.replace(Logger.defaultLogger, logger))
          )
        expect((yield* dispatch(Batches.runTools)).map((r) => r.status)).toEqual(calls.map(() => "success"))
        expect(log.maxConcurrent.value).toBe(Batches.DEFAULT_MAX_CONCURRENCY)
        expect((yield* dispatch(StreamingExecutor.runAll)).map((r) => r.status)).toEqual(calls.map(() => "success"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain(`SWITCHYARD_MAX_TOOL_USE_CONCURRENCY=${JSON.stringify(value)}`)
        expect(warnings[0]).toContain("10")
      }).pipe(Effect.provide(MemoryAllowAll)))
  }

  it.effect("an invalid concurrency option falls back to the default too", () =>
    Effect.gen(function*() {
      expect(yield* Batches.concurrencyCap(0, 10)).toBe(10)
      expect(yield* Batches.concurrencyCap(2.5, 10)).toBe(10)
      expect(yield* Batches.concurrencyCap(3, 10)).toBe(3)
    }))
})

describe("Results (SPEC §4.10)", () => {
  it.scoped("output over maxResultSizeChars is persisted in full; the model gets a preview and the path", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped()
      const big = Array.from({ length: 4000 }, (_, i) => `line ${i}`).join("\n")
      const tool = scriptedTool("Big", new RunLog(), { maxResultSizeChars: 5_000 })
      const result = onlyResult(
        yield* collect(call("toolu_big", "Big", { output: big }), [tool]).pipe(
          Effect.provide(Results.layerDirectory(home)),
          Effect.provideService(Permissions.PermissionPolicy, Permissions.allowAll)
        )
      )
      const text = Messages.contentText(result.block.content)
      const file = `${home}/sessions/test-session/tool-results/toolu_big.txt`
      expect(text).toContain(file)
      expect(text).toContain(`${big.length} characters`)
      expect(text).toContain(big.slice(0, 2_000))
      expect(text).toContain(big.slice(-1_000))
      expect(text.length).toBeLessThan(3_500)
      expect(yield* fs.readFileString(file)).toBe(big)
      expect(result.status).toBe("success")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("output within the limit is untouched", () =>
    Effect.gen(function*() {
      const result = onlyResult(
        yield* collect(call("a", "T", { output: "x".repeat(50_000) }), [scriptedTool("T", new RunLog())])
      )
      expect(result.block.content).toBe("x".repeat(50_000))
    }).pipe(Effect.provide(MemoryAllowAll)))

  it("toUserMessage lists results in call order and pairs a missing one", () => {
    const calls = [Messages.toolUse("a", "T", {}), Messages.toolUse("b", "T", {}), Messages.toolUse("c", "T", {})]
    const results = new Map([
      ["c", Messages.toolResult("c", "C")],
      ["a", Messages.toolResult("a", "A")]
    ])
    const message = Results.toUserMessage(calls, results)
    expect(Messages.blocks(message).map((b) => (b.type === "tool_result" ? [b.tool_use_id, b.is_error ?? false] : [])))
      .toEqual([
        ["a", false],
        ["b", true],
        ["c", false]
      ])
  })

  it("the state directory defaults to ~/.switchyard", () => {
    expect(Option.isSome(Option.some(Results.stateDirectory))).toBe(true)
    expect(ToolUseContext.make({ cwd: "/" }).sessionId).toMatch(/^[0-9a-f-]{36}$/)
  })
})
