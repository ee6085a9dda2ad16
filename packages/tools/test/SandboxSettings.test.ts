/**
 * Claude Code's `sandbox` settings, judged by what happened to files outside
 * the project: `autoAllowBashIfSandboxed` in the permission chain,
 * `dangerouslyDisableSandbox` following `allowUnsandboxedCommands`,
 * `excludedCommands` running outside, a missing bubblewrap following
 * `failIfUnavailable` (simulated by pointing the implementation at a
 * program that does not exist), hooks that opt in.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Path from "@effect/platform/Path"
import * as HookRunner from "@switchyard/core/HookRunner"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as PermissionContext from "@switchyard/core/PermissionContext"
import * as Permissions from "@switchyard/core/Permissions"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Read from "@switchyard/tools/Read"
import * as Registry from "@switchyard/core/Registry"
import * as Results from "@switchyard/core/Results"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeProject, type Project, SECRETS } from "./fixtures/sandboxProject.js"
import { dispatch, makeContext } from "./fixtures/toolHarness.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox tests need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

const tools = Layer.mergeAll(Bash.layer, Read.layer).pipe(Layer.provideMerge(BackgroundShells.layer))

/** The tools with a sandbox and a policy (default: allow everything, by name). */
const layerFor = (
  project: Project,
  settings: Partial<SandboxPort.SandboxSettings> = {},
  options: {
    readonly policy?: Layer.Layer<Permissions.PermissionPolicy> | undefined
    readonly bwrap?: string | undefined
  } = {}
) =>
  Layer.mergeAll(
    tools,
    Results.layerMemory,
    options.policy ?? Layer.succeed(Permissions.PermissionPolicy, Permissions.allowAll),
    Sandbox.layer({ settings: { ...project.settings, ...settings }, home: project.home, bwrap: options.bwrap })
  ).pipe(Layer.provideMerge(Registry.layer()), Layer.provideMerge(NodeContext.layer))

const chain = (prompt?: PermissionChain.PermissionPrompt["Type"]) => {
  const layer = PermissionChain.layer({ home: "/nonexistent-home" }).pipe(Layer.provide(NodeContext.layer))
  return prompt === undefined
    ? layer
    : Layer.provideMerge(layer, Layer.succeed(PermissionChain.PermissionPrompt, prompt))
}

const bashIn = (
  project: Project,
  input: Bash.BashInput,
  permissions: Partial<PermissionContext.PermissionContext> = {}
) =>
  Effect.flatMap(
    makeContext(project.project, {
      permissions: { mode: "default", rules: [], additionalDirectories: [], ...permissions }
    }),
    (context) => dispatch(context, "Bash", input)
  )

const withProject = <A, E, R>(body: (project: Project) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(Effect.sync(() => makeProject()), body, (project) => Effect.sync(project.cleanup))

const outsideFile = (project: Project, name: string) => path.join(project.outside, name)

const rule = (raw: string, behavior: PermissionContext.RuleBehavior, project: Project) =>
  PermissionContext.parseRule(raw, behavior, "test", project.project)!

suite("autoAllowBashIfSandboxed (the permission chain)", () => {
  it.scopedLive("a sandboxed command no rule matches runs without a prompt; an ask or deny rule still stops it", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const free = yield* bashIn(project, { command: "touch auto.txt" })
        expect(free.status, free.text).toBe("success")
        expect(fs.existsSync(path.join(project.project, "auto.txt"))).toBe(true)
        const asking = { rules: [rule("Bash(touch *)", "ask", project)] }
        const asked = yield* bashIn(project, { command: "touch asked.txt" }, asking)
        expect(asked.status).toBe("denied")
        expect(fs.existsSync(path.join(project.project, "asked.txt"))).toBe(false)
        const denying = { rules: [rule("Bash(touch *)", "deny", project)] }
        const denied = yield* bashIn(project, { command: "touch denied.txt" }, denying)
        expect(denied.status).toBe("denied")
        expect(fs.existsSync(path.join(project.project, "denied.txt"))).toBe(false)
        const planned = yield* bashIn(project, { command: "touch planned.txt" }, { mode: "plan" })
        expect(planned.status).toBe("denied")
        expect(fs.existsSync(path.join(project.project, "planned.txt"))).toBe(false)
      }).pipe(Effect.provide(layerFor(project, {}, { policy: chain() })))
    ))

  it.scopedLive("with autoAllowBashIfSandboxed false, or the sandbox off, the same command asks", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const off = yield* bashIn(project, { command: "touch off.txt" }).pipe(
          Effect.provide(layerFor(project, { autoAllowBashIfSandboxed: false }, { policy: chain() }))
        )
        expect(off.status).toBe("denied")
        const disabled = yield* bashIn(project, { command: "touch disabled.txt" }).pipe(
          Effect.provide(layerFor(project, { enabled: false }, { policy: chain() }))
        )
        expect(disabled.status).toBe("denied")
        expect(fs.readdirSync(project.project).filter((name) => name.endsWith(".txt")).sort()).toEqual([
          "locked.txt",
          "ruled.txt"
        ])
      })
    ))
})

