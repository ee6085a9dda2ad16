import {
  DispatchEvent,
  Execution,
  HookRunner,
  Hooks,
  Messages,
  PermissionContext,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import { MemoryAllowAll } from "./fixtures.js"

// --- fixtures ---------------------------------------------------------------------------------------------------

/** A tool that echoes its text (or fails), recording the inputs `call` received. */
const echoTool = (name = "Echo") => {
  const calls: Array<{ readonly text: string }> = []
  const tool = Tool.make(name, {
    description: "Echo the text back",
    input: Schema.Struct({ text: Schema.String, fail: Schema.optional(Schema.Boolean) }),
    call: (input) =>
      input.fail
        ? Effect.fail(new Tool.ToolError({ message: `Error: echo of "${input.text}" failed` }))
        : Effect.sync(() => {
          calls.push({ text: input.text })
          return `echo: ${input.text}`
        })
  })
  return { tool, calls }
}

const context = (cwd: string, overrides: Partial<Parameters<typeof ToolUseContext.make>[0]> = {}) =>
  ToolUseContext.make({
    cwd,
    sessionId: "session-42",
    transcriptPath: "/tmp/transcript-42.jsonl",
    permissions: { ...PermissionContext.empty, mode: "acceptEdits" },
    ...overrides
  })

/** A scoped temp project directory and a way to write hook scripts into it. */
const project = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = yield* fs.makeTempDirectoryScoped({ prefix: "switchyard-hooks-" })
  const file = (name: string) => path.join(dir, name)
  /** Write a bash script; returns the hook command that runs it. */
  const bash = (name: string, body: string) =>
    Effect.as(fs.writeFileString(file(name), `#!/usr/bin/env bash\n${body}\n`), `bash ${file(name)}`)
  /** Write a node script; returns the hook command that runs it. */
  const node = (name: string, body: string) => Effect.as(fs.writeFileString(file(name), body), `node ${file(name)}`)
  const read = (name: string) => fs.readFileString(file(name))
  return { dir, file, bash, node, read }
})

const hooksFor = (
  event: Hooks.HookEvent,
  commands: ReadonlyArray<string>,
  matcher?: string,
  timeout?: number
): Hooks.HooksSettings => ({
  [event]: [{
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: commands.map((command) => ({ type: "command" as const, command, ...(timeout ? { timeout } : {}) }))
  }]
})

const makeHooks = (projectDir: string, hooks: Hooks.HooksSettings, extra: Partial<HookRunner.Options> = {}) =>
  HookRunner.make({ hooks, projectDir, defaultTimeoutSeconds: 10, killGraceMillis: 200, ...extra })

const preToolUse = (hooks: Hooks.Service, tool: Tool.Any, cwd: string, input: unknown = { text: "hi" }) =>
  hooks.preToolUse({ tool, toolUseId: "toolu_1", input, context: context(cwd) })

/** Run one call through the engine (`Execution.runToolUse`) with these hooks. */
const dispatch = (hooks: Hooks.Service, tool: Tool.Any, cwd: string, input: unknown) =>
  Effect.gen(function*() {
    const env: Execution.Environment = { tools: [tool], pool: [tool], context: yield* Ref.make(context(cwd)) }
    const events = Chunk.toArray(
      yield* Stream.runCollect(Execution.runToolUse(Messages.toolUse("toolu_1", tool.name, input), env))
    )
    const results = events.filter(DispatchEvent.isResult)
    expect(results).toHaveLength(1)
    const attachments = events.filter(DispatchEvent.$is("HookAttachment"))
    return { result: results[0]!, attachments, events }
  }).pipe(Effect.provideService(Hooks.Hooks, hooks), Effect.provide(MemoryAllowAll))

const textOf = (result: DispatchEvent.Result) => Messages.contentText(result.block.content)

/** The live (non-zombie) processes of a process group, from /proc (Linux). */
const liveGroupMembers = (pgid: number): Array<number> => {
  if (!NodeFs.existsSync("/proc/self/stat")) {
    try {
      process.kill(-pgid, 0)
      return [pgid]
    } catch {
      return []
    }
  }
  const members: Array<number> = []
  for (const entry of NodeFs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = NodeFs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // pid (comm) state ppid pgrp ...; comm may contain spaces, so split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) members.push(Number(entry))
  }
  return members
}

/**
 * The group's members once they are gone. A killed process leaves the process table a moment
 * after the signal (the kernel delivers it and the process is reaped asynchronously), so wait
 * for that event rather than look once; the bound only turns a leak into a failure.
 */
const groupAfterKill = (pgid: number): Effect.Effect<Array<number>> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 500; attempt++) {
      const members = liveGroupMembers(pgid)
      if (members.length === 0) return members
      yield* Effect.sleep("20 millis")
    }
    return liveGroupMembers(pgid)
  })

const live = Effect.provide(NodeContext.layer)

// --- tests ------------------------------------------------------------------------------------------------------

