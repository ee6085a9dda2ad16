/**
 * Issue 18: a sandboxed Bash call against the same call unsandboxed, side by
 * side in interleaved rounds, through the whole tool pipeline (`runToolUse`:
 * decode, permissions, the Bash tool, its process group; with the sandbox,
 * bubblewrap, the mounts of the policy and the namespace's end). Two
 * policies: the default one (no deny rules: nothing to expand) and one with
 * deny rules, one of them a pattern that is walked
 * (`Read(./packages/**\/*.pem)`), plus a call with network access through
 * the proxy and its in-sandbox relay. Goal: ≤ 15 ms added at the median.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  Execution,
  Messages,
  PermissionContext,
  Permissions,
  Registry,
  Results,
  ToolUseContext
} from "@switchyard/core"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { compare, fmt, note, record, recordStats } from "./harness.js"

const SUITE = "sandbox"
const root = path.join(import.meta.dirname, "..")

const runtimeFor = (settings: SandboxPort.SandboxSettings) =>
  ManagedRuntime.make(
    Layer.mergeAll(
      Bash.layer.pipe(Layer.provideMerge(BackgroundShells.layer)),
      Results.layerMemory,
      Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll),
      Sandbox.layer({ settings })
    ).pipe(Layer.provideMerge(Registry.layer()), Layer.provideMerge(NodeContext.layer))
  )

const call = (rules: ReadonlyArray<PermissionContext.PermissionRule>, command: string) =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(
      ToolUseContext.make({ cwd: root, sessionId: "bench", permissions: { ...PermissionContext.empty, rules } })
    )
    const result = yield* Execution.runToolUse(Messages.toolUse("b", "Bash", { command }), env).pipe(
      Stream.filter((event) => event._tag === "Result"),
      Stream.runHead
    )
    if (result._tag === "None" || (result.value as { status: string }).status !== "success") {
      throw new Error(`the benchmark call failed: ${JSON.stringify(result)}`)
    }
  })

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const probed = await Effect.runPromise(Sandbox.probe())
  if (!probed.available) {
    record(SUITE, "sandboxed Bash call", "not measured", `the sandbox cannot run here: ${probed.reason}`)
    return
  }
  const on = { ...SandboxPort.defaultSettings, enabled: true }
  const unsandboxed = runtimeFor(SandboxPort.defaultSettings)
  const sandboxed = runtimeFor(on)
  const networked = runtimeFor({
    ...on,
    network: { allowedDomains: ["example.com"], allowLocalBinding: false, allowAllUnixSockets: false }
  })
  const rules = ["Read(./.env)", "Read(./packages/**/*.pem)", "Read(~/.ssh/**)"].map((raw) =>
    PermissionContext.parseRule(raw, "deny", "bench", root)!
  )
  const command = "echo hello"
  // The reference: the same command spawned bare, and under bare bubblewrap with the same namespaces.
  const spawnOf = (program: string, args: ReadonlyArray<string>) => () =>
    new Promise<void>((resolve, reject) =>
      execFile(program, args, (error) => (error === null ? resolve() : reject(error)))
    )
  const bare = await compare({
    "bash -c": spawnOf("bash", ["-c", command]),
    "bwrap bash -c": spawnOf("bwrap", [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--",
      "bash",
      "-c",
      command
    ])
  }, { rounds: 21, warmup: 3 })
  const result = await compare({
    unsandboxed: () => unsandboxed.runPromise(call([], command)),
    sandboxed: () => sandboxed.runPromise(call([], command)),
    "sandboxed, deny rules": () => sandboxed.runPromise(call(rules, command)),
    "sandboxed, network via proxy": () => networked.runPromise(call([], command))
  }, { rounds: 21, warmup: 3 })
  // The sandbox's own share, no process started: the policy, its mounts, the command's directory, and their release.
  const wrapOnly = (permissions: PermissionContext.PermissionContext) =>
    sandboxed.runPromise(
      Effect.scoped(Effect.flatMap(SandboxPort.Sandbox, (service) => service.wrap({ command, cwd: root, permissions })))
    )
  const share = await compare({
    "wrap + release": () => wrapOnly(PermissionContext.empty),
    "wrap + release, deny rules": () => wrapOnly({ ...PermissionContext.empty, rules })
  }, { rounds: 21, warmup: 3 })
  await Promise.all([unsandboxed.dispose(), sandboxed.dispose(), networked.dispose()])
  const base = result.unsandboxed
  const added = (s: typeof base) => `+${fmt(s.median - base.median, 1)} ms, ${fmt(s.median / base.median)}×`
  recordStats(SUITE, "Bash `echo hello`, unsandboxed", base, "ms")
  recordStats(
    SUITE,
    "Bash `echo hello`, sandboxed (no deny rules)",
    result.sandboxed,
    "ms",
    `${added(result.sandboxed)} (goal ≤ 15 ms added)`
  )
  recordStats(
    SUITE,
    "Bash `echo hello`, sandboxed, 3 deny rules (one walked)",
    result["sandboxed, deny rules"],
    "ms",
    added(result["sandboxed, deny rules"])
  )
  recordStats(
    SUITE,
    "Bash `echo hello`, sandboxed, network through the proxy",
    result["sandboxed, network via proxy"],
    "ms",
    `${added(result["sandboxed, network via proxy"])} (the relay is a node process)`
  )
  recordStats(SUITE, "reference: `bash -c` spawned bare", bare["bash -c"], "ms")
  recordStats(
    SUITE,
    "reference: the same under bare `bwrap` (same namespaces)",
    bare["bwrap bash -c"],
    "ms",
    `+${fmt(bare["bwrap bash -c"].median - bare["bash -c"].median, 1)} ms: bubblewrap's own share`
  )
  recordStats(
    SUITE,
    "the sandbox's own share: wrap + release, no process (no deny rules)",
    share["wrap + release"],
    "ms"
  )
  recordStats(
    SUITE,
    "the sandbox's own share: wrap + release, no process (3 deny rules)",
    share["wrap + release, deny rules"],
    "ms"
  )
  note(
    SUITE,
    "A sandboxed call starts `bwrap` (namespaces, the policy's mounts) and ends its PID namespace; the " +
      "figures are the whole tool call through `runToolUse`. With deny rules, literal paths cost a `realpath` " +
      "each and patterns a walk of their base (directory listings are cached by modification time between " +
      "calls). With `network.allowedDomains` the command runs under a small node relay inside the sandbox " +
      "(no `socat` needed), which is what the network row adds."
  )
}
