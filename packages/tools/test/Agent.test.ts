/**
 * The Agent tool (alias Task): a nested query loop with its own conversation,
 * the parent's tools minus Agent, the parent's permission context; concurrent
 * under the cap; progress streamed to the parent; interrupted with it.
 */
import {
  DispatchEvent,
  Messages,
  Model,
  PermissionContext,
  Permissions,
  QueryLoop,
  Registry,
  ReplayModel,
  Results,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as Agent from "@switchyard/tools/Agent"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { RunLog, scriptedTool } from "../../core/test/fixtures.js"

type Turns = ReadonlyArray<ReplayModel.Turn>

/** A model that answers by conversation: the first user message picks the script; requests are recorded. */
const routedModel = (scripts: Record<string, Turns>, requests: Array<Model.ModelRequest>) =>
  Layer.succeed(Model.LanguageModel, {
    stream: (request) =>
      Stream.suspend(() => {
        requests.push(request)
        const first = request.messages[0]
        const key = first === undefined
          ? ""
          : Messages.blocks(first).flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
        const turns = scripts[key]
        const assistantTurns = request.messages.filter((m) => m.role === "assistant").length
        const turn = turns?.[assistantTurns]
        if (turn === undefined) {
          return Stream.fail(
            new Model.ModelError({
              reason: "replay",
              message: `no script for "${key}" turn ${assistantTurns}`,
              retryable: false
            })
          )
        }
        return Stream.fromIterable(ReplayModel.turnEvents(turn, { messageId: `m-${key}-${assistantTurns}` })).pipe(
          Stream.mapEffect(({ delayMs, event }) => Effect.as(Effect.sleep(delayMs), event))
        )
      })
  })

const toolUse = (id: string, name: string, input: unknown, delayMs = 0) => ({
  block: { type: "tool_use" as const, id, name, input },
  delayMs
})
const say = (text: string) => ({ block: { type: "text" as const, text } })

const setup = (log: RunLog, scripts: Record<string, Turns>, requests: Array<Model.ModelRequest>) => {
  const model = routedModel(scripts, requests)
  const base = Layer.mergeAll(Registry.layer(), Results.layerMemory, model)
  const tools = Layer.mergeAll(
    Agent.layer(),
    Tool.layer(scriptedTool("Read", log, { safe: true })),
    Tool.layer(scriptedTool("Glob", log, { safe: true }))
  )
  return tools.pipe(Layer.provideMerge(base))
}

const runParent = (prompt: string, context: ToolUseContext.ToolUseContext, interruptAt?: number) =>
  Effect.gen(function*() {
    const session = yield* QueryLoop.makeSession(context)
    const fiber = yield* QueryLoop.collect(session.run(prompt)).pipe(Effect.fork)
    if (interruptAt !== undefined) {
      yield* TestClock.adjust(interruptAt)
      yield* session.interrupt("user_interrupt")
    }
    yield* TestClock.adjust(60_000)
    return { events: yield* Fiber.join(fiber), messages: yield* session.messages }
  })

describe("Agent tool", () => {
  it.effect("two sub-agents run concurrently, each with its own loop; their answers come back as results", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const requests: Array<Model.ModelRequest> = []
      const scripts: Record<string, Turns> = {
        "research both": [
          {
            blocks: [
              toolUse("a1", "Agent", { description: "look at A", prompt: "inspect A" }),
              toolUse("a2", "Task", { description: "look at B", prompt: "inspect B" })
            ]
          },
          { blocks: [say("Both inspected.")] }
        ],
        "inspect A": [{ blocks: [toolUse("ra", "Read", { ms: 300, label: "A" })] }, { blocks: [say("A is fine.")] }],
        "inspect B": [{ blocks: [toolUse("rb", "Read", { ms: 300, label: "B" })] }, { blocks: [say("B needs work.")] }]
      }
      const { events, messages } = yield* runParent("research both", ToolUseContext.make({ cwd: "/", sessionId: "p" }))
        .pipe(
          Effect.provide(setup(log, scripts, requests))
        )
      expect(events.at(-1)).toMatchObject({ _tag: "Stopped", reason: "end_turn" })
      const results = Messages.blocks(messages[2]!) as ReadonlyArray<Messages.ToolResultBlock>
      expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([["a1", "A is fine."], ["a2", "B needs work."]])
      // The nested Reads overlapped: the agents ran concurrently.
      const [ra, rb] = [log.get("ra")!, log.get("rb")!]
      expect(ra.start < rb.end! && rb.start < ra.end!).toBe(true)
      // Progress of the sub-agents reached the parent.
      const progress = events.flatMap((e) => (e._tag === "Tool" && DispatchEvent.isProgress(e.event) ? [e.event] : []))
      expect(progress.map((p) => [p.toolUseId, (p.data as Agent.AgentProgress).type])).toEqual(
        expect.arrayContaining([["a1", "tool_started"], ["a1", "tool_finished"], ["a2", "text"]])
      )
      // Sub-agents do not get the Agent tool; the parent does.
      const parentRequest = requests.find((r) =>
        Messages.blocks(r.messages[0]!).some((b) => b.type === "text" && b.text === "research both")
      )!
      const childRequest = requests.find((r) =>
        Messages.blocks(r.messages[0]!).some((b) => b.type === "text" && b.text === "inspect A")
      )!
      expect(parentRequest.tools.map((t) => t.name)).toContain("Agent")
      expect(childRequest.tools.map((t) => t.name)).not.toContain("Agent")
      expect(childRequest.tools.map((t) => t.name)).toContain("Read")
    }))

  it.effect("an Agent whose sub-agent can write is a barrier: a sibling Read waits for it, two such Agents do not overlap", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const scripts: Record<string, Turns> = {
        "change and check": [
          {
            blocks: [
              toolUse("a1", "Agent", { description: "edit A", prompt: "edit A" }),
              toolUse("a2", "Agent", { description: "edit B", prompt: "edit B" }),
              toolUse("r1", "Read", { ms: 10, label: "check" })
            ]
          },
          { blocks: [say("Checked.")] }
        ],
        "edit A": [{ blocks: [toolUse("ea", "Edit", { ms: 300, label: "A" })] }, { blocks: [say("A edited.")] }],
        "edit B": [{ blocks: [toolUse("eb", "Edit", { ms: 300, label: "B" })] }, { blocks: [say("B edited.")] }]
      }
      const model = routedModel(scripts, [])
      const layer = Layer.mergeAll(
        Agent.layer(),
        Tool.layer(scriptedTool("Read", log, { safe: true })),
        Tool.layer(scriptedTool("Edit", log))
      ).pipe(Layer.provideMerge(Layer.mergeAll(
        Registry.layer(),
        Results.layerMemory,
        model,
        // The engine's default policy runs only read-only calls; this test is about scheduling.
        Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)
      )))
      yield* runParent("change and check", ToolUseContext.make({ cwd: "/", sessionId: "p" })).pipe(
        Effect.provide(layer)
      )
      const [ea, eb, r1] = [log.get("ea")!, log.get("eb")!, log.get("r1")!]
      // The sub-agents' edits never overlap each other, and the parent's Read starts after both.
      expect(ea.end! <= eb.start || eb.end! <= ea.start).toBe(true)
      expect(r1.start).toBeGreaterThanOrEqual(Math.max(ea.end!, eb.end!))
    }))

  it.effect("a sub-agent works under the parent's permission context", () =>
    Effect.gen(function*() {
      const requests: Array<Model.ModelRequest> = []
      const scripts: Record<string, Turns> = {
        go: [{ blocks: [toolUse("a1", "Agent", { description: "d", prompt: "child" })] }, { blocks: [say("ok")] }],
        child: [{ blocks: [say("done")] }]
      }
      const permissions: PermissionContext.PermissionContext = {
        ...PermissionContext.empty,
        rules: [PermissionContext.parseRule("Glob", "deny", "test")!]
      }
      yield* runParent("go", ToolUseContext.make({ cwd: "/", sessionId: "p", permissions })).pipe(
        Effect.provide(setup(new RunLog(), scripts, requests))
      )
      const child = requests.find((r) =>
        Messages.blocks(r.messages[0]!).some((b) => b.type === "text" && b.text === "child")
      )!
      expect(child.tools.map((t) => t.name)).not.toContain("Glob")
    }))

  it.effect("interrupting the parent interrupts the sub-agent's tools", () =>
    Effect.gen(function*() {
      const log = new RunLog()
      const scripts: Record<string, Turns> = {
        go: [{ blocks: [toolUse("a1", "Agent", { description: "d", prompt: "slow child" })] }],
        "slow child": [{ blocks: [toolUse("r", "Read", { ms: 5_000 })] }, { blocks: [say("never")] }]
      }
      const { events, messages } = yield* runParent("go", ToolUseContext.make({ cwd: "/", sessionId: "p" }), 100).pipe(
        Effect.provide(setup(log, scripts, []))
      )
      expect(events.at(-1)).toMatchObject({ _tag: "Stopped", reason: "interrupted" })
      expect((Messages.blocks(messages[2]!)[0] as Messages.ToolResultBlock).content).toBe("Interrupted by user")
      expect(log.get("r")!.interrupted).toBe(true)
      expect(log.liveCount).toBe(0)
    }))

  it.effect("without a language model the tool is disabled, so the model never sees it", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.ToolRegistry
      const visible = yield* registry.getTools(() => false)
      expect(visible.map((t) => t.name)).not.toContain("Agent")
      expect((yield* registry.pool).map((t) => t.name)).toContain("Agent")
    }).pipe(
      Effect.provide(Agent.layer().pipe(Layer.provideMerge(Layer.mergeAll(Registry.layer(), Results.layerMemory))))
    ))

  it.effect("an unknown subagent_type is a validation error naming the known ones", () =>
    Effect.gen(function*() {
      const scripts: Record<string, Turns> = {
        go: [{ blocks: [toolUse("a1", "Agent", { description: "d", prompt: "x", subagent_type: "wizard" })] }, {
          blocks: [say("ok")]
        }]
      }
      const { messages } = yield* runParent("go", ToolUseContext.make({ cwd: "/", sessionId: "p" })).pipe(
        Effect.provide(setup(new RunLog(), scripts, []))
      )
      const result = Messages.blocks(messages[2]!)[0] as Messages.ToolResultBlock
      expect(result.is_error).toBe(true)
      expect(result.content).toContain("Unknown subagent_type \"wizard\"")
      expect(result.content).toContain("general-purpose")
    }))
})