describe("HookRunner matchers (SPEC §4.5)", () => {
  it("empty, missing and * match every tool", () => {
    for (const matcher of [undefined, "", "*", "  "]) {
      expect(HookRunner.matches(matcher, "Bash")).toBe(true)
      expect(HookRunner.matches(matcher, "mcp__github__create_issue")).toBe(true)
    }
  })

  it("a plain name is exact: Bash does not match BashOutput or bash", () => {
    expect(HookRunner.matches("Bash", "Bash")).toBe(true)
    expect(HookRunner.matches("Bash", "BashOutput")).toBe(false)
    expect(HookRunner.matches("Bash", "bash")).toBe(false)
  })

  it("a|b is a list of exact names", () => {
    expect(HookRunner.matches("Edit|Write", "Edit")).toBe(true)
    expect(HookRunner.matches("Edit|Write", "Write")).toBe(true)
    expect(HookRunner.matches("Edit | Write", "Write")).toBe(true)
    expect(HookRunner.matches("Edit|Write", "MultiEdit")).toBe(false)
  })

  it("a matcher with regex characters is a regex over the whole name", () => {
    expect(HookRunner.matches("Notebook.*", "NotebookEdit")).toBe(true)
    expect(HookRunner.matches("Notebook.*", "MyNotebookEdit")).toBe(false)
    expect(HookRunner.matches("mcp__memory__.*", "mcp__memory__create_entities")).toBe(true)
    expect(HookRunner.matches("mcp__memory__.*", "mcp__github__search")).toBe(false)
    expect(HookRunner.matches("mcp__.*__write.*", "mcp__fs__write_file")).toBe(true)
    expect(HookRunner.matches("(Edit|Write)", "Write")).toBe(true)
  })

  it("an invalid regex matches its exact text only, and never throws", () => {
    expect(HookRunner.matches("Bash(", "Bash")).toBe(false)
    expect(HookRunner.matches("Bash(", "Bash(")).toBe(true)
  })

  it.scoped("has() answers per event and tool; events without a tool ignore the matcher", () =>
    live(Effect.gen(function*() {
      const hooks = yield* makeHooks("/tmp", {
        PreToolUse: [{ matcher: "Edit|Write", hooks: [{ type: "command", command: "true" }] }],
        PostToolUse: [{ matcher: "mcp__github__.*", hooks: [{ type: "command", command: "true" }] }],
        Stop: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }]
      })
      expect(hooks.has("PreToolUse", "Edit")).toBe(true)
      expect(hooks.has("PreToolUse", "Write")).toBe(true)
      expect(hooks.has("PreToolUse", "Read")).toBe(false)
      expect(hooks.has("PostToolUse", "mcp__github__search")).toBe(true)
      expect(hooks.has("PostToolUse", "Edit")).toBe(false)
      expect(hooks.has("PostToolUseFailure", "Edit")).toBe(false)
      expect(hooks.has("Stop")).toBe(true)
      expect(hooks.has("UserPromptSubmit")).toBe(false)
      const programmatic = yield* makeHooks("/tmp", {}, {
        programmatic: [{ event: "PostToolUseFailure", matcher: "Bash", run: () => Effect.void }]
      })
      expect(programmatic.has("PostToolUseFailure", "Bash")).toBe(true)
      expect(programmatic.has("PostToolUseFailure", "Read")).toBe(false)
      expect(programmatic.has("PreToolUse", "Bash")).toBe(false)
    })))

  it.live("real hooks run only for the tools their matcher selects", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const logger = (label: string) => `echo '${label}' >> ${p.file("ran.log")}`
      const settings: Hooks.HooksSettings = {
        PreToolUse: ["Echo", "Echo|Other", "Ec.*", "*", "Other", "E", "mcp__srv__.*"].map((matcher) => ({
          matcher,
          hooks: [{ type: "command" as const, command: logger(matcher) }]
        }))
      }
      const hooks = yield* makeHooks(p.dir, settings)
      yield* preToolUse(hooks, echoTool("Echo").tool, p.dir)
      const ran = (yield* p.read("ran.log")).trim().split("\n").sort()
      expect(ran).toEqual(["*", "Ec.*", "Echo", "Echo|Other"].sort())
      yield* preToolUse(hooks, echoTool("mcp__srv__lookup").tool, p.dir)
      const after = (yield* p.read("ran.log")).trim().split("\n")
      expect(after.slice(4).sort()).toEqual(["*", "mcp__srv__.*"])
    }))))
})

