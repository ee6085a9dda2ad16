import {
  DispatchEvent,
  Execution,
  Hooks,
  Messages,
  PermissionChain,
  PermissionContext,
  Permissions,
  Results,
  Settings,
  ShellAnalysis,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { expect, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Bash, Edit, Glob, Grep, HOME, mcp, Read, Write } from "../../../test/fixtures/permissionTools.js"
import { environment } from "./fixtures.js"

/**
 * A shell analyser for single simple commands: enough for the chain's own
 * logic (the table in test/permissions.test.ts uses the tree-sitter one).
 */
const simpleShell: ShellAnalysis.Service = {
  split: (command) => Effect.succeed([command]),
  isReadOnly: (command) => Effect.succeed(/^(ls|cat|pwd)\b/.test(command)),
  analyze: (command) =>
    Effect.succeed(Option.some({
      commands: [{
        text: command,
        argv: command.trim().split(/\s+/),
        assignments: [],
        redirects: [],
        ...ShellAnalysis.unknownPaths
      }],
      hasDynamicParts: false,
      runsUnseen: false,
      readOnly: /^(ls|cat|pwd)\b/.test(command)
    }))
}

const TestLayer = Layer.mergeAll(NodeContext.layer, Layer.succeed(ShellAnalysis.ShellAnalysis, simpleShell))

type Answer = PermissionChain.PromptAnswer

/** A prompt that gives scripted answers in order and records what it was asked. */
const scriptedPrompt = (answers: ReadonlyArray<Answer>, log: Array<string>) => {
  let next = 0
  return {
    ask: (question: PermissionChain.Question) =>
      Effect.sync(() => {
        log.push(`prompt: ${question.message}`)
        const answer = answers[next++]
        if (answer === undefined) throw new Error("the prompt was asked more often than scripted")
        return answer
      })
  }
}

const contextOf = (
  cwd: string,
  setup: {
    readonly mode?: PermissionContext.PermissionMode
    readonly allow?: ReadonlyArray<string>
    readonly ask?: ReadonlyArray<string>
    readonly deny?: ReadonlyArray<string>
  } = {}
) => {
  const rules = (["allow", "ask", "deny"] as const).flatMap((behavior) =>
    (setup[behavior] ?? []).map((raw) => PermissionContext.parseRule(raw, behavior, "test", cwd)!)
  )
  return ToolUseContext.make({ cwd, permissions: { mode: setup.mode ?? "default", rules, additionalDirectories: [] } })
}

const request = (
  tool: Tool.Any,
  input: unknown,
  context: ToolUseContext.ToolUseContext,
  log: Array<string> = [],
  hook: Partial<Hooks.PreToolUseOutcome> = {}
): Permissions.PermissionRequest => ({
  tool,
  toolUseId: "toolu_1",
  input,
  context,
  hook: { ...Hooks.emptyPreToolUse, ...hook },
  emit: (event) => Effect.sync(() => log.push(`event: ${event._tag}`))
})

const withPrompt = (answers: ReadonlyArray<Answer>, log: Array<string>) =>
  Effect.provideService(PermissionChain.PermissionPrompt, scriptedPrompt(answers, log))

layer(TestLayer)("PermissionChain: asking the user (SPEC §4.5)", (it) => {
  it.effect("publishes PermissionRequested, then a \"no\" denies and aborts the turn", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const decision = yield* chain.decide(request(Bash, { command: "npm install" }, contextOf("/work/p"), log)).pipe(
        withPrompt([{ answer: "no" }], log)
      )
      expect(decision).toMatchObject({ behavior: "deny", source: "user", rejectedByUser: true })
      expect(log).toEqual(["event: PermissionRequested", "prompt: `npm install` needs approval"])
    }))

  it.effect("a \"no\" with feedback passes the feedback to the model and lets it go on (Claude Code)", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(request(Bash, { command: "npm install" }, contextOf("/work/p"))).pipe(
        withPrompt([{ answer: "no", feedback: "use pnpm instead" }], [])
      )
      expect(decision).toMatchObject({ behavior: "deny", source: "user" })
      expect(decision).not.toHaveProperty("rejectedByUser")
      if (decision.behavior === "deny") expect(decision.message).toContain("the user said:\nuse pnpm instead")
      // Without feedback the turn ends.
      const plain = yield* chain.decide(request(Bash, { command: "npm install" }, contextOf("/work/p"))).pipe(
        withPrompt([{ answer: "no", feedback: "  " }], [])
      )
      expect(plain).toMatchObject({ behavior: "deny", rejectedByUser: true })
    }))

  it.effect("a programmatic answer: deny with its message (interrupt ends the turn); yes with a replaced input", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const ask = (answer: PermissionChain.PromptAnswer) =>
        chain.decide(request(Bash, { command: "npm install" }, contextOf("/work/p"))).pipe(withPrompt([answer], []))
      expect(yield* ask({ answer: "deny", message: "not today", interrupt: false })).toEqual({
        behavior: "deny",
        source: "user",
        message: "not today"
      })
      expect(yield* ask({ answer: "deny", message: "stop", interrupt: true })).toMatchObject({ rejectedByUser: true })
      expect(yield* ask({ answer: "yes", updatedInput: { command: "npm ci" } })).toMatchObject({
        behavior: "allow",
        updatedInput: { input: { command: "npm ci" } }
      })
    }))

  it.effect("a \"yes\" allows once: the next call asks again", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const context = contextOf("/work/p")
      const first = yield* chain.decide(request(Bash, { command: "npm install" }, context)).pipe(
        withPrompt([{ answer: "yes" }, { answer: "no" }], log)
      )
      expect(first).toMatchObject({ behavior: "allow", source: "user" })
      const second = yield* chain.decide(request(Bash, { command: "npm install" }, context)).pipe(
        withPrompt([{ answer: "no" }], log)
      )
      expect(second).toMatchObject({ behavior: "deny", rejectedByUser: true })
      expect(yield* chain.sessionRules).toEqual([])
    }))

  it.scoped("\"always\" without persist adds a session rule narrowed to the command prefix", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const project = yield* fs.makeTempDirectoryScoped()
      const chain = yield* PermissionChain.make({ home: HOME })
      const context = contextOf(project)
      const log: Array<string> = []
      const first = yield* chain.decide(request(Bash, { command: "npm run test --watch" }, context)).pipe(
        withPrompt([{ answer: "always", persist: false }], log)
      )
      expect(first).toMatchObject({ behavior: "allow", source: "user" })
      expect((yield* chain.sessionRules).map((rule) => rule.raw)).toEqual(["Bash(npm run test *)"])

      // Same prefix, other arguments: allowed by the session rule, nobody asked.
      const second = yield* chain.decide(request(Bash, { command: "npm run test" }, context)).pipe(withPrompt([], log))
      expect(second).toMatchObject({ behavior: "allow", source: "session" })
      // Another command still asks.
      const third = yield* chain.decide(request(Bash, { command: "npm run build" }, context)).pipe(
        withPrompt([{ answer: "no" }], log)
      )
      expect(third.behavior).toBe("deny")
      expect(log.filter((line) => line.startsWith("prompt"))).toHaveLength(2)
      expect(yield* fs.exists(Settings.localSettingsPath(project, yield* Path.Path))).toBe(false)
    }))

  it.scoped("a tool's own ask offers no rule: \"always\" allows this call and adds nothing, and it asks again", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const project = yield* fs.makeTempDirectoryScoped()
      const chain = yield* PermissionChain.make({ home: HOME })
      // An allow rule matches, and the tool still asks (as Bash does for a repository whose git config runs programs).
      const context = contextOf(project, { allow: ["Asker"] })
      const Asker = Tool.make("Asker", {
        description: "asks about itself",
        input: Schema.Struct({ command: Schema.String }),
        checkPermissions: () => Effect.succeed({ behavior: "ask", message: "the tool's own question" } as const),
        call: () => Effect.succeed("ran")
      })
      const log: Array<string> = []
      const first = yield* chain.decide(request(Asker, { command: "x" }, context)).pipe(
        withPrompt([{ answer: "always", persist: true }], log)
      )
      expect(first).toMatchObject({ behavior: "allow", source: "user" })
      expect(first.behavior === "allow" && first.reason).toContain("it will be asked again")
      expect(yield* chain.sessionRules).toEqual([])
      expect(yield* fs.exists(Settings.localSettingsPath(project, yield* Path.Path))).toBe(false)
      const second = yield* chain.decide(request(Asker, { command: "x" }, context)).pipe(
        withPrompt([{ answer: "no" }], log)
      )
      expect(second.behavior).toBe("deny")
      expect(log.filter((line) => line.startsWith("prompt"))).toEqual([
        "prompt: the tool's own question",
        "prompt: the tool's own question"
      ])
    }))

  it.scoped("\"always\" with persist writes settings.local.json atomically, keeping the other keys", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const project = yield* fs.makeTempDirectoryScoped()
      const file = Settings.localSettingsPath(project, path)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      const before = {
        model: "claude-opus-4",
        permissions: { allow: ["Read"], deny: ["Bash(curl *)"], defaultMode: "default" },
        statusLine: { type: "command", command: "echo hi" }
      }
      yield* fs.writeFileString(file, JSON.stringify(before))

      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(request(Bash, { command: "git status --short" }, contextOf(project))).pipe(
        withPrompt([{ answer: "always", persist: true }], [])
      )
      expect(decision).toMatchObject({ behavior: "allow", source: "user" })
      if (decision.behavior === "allow") expect(decision.reason).toContain(file)

      const after = JSON.parse(yield* fs.readFileString(file))
      expect(after).toEqual({
        ...before,
        permissions: { ...before.permissions, allow: ["Read", "Bash(git status *)"] }
      })
      // Written through a temp file that was renamed away.
      expect(yield* fs.readDirectory(path.dirname(file))).toEqual(["settings.local.json"])
      // The saved rule loads and allows the command in a new session.
      const loaded = yield* Settings.load({ cwd: project, home: HOME, stateDir: path.join(project, "none") })
      expect(loaded.issues).toEqual([])
      const fresh = yield* PermissionChain.make({ home: HOME })
      const next = yield* fresh.decide(
        request(Bash, { command: "git status" }, ToolUseContext.make({ cwd: project, permissions: loaded.permissions }))
      )
      expect(next).toMatchObject({ behavior: "allow", source: "rule" })
    }))

  it.scoped("\"always\" with persist creates .switchyard/ when it is missing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const project = yield* fs.makeTempDirectoryScoped()
      const chain = yield* PermissionChain.make({ home: HOME })
      yield* chain.decide(request(Bash, { command: "make build" }, contextOf(project))).pipe(
        withPrompt([{ answer: "always", persist: true }], [])
      )
      const written = JSON.parse(yield* fs.readFileString(Settings.localSettingsPath(project, path)))
      expect(written).toEqual({ permissions: { allow: ["Bash(make build *)"] } })
    }))

  it.scoped("parallel \"always\" answers both land in the file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const project = yield* fs.makeTempDirectoryScoped()
      const chain = yield* PermissionChain.make({ home: HOME })
      const context = contextOf(project)
      yield* Effect.all(
        ["npm run lint", "npm run build", "cargo build --release", "rm -rf dist"].map((command) =>
          chain.decide(request(Bash, { command }, context)).pipe(withPrompt([{ answer: "always", persist: true }], []))
        ),
        { concurrency: "unbounded" }
      )
      const written = JSON.parse(yield* fs.readFileString(Settings.localSettingsPath(project, path)))
      expect([...written.permissions.allow].sort()).toEqual(
        ["Bash(cargo build *)", "Bash(npm run build *)", "Bash(npm run lint *)", "Bash(rm -rf dist)"]
      )
    }))

  it.scoped("a settings file that cannot be updated is left alone; the call is still allowed", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const project = yield* fs.makeTempDirectoryScoped()
      const file = Settings.localSettingsPath(project, path)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, "{ not json")
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(request(Bash, { command: "make" }, contextOf(project))).pipe(
        withPrompt([{ answer: "always", persist: true }], [])
      )
      expect(decision.behavior).toBe("allow")
      if (decision.behavior === "allow") expect(decision.reason).toMatch(/saving the rule failed/)
      expect(yield* fs.readFileString(file)).toBe("{ not json")
    }))

  it.effect("\"always\" for an edit is narrowed to the file", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const context = contextOf("/work/p")
      yield* chain.decide(request(Edit, { file_path: "src/a.ts" }, context)).pipe(
        withPrompt([{ answer: "always", persist: false }], [])
      )
      expect((yield* chain.sessionRules).map((rule) => rule.raw)).toEqual(["Edit(//work/p/src/a.ts)"])
      const same = yield* chain.decide(request(Write, { file_path: "/work/p/src/a.ts" }, context))
      expect(same).toMatchObject({ behavior: "allow", source: "session" })
      const other = yield* chain.decide(request(Edit, { file_path: "src/b.ts" }, context))
      expect(other).toMatchObject({ behavior: "deny", source: "user" })
    }))

  it.effect("\"always\" for a read outside is narrowed to the directory", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const context = contextOf("/work/p")
      yield* chain.decide(request(Read, { file_path: "/opt/lib/x/a.h" }, context)).pipe(
        withPrompt([{ answer: "always", persist: false }], [])
      )
      expect((yield* chain.sessionRules).map((rule) => rule.raw)).toEqual(["Read(//opt/lib/x/**)"])
      const sibling = yield* chain.decide(request(Grep, { pattern: "x", path: "/opt/lib/x" }, context))
      expect(sibling).toMatchObject({ behavior: "allow", source: "session" })
    }))
})

