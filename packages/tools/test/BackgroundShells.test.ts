import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
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
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { liveInGroup } from "./fixtures/processes.js"

const Settings = Layer.succeed(Bash.ShellSettings, {
  ...Bash.defaultSettings,
  killGracePeriod: Duration.millis(300),
  outputDrainTimeout: Duration.millis(300)
})

const ShellsLayer = BackgroundShells.layer.pipe(Layer.provide(Settings), Layer.provide(NodeContext.layer))

const TestLayer = Layer.mergeAll(Bash.layer, BackgroundShells.layerTools).pipe(
  Layer.provideMerge(ShellsLayer),
  Layer.provide(Settings),
  Layer.provideMerge(Registry.layer()),
  Layer.provideMerge(
    Layer.merge(
      NodeContext.layer,
      Results.layerMemory.pipe(Layer.merge(Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll)))
    )
  )
)

const environment = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const cwd = yield* fs.makeTempDirectoryScoped({ prefix: "switchyard-bg-" })
  const env = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd, sessionId: "bg-test" }))
  return { cwd, env }
})

let nextId = 0
const call = (env: Execution.Environment, name: string, input: unknown) =>
  Stream.runCollect(Execution.runToolUse(Messages.toolUse(`toolu_${++nextId}`, name, input), env)).pipe(
    Effect.map((events) => {
      const result = Chunk.toReadonlyArray(events).find(DispatchEvent.isResult)
      if (result === undefined) throw new Error("no Result event")
      return { status: result.status, text: Messages.contentText(result.block.content) }
    })
  )

const startInBackground = (env: Execution.Environment, command: string) =>
  Effect.gen(function*() {
    const result = yield* call(env, "Bash", { command, run_in_background: true })
    expect(result.status).toBe("success")
    const match = /^Command running in background with ID: (bash_\d+)$/.exec(result.text)
    expect(match).not.toBeNull()
    return match![1]!
  })

/** Read with `block: false` until the accumulated output satisfies `done`. */
const readUntil = (env: Execution.Environment, taskId: string, done: (output: string) => boolean) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make("")
    yield* call(env, "TaskOutput", { task_id: taskId, block: false }).pipe(
      Effect.flatMap((result) => Ref.updateAndGet(seen, (text) => text + outputOf(result.text))),
      Effect.repeat({ until: done, schedule: Schedule.spaced(Duration.millis(20)) }),
      Effect.timeout(Duration.seconds(10))
    )
    return yield* Ref.get(seen)
  })

const outputOf = (text: string) => /<output>\n([\s\S]*)\n<\/output>/.exec(text)?.[1] ?? ""
const statusOf = (text: string) => /<status>(\w+)<\/status>/.exec(text)?.[1]

const pidOf = (output: string) => Number(/pid=(\d+)/.exec(output)?.[1])

/** Ignores SIGTERM, like its grandchild. */
const IGNORES_TERM = `trap '' TERM; bash -c "trap '' TERM; sleep 30" & echo "pid=$$"; sleep 30`