describe("HookRunner command hooks: exit codes (SPEC §4.5)", () => {
  it.live("exit 0 with JSON permissionDecision allow / deny / ask, with reasons", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool } = echoTool()
      for (const decision of ["allow", "deny", "ask"] as const) {
        const command = yield* p.bash(
          `${decision}.sh`,
          `cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${decision}","permissionDecisionReason":"because ${decision}"}}'`
        )
        const outcome = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [command])), tool, p.dir)
        expect(outcome.decision).toBe(decision)
        expect(outcome.reason).toBe(`because ${decision}`)
        expect(outcome.messages).toEqual([])
      }
    }))))

  it.live("legacy decision approve / block map to allow / deny", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool } = echoTool()
      const approve = yield* p.bash("approve.sh", `echo '{"decision":"approve","reason":"looks fine"}'`)
      const blockIt = yield* p.bash("block.sh", `echo '{"decision":"block","reason":"not on my watch"}'`)
      const approved = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [approve])), tool, p.dir)
      expect(approved.decision).toBe("allow")
      expect(approved.reason).toBe("looks fine")
      const blocked = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [blockIt])), tool, p.dir)
      expect(blocked.decision).toBe("deny")
      expect(blocked.reason).toBe("not on my watch")
    }))))

  it.live("a JSON deny reaches the model as a denied result and the tool never runs", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool, calls } = echoTool()
      const command = yield* p.bash(
        "deny.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Echo is off limits"}}'`
      )
      const { result } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [command], "Echo")),
        tool,
        p.dir,
        {
          text: "hi"
        }
      )
      expect(result.status).toBe("denied")
      expect(result.block.is_error).toBe(true)
      expect(textOf(result)).toContain("Echo is off limits")
      expect(calls).toEqual([])
    }))))

  it.live("exit 0 with plain stdout: shown to the user on PreToolUse, context for the model on UserPromptSubmit", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = yield* p.bash("plain.sh", `echo "checked by the linter"`)
      const { tool, calls } = echoTool()
      const { result, attachments } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [command])),
        tool,
        p.dir,
        { text: "hi" }
      )
      expect(result.status).toBe("success")
      expect(calls).toEqual([{ text: "hi" }])
      expect(attachments.map((a) => [a.hookEvent, a.level, a.content])).toEqual([
        ["PreToolUse", "info", "checked by the linter"]
      ])
      const prompt = yield* (yield* makeHooks(p.dir, hooksFor("UserPromptSubmit", [command]))).userPromptSubmit({
        context: context(p.dir),
        prompt: "fix the bug"
      })
      expect(prompt.additionalContext).toEqual(["checked by the linter"])
      expect(prompt.blockReason).toBeUndefined()
      expect(prompt.messages).toEqual([])
    }))))

  it.live("exit 2 on PreToolUse: the call is denied and stderr reaches the model", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = yield* p.bash("exit2.sh", `cat > /dev/null\necho "rm is forbidden here" >&2\nexit 2`)
      const { tool, calls } = echoTool()
      const { result } = yield* dispatch(yield* makeHooks(p.dir, hooksFor("PreToolUse", [command])), tool, p.dir, {
        text: "rm -rf /"
      })
      expect(result.status).toBe("denied")
      expect(textOf(result)).toContain("rm is forbidden here")
      expect(calls).toEqual([])
    }))))

  it.live("exit 2 on PostToolUse, UserPromptSubmit and Stop blocks with stderr as the reason", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = yield* p.bash("exit2.sh", `echo "tests are failing" >&2\nexit 2`)
      const { tool } = echoTool()
      const post = yield* dispatch(yield* makeHooks(p.dir, hooksFor("PostToolUse", [command])), tool, p.dir, {
        text: "hi"
      })
      expect(post.result.status).toBe("success")
      expect(textOf(post.result)).toBe("echo: hi\n\nPostToolUse hook feedback: tests are failing")
      const prompt = yield* (yield* makeHooks(p.dir, hooksFor("UserPromptSubmit", [command]))).userPromptSubmit({
        context: context(p.dir),
        prompt: "deploy"
      })
      expect(prompt.blockReason).toBe("tests are failing")
      const stop = yield* (yield* makeHooks(p.dir, hooksFor("Stop", [command]))).stop({
        context: context(p.dir),
        stopHookActive: false
      })
      expect(stop.blockReason).toBe("tests are failing")
      const batch = yield* (yield* makeHooks(p.dir, hooksFor("PostToolBatch", [command]))).postToolBatch({
        context: context(p.dir),
        results: []
      })
      expect(batch.blockReason).toBe("tests are failing")
    }))))

  it.live("exit 2 without stderr still denies, naming the hook", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const outcome = yield* preToolUse(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", ["exit 2"])),
        echoTool().tool,
        p.dir
      )
      expect(outcome.decision).toBe("deny")
      expect(outcome.reason).toContain(`PreToolUse hook "exit 2"`)
    }))))

  it.live("any other exit code is a non-blocking error shown to the user; the tool still runs", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = yield* p.bash("exit3.sh", `echo "linter missing" >&2\nexit 3`)
      const { tool, calls } = echoTool()
      const { result, attachments } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [command])),
        tool,
        p.dir,
        { text: "hi" }
      )
      expect(result.status).toBe("success")
      expect(calls).toHaveLength(1)
      expect(attachments).toHaveLength(1)
      expect(attachments[0]!.level).toBe("error")
      expect(attachments[0]!.content).toBe(`PreToolUse hook "${command}" failed with exit code 3: linter missing`)
    }))))

  it.live("a crashing node hook is a non-blocking error with its stack on stderr", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = `node -e "throw new Error('hook exploded')"`
      const outcome = yield* preToolUse(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [command])),
        echoTool().tool,
        p.dir
      )
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages).toHaveLength(1)
      expect(outcome.messages[0]!.level).toBe("error")
      expect(outcome.messages[0]!.content).toContain("failed with exit code 1")
      expect(outcome.messages[0]!.content).toContain("hook exploded")
    }))))

  it.live("a hook killed by a signal is a non-blocking error", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const outcome = yield* preToolUse(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", ["kill -9 $$"])),
        echoTool().tool,
        p.dir
      )
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages.map((m) => m.level)).toEqual(["error"])
      expect(outcome.messages[0]!.content).toContain("was killed")
    }))))

  it.live("a hook that cannot start (missing project directory) is a non-blocking error", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const missing = p.file("does-not-exist")
      const outcome = yield* preToolUse(
        yield* makeHooks(missing, hooksFor("PreToolUse", ["true"])),
        echoTool().tool,
        p.dir
      )
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages.map((m) => m.level)).toEqual(["error"])
      expect(outcome.messages[0]!.content).toContain("could not start")
    }))))

  it.live("a hook that hangs past its timeout gives no decision and leaves no process behind, even trapping TERM", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      // The trap makes bash (and, inherited, its sleeping child) ignore SIGTERM: only SIGKILL ends them.
      const command = yield* p.bash(
        "hang.sh",
        `trap '' TERM\necho $$ > ${p.file("pid")}\nsleep 30\necho '{"decision":"block"}'`
      )
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", [command], undefined, 1))
      const outcome = yield* preToolUse(hooks, echoTool().tool, p.dir)
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages).toEqual([{
        level: "warning",
        content: `PreToolUse hook "${command}" timed out after 1s and was stopped; it gave no decision`
      }])
      const pgid = Number((yield* p.read("pid")).trim())
      expect(pgid).toBeGreaterThan(0)
      expect(yield* groupAfterKill(pgid)).toEqual([])
    }))))

  it.live("a hook whose background child keeps stdout open times out, and the child is killed", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      // bash exits at once; the background sleep (same process group) still holds the stdout pipe.
      const command = yield* p.bash(
        "background.sh",
        `echo $$ > ${p.file("pid")}\nsleep 30 &\necho '{"decision":"block"}'`
      )
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", [command], undefined, 1))
      const outcome = yield* preToolUse(hooks, echoTool().tool, p.dir)
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages.map((m) => m.level)).toEqual(["warning"])
      expect(yield* groupAfterKill(Number((yield* p.read("pid")).trim()))).toEqual([])
    }))))

  it.live("interrupting the dispatch kills the hook's whole process group", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = yield* p.bash("ignores-term.sh", `trap '' TERM\necho $$ > ${p.file("pid")}\nsleep 30`)
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", [command]))
      const fiber = yield* Effect.fork(preToolUse(hooks, echoTool().tool, p.dir))
      const pgid = yield* p.read("pid").pipe(
        Effect.map((text) => Number(text.trim())),
        Effect.filterOrFail((pid) => pid > 0),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))
      )
      expect(liveGroupMembers(pgid).length).toBeGreaterThan(0)
      yield* Fiber.interrupt(fiber)
      expect(yield* groupAfterKill(pgid)).toEqual([])
    }))))

  it.live("garbage output starting with { is a non-blocking error, never a crash", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool, calls } = echoTool()
      const garbage = yield* p.bash("garbage.sh", `echo '{ this is not json'`)
      const { result, attachments } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [garbage])),
        tool,
        p.dir,
        { text: "hi" }
      )
      expect(result.status).toBe("success")
      expect(calls).toHaveLength(1)
      expect(attachments.map((a) => a.level)).toEqual(["error"])
      expect(attachments[0]!.content).toContain("printed invalid JSON")
    }))))

  it.live("JSON with wrong field types is a non-blocking error naming the field", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const wrong = yield* p.bash(
        "wrong.sh",
        `echo '{"continue":"nope","hookSpecificOutput":{"permissionDecision":"maybe"}}'`
      )
      const outcome = yield* preToolUse(
        yield* makeHooks(p.dir, hooksFor("PreToolUse", [wrong])),
        echoTool().tool,
        p.dir
      )
      expect(outcome.decision).toBeUndefined()
      expect(outcome.stop).toBeUndefined()
      expect(outcome.messages).toHaveLength(1)
      expect(outcome.messages[0]!.level).toBe("error")
      expect(outcome.messages[0]!.content).toContain("continue")
      expect(outcome.messages[0]!.content).toContain("hookSpecificOutput.permissionDecision")
    }))))

  it.live("a hook that ignores a large stdin does not break the dispatcher", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", ["exit 0", "echo ok >&2; exit 0"]))
      const outcome = yield* preToolUse(hooks, echoTool().tool, p.dir, { text: "x".repeat(2_000_000) })
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages).toEqual([])
    }))))
})