layer(TestLayer)("PermissionChain: nobody to ask", (it) => {
  it.effect("without a prompt service an ask is a denial that says how to allow the call", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const decision = yield* chain.decide(request(Bash, { command: "npm run test" }, contextOf("/work/p"), log))
      expect(decision).toMatchObject({ behavior: "deny", source: "user" })
      expect(decision.behavior === "deny" && decision.rejectedByUser).toBeFalsy()
      if (decision.behavior === "deny") {
        expect(decision.message).toContain("no one can be asked")
        expect(decision.message).toContain("Bash(npm run test *)")
        // Library words: a settings rule or a permission mode, no command-line flags.
        expect(decision.message).toContain("permissions.allow")
        expect(decision.message).not.toContain("--")
      }
      // Nothing was requested from nobody.
      expect(log).toEqual([])
    }))

  it.effect("a prompt without a terminal is a denial with its reason", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(request(Bash, { command: "npm ci" }, contextOf("/work/p"))).pipe(
        withPrompt([{ answer: "unavailable", reason: "stdin is not a TTY" }], [])
      )
      expect(decision).toMatchObject({ behavior: "deny", source: "user" })
      if (decision.behavior === "deny") {
        expect(decision.message).toContain("stdin is not a TTY")
        expect(decision.rejectedByUser).toBeUndefined()
      }
    }))

  it.effect("dontAsk denies instead of asking, and says so", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const decision = yield* chain.decide(
        request(Bash, { command: "npm ci" }, contextOf("/work/p", { mode: "dontAsk" }))
      ).pipe(
        withPrompt([], log)
      )
      expect(decision).toMatchObject({ behavior: "deny", source: "mode" })
      if (decision.behavior === "deny") expect(decision.message).toContain("dontAsk")
      expect(log).toEqual([])
    }))
})