suite("deny rules the sandbox enforces itself", () => {
  it.scopedLive("a path no analysis can resolve against a Read deny rule: sandboxed it runs, masked; off it asks", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const command = "cat \"$(echo .env)\"; echo ran > ran.txt"
        const rules = { rules: [rule("Read(./.env)", "deny", project)] }
        const sandboxed = yield* bashIn(project, { command }, rules)
        expect(sandboxed.status, sandboxed.text).toBe("success")
        expect(sandboxed.text).not.toContain(SECRETS.env)
        expect(fs.readFileSync(path.join(project.project, "ran.txt"), "utf8")).toBe("ran\n")
        fs.rmSync(path.join(project.project, "ran.txt"))
        // A real ask rule still asks, sandbox or not.
        const asking = { rules: [...rules.rules, rule("Bash(touch *)", "ask", project)] }
        const asked = yield* bashIn(project, { command: "touch \"$(echo asked.txt)\"" }, asking)
        expect(asked.status).toBe("denied")
        expect(fs.existsSync(path.join(project.project, "asked.txt"))).toBe(false)
        const off = yield* bashIn(project, { command }, rules).pipe(
          Effect.provide(layerFor(project, { enabled: false }, { policy: chain() }))
        )
        expect(off.status).toBe("denied")
        expect(off.text).not.toContain(SECRETS.env)
        expect(fs.existsSync(path.join(project.project, "ran.txt"))).toBe(false)
      }).pipe(Effect.provide(layerFor(project, {}, { policy: chain() })))
    ))
})

suite("dangerouslyDisableSandbox follows allowUnsandboxedCommands", () => {
  it.scopedLive("allowed: the user is asked, and a yes runs the command outside the sandbox", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const questions: Array<string> = []
        const prompt = {
          ask: (question: PermissionChain.Question) =>
            Effect.sync(() => {
              questions.push(question.message)
              return { answer: "yes" } as const
            })
        }
        const target = outsideFile(project, "escaped.txt")
        const result = yield* bashIn(project, { command: `touch ${target}`, dangerouslyDisableSandbox: true }).pipe(
          Effect.provide(layerFor(project, {}, { policy: chain(prompt) }))
        )
        expect(result.status, result.text).toBe("success")
        expect(fs.existsSync(target)).toBe(true)
        expect(questions).toEqual(["the command asks to run outside the sandbox (dangerouslyDisableSandbox)"])
        // Nobody to ask: denied, nothing written.
        const second = outsideFile(project, "second.txt")
        const unasked = yield* bashIn(project, { command: `touch ${second}`, dangerouslyDisableSandbox: true }).pipe(
          Effect.provide(layerFor(project, {}, { policy: chain() }))
        )
        expect(unasked.status).toBe("denied")
        expect(fs.existsSync(second)).toBe(false)
      })
    ))

  it.scopedLive("not allowed: refused with a clear result whatever the policy, and nothing runs", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const target = outsideFile(project, "refused.txt")
        for (const policy of [chain(), undefined]) {
          const result = yield* bashIn(
            project,
            { command: `touch ${target}`, dangerouslyDisableSandbox: true },
            { mode: "bypassPermissions" }
          ).pipe(Effect.provide(layerFor(project, { allowUnsandboxedCommands: false }, { policy })))
          expect(result.status).not.toBe("success")
          expect(result.text).toContain("sandbox.allowUnsandboxedCommands is false")
        }
        expect(fs.existsSync(target)).toBe(false)
      })
    ))
})

