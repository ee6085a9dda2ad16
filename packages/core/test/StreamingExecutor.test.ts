import {
  DispatchEvent,
  type Execution,
  Footprint,
  Interruption,
  type Messages,
  Permissions,
  Results,
  StreamingExecutor,
  Tool,
  type ToolUseContext
} from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { call, chapterCalls, environment, RunLog, ScriptInput, scriptedTool, MemoryAllowAll } from "./fixtures.js"

const resultsOf = (events: ReadonlyArray<DispatchEvent.DispatchEvent>) => events.filter(DispatchEvent.isResult)

/** Consume an executor's remaining results in the background, recording arrival. */
const consume = (executor: StreamingExecutor.StreamingExecutor) =>
  Effect.gen(function*() {
    const seen: Array<DispatchEvent.DispatchEvent> = []
    const fiber = yield* executor.getRemainingResults.pipe(
      Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
      Effect.fork
    )
    return { seen, fiber }
  })

const tools = (log: RunLog) => [
  scriptedTool("Read", log, { safe: true }),
  scriptedTool("Grep", log, { safe: true, interruptBehavior: "cancel" }),
  scriptedTool("Edit", log),
  scriptedTool("Bash", log, { safe: (input: ScriptInput) => input.label !== "mkdir" })
]

describe("StreamingExecutor (SPEC §4.8)", () => {
  it.scoped("tools start as they are added, while the turn is still streaming", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(tools(log))
      const executor = yield* StreamingExecutor.make(env)
      yield* executor.addTool(call("a", "Read", { ms: 500 }))
      yield* TestClock.adjust(150)
      expect(log.get("a")!.start).toBe(0)
      yield* executor.addTool(call("b", "Read", { ms: 100 }))
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(log.get("b")!.start).toBe(150)
      expect(resultsOf(seen).map((r) => r.toolUseId)).toEqual(["b", "a"])
      expect((yield* executor.tools).every((t) => t.status === "yielded")).toBe(true)
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.scoped("progress reaches the consumer at once, before the tool finishes", () =>
    Effect.gen(function*() {
      const env = yield* environment(tools(new RunLog()))
      const executor = yield* StreamingExecutor.make(env)
      yield* executor.addTool(call("a", "Edit", { ms: 1_000, progress: 4 }))
      yield* TestClock.adjust(10)
      const early = yield* executor.getCompletedResults
      expect(early.map((e) => e._tag)).toEqual(["Started", "Progress"])
      yield* TestClock.adjust(400)
      expect((yield* executor.getCompletedResults).map((e) => e._tag)).toEqual(["Progress", "Progress"])
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(seen.map((e) => e._tag)).toEqual(["Progress", "Result"])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.scoped("a slow safe tool does not hold back a later safe tool that finished first", () =>
    Effect.gen(function*() {
      const env = yield* environment(tools(new RunLog()))
      const executor = yield* StreamingExecutor.make(env)
      yield* executor.addTool(call("slow", "Read", { ms: 1_000 }))
      yield* executor.addTool(call("fast", "Grep", { ms: 10 }))
      yield* TestClock.adjust(20)
      expect(resultsOf(yield* executor.getCompletedResults).map((r) => r.toolUseId)).toEqual(["fast"])
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(resultsOf(seen).map((r) => r.toolUseId)).toEqual(["slow"])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.scoped("an unsafe tool waits for executing safe ones, runs alone, and blocks the queue behind it", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(tools(log))
      const executor = yield* StreamingExecutor.make(env)
      for (
        const block of [
          call("r1", "Read", { ms: 100 }),
          call("e", "Edit", { ms: 50 }),
          call("r2", "Read", { ms: 10 }),
          call("r3", "Read", { ms: 20 })
        ]
      ) yield* executor.addTool(block)
      expect((yield* executor.tools).map((t) => t.status)).toEqual(["executing", "queued", "queued", "queued"])
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(log.get("e")!.start).toBe(100)
      expect(log.get("r2")!.start).toBe(150)
      expect(log.get("r3")!.start).toBe(150)
      expect(resultsOf(seen).map((r) => r.toolUseId)).toEqual(["r1", "e", "r2", "r3"])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.scoped("an executing unsafe tool stops the yield walk", () =>
    Effect.gen(function*() {
      const env = yield* environment(tools(new RunLog()))
      const executor = yield* StreamingExecutor.make(env, { scheduling: "greedy" })
      yield* executor.addTool(call("e", "Edit", { ms: 100 }))
      yield* executor.addTool(call("g", "Grep", { ms: 10 }))
      // A new message: the queued Grep (`cancel`) gets its synthetic result now, the `block` Edit keeps running.
      yield* executor.interrupt("new_message")
      yield* TestClock.adjust(10)
      expect(resultsOf(yield* executor.getCompletedResults)).toEqual([])
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(200)
      yield* Fiber.join(fiber)
      expect(resultsOf(seen).map((r) => [r.toolUseId, r.status])).toEqual([["e", "success"], ["g", "cancelled"]])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.scoped("context modifiers of earlier completed tools apply before a later tool starts (Read then Write)", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const markRead = (input: ScriptInput): ToolUseContext.ContextModifier => (context) => ({
        ...context,
        fileState: new Map([...context.fileState, [input.label ?? "", { mtimeMs: 1, hash: "h", partial: false }]])
      })
      const read = scriptedTool("Read", log, { safe: true, modifier: markRead })
      const seenByWrite: Array<boolean> = []
      const write = {
        ...scriptedTool("Write", log),
        call: (_: unknown, ctx: { readonly context: ToolUseContext.ToolUseContext }) =>
          Effect.sync(() => {
            seenByWrite.push(ctx.context.fileState.has("a.txt"))
            return "written"
          })
      }
      const env = yield* environment([read, write])
      const executor = yield* StreamingExecutor.make(env)
      yield* executor.addTool(call("1", "Read", { ms: 20, label: "a.txt" }))
      yield* executor.addTool(call("2", "Write", {}))
      const { fiber } = yield* consume(executor)
      yield* TestClock.adjust(100)
      yield* Fiber.join(fiber)
      expect(seenByWrite).toEqual([true])
      expect((yield* Ref.get(env.context)).fileState.has("a.txt")).toBe(true)
    }).pipe(Effect.provide(MemoryAllowAll)))

  describe("sibling cancellation", () => {
    it.scoped("a Bash error interrupts running siblings; queued and later tools never start", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env, { scheduling: "greedy" })
        yield* executor.addTool(call("b1", "Bash", { ms: 500, label: "sleep" }))
        yield* executor.addTool(call("b2", "Bash", { ms: 20, fail: true }))
        yield* executor.addTool(call("r", "Read", { ms: 500 }))
        yield* executor.addTool(call("e", "Edit", { ms: 10 }))
        yield* TestClock.adjust(30)
        yield* executor.addTool(call("late", "Read", { ms: 10 }))
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(1_000)
        yield* Fiber.join(fiber)
        const results = resultsOf(seen).map((r) => [r.toolUseId, r.status, r.block.content])
        // The never-started Edit is complete at once and nothing unsafe is executing, so it is
        // yielded before the interrupted safe siblings have wound down.
        expect(results).toEqual([
          ["b2", "error", "Bash failed"],
          ["e", "cancelled", "Cancelled: a parallel Bash call failed"],
          ["b1", "cancelled", "Cancelled: a parallel Bash call failed"],
          ["r", "cancelled", "Cancelled: a parallel Bash call failed"],
          ["late", "cancelled", "Cancelled: a parallel Bash call failed"]
        ])
        expect(log.get("b1")!.interrupted).toBe(true)
        expect(log.get("b1")!.end).toBe(20)
        expect(log.get("e")).toBeUndefined()
        expect(log.get("late")).toBeUndefined()
        expect(log.liveCount).toBe(0)
        // A sibling error stays inside the turn.
        expect(yield* executor.abortReason).toEqual(Option.none())
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.scoped("only Bash errors cascade, and `none` turns it off", () =>
      Effect.gen(function*() {
        const run = (options: StreamingExecutor.Options, failing: string) =>
          Effect.gen(function*() {
            const env = yield* environment(tools(new RunLog()))
            const executor = yield* StreamingExecutor.make(env, options)
            yield* executor.addTool(call("slow", "Read", { ms: 100 }))
            yield* executor.addTool(call("bad", failing, { ms: 10, fail: true }))
            const { fiber, seen } = yield* consume(executor)
            yield* TestClock.adjust(200)
            yield* Fiber.join(fiber)
            return resultsOf(seen).find((r) => r.toolUseId === "slow")!.status
          })
        expect(yield* run({ scheduling: "greedy" }, "Grep")).toBe("success")
        expect(yield* run({ scheduling: "greedy", siblingCancellation: "none" }, "Bash")).toBe("success")
        expect(yield* run({ scheduling: "greedy" }, "Bash")).toBe("cancelled")
        expect(yield* run({ siblingCancellation: "bash" }, "Bash")).toBe("cancelled")
      }).pipe(Effect.provide(MemoryAllowAll)))
  })

  describe("results are never lost", () => {
    it.scoped("a flush interrupted while offering to a full mailbox loses no result", () =>
      Effect.gen(function*() {
        const env = yield* environment(tools(new RunLog()))
        const executor = yield* StreamingExecutor.make(env, { concurrency: 1, scheduling: "greedy" })
        // `p` floods the bounded mailbox with progress nobody reads; r1 and r2 wait for the cap.
        yield* executor.addTool(call("p", "Read", { ms: 600, progress: 300 }))
        yield* executor.addTool(call("r1", "Read", { ms: 1 }))
        yield* executor.addTool(call("r2", "Read", { ms: 1 }))
        yield* TestClock.adjust(500)
        // The abort cancels the queued calls; the fiber that raised it is interrupted at once.
        const interrupter = yield* Effect.fork(executor.interrupt("user_interrupt"))
        yield* TestClock.adjust(1)
        yield* Fiber.interrupt(interrupter)
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(1_000)
        yield* Fiber.join(fiber)
        expect(resultsOf(seen).map((r) => r.toolUseId).sort()).toEqual(["p", "r1", "r2"])
      }).pipe(Effect.provide(MemoryAllowAll)))
  })

  describe("the chapter's isErrorResult and new messages", () => {
    it.scoped("a Bash call ending in a denial cancels its siblings", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env, { scheduling: "greedy" })
        yield* executor.addTool(call("slow", "Read", { ms: 300 }))
        yield* executor.addTool(call("bash", "Bash", { ms: 10, label: "denied" }))
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(400)
        yield* Fiber.join(fiber)
        expect(resultsOf(seen).map((r) => [r.toolUseId, r.status])).toEqual([["bash", "denied"], ["slow", "cancelled"]])
        expect(log.get("slow")!.interrupted).toBe(true)
      }).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: (request) =>
            Effect.succeed(
              (request.input as ScriptInput).label === "denied"
                ? { behavior: "deny" as const, source: "rule", message: "Bash(denied) is denied" }
                : { behavior: "allow" as const, source: "default" }
            )
        })),
        Effect.provide(Results.layerMemory)
      ))

    it.scoped("a new message cancels queued `cancel` tools; queued `block` tools still run", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env, { scheduling: "greedy" })
        yield* executor.addTool(call("e", "Edit", { ms: 100 }))
        yield* executor.addTool(call("r", "Read", { ms: 10 }))
        yield* executor.addTool(call("g", "Grep", { ms: 10 }))
        yield* TestClock.adjust(10)
        yield* executor.interrupt("new_message")
        yield* executor.addTool(call("late-g", "Grep", { ms: 10 }))
        yield* executor.addTool(call("late-r", "Read", { ms: 10 }))
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(400)
        yield* Fiber.join(fiber)
        const byId = new Map(resultsOf(seen).map((r) => [r.toolUseId, r.status]))
        expect(Object.fromEntries(byId)).toEqual({
          e: "success",
          r: "success",
          g: "cancelled",
          "late-g": "cancelled",
          "late-r": "success"
        })
        expect(log.get("r")!.start).toBe(100)
        expect(log.get("g")).toBeUndefined()
      }).pipe(Effect.provide(MemoryAllowAll)))
  })

  describe("context modifiers in call order", () => {
    const appendTask = (input: ScriptInput): ToolUseContext.ContextModifier => (context) => ({
      ...context,
      todos: [...context.todos, { content: input.label ?? "?", status: "pending", activeForm: "" }]
    })
    for (const scheduling of ["greedy", "footprints"] as const) {
      it.scoped(`[A slow, B fast, C] at cap 2 ends A, B, C and C starts with B's (${scheduling})`, () =>
        Effect.gen(function*() {
          const log = new RunLog()
          const seenAtStart: Record<string, ReadonlyArray<string>> = {}
          const read = scriptedTool("Read", log, { safe: true, modifier: appendTask })
          const spy = {
            ...read,
            call: (input: ScriptInput, ctx: Tool.CallContext<unknown>) =>
              Effect.zipRight(
                Effect.sync(() => {
                  seenAtStart[ctx.toolUseId] = ctx.context.todos.map((t) => t.content)
                }),
                read.call(input, ctx) as Effect.Effect<string, unknown>
              )
          }
          const env = yield* environment([spy])
          const fiber = yield* StreamingExecutor.runAll(
            [
              call("A", "Read", { ms: 100, label: "A" }),
              call("B", "Read", { ms: 10, label: "B" }),
              call("C", "Read", { ms: 10, label: "C" }),
              call("D", "Read", { ms: 10, label: "D" })
            ],
            env,
            { concurrency: 2, scheduling }
          ).pipe(Stream.runDrain, Effect.fork)
          yield* TestClock.adjust(200)
          yield* Fiber.join(fiber)
          expect(seenAtStart).toEqual({ A: [], B: [], C: ["B"], D: ["B", "C"] })
          expect((yield* Ref.get(env.context)).todos.map((t) => t.content)).toEqual(["A", "B", "C", "D"])
        }).pipe(Effect.provide(MemoryAllowAll)))
    }
  })

  it.effect("every runner is forked from one parent: the FiberRef stacks of the last call stay shallow", () =>
    Effect.gen(function*() {
      // How deep the FiberRef stacks of the current fiber are (each fork can push an entry).
      const depth = Effect.withFiberRuntime<number>((fiber) => {
        const locals = (fiber.getFiberRefs() as unknown as { readonly locals: Map<unknown, ReadonlyArray<unknown>> })
          .locals
        let deepest = 0
        for (const stack of locals.values()) deepest = Math.max(deepest, stack.length)
        return Effect.succeed(deepest)
      })
      const depths = new Map<string, number>()
      const probe = Tool.make("Probe", {
        description: "records its fiber's FiberRef depth",
        input: ScriptInput,
        isConcurrencySafe: () => true,
        call: (_, ctx) => Effect.map(depth, (d) => void depths.set(ctx.toolUseId, d))
      })
      const env = yield* environment([probe])
      const calls = Array.from({ length: 2_000 }, (_, i) => call(`p${i}`, "Probe", {}))
      for (const scheduling of ["greedy", "footprints"] as const) {
        depths.clear()
        yield* Stream.runDrain(StreamingExecutor.runAll(calls, env, { concurrency: 2, scheduling }))
        expect(depths.size).toBe(2_000)
        // A chain of forks would make the last call's stacks about 1 000 entries deep.
        expect(depths.get("p1999")!).toBeLessThanOrEqual(depths.get("p0")! + 2)
      }
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a call that changes a FiberRef for good does not pass it on to the calls after it", () =>
    Effect.gen(function*() {
      const seen: Array<Option.Option<unknown>> = []
      const leak = Tool.make("Leak", {
        description: "sets a log annotation on its fiber and leaves it",
        input: ScriptInput,
        isConcurrencySafe: () => true,
        call: () =>
          FiberRef.update(
            FiberRef.currentLogAnnotations,
            (a: HashMap.HashMap<string, unknown>) => HashMap.set(a, "leaked", true)
          )
      })
      const probe = Tool.make("Probe", {
        description: "records the log annotations it starts with",
        input: ScriptInput,
        isConcurrencySafe: () => true,
        call: () =>
          Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (a) => void seen.push(HashMap.get(a, "leaked")))
      })
      const env = yield* environment([leak, probe])
      const calls = Array.from({ length: 200 }, (_, i) => call(`c${i}`, i % 2 === 0 ? "Leak" : "Probe", {}))
      yield* Stream.runDrain(StreamingExecutor.runAll(calls, env, { concurrency: 2 }))
      expect(seen).toHaveLength(100)
      expect(seen.every((annotation) => Option.isNone(annotation))).toBe(true)
    }).pipe(Effect.provide(MemoryAllowAll)))

  describe("interrupts", () => {
    it.scoped("a user abort interrupts every executing tool and starts nothing more", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env)
        yield* executor.addTool(call("r", "Read", { ms: 500 }))
        yield* executor.addTool(call("g", "Grep", { ms: 500 }))
        yield* executor.addTool(call("e", "Edit", { ms: 10 }))
        yield* TestClock.adjust(50)
        yield* executor.interrupt("user_interrupt")
        yield* executor.addTool(call("late", "Read", {}))
        const { fiber, seen } = yield* consume(executor)
        yield* Fiber.join(fiber)
        const results = resultsOf(seen)
        expect(results.map((r) => r.toolUseId).sort()).toEqual(["e", "g", "late", "r"])
        expect(results.every((r) => r.status === "cancelled" && r.block.content === "Interrupted by user")).toBe(true)
        expect(log.spans.map((s) => [s.id, s.interrupted, s.end])).toEqual([["r", true, 50], ["g", true, 50]])
        expect(yield* executor.abortReason).toEqual(Option.some("user_interrupt"))
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.scoped("a new message cancels `cancel` tools and lets `block` tools finish", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env)
        yield* executor.addTool(call("r", "Read", { ms: 300 }))
        yield* executor.addTool(call("g", "Grep", { ms: 300 }))
        yield* TestClock.adjust(50)
        yield* executor.interrupt("new_message")
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(500)
        yield* Fiber.join(fiber)
        // The cancelled Grep is yielded first: the Read is safe and still executing.
        expect(resultsOf(seen).map((r) => [r.toolUseId, r.status, r.block.content])).toEqual([
          ["g", "cancelled", "Cancelled: the user sent a new message"],
          ["r", "success", "Read done"]
        ])
        expect(log.get("r")!.end).toBe(300)
        expect(log.get("g")!.end).toBe(50)
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.scoped("an abort from the query node reaches the executor's tools", () =>
      Effect.gen(function*() {
        const query = yield* Interruption.makeRoot
        const env = yield* environment(tools(new RunLog()))
        const executor = yield* StreamingExecutor.make(env, { interruption: query })
        yield* executor.addTool(call("r", "Read", { ms: 300 }))
        yield* TestClock.adjust(10)
        yield* query.abort("user_interrupt")
        const { fiber, seen } = yield* consume(executor)
        yield* Fiber.join(fiber)
        expect(resultsOf(seen).map((r) => r.status)).toEqual(["cancelled"])
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.scoped("a user's 'no' aborts the turn up to the query; siblings get synthetic results", () =>
      Effect.gen(function*() {
        const query = yield* Interruption.makeRoot
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env, { interruption: query })
        yield* executor.addTool(call("r", "Read", { ms: 300 }))
        yield* executor.addTool(call("e", "Edit", { ms: 10, label: "rejected" }))
        yield* executor.addTool(call("r2", "Read", { ms: 10 }))
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(400)
        yield* Fiber.join(fiber)
        expect(resultsOf(seen).map((r) => [r.toolUseId, r.status])).toEqual([
          ["r", "success"],
          ["e", "denied"],
          ["r2", "cancelled"]
        ])
        expect(query.reason()).toEqual(Option.some("permission_rejected"))
        expect(yield* executor.abortReason).toEqual(Option.some("permission_rejected"))
      }).pipe(
        Effect.provide(Layer.succeed(Permissions.PermissionPolicy, {
          decide: (request) =>
            Effect.succeed(
              (request.input as ScriptInput).label === "rejected"
                ? { behavior: "deny" as const, source: "user", message: "no", rejectedByUser: true }
                : { behavior: "allow" as const, source: "default" }
            )
        })),
        Effect.provide(Results.layerMemory)
      ))

    it.scoped("discard drops the attempt without leaking its tools", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(tools(log))
        const executor = yield* StreamingExecutor.make(env)
        yield* executor.addTool(call("r", "Read", { ms: 300 }))
        yield* executor.addTool(call("g", "Grep", { ms: 300 }))
        yield* TestClock.adjust(10)
        yield* executor.discard
        expect(log.liveCount).toBe(0)
        expect(log.spans.every((s) => s.interrupted)).toBe(true)
        yield* executor.addTool(call("x", "Read", { ms: 1 }))
        expect(log.get("x")).toBeUndefined()
        const rest = yield* Stream.runCollect(executor.getRemainingResults)
        expect(resultsOf(Chunk.toArray(rest))).toEqual([])
      }).pipe(Effect.provide(MemoryAllowAll)))
  })

  it.scoped("the cap holds in the executor: 25 safe tools, cap 10", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(tools(log))
      const executor = yield* StreamingExecutor.make(env, { concurrency: 10 })
      for (let i = 0; i < 25; i++) yield* executor.addTool(call(`r${i}`, "Read", { ms: 10 + (i % 4) * 7 }))
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(resultsOf(seen)).toHaveLength(25)
      expect(log.maxConcurrent.value).toBe(10)
      // Start order stays call order.
      const starts = log.spans.map((s) => s.id)
      expect(starts).toEqual(Array.from({ length: 25 }, (_, i) => `r${i}`))
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("fed all at once, the schedule equals the greedy partition", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env: Execution.Environment = yield* environment(tools(log))
      const fiber = yield* StreamingExecutor.runAll(chapterCalls, env).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(1_000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      expect(log.spans.map((s) => [s.id, s.start, s.end])).toEqual([
        ["A", 0, 100],
        ["B", 0, 120],
        ["C", 0, 80],
        ["D", 120, 170],
        ["E", 170, 200],
        ["F", 170, 210]
      ])
      expect(resultsOf(events).map((r) => r.toolUseId)).toEqual(["C", "A", "B", "D", "E", "F"])
    }).pipe(Effect.provide(MemoryAllowAll)))
})

