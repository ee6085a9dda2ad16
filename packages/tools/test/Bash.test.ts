import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  Batches,
  DispatchEvent,
  Execution,
  Messages,
  Permissions,
  Registry,
  Results,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { isLive, liveInGroup } from "./fixtures/processes.js"

// Short grace periods keep the kill tests fast.
const Settings = Layer.succeed(Bash.ShellSettings, {
  ...Bash.defaultSettings,
  killGracePeriod: Duration.millis(300),
  outputDrainTimeout: Duration.millis(300)
})

const ToolsLayer = (
  bash: Layer.Layer<
    never,
    never,
    Tool.ToolPool | CommandExecutor.CommandExecutor | BackgroundShells.BackgroundShells
  > = Bash.layer
) =>
  bash.pipe(
    Layer.provideMerge(BackgroundShells.layer),
    Layer.provide(Settings),
    Layer.provideMerge(Registry.layer()),
    Layer.provideMerge(NodeContext.layer)
  )

const TestLayer = Layer.merge(
  ToolsLayer(),
  Results.layerMemory.pipe(Layer.merge(Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)))
)

/** An environment over the registered tools, working in a fresh temp directory. */
const environment = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const cwd = yield* fs.makeTempDirectoryScoped({ prefix: "switchyard-bash-" })
  const env = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd, sessionId: "bash-test" }))
  return { cwd, env }
})

const bash = (input: Bash.BashInput, id = "toolu_bash") => Messages.toolUse(id, "Bash", input)

const run = (env: Execution.Environment, block: Messages.ToolUseBlock) =>
  Stream.runCollect(Execution.runToolUse(block, env)).pipe(Effect.map(Chunk.toReadonlyArray))

const resultOf = (events: ReadonlyArray<DispatchEvent.DispatchEvent>) => {
  const result = events.find(DispatchEvent.isResult)
  if (result === undefined) throw new Error("no Result event")
  return { status: result.status, text: Messages.contentText(result.block.content) }
}

const progressTexts = (events: ReadonlyArray<DispatchEvent.DispatchEvent>) =>
  events.filter(DispatchEvent.isProgress).map((event) => (event.data as Bash.BashProgress).output)

const numberAfter = (text: string, label: string): number => {
  const match = new RegExp(`${label}=(\\d+)`).exec(text)
  if (match === null) throw new Error(`no ${label}= in ${JSON.stringify(text)}`)
  return Number(match[1])
}

/** A shell that ignores SIGTERM and has a grandchild that ignores it too. */
const STUBBORN = `trap '' TERM; bash -c "trap '' TERM; sleep 30" & echo "pid=$$ child=$!"; sleep 30`

