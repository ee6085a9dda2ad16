import { Execution, Messages, PermissionContext, Registry, Tool, ToolUseContext } from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { MemoryAllowAll } from "./fixtures.js"

const named = (name: string, extra: Partial<Tool.Definition<unknown, string, never, never>> = {}) =>
  Tool.make(name, {
    description: `${name} tool`,
    input: Schema.Unknown,
    call: () => Effect.succeed(`${name} ran`),
    ...extra
  })

const names = (tools: ReadonlyArray<Tool.Any>) => tools.map((tool) => tool.name)
const none = () => false

describe("Registry (SPEC §4.2)", () => {
  const pool = [
    named("Bash"),
    named("Read"),
    named("Edit"),
    named("Glob"),
    named("Grep"),
    named("SyntheticOutput"),
    named("REPL", { wraps: ["Bash", "Read"] }),
    named("Disabled", { isEnabled: () => false })
  ]
  const defaults = { simpleMode: false, replMode: false, specialTools: new Set<string>(), isBlanketDenied: none }

  describe("getTools pipeline", () => {
    it("keeps every enabled tool when nothing filters", () => {
      expect(names(Registry.filterTools(pool, defaults))).toEqual([
        "Bash",
        "Read",
        "Edit",
        "Glob",
        "Grep",
        "SyntheticOutput",
        "REPL"
      ])
    })

    it("simple mode returns Bash, Read and Edit only, still filtered by blanket denies", () => {
      expect(names(Registry.filterTools(pool, { ...defaults, simpleMode: true }))).toEqual(["Bash", "Read", "Edit"])
      expect(
        names(Registry.filterTools(pool, { ...defaults, simpleMode: true, isBlanketDenied: (n) => n === "Edit" }))
      ).toEqual(["Bash", "Read"])
    })

    it("simple mode returns early: REPL hiding and special tools do not apply", () => {
      const result = Registry.filterTools(pool, {
        ...defaults,
        simpleMode: true,
        replMode: true,
        specialTools: new Set(["Bash"])
      })
      expect(names(result)).toEqual(["Bash", "Read", "Edit"])
    })

    it("removes special tools", () => {
      const result = Registry.filterTools(pool, { ...defaults, specialTools: new Set(["SyntheticOutput"]) })
      expect(names(result)).not.toContain("SyntheticOutput")
    })

    it("drops tools with a blanket deny rule, not those with a specific one", () => {
      const permissions: PermissionContext.PermissionContext = {
        ...PermissionContext.empty,
        rules: [
          PermissionContext.parseRule("Glob", "deny", "test")!,
          PermissionContext.parseRule("Bash(rm *)", "deny", "test")!
        ]
      }
      const result = Registry.filterTools(pool, {
        ...defaults,
        isBlanketDenied: (name) => PermissionRules.isBlanketDenied(permissions, name)
      })
      expect(names(result)).not.toContain("Glob")
      expect(names(result)).toContain("Bash")
    })

    it("REPL mode hides wrapped tools only when the REPL tool itself is visible", () => {
      const visible = Registry.filterTools(pool, { ...defaults, replMode: true })
      expect(names(visible)).not.toContain("Bash")
      expect(names(visible)).not.toContain("Read")
      expect(names(visible)).toContain("REPL")
      const replDenied = Registry.filterTools(pool, {
        ...defaults,
        replMode: true,
        isBlanketDenied: (n) => n === "REPL"
      })
      expect(names(replDenied)).toContain("Bash")
      expect(names(replDenied)).toContain("Read")
    })

    it("drops tools whose isEnabled() is false, last", () => {
      expect(names(Registry.filterTools(pool, defaults))).not.toContain("Disabled")
    })
  })

  describe("lookup", () => {
    const taskStop = named("TaskStop", { aliases: ["KillShell"] })
    it("finds by name before alias", () => {
      const shadow = named("KillShell")
      expect(Registry.findToolByName([taskStop, shadow], "KillShell")).toBe(shadow)
      expect(Registry.findToolByName([taskStop], "KillShell")).toBe(taskStop)
    })

    it("falls back to the full pool only for an alias", () => {
      const hiddenRead = named("Read")
      expect(Either.getOrThrow(Registry.resolve("KillShell", [], [taskStop]))).toBe(taskStop)
      expect(Either.isLeft(Registry.resolve("TaskStop", [], [taskStop]))).toBe(true)
      expect(Either.isLeft(Registry.resolve("Read", [], [hiddenRead]))).toBe(true)
    })

    it.effect("a special tool is not reachable through an alias; an ordinary alias still is", () =>
      Effect.gen(function*() {
        const env = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd: "/", sessionId: "s" }))
        const run = (name: string) =>
          Execution.runToolUse(Messages.toolUse("t", name, {}), env).pipe(
            Stream.runCollect,
            Effect.map((events) => Chunk.toArray(events).find((e) => e._tag === "Result")),
            Effect.provide(MemoryAllowAll)
          )
        for (const name of ["Helper", "Runtime"]) {
          const result = yield* run(name)
          expect(result?._tag === "Result" && result.block.content).toBe(`No such tool available: ${name}`)
        }
        const aliased = yield* run("KillShell")
        expect(aliased?._tag === "Result" && aliased.block.content).toBe("TaskStop ran")
        expect(names(env.pool)).toEqual(["TaskStop"])
      }).pipe(
        Effect.provide(
          Registry.layerTools([
            named("Runtime", { aliases: ["Helper"] }),
            named("TaskStop", { aliases: ["KillShell"] })
          ], {
            specialTools: ["Runtime"]
          })
        )
      ))

    it("an unknown name is 'No such tool available' with close names on a second line", () => {
      const message = Either.getLeft(Registry.resolve("Raed", pool, pool)).pipe((o) => o._tag === "Some" ? o.value : "")
      const [first, second] = message.split("\n")
      expect(first).toBe("No such tool available: Raed")
      expect(second).toContain("Read")
      expect(Registry.noSuchTool("zzzzzzzz", pool)).toBe("No such tool available: zzzzzzzz")
    })

    it("suggests at most three names", () => {
      expect(Registry.suggest("Gre", ["Grep", "Gree", "Greb", "Grex", "Read"]).length).toBe(3)
    })
  })

  describe("tools as layers", () => {
    it.effect("the registry sees the union of the tool layers provided", () =>
      Effect.gen(function*() {
        const registry = yield* Registry.ToolRegistry
        expect(names(yield* registry.pool)).toEqual(["Alpha", "Beta"])
      }).pipe(
        Effect.provide(
          Layer.mergeAll(Tool.layer(named("Alpha")), Tool.layer(named("Beta"))).pipe(
            Layer.provideMerge(Registry.layer())
          )
        )
      ))

    it.effect("a tool layer captures what the tool requires", () =>
      Effect.gen(function*() {
        class Greeting extends Effect.Tag("test/Greeting")<Greeting, { readonly text: string }>() {}
        const greeter = Tool.make("Greeter", {
          description: "greets",
          input: Schema.Struct({}),
          call: () => Effect.map(Greeting, (g) => g.text)
        })
        const layer = Tool.layer(greeter).pipe(
          Layer.provide(Layer.succeed(Greeting, { text: "hello from the layer" })),
          Layer.provideMerge(Registry.layer())
        )
        const events = yield* Effect.gen(function*() {
          const env = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd: "/" }))
          return yield* Stream.runCollect(Execution.runToolUse(Messages.toolUse("t1", "Greeter", {}), env))
        }).pipe(Effect.provide(Layer.merge(layer, MemoryAllowAll)))
        const result = Chunk.toArray(events).find((e) => e._tag === "Result")
        expect(result?._tag === "Result" && result.block.content).toBe("hello from the layer")
      }))

    it.effect("a gated tool whose gate is off is never loaded", () =>
      Effect.gen(function*() {
        let loads = 0
        const gated = Tool.layerGated(Registry.flag("SWITCHYARD_FEATURE_X", "CLAUDE_CODE_FEATURE_X"), () => {
          loads++
          return Promise.resolve(Tool.layer(named("Gated")))
        })
        const poolWith = (env: Record<string, string>) =>
          Effect.gen(function*() {
            return names(yield* (yield* Registry.ToolRegistry).pool)
          }).pipe(
            Effect.provide(gated.pipe(Layer.provideMerge(Registry.layer()))),
            Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
          )
        expect(yield* poolWith({})).toEqual([])
        expect(loads).toBe(0)
        expect(yield* poolWith({ SWITCHYARD_FEATURE_X: "true" })).toEqual(["Gated"])
        expect(yield* poolWith({ CLAUDE_CODE_FEATURE_X: "true" })).toEqual(["Gated"])
        expect(loads).toBe(2)
      }))

    it.effect("simple mode is read from SWITCHYARD_SIMPLE or CLAUDE_CODE_SIMPLE", () =>
      Effect.gen(function*() {
        const visible = (env: Record<string, string>) =>
          Effect.gen(function*() {
            return names(yield* (yield* Registry.ToolRegistry).getTools(none))
          }).pipe(
            Effect.provide(Registry.layerTools(pool)),
            Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
          )
        expect(yield* visible({ SWITCHYARD_SIMPLE: "true" })).toEqual(["Bash", "Read", "Edit"])
        expect(yield* visible({ CLAUDE_CODE_SIMPLE: "1" })).toEqual(["Bash", "Read", "Edit"])
        expect((yield* visible({})).length).toBe(7)
      }))
  })

  it("fail-closed defaults (SPEC §4.1)", () => {
    const tool = named("Plain")
    const context = ToolUseContext.make({ cwd: "/" })
    expect(tool.isEnabled()).toBe(true)
    expect(tool.isConcurrencySafe({}, context)).toBe(false)
    expect(tool.isReadOnly({}, context)).toBe(false)
    expect(tool.isDestructive({}, context)).toBe(false)
    expect(tool.interruptBehavior).toBe("block")
    expect(tool.userFacingName(undefined)).toBe("Plain")
    expect(tool.aliases).toEqual([])
    expect(tool.maxResultSizeChars).toBe(50_000)
    expect(Effect.runSync(tool.checkPermissions({}, context))).toEqual({ behavior: "allow" })
  })
})