layer(TestLayer)("PermissionChain: modes, classifier, hooks and the tool's own check", (it) => {
  const classifier = (behavior: "allow" | "deny", log: Array<string>) =>
    Effect.provideService(PermissionChain.PermissionClassifier, {
      classify: (question) =>
        Effect.sync(() => {
          log.push(`classify: ${question.message}`)
          return { behavior, reason: `the classifier says ${behavior}` }
        })
    })

  it.effect("plan mode denies with a message that plan mode is on", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(
        request(Write, { file_path: "a.txt" }, contextOf("/work/p", { mode: "plan", allow: ["Write"] }))
      )
      expect(decision).toMatchObject({ behavior: "deny", source: "mode" })
      if (decision.behavior === "deny") expect(decision.message).toMatch(/^Plan mode is on/)
      const readOnly = yield* chain.decide(request(Glob, { pattern: "*" }, contextOf("/work/p", { mode: "plan" })))
      expect(readOnly).toMatchObject({ behavior: "allow", source: "mode" })
    }))

  it.effect("auto: what would ask goes to the classifier", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const context = contextOf("/work/p", { mode: "auto" })
      const allowed = yield* chain.decide(request(Bash, { command: "npm test" }, context)).pipe(
        classifier("allow", log),
        withPrompt([], log)
      )
      expect(allowed).toMatchObject({ behavior: "allow", source: "classifier", reason: "the classifier says allow" })
      const denied = yield* chain.decide(request(Bash, { command: "npm publish" }, context)).pipe(
        classifier("deny", log),
        withPrompt([], log)
      )
      expect(denied).toMatchObject({ behavior: "deny", source: "classifier" })
      expect(denied.behavior === "deny" && denied.rejectedByUser).toBeFalsy()
      expect(log).toEqual(["classify: `npm test` needs approval", "classify: `npm publish` needs approval"])
    }))

  it.effect("auto: an ask rule asks the user, not the classifier", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const decision = yield* chain.decide(
        request(Bash, { command: "git push" }, contextOf("/work/p", { mode: "auto", ask: ["Bash(git push *)"] }))
      ).pipe(
        classifier("allow", log),
        withPrompt([{ answer: "yes" }], log)
      )
      expect(decision).toMatchObject({ behavior: "allow", source: "user" })
      expect(log.some((line) => line.startsWith("classify"))).toBe(false)
      expect(log.filter((line) => line.startsWith("prompt"))).toHaveLength(1)
    }))

  it.effect("auto without a classifier asks the user", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const log: Array<string> = []
      const decision = yield* chain.decide(
        request(Bash, { command: "npm test" }, contextOf("/work/p", { mode: "auto" }))
      ).pipe(
        withPrompt([{ answer: "yes" }], log)
      )
      expect(decision).toMatchObject({ behavior: "allow", source: "user" })
    }))

  it.effect("a hook's updatedInput passes through with its source", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const updatedInput = { input: { command: "npm test -- --ci" }, source: "PreToolUse hook" }
      const viaHook = yield* chain.decide(
        request(Bash, { command: "npm test" }, contextOf("/work/p"), [], { decision: "allow", updatedInput })
      )
      expect(viaHook).toEqual({ behavior: "allow", source: "hook", reason: undefined, updatedInput })
      // Without the hook's allow, the rules judge the replacement and keep it.
      const viaRule = yield* chain.decide(
        request(Bash, { command: "ls" }, contextOf("/work/p", { allow: ["Bash(npm test *)"] }), [], { updatedInput })
      )
      expect(viaRule).toMatchObject({ behavior: "allow", source: "rule", updatedInput })
    }))

  it.effect("a hook's reason is the denial message", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(
        request(Read, { file_path: "a" }, contextOf("/work/p"), [], {
          decision: "deny",
          reason: "no reading on Fridays"
        })
      )
      expect(decision).toEqual({ behavior: "deny", source: "hook", message: "no reading on Fridays" })
    }))

  const checked = (check: PermissionContext.ToolPermissionCheck) =>
    Tool.make("Deploy", {
      description: "Deploy",
      input: Schema.Struct({ target: Schema.String }),
      checkPermissions: () => Effect.succeed(check),
      call: () => Effect.succeed("deployed")
    })

  it.effect("the tool's own check: deny denies even with an allow rule", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(
        request(
          checked({ behavior: "deny", message: "prod is frozen" }),
          { target: "prod" },
          contextOf("/work/p", { allow: ["Deploy"] })
        )
      )
      expect(decision).toEqual({ behavior: "deny", source: "tool", message: "prod is frozen" })
    }))

  it.effect("the tool's own check: ask asks with its message; bypassPermissions skips it", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const tool = checked({ behavior: "ask", message: "deploying to prod" })
      const log: Array<string> = []
      const asked = yield* chain.decide(request(tool, { target: "prod" }, contextOf("/work/p", { allow: ["Deploy"] })))
        .pipe(
          withPrompt([{ answer: "yes" }], log)
        )
      expect(asked).toMatchObject({ behavior: "allow", source: "user" })
      expect(log).toEqual(["prompt: deploying to prod"])
      const bypassed = yield* chain.decide(
        request(tool, { target: "prod" }, contextOf("/work/p", { mode: "bypassPermissions" }))
      )
      expect(bypassed).toMatchObject({ behavior: "allow", source: "mode" })
    }))

  it.effect("read-only calls inside the working directory are allowed by the mode", () =>
    Effect.gen(function*() {
      const chain = yield* PermissionChain.make({ home: HOME })
      const decision = yield* chain.decide(request(Read, { file_path: "README.md" }, contextOf("/work/p")))
      expect(decision).toMatchObject({ behavior: "allow", source: "mode", reason: "read-only" })
    }))

  it("the blanket-deny predicate covers the Read and Edit families and MCP servers", () => {
    const context = contextOf("/work/p", { deny: ["Read", "mcp__github", "Bash(rm *)", "Write"] }).permissions
    const hidden = PermissionChain.blanketDenyPredicate(context)
    expect(
      ["Read", "Grep", "Glob", "Edit", "MultiEdit", "NotebookEdit", "Write", "mcp__github__get_issue"].filter(hidden)
    ).toEqual(
      ["Read", "Grep", "Glob", "Edit", "MultiEdit", "NotebookEdit", "Write", "mcp__github__get_issue"]
    )
    expect(["Bash", "WebFetch", "mcp__gitlab__get_issue"].filter(hidden)).toEqual([])
    const editOnly = PermissionChain.blanketDenyPredicate(contextOf("/work/p", { deny: ["Edit"] }).permissions)
    expect(["Edit", "Write", "Read", "Grep"].filter(editOnly)).toEqual(["Edit", "Write"])
    expect(mcp("mcp__github__x").isMcp).toBe(true)
  })
})

layer(Layer.mergeAll(TestLayer, Results.layerMemory))("PermissionChain in the engine", (it) => {
  it.effect("a user's \"no\" is a denied result after PermissionRequested and PermissionDecided", () =>
    Effect.gen(function*() {
      const policy = yield* PermissionChain.make({ home: HOME })
      const env = yield* environment([Bash], { cwd: "/work/p" })
      const events = Chunk.toArray(
        yield* Stream.runCollect(
          Execution.runToolUse(Messages.toolUse("toolu_9", "Bash", { command: "npm publish" }), env)
        ).pipe(
          Effect.provideService(Permissions.PermissionPolicy, policy),
          withPrompt([{ answer: "no" }], [])
        )
      )
      expect(events.map((event) => event._tag)).toEqual([
        "Started",
        "PermissionRequested",
        "PermissionDecided",
        "Result"
      ])
      const result = events.find(DispatchEvent.isResult)!
      expect(result.status).toBe("denied")
      expect(result.block.content).toBe(Results.REJECTED_BY_USER)
    }))
})
