/**
 * What the start-up snapshot's build runs once before the heap is written (internal/snapshot.ts): the path
 * every `tools` and `dispatch` command takes — settings read, the engine's Layers built, the tools offered,
 * a `Read` and a `Write` dispatched through the permission chain and the executor — in a throwaway project
 * with its own home. V8 keeps the bytecode of every function that ran, so a command started from the
 * snapshot interprets those functions at once instead of compiling them first.
 *
 * It leaves nothing behind that a command could see: the project and the homes are removed, the variables
 * it set are restored (and a process started from the snapshot has its own environment anyway), and the
 * engine's caches are keyed by objects that are gone with it. No process is started, no network is used.
 *
 * @internal
 */
import * as Execution from "@switchyard/core/Execution"
import * as Model from "@switchyard/core/Model"
import * as StreamingExecutor from "@switchyard/core/StreamingExecutor"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Runtime from "../Runtime.js"
import * as Platform from "./platform.js"

const variables = ["HOME", "SWITCHYARD_HOME", "CLAUDE_CONFIG_DIR"] as const

const offlineModel = Layer.succeed(Model.LanguageModel, {
  stream: () =>
    Stream.fail(new Model.ModelError({ reason: "api", message: "no model in the warm-up", retryable: false }))
})

const dispatch = (cwd: string) =>
  Effect.gen(function*() {
    const prepared = yield* Runtime.prepare({
      cwd,
      settingsFiles: [],
      permissionMode: undefined,
      allowedTools: [],
      disallowedTools: [],
      verbose: false,
      mcpApproval: "offline"
    })
    yield* Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(Runtime.toolUseContext(prepared))
      const calls = [
        { type: "tool_use", id: "toolu_warm_1", name: "Read", input: { file_path: "notes.txt" } },
        { type: "tool_use", id: "toolu_warm_2", name: "Write", input: { file_path: "out.txt", content: "warm\n" } },
        { type: "tool_use", id: "toolu_warm_3", name: "Read", input: { file_path: "out.txt" } }
      ] as const
      yield* StreamingExecutor.runAll(calls, env, { scheduling: prepared.scheduling }).pipe(Stream.runDrain)
    }).pipe(
      Effect.provide(Runtime.layer(prepared, { model: offlineModel, prompt: Runtime.noPrompt("the warm-up") }))
    )
  })

/**
 * Run the warm-up. It never fails: it resolves to what went wrong, if anything (a failure only means that less
 * was compiled ahead).
 */
export const run = (): Promise<string | undefined> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-snapshot-"))
  const saved = variables.map((name) => [name, process.env[name]] as const)
  const project = path.join(root, "project")
  fs.mkdirSync(path.join(project, ".claude"), { recursive: true })
  for (const name of variables) {
    const dir = path.join(root, name.toLowerCase())
    fs.mkdirSync(dir)
    process.env[name] = dir
  }
  fs.writeFileSync(
    path.join(project, ".claude", "settings.json"),
    JSON.stringify({ permissions: { allow: ["Read", "Write"], deny: ["Read(./secret/**)", "Bash(rm *)"] } })
  )
  fs.writeFileSync(path.join(project, "notes.txt"), "alpha\nbeta\n")
  return Effect.runPromise(
    dispatch(project).pipe(
      Effect.provide(Platform.layer),
      Effect.as(undefined),
      Effect.catchAllCause((cause) => Effect.succeed(Cause.pretty(cause)))
    )
  ).finally(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    fs.rmSync(root, { recursive: true, force: true })
  })
}