describe("Bash", () => {
  describe("running commands", () => {
    it.scopedLive("runs the command in the call's working directory and returns its output", () =>
      Effect.gen(function*() {
        const { cwd, env } = yield* environment
        const result = resultOf(yield* run(env, bash({ command: "pwd; echo hello; echo to-stderr >&2" })))
        expect(result.status).toBe("success")
        const path = yield* Path.Path
        const lines = result.text.split("\n")
        expect(path.resolve(lines[0]!)).toBe(
          yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.realPath(cwd)))
        )
        expect(lines.slice(1).sort()).toEqual(["hello", "to-stderr"])
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("streams output lines as progress before the command ends", () =>
      Effect.gen(function*() {
        const { cwd, env } = yield* environment
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        // The command cannot finish before the test has seen "first" as progress and created `go`.
        const command = "echo first; while [ ! -f go ]; do sleep 0.02; done; echo second"
        const events = yield* Execution.runToolUse(bash({ command, timeout: 10_000 }), env).pipe(
          Stream.tap((event) =>
            DispatchEvent.isProgress(event) && (event.data as Bash.BashProgress).output.includes("first")
              ? fs.writeFileString(path.join(cwd, "go"), "")
              : Effect.void
          ),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray)
        )
        expect(progressTexts(events)).toEqual(["first", "second"])
        expect(resultOf(events)).toEqual({ status: "success", text: "first\nsecond" })
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("a non-zero exit is an error result with the exit code and the output", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const result = resultOf(yield* run(env, bash({ command: "echo out; echo err >&2; exit 3" })))
        expect(result.status).toBe("error")
        expect(result.text.split("\n")[0]).toBe("Exit code 3")
        expect(result.text).toContain("out")
        expect(result.text).toContain("err")
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("a shell killed by a signal is an error result naming the signal", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const result = resultOf(yield* run(env, bash({ command: "echo before; kill -KILL $$" })))
        expect(result.status).toBe("error")
        expect(result.text).toBe("Command terminated by SIGKILL\nbefore")
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("a command with no output says so", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        expect(resultOf(yield* run(env, bash({ command: "true" })))).toEqual({ status: "success", text: "(no output)" })
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("commands that read stdin get end-of-file", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        expect(resultOf(yield* run(env, bash({ command: "cat; echo done", timeout: 5_000 })))).toEqual({
          status: "success",
          text: "done"
        })
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("a missing working directory is an error result", () =>
      Effect.gen(function*() {
        const env = yield* Execution.makeEnvironment(
          ToolUseContext.make({ cwd: "/nonexistent/switchyard-bash-test", sessionId: "bash-test" })
        )
        const result = resultOf(yield* run(env, bash({ command: "ls" })))
        expect(result.status).toBe("error")
        expect(result.text).toContain("Failed to run the command")
      }).pipe(Effect.provide(TestLayer)))
  })

  describe("ending the process group", () => {
    it.scopedLive("a timeout kills the whole group even when the shell and its child ignore SIGTERM", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const result = resultOf(yield* run(env, bash({ command: STUBBORN, timeout: 1000 })))
        expect(result.status).toBe("error")
        expect(result.text.split("\n")[0]).toBe("Command timed out after 1s")
        // The partial output came with the error.
        const pgid = numberAfter(result.text, "pid")
        const child = numberAfter(result.text, "child")
        expect(liveInGroup(pgid)).toEqual([])
        expect(isLive(child)).toBe(false)
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("interrupting the call mid-command leaves no process", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const seen = yield* Deferred.make<string>()
        const output = yield* Ref.make("")
        const fiber = yield* Execution.runToolUse(bash({ command: STUBBORN, timeout: 20_000 }), env).pipe(
          Stream.runForEach((event) =>
            DispatchEvent.isProgress(event)
              ? Ref.updateAndGet(output, (text) => text + (event.data as Bash.BashProgress).output).pipe(
                Effect.flatMap((text) => (text.includes("child=") ? Deferred.succeed(seen, text) : Effect.void))
              )
              : Effect.void
          ),
          Effect.fork
        )
        const text = yield* Deferred.await(seen)
        const pgid = numberAfter(text, "pid")
        const child = numberAfter(text, "child")
        expect(isLive(child)).toBe(true)
        yield* Fiber.interrupt(fiber)
        expect(liveInGroup(pgid)).toEqual([])
        expect(isLive(child)).toBe(false)
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("processes a command leaves in the background are ended when it exits", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const result = resultOf(yield* run(env, bash({ command: "sleep 30 & echo \"bg=$!\"", timeout: 10_000 })))
        expect(result.status).toBe("success")
        expect(isLive(numberAfter(result.text, "bg"))).toBe(false)
      }).pipe(Effect.provide(TestLayer)))
  })

  describe("results", () => {
    it.scopedLive("output over 30000 characters is persisted in full with a head-and-tail preview", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const stateDir = yield* fs.makeTempDirectoryScoped({ prefix: "switchyard-state-" })
        const { env } = yield* environment
        const expected = Array.from({ length: 10_000 }, (_, i) => String(i + 1)).join("\n")
        expect(expected.length).toBeGreaterThan(Bash.MAX_RESULT_SIZE_CHARS)
        const result = resultOf(
          yield* run(env, bash({ command: "seq 1 10000" }, "toolu_large")).pipe(
            Effect.provide(Results.layerDirectory(stateDir))
          )
        )
        expect(result.status).toBe("success")
        expect(result.text.length).toBeLessThan(Bash.MAX_RESULT_SIZE_CHARS)
        expect(result.text).toContain(`Output too large (${expected.length} characters)`)
        expect(result.text).toContain(expected.slice(0, Results.PREVIEW_HEAD_CHARS))
        expect(result.text).toContain(expected.slice(-Results.PREVIEW_TAIL_CHARS))
        const file = /Full output saved to: (\S+)/.exec(result.text)?.[1]
        expect(file).toBe(`${stateDir}/sessions/bash-test/tool-results/toolu_large.txt`)
        expect(yield* fs.readFileString(file!)).toBe(expected)
      }).pipe(Effect.provide(TestLayer)))
  })

  describe("safety predicates", () => {
    const calls = [
      bash({ command: "ls -la" }, "a"),
      bash({ command: "cat package.json | grep name" }, "b"),
      bash({ command: "rm -rf build" }, "c"),
      bash({ command: "git status" }, "d"),
      bash({ command: "git log --oneline -5" }, "e"),
      bash({ command: "echo hi > f" }, "f"),
      bash({ command: "ls; rm x" }, "g")
    ]
    const partition = Effect.gen(function*() {
      const { env } = yield* environment
      const batches = yield* Batches.partitionToolCalls(calls, env)
      return batches.map((batch) => [batch.isConcurrencySafe, batch.calls.map((call) => call.id).join("")] as const)
    })

    it.scopedLive("read-only commands are concurrency-safe, others run alone", () =>
      Effect.gen(function*() {
        expect(yield* partition).toEqual([[true, "ab"], [false, "c"], [true, "de"], [false, "f"], [false, "g"]])
        const { env } = yield* environment
        const tool = Registry.findToolByName(env.tools, "Bash")!
        const context = yield* Ref.get(env.context)
        expect(yield* Tool.evaluate(tool.isReadOnly({ command: "ls" }, context))).toBe(true)
        expect(yield* Tool.evaluate(tool.isReadOnly({ command: "mkdir x" }, context))).toBe(false)
      }).pipe(Effect.provide(TestLayer)))

    it.scopedLive("without the shell analyser every command is serial (core fails closed)", () =>
      Effect.gen(function*() {
        expect(yield* partition).toEqual([
          [false, "a"],
          [false, "b"],
          [false, "c"],
          [false, "d"],
          [false, "e"],
          [false, "f"],
          [false, "g"]
        ])
      }).pipe(
        Effect.provide(
          Layer.merge(
            ToolsLayer(Tool.layer(Bash.Bash)),
            Results.layerMemory.pipe(Layer.merge(Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)))
          )
        )
      ))

    it.scopedLive("sends a plain object JSON schema", () =>
      Effect.gen(function*() {
        const { env } = yield* environment
        const tool = Registry.findToolByName(env.tools, "Bash")!
        const schema = Tool.inputJsonSchema(tool)
        expect(schema.type).toBe("object")
        expect(schema.required).toEqual(["command"])
        expect(Object.keys(schema.properties ?? {}).sort()).toEqual([
          "command",
          "dangerouslyDisableSandbox",
          "description",
          "run_in_background",
          "timeout"
        ])
        expect(JSON.stringify(schema)).not.toMatch(/\$ref|\$schema|\$defs/)
        expect(tool.maxResultSizeChars).toBe(30_000)
        expect(tool.interruptBehavior).toBe("block")
      }).pipe(Effect.provide(TestLayer)))
  })
})