describe("HookRunner JSON answers and combining (SPEC §4.5)", () => {
  const decisionHook = (decision: string, reason: string) =>
    `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${decision}","permissionDecisionReason":"${reason}"}}'`

  it.live("two hooks answering differently: deny beats allow, ask beats allow, deny beats ask", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool } = echoTool()
      const run = (...hooks: ReadonlyArray<string>) =>
        Effect.flatMap(makeHooks(p.dir, hooksFor("PreToolUse", hooks)), (service) => preToolUse(service, tool, p.dir))
      const denyAllow = yield* run(decisionHook("allow", "fine by me"), decisionHook("deny", "absolutely not"))
      expect([denyAllow.decision, denyAllow.reason]).toEqual(["deny", "absolutely not"])
      const askAllow = yield* run(decisionHook("ask", "check with a human"), decisionHook("allow", "fine by me"))
      expect([askAllow.decision, askAllow.reason]).toEqual(["ask", "check with a human"])
      const denyAsk = yield* run(decisionHook("ask", "check"), decisionHook("deny", "no"), decisionHook("allow", "ok"))
      expect([denyAsk.decision, denyAsk.reason]).toEqual(["deny", "no"])
      // Exit 2 from one hook beats a JSON allow from another.
      const exit2 = yield* run(decisionHook("allow", "ok"), `echo "blocked by policy" >&2; exit 2`)
      expect([exit2.decision, exit2.reason]).toEqual(["deny", "blocked by policy"])
    }))))

  it.live("matching hooks run in parallel", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      // Each hook announces itself, then waits (up to 5 s) for the other: run one after the other,
      // the first would never see the second.
      const waiter = (me: string, other: string) =>
        p.bash(
          `${me}.sh`,
          `touch ${p.file(me)}
for i in $(seq 600); do
  if [ -f ${p.file(other)} ]; then
    echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"${me} saw ${other}"}}'
    exit 0
  fi
  sleep 0.05
done
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"${me} alone"}}'`
        )
      const a = yield* waiter("a", "b")
      const b = yield* waiter("b", "a")
      const outcome = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [a, b])), echoTool().tool, p.dir)
      expect(outcome.additionalContext).toEqual(["a saw b", "b saw a"])
    }))))

  it.live("identical commands for one event run once", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const command = `echo ran >> ${p.file("count.log")}`
      const hooks = yield* makeHooks(p.dir, {
        PreToolUse: [
          { matcher: "Echo", hooks: [{ type: "command", command }] },
          { matcher: "*", hooks: [{ type: "command", command }, { type: "command", command }] }
        ]
      })
      yield* preToolUse(hooks, echoTool().tool, p.dir)
      expect((yield* p.read("count.log")).trim().split("\n")).toEqual(["ran"])
    }))))

  it.live("updatedInput from an allowing hook becomes the call input; the last one in config order wins", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const rewrite = (name: string, text: string) =>
        p.node(
          name,
          `let data = ""
process.stdin.on("data", (chunk) => (data += chunk))
process.stdin.on("end", () => {
  const event = JSON.parse(data)
  console.log(JSON.stringify({ hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "allow",
    updatedInput: { text: event.tool_input.text + " ${text}" }
  } }))
})`
        )
      const first = yield* rewrite("first.js", "(first)")
      const second = yield* rewrite("second.js", "(second)")
      const { tool, calls } = echoTool()
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", [first, second]))
      const outcome = yield* preToolUse(hooks, tool, p.dir)
      expect(outcome.updatedInput).toEqual({ input: { text: "hi (second)" }, source: `PreToolUse hook "${second}"` })
      const { result } = yield* dispatch(hooks, tool, p.dir, { text: "hello" })
      expect(result.status).toBe("success")
      expect(calls).toEqual([{ text: "hello (second)" }])
      expect(textOf(result)).toBe("echo: hello (second)")
    }))))

  it.live("an invalid updatedInput is an error result naming the hook; updatedInput without allow is ignored", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const bad = yield* p.bash(
        "bad.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"text":42}}}'`
      )
      const { tool, calls } = echoTool()
      const { result } = yield* dispatch(yield* makeHooks(p.dir, hooksFor("PreToolUse", [bad])), tool, p.dir, {
        text: "hi"
      })
      expect(result.status).toBe("error")
      expect(textOf(result)).toContain(`The input supplied by PreToolUse hook "${bad}" is invalid`)
      expect(calls).toEqual([])
      const noDecision = yield* p.bash(
        "nodecision.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"text":"sneaky"}}}'`
      )
      const outcome = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [noDecision])), tool, p.dir)
      expect(outcome.updatedInput).toBeUndefined()
      expect(outcome.messages.map((m) => m.level)).toEqual(["warning"])
      // A deny wins over an allowing hook's updatedInput.
      const deny = yield* p.bash("deny.sh", `echo "no" >&2; exit 2`)
      const rewrite = yield* p.bash(
        "rewrite.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"text":"x"}}}'`
      )
      const denied = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [rewrite, deny])), tool, p.dir)
      expect(denied.decision).toBe("deny")
      expect(denied.updatedInput).toBeUndefined()
    }))))

  it.live("additionalContext from PostToolUse is attached to the result, in config order", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const context1 = yield* p.bash(
        "c1.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint: 0 warnings"}}'`
      )
      const context2 = yield* p.bash(
        "c2.sh",
        `sleep 0.2; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"tests: green"}}'`
      )
      const { result } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PostToolUse", [context2, context1])),
        echoTool().tool,
        p.dir,
        { text: "hi" }
      )
      expect(result.status).toBe("success")
      expect(textOf(result)).toBe("echo: hi\n\ntests: green\n\nlint: 0 warnings")
    }))))

  it.live("updatedToolOutput replaces the tool output (also as Claude Code's updatedMCPToolOutput)", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const redact = yield* p.bash(
        "redact.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"[redacted]"}}'`
      )
      const { result } = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PostToolUse", [redact])),
        echoTool().tool,
        p.dir,
        {
          text: "secret"
        }
      )
      expect(result.block.content).toBe("[redacted]")
      const mcp = yield* p.bash(
        "mcp.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":[{"type":"text","text":"from mcp"}]}}'`
      )
      const replaced = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PostToolUse", [mcp])),
        echoTool().tool,
        p.dir,
        {
          text: "secret"
        }
      )
      expect(replaced.result.block.content).toEqual([{ type: "text", text: "from mcp" }])
      const structured = yield* p.bash(
        "structured.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"rows":3}}}'`
      )
      const json = yield* dispatch(
        yield* makeHooks(p.dir, hooksFor("PostToolUse", [structured])),
        echoTool().tool,
        p.dir,
        {
          text: "secret"
        }
      )
      expect(JSON.parse(textOf(json.result))).toEqual({ rows: 3 })
    }))))

  it.live("PostToolUseFailure hooks see failed calls and can add context", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const hint = yield* p.bash(
        "hint.sh",
        `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"try --force"}}'`
      )
      const hooks = yield* makeHooks(p.dir, hooksFor("PostToolUseFailure", [hint]))
      const failed = yield* dispatch(hooks, echoTool().tool, p.dir, { text: "hi", fail: true })
      expect(failed.result.status).toBe("error")
      expect(textOf(failed.result)).toBe(`Error: echo of "hi" failed\n\ntry --force`)
      const succeeded = yield* dispatch(hooks, echoTool().tool, p.dir, { text: "hi" })
      expect(textOf(succeeded.result)).toBe("echo: hi")
    }))))

  it.live("continue:false is reported as stop on the call's Outcome", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const halt = yield* p.bash("halt.sh", `echo '{"continue":false,"stopReason":"budget exhausted"}'`)
      const { tool, calls } = echoTool()
      for (const event of ["PreToolUse", "PostToolUse"] as const) {
        const hooks = yield* makeHooks(p.dir, hooksFor(event, [halt]))
        const env: Execution.Environment = { tools: [tool], pool: [tool], context: yield* Ref.make(context(p.dir)) }
        const outcome = yield* Execution.execute(Messages.toolUse("toolu_9", "Echo", { text: "hi" }), env, () =>
          Effect.void).pipe(
            Effect.provideService(Hooks.Hooks, hooks),
            Effect.provide(MemoryAllowAll)
          )
        expect(outcome.stop).toBe("budget exhausted")
        expect(outcome.result.status).toBe("success")
      }
      expect(calls).toHaveLength(2)
      const stop = yield* (yield* makeHooks(p.dir, hooksFor("Stop", [halt]))).stop({
        context: context(p.dir),
        stopHookActive: true
      })
      expect(stop.stop).toBe("budget exhausted")
    }))))

  it.live("systemMessage is a warning to the user; a hookSpecificOutput for another event is ignored", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const warn = yield* p.bash(
        "warn.sh",
        `echo '{"systemMessage":"disk almost full","hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'`
      )
      const outcome = yield* preToolUse(yield* makeHooks(p.dir, hooksFor("PreToolUse", [warn])), echoTool().tool, p.dir)
      expect(outcome.decision).toBeUndefined()
      expect(outcome.messages).toEqual([
        { level: "warning", content: "disk almost full" },
        {
          level: "error",
          content: `PreToolUse hook "${warn}" answered with hookSpecificOutput for PostToolUse; it was ignored`
        }
      ])
    }))))

  it.live("Stop, UserPromptSubmit and PostToolUse: decision block with a reason", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const keepGoing = yield* p.bash("keep.sh", `echo '{"decision":"block","reason":"the tests still fail"}'`)
      const stop = yield* (yield* makeHooks(p.dir, hooksFor("Stop", [keepGoing]))).stop({
        context: context(p.dir),
        stopHookActive: false
      })
      expect(stop.blockReason).toBe("the tests still fail")
      const prompt = yield* (yield* makeHooks(p.dir, hooksFor("UserPromptSubmit", [keepGoing]))).userPromptSubmit({
        context: context(p.dir),
        prompt: "ship it"
      })
      expect(prompt.blockReason).toBe("the tests still fail")
      const { tool } = echoTool()
      const post = yield* (yield* makeHooks(p.dir, hooksFor("PostToolUse", [keepGoing]))).postToolUse({
        tool,
        toolUseId: "toolu_1",
        input: { text: "hi" },
        context: context(p.dir),
        response: "echo: hi",
        isError: false
      })
      expect(post.blockReason).toBe("the tests still fail")
      expect(post.updatedToolOutput).toBeUndefined()
    }))))
})

