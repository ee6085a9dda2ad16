/**
 * Issue 4 and issue 18: the cost of one permission decision with 200 and
 * with 1 000 rules in the settings (goal for 1 000: ≤ 50 µs at the median),
 * and of one no-op command hook (a process spawn) against a programmatic hook;
 * and the real Bash tool's own check, which reads the repository's git
 * configuration for a line that runs git.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  Execution,
  HookRunner,
  Messages,
  PermissionChain,
  PermissionContext,
  Permissions,
  Results,
  Tool,
  ToolUseContext,
  Hooks
} from "@switchyard/core"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { fmt, note, record, recordStats, stats, timeEffect } from "./harness.js"

const SUITE = "permissions"

/** What the real Bash tool needs: its shell analyser, background shells and the Node platform. */
const BashServices = Layer.mergeAll(ShellCommand.layer, BackgroundShells.layer).pipe(
  Layer.provideMerge(NodeContext.layer)
)

const rules = (cwd: string, count = 200): ReadonlyArray<PermissionContext.PermissionRule> => {
  const out: Array<PermissionContext.PermissionRule> = []
  for (let i = 0; i < count; i++) {
    const raw = [
      `Bash(npm run script${i} *)`,
      `Read(./src/module${i}/**)`,
      `Edit(//tmp/project${i}/**)`,
      `WebFetch(domain:host${i}.example.com)`
    ][i % 4]!
    out.push(PermissionContext.parseRule(raw, i % 7 === 0 ? "deny" : i % 5 === 0 ? "ask" : "allow", "bench", cwd)!)
  }
  return out
}

const fileTool = (name: string, readOnly: boolean) =>
  Tool.make(name, {
    description: name,
    input: Schema.Struct({ file_path: Schema.String }),
    isReadOnly: () => readOnly,
    call: () => Effect.succeed("ok")
  })