suite("excludedCommands run outside the sandbox, through the normal permission flow", () => {
  it.scopedLive("an excluded command writes outside; a line with anything else in it stays inside", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const excluded = outsideFile(project, "excluded.txt")
        const mixed = outsideFile(project, "mixed.txt")
        yield* bashIn(project, { command: `touch ${excluded}` })
        yield* bashIn(project, { command: `touch ${mixed} && echo done` })
        expect(fs.existsSync(excluded)).toBe(true)
        expect(fs.existsSync(mixed)).toBe(false)
      }).pipe(Effect.provide(layerFor(project, { excludedCommands: ["touch"] })))
    ))

  it.scopedLive("an excluded command is not auto-allowed: without an allow rule it asks", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const target = outsideFile(project, "asked.txt")
        const result = yield* bashIn(project, { command: `touch ${target}` })
        expect(result.status).toBe("denied")
        expect(fs.existsSync(target)).toBe(false)
      }).pipe(Effect.provide(layerFor(project, { excludedCommands: ["touch"] }, { policy: chain() })))
    ))
})

suite("a missing bubblewrap follows failIfUnavailable", () => {
  it.scoped("failIfUnavailable: building the sandbox fails and names the package", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Sandbox.make({
        settings: { ...SandboxPort.defaultSettings, enabled: true, failIfUnavailable: true },
        bwrap: "/nonexistent/bwrap"
      }))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error?._tag).toBe("SandboxUnavailable")
        expect(error?.message).toContain("apt-get install bubblewrap")
      }
    }).pipe(Effect.provide(Path.layer)))

  it.scopedLive("otherwise: unavailable, Bash runs unsandboxed and falls back to prompts", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const status = yield* (yield* SandboxPort.Sandbox).status
        expect(status).toMatchObject({ enabled: true, available: false })
        const target = outsideFile(project, "unsandboxed.txt")
        const asked = yield* bashIn(project, { command: `touch ${target}` })
        expect(asked.status).toBe("denied")
        expect(fs.existsSync(target)).toBe(false)
        const ran = yield* bashIn(project, { command: `touch ${target}` }, { mode: "bypassPermissions" })
        expect(ran.status, ran.text).toBe("success")
        expect(fs.existsSync(target)).toBe(true)
      }).pipe(Effect.provide(layerFor(project, {}, { bwrap: "/nonexistent/bwrap", policy: chain() })))
    ))

  it.scoped("on macOS the sandbox is unavailable (not supported yet), and failIfUnavailable fails", () =>
    Effect.gen(function*() {
      const platform = Object.getOwnPropertyDescriptor(process, "platform")!
      Object.defineProperty(process, "platform", { value: "darwin" })
      const result = yield* Effect.all([
        Sandbox.probe(),
        Effect.exit(
          Sandbox.make({ settings: { ...SandboxPort.defaultSettings, enabled: true, failIfUnavailable: true } })
        )
      ]).pipe(Effect.ensuring(Effect.sync(() => Object.defineProperty(process, "platform", platform))))
      expect(result[0]).toEqual({ available: false, reason: expect.stringContaining("macOS is not supported yet") })
      expect(Exit.isFailure(result[1])).toBe(true)
    }).pipe(Effect.provide(Path.layer)))
})

suite("hooks that opt in run in the sandbox", () => {
  it.scopedLive("a PreToolUse hook with sandbox: true cannot write outside; one without it can", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const hook = (name: string, sandbox: boolean) => ({
          type: "command" as const,
          command: `touch ${outsideFile(project, name)}`,
          sandbox
        })
        const hooks = HookRunner.layer({
          projectDir: project.project,
          hooks: {
            PreToolUse: [{ matcher: "Read", hooks: [hook("sandboxed-hook.txt", true), hook("plain-hook.txt", false)] }]
          }
        }).pipe(Layer.provide(NodeContext.layer))
        const context = yield* makeContext(project.project)
        const result = yield* dispatch(context, "Read", { file_path: path.join(project.project, "README.md") }).pipe(
          Effect.provide(hooks)
        )
        expect(result.status).toBe("success")
        expect(fs.existsSync(outsideFile(project, "plain-hook.txt"))).toBe(true)
        expect(fs.existsSync(outsideFile(project, "sandboxed-hook.txt"))).toBe(false)
      }).pipe(Effect.provide(layerFor(project)))
    ))
})