describe("HookRunner event input (SPEC §4.5)", () => {
  it.live("the hook gets the event JSON on stdin and the project dir in its env and cwd", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const dump = (name: string) =>
        p.bash(
          `${name}.sh`,
          `cat > ${p.file(`${name}.json`)}
printf '%s\\n%s\\n%s\\n' "$CLAUDE_PROJECT_DIR" "$SWITCHYARD_PROJECT_DIR" "$(pwd -P)" > ${p.file(`${name}.env`)}`
        )
      const hooks = yield* makeHooks(p.dir, {
        PreToolUse: [{ matcher: "Echo", hooks: [{ type: "command", command: yield* dump("pre") }] }],
        PostToolUse: [{ hooks: [{ type: "command", command: yield* dump("post") }] }],
        PostToolUseFailure: [{ hooks: [{ type: "command", command: yield* dump("failure") }] }],
        UserPromptSubmit: [{ hooks: [{ type: "command", command: yield* dump("prompt") }] }],
        Stop: [{ hooks: [{ type: "command", command: yield* dump("stop") }] }],
        PostToolBatch: [{ hooks: [{ type: "command", command: yield* dump("batch") }] }]
      })
      const { tool } = echoTool()
      const read = (name: string) => Effect.map(p.read(`${name}.json`), (text) => JSON.parse(text) as unknown)
      yield* dispatch(hooks, tool, "/work/session-cwd", { text: "hi" })
      const pre = yield* read("pre")
      yield* dispatch(hooks, tool, "/work/session-cwd", { text: "hi", fail: true })
      yield* hooks.userPromptSubmit({ context: context("/work/session-cwd"), prompt: "fix the build" })
      yield* hooks.stop({ context: context("/work/session-cwd"), stopHookActive: true })
      yield* hooks.postToolBatch({
        context: context("/work/session-cwd"),
        results: [Messages.toolResult("toolu_1", "echo: hi")]
      })
      const common = {
        session_id: "session-42",
        transcript_path: "/tmp/transcript-42.jsonl",
        cwd: "/work/session-cwd",
        permission_mode: "acceptEdits"
      }
      expect(pre).toEqual({
        ...common,
        hook_event_name: "PreToolUse",
        tool_name: "Echo",
        tool_input: { text: "hi" },
        tool_use_id: "toolu_1"
      })
      expect(yield* read("post")).toEqual({
        ...common,
        hook_event_name: "PostToolUse",
        tool_name: "Echo",
        tool_input: { text: "hi" },
        tool_use_id: "toolu_1",
        tool_response: "echo: hi"
      })
      expect(yield* read("failure")).toEqual({
        ...common,
        hook_event_name: "PostToolUseFailure",
        tool_name: "Echo",
        tool_input: { text: "hi", fail: true },
        tool_use_id: "toolu_1",
        tool_response: `Error: echo of "hi" failed`,
        error: `Error: echo of "hi" failed`,
        is_error: true
      })
      expect(yield* read("prompt")).toEqual({ ...common, hook_event_name: "UserPromptSubmit", prompt: "fix the build" })
      expect(yield* read("stop")).toEqual({ ...common, hook_event_name: "Stop", stop_hook_active: true })
      expect(yield* read("batch")).toEqual({
        ...common,
        hook_event_name: "PostToolBatch",
        tool_results: [{ type: "tool_result", tool_use_id: "toolu_1", content: "echo: hi" }]
      })
      const realDir = NodeFs.realpathSync(p.dir)
      for (const name of ["pre", "post", "failure", "prompt", "stop", "batch"]) {
        const [claude, switchyard, cwd] = (yield* p.read(`${name}.env`)).trim().split("\n")
        expect(claude).toBe(p.dir)
        expect(switchyard).toBe(p.dir)
        expect(NodeFs.realpathSync(cwd!)).toBe(realDir)
      }
    }))))
})