describe("Footprint scheduling (SPEC §4.13)", () => {
  // The label names the file: "/r/a" for Read and Edit; Bash's label is `verb:path` (`mkdir:/r/d`, `sleep:`).
  const footprintTools = (log: RunLog) => [
    scriptedTool("Read", log, { safe: true, footprint: (input) => ({ reads: [input.label ?? "*"] }) }),
    scriptedTool("Edit", log, {
      footprint: (input) => ({ reads: [input.label ?? "*"], writes: [input.label ?? "*"] })
    }),
    scriptedTool("Bash", log, {
      footprint: (input) => {
        const [verb, path] = (input.label ?? "").split(":")
        const resource = path === undefined || path === "" ? "*" : path
        return verb === "sleep" ? {} : verb === "cat" ? { reads: [resource] } : { writes: [resource] }
      }
    }),
    // A declaration that is not proven complete (a shell command the analysis could not bound).
    scriptedTool("Guess", log, { footprint: (input) => ({ writes: [input.label ?? "*"], complete: false }) })
  ]
  const run = (calls: ReadonlyArray<Messages.ToolUseBlock>, options: StreamingExecutor.Options = {}) =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(footprintTools(log))
      const fiber = yield* StreamingExecutor.runAll(calls, env, options).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(10_000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      return { log, events, results: new Map(resultsOf(events).map((r) => [r.toolUseId, r])) }
    })

  it.effect("[Edit a, Edit b, Read a, Read c]: the edits overlap, Read a waits for Edit a only, Read c starts at once", () =>
    Effect.gen(function*() {
      const { events, log } = yield* run([
        call("ea", "Edit", { ms: 100, label: "/r/a" }),
        call("eb", "Edit", { ms: 300, label: "/r/b" }),
        call("ra", "Read", { ms: 10, label: "/r/a" }),
        call("rc", "Read", { ms: 10, label: "/r/c" })
      ])
      expect(log.spans.map((s) => [s.id, s.start, s.end])).toEqual([
        ["ea", 0, 100],
        ["eb", 0, 300],
        ["rc", 0, 10],
        ["ra", 100, 110]
      ])
      const started = events.filter(DispatchEvent.isStarted)
      expect(started.find((e) => e.toolUseId === "ra")).toMatchObject({
        at: 100,
        waitedFor: [{ toolUseId: "ea", name: "Edit", reason: "writes /r/a" }]
      })
      expect(started.find((e) => e.toolUseId === "rc")!.waitedFor).toBeUndefined()
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("under greedy the same calls run one edit at a time", () =>
    Effect.gen(function*() {
      const { log } = yield* run([
        call("ea", "Edit", { ms: 100, label: "/r/a" }),
        call("eb", "Edit", { ms: 300, label: "/r/b" }),
        call("ra", "Read", { ms: 10, label: "/r/a" })
      ], { scheduling: "greedy" })
      expect(log.spans.map((s) => [s.id, s.start])).toEqual([["ea", 0], ["eb", 100], ["ra", 400]])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a path conflicts with everything under it; `*` with everything; named resources only with themselves", () =>
    Effect.sync(() => {
      expect(Footprint.overlaps("/r/d", "/r/d/x")).toBe(true)
      expect(Footprint.overlaps("/r/d/**", "/r/d")).toBe(true)
      expect(Footprint.overlaps("/r/d", "/r/dx")).toBe(false)
      expect(Footprint.overlaps("*", "net")).toBe(true)
      expect(Footprint.overlaps("net", "/r")).toBe(false)
      expect(Footprint.overlaps("mcp:a", "mcp:b")).toBe(false)
      expect(Footprint.overlaps("relative/path", "/anything")).toBe(true)
      expect(Footprint.conflict({ reads: ["/r/a"] }, { reads: ["/r/a"] })).toBeUndefined()
      expect(Footprint.conflict({ reads: ["/r"] }, { writes: ["/r/a"] })).toBe("reads /r")
      expect(Footprint.conflict({ writes: ["/r/a"] }, { reads: ["/r/**"] })).toBe("writes /r/a")
    }))

  it.effect("two slow Bash calls writing different files overlap; a failing `mkdir d` cancels a later Read under d only", () =>
    Effect.gen(function*() {
      const { log, results } = yield* run([
        call("w1", "Bash", { ms: 200, label: "touch:/r/one" }),
        call("w2", "Bash", { ms: 200, label: "touch:/r/two" }),
        call("mk", "Bash", { ms: 10, label: "mkdir:/r/d", fail: true }),
        call("rd", "Read", { ms: 10, label: "/r/d/x" }),
        call("again", "Read", { ms: 10, label: "/r/d/x/y" }),
        call("other", "Edit", { ms: 10, label: "/r/other" }),
        call("sl", "Bash", { ms: 10, label: "sleep:" })
      ])
      expect(log.get("w1")!.start).toBe(0)
      expect(log.get("w2")!.start).toBe(0)
      expect(results.get("w1")!.status).toBe("success")
      expect(results.get("mk")!.status).toBe("error")
      for (const id of ["rd", "again"]) {
        expect(results.get(id)!.status).toBe("cancelled")
        expect(results.get(id)!.block.content).toBe("Cancelled: this call depends on mk (Bash), which failed")
        expect(log.get(id)).toBeUndefined()
      }
      expect(results.get("other")!.status).toBe("success")
      expect(results.get("sl")!.status).toBe("success")
      expect(log.get("w1")!.interrupted).toBe(false)
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("`bash` keeps the chapter's rule under footprints; `none` cancels nothing", () =>
    Effect.gen(function*() {
      const calls = [
        call("w1", "Bash", { ms: 200, label: "touch:/r/one" }),
        call("mk", "Bash", { ms: 10, label: "mkdir:/r/d", fail: true }),
        call("rd", "Read", { ms: 10, label: "/r/d/x" })
      ]
      const bash = yield* run(calls, { siblingCancellation: "bash" })
      expect(bash.results.get("w1")!.status).toBe("cancelled")
      expect(bash.results.get("rd")!.block.content).toBe("Cancelled: a parallel Bash call failed")
      const none = yield* run(calls, { siblingCancellation: "none" })
      expect([...none.results.values()].map((r) => r.status)).toEqual(["error", "success", "success"])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a failed call cancels only its data dependents: a write that only waited for a failed read runs", () =>
    Effect.gen(function*() {
      const { log, results } = yield* run([
        call("cat", "Bash", { ms: 50, label: "cat:/r/a", fail: true }),
        call("edit", "Edit", { ms: 10, label: "/r/a" }),
        call("mk", "Bash", { ms: 20, label: "mkdir:/r/d", fail: true }),
        call("read", "Read", { ms: 10, label: "/r/d/x" }),
        call("write", "Bash", { ms: 10, label: "touch:/r/d" })
      ])
      // Write-after-read: the Edit had to wait for the failed read of /r/a, and then it runs.
      expect(log.get("edit")).toMatchObject({ start: 50, end: 60 })
      expect(results.get("edit")!.status).toBe("success")
      // Read-after-write and write-after-write: cancelled with the failed mkdir.
      expect(results.get("read")!.status).toBe("cancelled")
      expect(results.get("write")!.status).toBe("cancelled")
      expect(log.get("read")).toBeUndefined()
      expect(log.get("write")).toBeUndefined()
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a footprint not proven complete is a barrier: it waits for everything before it, everything after waits", () =>
    Effect.gen(function*() {
      const { log } = yield* run([
        call("r1", "Read", { ms: 30, label: "/r/a" }),
        call("guess", "Guess", { ms: 50, label: "/r/x" }),
        call("r2", "Read", { ms: 10, label: "/r/y" })
      ])
      expect(log.spans.map((s) => [s.id, s.start])).toEqual([["r1", 0], ["guess", 30], ["r2", 80]])
    }).pipe(Effect.provide(MemoryAllowAll)))

  it.effect("a relative resource names no path: `build` and `src/a.ts` are `*`; named resources stay named", () =>
    Effect.sync(() => {
      expect(Footprint.toKey("build")._tag).toBe("Everything")
      expect(Footprint.toKey("src/a.ts")._tag).toBe("Everything")
      expect(Footprint.overlaps("build", "/r/x")).toBe(true)
      expect(Footprint.overlaps("build", "net")).toBe(true)
      for (const named of ["net", "todos", "mcp:fs", Footprint.inode(2049, 17)]) {
        expect(Footprint.toKey(named)).toEqual({ _tag: "Named", name: named })
      }
      expect(Footprint.overlaps(Footprint.inode(1, 2), Footprint.inode(1, 3))).toBe(false)
    }))

  it.effect("footprints are resolved again when a barrier before them has run: a link it made is seen", () =>
    Effect.gen(function*() {
      // `links` is the tree's symlinks; a footprint resolves its path through them when it is asked.
      const links = new Map<string, string>()
      const resolve = (p: string) => {
        for (const [link, target] of links) {
          if (p === link || p.startsWith(`${link}/`)) return target + p.slice(link.length)
        }
        return p
      }
      const log = new RunLog()
      const ln = Tool.make("Ln", {
        description: "makes /r/l a link to /x (no footprint: it writes `*`)",
        input: ScriptInput,
        call: (input) =>
          Effect.gen(function*() {
            yield* Effect.sleep(input.ms ?? 0)
            links.set("/r/l", "/x")
            return "linked"
          })
      })
      const tools = [
        ln,
        scriptedTool("Read", log, { safe: true, footprint: (input) => ({ reads: [resolve(input.label!)] }) }),
        scriptedTool("Edit", log, {
          footprint: (input) => ({ reads: [resolve(input.label!)], writes: [resolve(input.label!)] })
        })
      ]
      const env = yield* environment(tools)
      const fiber = yield* StreamingExecutor.runAll([
        call("ln", "Ln", { ms: 50 }),
        call("edit", "Edit", { ms: 100, label: "/r/l/f" }),
        call("read", "Read", { ms: 10, label: "/x/f" })
      ], env).pipe(Stream.runCollect, Effect.fork)
      yield* TestClock.adjust(10_000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      // Through the new link the edit writes /x/f: the read of /x/f waits for it.
      expect(log.get("edit")).toMatchObject({ start: 50, end: 150 })
      expect(log.get("read")!.start).toBe(150)
      expect(events.filter(DispatchEvent.isStarted).find((e) => e.toolUseId === "read")!.waitedFor).toContainEqual({
        toolUseId: "edit",
        name: "Edit",
        reason: "writes /x/f"
      })
    }).pipe(Effect.provide(MemoryAllowAll)))

  describe("footprints that take time to resolve", () => {
    // A footprint resolved through the FileSystem takes time (a real path, a stat): here each
    // call's resolution sleeps `resolveMs` on the TestClock before it answers.
    // `through` maps a path through the tree's links, as they are when the resolution begins.
    const slowTools = (log: RunLog, through: (path: string) => string = (path) => path) => {
      const slow = (name: string, safe: boolean, footprint: (path: string) => Footprint.Footprint) => {
        const tool = scriptedTool(name, log, { safe })
        return Tool.make(name, {
          description: `${name} whose footprint resolves slowly`,
          input: ScriptInput,
          isConcurrencySafe: () => safe,
          isReadOnly: () => safe,
          footprint: (input: ScriptInput) => Effect.as(Effect.sleep(input.ms ?? 0), footprint(through(input.label!))),
          call: (input: ScriptInput, ctx) => tool.call({ ...input, ms: input.progress ?? 0, progress: 0 }, ctx)
        })
      }
      return [
        slow("Read", true, (path) => ({ reads: [path] })),
        slow("Edit", false, (path) => ({ reads: [path], writes: [path] }))
      ]
    }
    // `ms` is how long the footprint takes to resolve, `progress` how long the call then runs.
    const slowCall = (id: string, name: string, label: string, resolveMs: number, runMs: number) =>
      call(id, name, { label, ms: resolveMs, progress: runMs })
    const runSlow = (calls: ReadonlyArray<Messages.ToolUseBlock>) =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(slowTools(log))
        const fiber = yield* StreamingExecutor.runAll(calls, env).pipe(Stream.runCollect, Effect.fork)
        yield* TestClock.adjust(10_000)
        return { log, events: Chunk.toArray(yield* Fiber.join(fiber)) }
      })

    it.effect("three reads whose footprints are slow to resolve all start before the first one finishes", () =>
      Effect.gen(function*() {
        const { events, log } = yield* runSlow([
          slowCall("a", "Read", "/r/a", 30, 5),
          slowCall("b", "Read", "/r/b", 20, 5),
          slowCall("c", "Read", "/r/c", 10, 5)
        ])
        // Resolved one after another, b would start at 50 and c at 60, after a had finished (35).
        const tags = events.map((e) => `${e._tag}:${e.toolUseId}`)
        expect(tags.slice(0, 3).sort()).toEqual(["Started:a", "Started:b", "Started:c"])
        expect(log.spans.map((s) => [s.id, s.start, s.end])).toEqual([["a", 30, 35], ["b", 30, 35], ["c", 30, 35]])
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.effect("calls are admitted in call order: an edit resolved first still waits for the earlier read", () =>
      Effect.gen(function*() {
        const { events, log } = yield* runSlow([
          slowCall("read", "Read", "/r/a", 30, 20),
          slowCall("edit", "Edit", "/r/a", 5, 10),
          slowCall("other", "Read", "/r/b", 5, 10)
        ])
        // The edit's footprint is known at 5, but what it waits for depends on the read before it.
        expect(log.get("read")).toMatchObject({ start: 30, end: 50 })
        expect(log.get("edit")).toMatchObject({ start: 50, end: 60 })
        expect(log.get("other")).toMatchObject({ start: 30, end: 40 })
        expect(events.filter(DispatchEvent.isStarted).find((e) => e.toolUseId === "edit")!.waitedFor).toEqual([
          { toolUseId: "read", name: "Read", reason: "reads /r/a" }
        ])
        // A result waits only for the earlier calls it conflicts with.
        expect(resultsOf(events).map((r) => r.toolUseId)).toEqual(["other", "read", "edit"])
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.effect("a footprint resolved before a barrier that has run since is resolved again before it is admitted", () =>
      Effect.gen(function*() {
        const links = new Map<string, string>()
        const through = (p: string) => (p.startsWith("/r/l/") ? (links.get("/r/l") ?? "/r/l") + p.slice(4) : p)
        const log = new RunLog()
        const ln = Tool.make("Ln", {
          description: "makes /r/l a link to /x (no footprint: it writes `*`)",
          input: ScriptInput,
          call: (input) =>
            Effect.as(Effect.sleep(input.ms ?? 0), "linked").pipe(Effect.tap(() => links.set("/r/l", "/x")))
        })
        const env = yield* environment([ln, ...slowTools(log, through)])
        const fiber = yield* StreamingExecutor.runAll([
          call("ln", "Ln", { ms: 50 }),
          // Its resolution begins at 0, before the link exists, and answers at 60, after it was made.
          slowCall("edit", "Edit", "/r/l/f", 60, 10),
          slowCall("read", "Read", "/x/f", 0, 10)
        ], env).pipe(Stream.runCollect, Effect.fork)
        yield* TestClock.adjust(10_000)
        const events = Chunk.toArray(yield* Fiber.join(fiber))
        // Resolved again from 60 to 120 through the new link, the edit writes /x/f: the read waits for it.
        expect(log.get("edit")).toMatchObject({ start: 120, end: 130 })
        expect(log.get("read")).toMatchObject({ start: 130, end: 140 })
        expect(events.filter(DispatchEvent.isStarted).find((e) => e.toolUseId === "read")!.waitedFor).toContainEqual({
          toolUseId: "edit",
          name: "Edit",
          reason: "writes /x/f"
        })
      }).pipe(Effect.provide(MemoryAllowAll)))

    it.scoped("addTool does not wait for a slow footprint: the next call's resolution overlaps it", () =>
      Effect.gen(function*() {
        const log = new RunLog()
        const env = yield* environment(slowTools(log))
        const executor = yield* StreamingExecutor.make(env)
        yield* executor.addTool(slowCall("a", "Read", "/r/a", 30, 5))
        yield* executor.addTool(slowCall("b", "Read", "/r/b", 30, 5))
        yield* executor.finish
        const { fiber, seen } = yield* consume(executor)
        yield* TestClock.adjust(100)
        yield* Fiber.join(fiber)
        expect(log.spans.map((s) => [s.id, s.start])).toEqual([["a", 30], ["b", 30]])
        expect(resultsOf(seen).map((r) => [r.toolUseId, r.status]).sort()).toEqual([["a", "success"], ["b", "success"]])
      }).pipe(Effect.provide(MemoryAllowAll)))
  })

  it.scoped("a call added after the failure that depends on it is cancelled too, transitively", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const env = yield* environment(footprintTools(log))
      const executor = yield* StreamingExecutor.make(env)
      yield* executor.addTool(call("mk", "Bash", { ms: 10, label: "mkdir:/r/d", fail: true }))
      yield* executor.addTool(call("e", "Edit", { ms: 10, label: "/r/d/f" }))
      yield* TestClock.adjust(50)
      yield* executor.addTool(call("late", "Read", { ms: 10, label: "/r/d/f" }))
      yield* executor.addTool(call("free", "Read", { ms: 10, label: "/r/x" }))
      const { fiber, seen } = yield* consume(executor)
      yield* TestClock.adjust(100)
      yield* Fiber.join(fiber)
      expect(resultsOf(seen).map((r) => [r.toolUseId, r.status])).toEqual([
        ["mk", "error"],
        ["e", "cancelled"],
        ["late", "cancelled"],
        ["free", "success"]
      ])
    }).pipe(Effect.provide(MemoryAllowAll)))
})

describe("Interruption (SPEC §4.9)", () => {
  it.effect("a tool-level abort propagates up unless it is a sibling error", () =>
    Effect.gen(function*() {
      const query = yield* Interruption.makeRoot
      const turn = yield* query.child()
      const toolA = yield* turn.child()
      const toolB = yield* turn.child()
      yield* toolA.abort("sibling_error")
      expect(query.isAborted()).toBe(false)
      expect(turn.isAborted()).toBe(false)
      yield* toolB.abort("permission_rejected")
      expect(turn.reason()).toEqual(Option.some("permission_rejected"))
      expect(query.reason()).toEqual(Option.some("permission_rejected"))
    }))

  it.effect("aborts travel down; a `block` child ignores a new message but not a user abort", () =>
    Effect.gen(function*() {
      const query = yield* Interruption.makeRoot
      const turn = yield* query.child()
      const block = yield* turn.child({ ignore: ["new_message"] })
      const cancel = yield* turn.child()
      yield* query.abort("new_message")
      expect(cancel.reason()).toEqual(Option.some("new_message"))
      expect(block.isAborted()).toBe(false)
      yield* query.abort("user_interrupt")
      expect(block.reason()).toEqual(Option.some("user_interrupt"))
      const late = yield* turn.child()
      expect(late.isAborted()).toBe(true)
      expect(yield* late.await).toBe("new_message")
    }))

  it.effect("listeners run once per reason, and at once when registered after the abort", () =>
    Effect.gen(function*() {
      const node = yield* Interruption.makeRoot
      const heard: Array<string> = []
      yield* node.onAbort((reason) => Effect.sync(() => void heard.push(`early:${reason}`)))
      yield* node.abort("user_interrupt")
      yield* node.abort("user_interrupt")
      yield* node.onAbort((reason) => Effect.sync(() => void heard.push(`late:${reason}`)))
      expect(heard).toEqual(["early:user_interrupt", "late:user_interrupt"])
    }))
})