const bashTool = Tool.make("Bash", {
  description: "bash",
  input: Schema.Struct({ command: Schema.String }),
  isReadOnly: (input) => Effect.flatMap(ShellCommand.isReadOnly(input.command), Effect.succeed),
  call: () => Effect.succeed("ok")
})

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const cwd = process.cwd()
  const context = ToolUseContext.make({
    cwd,
    sessionId: "bench",
    permissions: { mode: "default", rules: rules(cwd), additionalDirectories: [] }
  })
  const N = 2_000
  const decide = (tool: Tool.Any, input: unknown) =>
    Effect.gen(function*() {
      const policy = yield* Permissions.PermissionPolicy
      for (let i = 0; i < N; i++) {
        yield* policy.decide({
          tool,
          toolUseId: "t",
          input,
          context,
          hook: Hooks.emptyPreToolUse,
          emit: () => Effect.void
        })
      }
    }).pipe(
      Effect.provide(
        Layer.mergeAll(PermissionChain.layer({ projectDir: cwd }), ShellCommand.layer).pipe(
          Layer.provideMerge(NodeContext.layer)
        )
      )
    )
  const read = await timeEffect(decide(fileTool("Read", true), { file_path: `${cwd}/src/module3/file.ts` }), {
    samples: 5
  })
  const edit = await timeEffect(decide(fileTool("Edit", false), { file_path: "/tmp/project6/a.ts" }), { samples: 5 })
  const bash = await timeEffect(decide(bashTool, { command: "npm run script0 --watch" }), { samples: 3 })
  record(SUITE, "decision with 200 rules: Read (µs)", fmt((read * 1000) / N))
  record(SUITE, "decision with 200 rules: Edit (µs)", fmt((edit * 1000) / N))
  record(SUITE, "decision with 200 rules: Bash, incl. tree-sitter parse (µs)", fmt((bash * 1000) / N))

  // 1 000 rules: one chain built once, decisions timed in batches (µs per decision, median of the batches).
  const thousand = ToolUseContext.make({
    cwd,
    sessionId: "bench",
    permissions: { mode: "default", rules: rules(cwd, 1_000), additionalDirectories: [] }
  })
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(PermissionChain.layer({ projectDir: cwd }), ShellCommand.layer).pipe(
      Layer.provideMerge(NodeContext.layer)
    )
  )
  const BATCH = 500
  const batch = (tool: Tool.Any, input: unknown) =>
    Effect.gen(function*() {
      const policy = yield* Permissions.PermissionPolicy
      const request = {
        tool,
        toolUseId: "t",
        input,
        context: thousand,
        hook: Hooks.emptyPreToolUse,
        emit: () => Effect.void
      }
      for (let i = 0; i < BATCH; i++) yield* policy.decide(request)
    })
  const perDecision = async (tool: Tool.Any, input: unknown, rounds: number) => {
    for (let i = 0; i < 3; i++) await runtime.runPromise(batch(tool, input))
    const samples: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      const start = performance.now()
      await runtime.runPromise(batch(tool, input))
      samples.push(((performance.now() - start) * 1000) / BATCH)
    }
    return stats(samples)
  }
  const goal = (s: ReturnType<typeof stats>) => `goal ≤ 50 µs, ${s.median <= 50 ? "met" : "not met"}`
  const read1000 = await perDecision(fileTool("Read", true), { file_path: `${cwd}/src/module3/file.ts` }, 15)
  const edit1000 = await perDecision(fileTool("Edit", false), { file_path: "/tmp/project6/a.ts" }, 15)
  const bash1000 = await perDecision(bashTool, { command: "npm run script0 --watch" }, 7)
  recordStats(SUITE, "decision with 1 000 rules: Read", read1000, "µs", goal(read1000))
  recordStats(SUITE, "decision with 1 000 rules: Edit", edit1000, "µs", goal(edit1000))
  recordStats(SUITE, "decision with 1 000 rules: Bash, incl. tree-sitter parse", bash1000, "µs")
  await runtime.dispose()
  note(
    SUITE,
    "A decision resolves the call's path as the kernel does (one `realpath(3)` for a path that exists, an `lstat` a " +
      "level up to the deepest existing ancestor for one that does not; the working and home directories once per " +
      "chain) and checks only the path rules whose literal lead the path is under, so 1 000 rules cost about what 200 do."
  )

  // The real Bash tool's own check: for a line that runs git it finds the repository and reads its configuration
  // (`tools/internal/shellGit.ts`); side by side with a line that runs no git, and with the stand-in above.
  const realBash = await Effect.runPromise(
    Effect.map(
      Effect.context<Layer.Layer.Success<typeof BashServices>>(),
      (services) => Tool.provideContext(Bash.Bash, services)
    ).pipe(Effect.provide(BashServices))
  )
  const bashLs = await timeEffect(decide(realBash, { command: "ls src" }), { samples: 3 })
  const bashGit = await timeEffect(decide(realBash, { command: "git status" }), { samples: 3 })
  const bashNested = await timeEffect(decide(realBash, { command: "cd packages && git log -1 --oneline" }), {
    samples: 3
  })
  record(SUITE, "decision, the Bash tool: `ls src` (µs)", fmt((bashLs * 1000) / N))
  record(
    SUITE,
    "decision, the Bash tool: `git status`, its repository's configuration read (µs)",
    fmt((bashGit * 1000) / N),
    `${fmt(bashGit / bashLs, 2)}× \`ls src\``
  )
  record(
    SUITE,
    "decision, the Bash tool: `cd packages && git log -1 --oneline` (µs)",
    fmt((bashNested * 1000) / N),
    `${fmt(bashNested / bashLs, 2)}× \`ls src\``
  )

  const noop = Tool.make("Noop", { description: "", input: Schema.Struct({}), call: () => Effect.succeed("ok") })
  const dispatchWith = (hooks: Layer.Layer<Hooks.Hooks>, calls: number) =>
    Effect.gen(function*() {
      const env: Execution.Environment = {
        tools: [noop],
        pool: [noop],
        context: yield* Ref.make(ToolUseContext.make({ cwd, sessionId: "bench" }))
      }
      for (let i = 0; i < calls; i++) {
        yield* Execution.execute(Messages.toolUse(`t${i}`, "Noop", {}), env, () => Effect.void)
      }
    }).pipe(Effect.provide(Layer.mergeAll(hooks, Results.layerMemory)))
  const many = 2_000
  const few = 40
  const none = (await timeEffect(dispatchWith(Layer.succeed(Hooks.Hooks, Hooks.none), many), { samples: 5 })) / many
  const programmatic = (await timeEffect(
    dispatchWith(
      HookRunner.layer({ hooks: {}, projectDir: cwd, programmatic: [{ event: "PreToolUse", run: () => Effect.void }] })
        .pipe(Layer.provide(NodeContext.layer)),
      many
    ),
    { samples: 5 }
  )) / many
  const command = (await timeEffect(
    dispatchWith(
      HookRunner.layer({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "true" }] }] }, projectDir: cwd })
        .pipe(Layer.provide(NodeContext.layer)),
      few
    ),
    { samples: 3, warmup: 1 }
  )) / few
  record(SUITE, "PreToolUse hook overhead: programmatic hook (µs/call)", fmt((programmatic - none) * 1000))
  record(
    SUITE,
    "PreToolUse hook overhead: no-op command hook `true` (µs/call)",
    fmt((command - none) * 1000),
    `${fmt((command - none) / Math.max(1e-9, programmatic - none), 0)}× programmatic (a process spawn per call)`
  )
}