describe("HookRunner programmatic hooks (SPEC §4.5)", () => {
  it.live("a programmatic hook answers through the same pipeline and sees the same input", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const seen: Array<HookRunner.HookInput> = []
      const { tool, calls } = echoTool()
      const hooks = yield* makeHooks(p.dir, {}, {
        programmatic: [{
          event: "PreToolUse",
          matcher: "Echo|Other",
          name: "no-secrets",
          run: (input) =>
            Effect.sync((): HookRunner.HookOutput => {
              seen.push(input)
              return {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "deny",
                  permissionDecisionReason: "no secrets in Echo"
                }
              }
            })
        }]
      })
      const { result } = yield* dispatch(hooks, tool, p.dir, { text: "secret" })
      expect(result.status).toBe("denied")
      expect(textOf(result)).toBe("no secrets in Echo")
      expect(calls).toEqual([])
      expect(seen).toEqual([{
        session_id: "session-42",
        transcript_path: "/tmp/transcript-42.jsonl",
        cwd: p.dir,
        permission_mode: "acceptEdits",
        hook_event_name: "PreToolUse",
        tool_name: "Echo",
        tool_input: { text: "secret" },
        tool_use_id: "toolu_1"
      }])
      expect(hooks.has("PreToolUse", "Read")).toBe(false)
    }))))

  it.live("programmatic and command hooks combine: a command deny beats a programmatic allow", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const hooks = yield* makeHooks(p.dir, hooksFor("PreToolUse", [`echo "nope" >&2; exit 2`]), {
        programmatic: [{
          event: "PreToolUse",
          name: "allow-all",
          run: () =>
            Effect.succeed<HookRunner.HookOutput>({
              hookSpecificOutput: { permissionDecision: "allow", updatedInput: { text: "rewritten" } }
            })
        }]
      })
      const outcome = yield* preToolUse(hooks, echoTool().tool, p.dir)
      expect(outcome.decision).toBe("deny")
      expect(outcome.reason).toBe("nope")
      expect(outcome.updatedInput).toBeUndefined()
    }))))

  it.live("a programmatic updatedInput names its hook as the source", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool, calls } = echoTool()
      const hooks = yield* makeHooks(p.dir, {}, {
        programmatic: [{
          event: "PreToolUse",
          name: "shout",
          run: (input) =>
            Effect.succeed<HookRunner.HookOutput>({
              hookSpecificOutput: {
                permissionDecision: "allow",
                updatedInput: { text: String((input.tool_input as { text: string }).text).toUpperCase() }
              }
            })
        }]
      })
      const outcome = yield* preToolUse(hooks, tool, p.dir)
      expect(outcome.updatedInput).toEqual({ input: { text: "HI" }, source: `PreToolUse hook "shout"` })
      yield* dispatch(hooks, tool, p.dir, { text: "quiet" })
      expect(calls).toEqual([{ text: "QUIET" }])
    }))))

  it.live("failing, dying, throwing, malformed and hanging programmatic hooks are messages, not crashes", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const p = yield* project
      const { tool, calls } = echoTool()
      const hooks = yield* makeHooks(p.dir, {}, {
        programmatic: [
          { event: "PostToolUse", name: "fails", run: () => Effect.fail(new Error("service unavailable")) },
          { event: "PostToolUse", name: "dies", run: () => Effect.die(new TypeError("undefined is not a function")) },
          {
            event: "PostToolUse",
            name: "throws",
            run: () => {
              throw new RangeError("thrown outside the effect")
            }
          },
          {
            event: "PostToolUse",
            name: "malformed",
            run: () => Effect.succeed({ decision: "perhaps" } as unknown as HookRunner.HookOutput)
          },
          { event: "PostToolUse", name: "hangs", timeout: 0.2, run: () => Effect.never },
          {
            event: "PostToolUse",
            name: "fine",
            run: () =>
              Effect.succeed<HookRunner.HookOutput>({ hookSpecificOutput: { additionalContext: "still here" } })
          }
        ]
      })
      const { result, attachments } = yield* dispatch(hooks, tool, p.dir, { text: "hi" })
      expect(result.status).toBe("success")
      expect(calls).toHaveLength(1)
      expect(textOf(result)).toBe("echo: hi\n\nstill here")
      expect(attachments.map((a) => [a.level, a.content.split(":")[0]])).toEqual([
        ["error", `PostToolUse hook "fails" failed`],
        ["error", `PostToolUse hook "dies" failed`],
        ["error", `PostToolUse hook "throws" failed`],
        ["error", `PostToolUse hook "malformed" answered with JSON that is not a hook output (decision`],
        ["warning", `PostToolUse hook "hangs" timed out after 0.2s; it gave no decision`]
      ])
      expect(attachments[0]!.content).toContain("service unavailable")
      expect(attachments[1]!.content).toContain("TypeError: undefined is not a function")
      expect(attachments[2]!.content).toContain("RangeError: thrown outside the effect")
    }))))
})