describe("BackgroundShells", () => {
  it.scopedLive("run_in_background returns the task id at once; TaskOutput returns only new output", () =>
    Effect.gen(function*() {
      const { cwd, env } = yield* environment
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const taskId = yield* startInBackground(env, "echo one; while [ ! -f next ]; do sleep 0.02; done; echo two")
      expect(taskId).toBe("bash_1")

      // The command is still waiting for `next`, so this output was read while it ran.
      expect(yield* readUntil(env, taskId, (output) => output.includes("one"))).toBe("one")
      const running = yield* call(env, "TaskOutput", { task_id: taskId, block: false })
      expect(statusOf(running.text)).toBe("running")
      expect(running.text).toContain("(no new output)")

      yield* fs.writeFileString(path.join(cwd, "next"), "")
      const finished = yield* call(env, "TaskOutput", { task_id: taskId, block: true, timeout: 10_000 })
      expect(finished.text).toBe(
        [
          `<task_id>${taskId}</task_id>`,
          "<status>completed</status>",
          "<exit_code>0</exit_code>",
          "<output>\ntwo\n</output>"
        ]
          .join("\n")
      )
    }).pipe(Effect.provide(TestLayer)))

  it.scopedLive("a failing background command reports status failed and its exit code", () =>
    Effect.gen(function*() {
      const { env } = yield* environment
      const taskId = yield* startInBackground(env, "echo bad >&2; exit 4")
      const result = yield* call(env, "TaskOutput", { task_id: taskId })
      expect(statusOf(result.text)).toBe("failed")
      expect(result.text).toContain("<exit_code>4</exit_code>")
      expect(outputOf(result.text)).toBe("bad")
    }).pipe(Effect.provide(TestLayer)))

  it.scopedLive("task_id, bash_id and shell_id all name the task; BashOutput is TaskOutput", () =>
    Effect.gen(function*() {
      const { env } = yield* environment
      const taskId = yield* startInBackground(env, "echo a")
      for (
        const [name, input] of [
          ["TaskOutput", { task_id: taskId }],
          ["BashOutput", { bash_id: taskId }],
          ["TaskOutput", { shell_id: taskId }]
        ] as const
      ) {
        const result = yield* call(env, name, input)
        expect(result.status, `${name} ${JSON.stringify(input)}`).toBe("success")
        expect(result.text).toContain(`<task_id>${taskId}</task_id>`)
      }
      const missing = yield* call(env, "TaskOutput", { block: false })
      expect(missing.status).toBe("error")
      expect(missing.text).toContain("task_id is required")
      const unknown = yield* call(env, "TaskOutput", { task_id: "bash_99", block: false })
      expect(unknown).toEqual({ status: "error", text: "No background task with ID: bash_99" })
    }).pipe(Effect.provide(TestLayer)))

  it.scopedLive("KillShell resolves to TaskStop by alias even when TaskStop is not visible, and kills the group", () =>
    Effect.gen(function*() {
      const { env } = yield* environment
      const taskId = yield* startInBackground(env, IGNORES_TERM)
      const pgid = pidOf(yield* readUntil(env, taskId, (output) => output.includes("pid=")))
      expect(liveInGroup(pgid).length).toBeGreaterThanOrEqual(2)

      const hidden: Execution.Environment = { ...env, tools: env.tools.filter((tool) => tool.name !== "TaskStop") }
      expect(Registry.findToolByName(hidden.tools, "KillShell")).toBeUndefined()
      const stopped = yield* call(hidden, "KillShell", { shell_id: taskId })
      expect(stopped).toEqual({ status: "success", text: `Stopped background task ${taskId} (${IGNORES_TERM})` })
      expect(liveInGroup(pgid)).toEqual([])

      const after = yield* call(env, "TaskOutput", { task_id: taskId, block: false })
      expect(statusOf(after.text)).toBe("killed")
      const again = yield* call(env, "TaskStop", { task_id: taskId })
      expect(again).toEqual({ status: "error", text: `Background task ${taskId} is not running (status: killed)` })
    }).pipe(Effect.provide(TestLayer)))

  it.scopedLive("closing the layer's scope kills every running shell", () =>
    Effect.gen(function*() {
      const cwd = yield* FileSystem.FileSystem.pipe(
        Effect.flatMap((fs) => fs.makeTempDirectoryScoped({ prefix: "switchyard-bg-" }))
      )
      const scope = yield* Scope.make()
      // Closed by the test below; this only keeps a failing run from leaking shells.
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
      const context = yield* Layer.buildWithScope(ShellsLayer, scope)
      const shells = Context.get(context, BackgroundShells.BackgroundShells)
      const ids = yield* Effect.all([
        shells.start(IGNORES_TERM, { cwd }),
        shells.start("sleep 30 & echo \"pid=$$\"; wait", { cwd })
      ])
      const pgids = yield* Effect.forEach(ids, (id) =>
        shells.read(id, { block: false }).pipe(
          Effect.map((task) => task.output),
          Effect.tap((output) => (output.includes("pid=") ? Effect.void : Effect.sleep(Duration.millis(20)))),
          Effect.repeat({ until: (output) => output.includes("pid=") }),
          Effect.map(pidOf)
        ))
      for (const pgid of pgids) expect(liveInGroup(pgid).length).toBeGreaterThan(0)
      yield* Scope.close(scope, Exit.void)
      for (const pgid of pgids) expect(liveInGroup(pgid)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a command that cannot start is an error result", () =>
    Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(
        ToolUseContext.make({ cwd: "/nonexistent/switchyard-bg-test", sessionId: "bg-test" })
      )
      const result = yield* call(env, "Bash", { command: "ls", run_in_background: true })
      expect(result.status).toBe("error")
      expect(result.text).toContain("Failed to start the command")
    }).pipe(Effect.provide(TestLayer)))

  it.scopedLive("TaskOutput and TaskStop send plain object JSON schemas naming task_id", () =>
    Effect.gen(function*() {
      const { env } = yield* environment
      for (const name of ["TaskOutput", "TaskStop"]) {
        const schema = Tool.inputJsonSchema(Registry.findToolByName(env.tools, name)!)
        expect(schema.type).toBe("object")
        expect(schema.required).toEqual(["task_id"])
        expect(JSON.stringify(schema)).not.toMatch(/\$ref|\$schema|\$defs|bash_id|shell_id/)
      }
      expect(Registry.findToolByName(env.tools, "BashOutput")?.name).toBe("TaskOutput")
      expect(Registry.findToolByName(env.tools, "KillShell")?.name).toBe("TaskStop")
    }).pipe(Effect.provide(TestLayer)))
})
