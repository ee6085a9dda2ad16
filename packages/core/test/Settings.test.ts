import { PermissionChain, Settings, ToolUseContext, Hooks } from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { Bash, HOME, Read } from "../../../test/fixtures/permissionTools.js"

/** A temp project with a user state dir beside it; `write` puts JSON (or raw text) at a path inside. */
const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = yield* fs.makeTempDirectoryScoped()
  const project = path.join(root, "project")
  const stateDir = path.join(root, "state")
  yield* fs.makeDirectory(path.join(project, ".switchyard"), { recursive: true })
  yield* fs.makeDirectory(stateDir, { recursive: true })
  const write = (file: string, content: unknown) =>
    Effect.gen(function*() {
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, typeof content === "string" ? content : JSON.stringify(content, null, 2))
      return file
    })
  return {
    root,
    project,
    stateDir,
    write,
    user: path.join(stateDir, "settings.json"),
    projectFile: path.join(project, ".switchyard", "settings.json"),
    local: path.join(project, ".switchyard", "settings.local.json"),
    load: (extraFiles: ReadonlyArray<string> = []) => Settings.load({ cwd: project, home: HOME, stateDir, extraFiles })
  }
})

const raws = (settings: Settings.Settings, behavior: "allow" | "ask" | "deny") =>
  settings.permissions.rules.filter((rule) => rule.behavior === behavior).map((rule) => rule.raw)

layer(NodeContext.layer)("Settings (SPEC §4.5)", (it) => {
  describe("loading and merging", () => {
    it.scoped("missing files are fine: nothing loads and nothing is reported", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const settings = yield* s.load()
        expect(settings.issues).toEqual([])
        expect(settings.files).toEqual([])
        expect(settings.permissions).toEqual({ mode: "default", rules: [], additionalDirectories: [] })
      }))

    it.scoped("lists concatenate in precedence order and scalars take the highest file", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const path = yield* Path.Path
        yield* s.write(s.user, {
          permissions: { allow: ["Bash(ls *)"], deny: ["Bash(curl *)"], defaultMode: "plan" },
          model: "user-model",
          env: { A: "user", B: "user" }
        })
        yield* s.write(s.projectFile, {
          permissions: { allow: ["Bash(npm test *)"], additionalDirectories: ["../lib"], defaultMode: "acceptEdits" },
          model: "project-model"
        })
        yield* s.write(s.local, {
          permissions: { allow: ["Bash(curl *)"], ask: ["Bash(git push *)"] },
          env: { B: "local" }
        })
        const extra = yield* s.write(path.join(s.root, "extra.json"), {
          permissions: { defaultMode: "dontAsk", additionalDirectories: ["/data"] },
          hooks: { Stop: [{ hooks: [{ type: "command", command: "echo stop" }] }] }
        })
        const settings = yield* s.load([extra])
        expect(settings.issues).toEqual([])
        expect(settings.files.map((file) => file.source.scope)).toEqual(["user", "project", "local", "flag"])
        expect(raws(settings, "allow")).toEqual(["Bash(ls *)", "Bash(npm test *)", "Bash(curl *)"])
        expect(raws(settings, "ask")).toEqual(["Bash(git push *)"])
        expect(raws(settings, "deny")).toEqual(["Bash(curl *)"])
        expect(settings.permissions.mode).toBe("dontAsk")
        expect(settings.permissions.additionalDirectories).toEqual([path.join(s.root, "lib"), "/data"])
        expect(settings.values["model"]).toBe("project-model")
        expect(settings.env).toEqual({ A: "user", B: "local" })
        expect(settings.hooks.Stop?.[0]?.hooks[0]?.command).toBe("echo stop")
        // Rules keep where they came from.
        expect(settings.permissions.rules.find((rule) => rule.behavior === "ask")?.source).toBe(s.local)
      }))

    it.scoped("a deny in the user file stands against an allow in the local file", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.user, { permissions: { deny: ["Bash(curl *)"] } })
        yield* s.write(s.local, { permissions: { allow: ["Bash(curl *)", "Bash"] } })
        const settings = yield* s.load()
        const chain = yield* PermissionChain.make({ home: HOME })
        const decision = yield* chain.decide({
          tool: Bash,
          toolUseId: "toolu_1",
          input: { command: "curl https://example.com" },
          context: ToolUseContext.make({ cwd: s.project, permissions: settings.permissions }),
          hook: Hooks.emptyPreToolUse,
          emit: () => Effect.void
        })
        expect(decision).toMatchObject({ behavior: "deny", source: "rule" })
        if (decision.behavior === "deny") expect(decision.message).toContain(s.user)
      }))

    it.scoped("a file beside .claude/ anchors `/x` rules at its project root", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const path = yield* Path.Path
        const other = path.join(s.root, "other-project")
        const claude = yield* s.write(path.join(other, ".claude", "settings.json"), {
          permissions: { deny: ["Read(/secrets/**)"] }
        })
        const plain = yield* s.write(path.join(s.root, "conf", "mine.json"), {
          permissions: { deny: ["Read(/keys/**)"] }
        })
        const settings = yield* s.load([claude, plain])
        expect(settings.permissions.rules.map((rule) => rule.root)).toEqual([other, path.join(s.root, "conf")])
        const chain = yield* PermissionChain.make({ home: HOME })
        const context = ToolUseContext.make({ cwd: s.project, permissions: settings.permissions })
        const decide = (file_path: string) =>
          chain.decide({
            tool: Read,
            toolUseId: "t",
            input: { file_path },
            context,
            hook: Hooks.emptyPreToolUse,
            emit: () => Effect.void
          })
        expect(yield* decide(path.join(other, "secrets", "a"))).toMatchObject({ behavior: "deny", source: "rule" })
        expect(yield* decide(path.join(s.root, "conf", "keys", "k"))).toMatchObject({
          behavior: "deny",
          source: "rule"
        })
        // Not under the rule's root: the rule does not apply, and a read inside the cwd is allowed.
        expect(yield* decide(path.join(s.project, "secrets", "a"))).toMatchObject({ behavior: "allow" })
      }))

    it.scoped("the user file lives in $SWITCHYARD_HOME when it is set", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.user, { permissions: { allow: ["WebSearch"] } })
        const settings = yield* Settings.load({ cwd: s.project }).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SWITCHYARD_HOME", s.stateDir], ["HOME", HOME]])))
        )
        expect(raws(settings, "allow")).toEqual(["WebSearch"])
        const sources = yield* Settings.sources({ cwd: s.project, home: HOME }).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map<string, string>()))
        )
        expect(sources[0]?.path).toBe(`${HOME}/.switchyard/settings.json`)
      }))
  })

  describe("invalid files", () => {
    it.scoped("invalid JSON is reported with its path, and the other files still load", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.projectFile, "{ \"permissions\": { \"allow\": [\"Bash(ls *)\" ")
        yield* s.write(s.local, { permissions: { allow: ["Bash(npm test *)"] } })
        const settings = yield* s.load()
        expect(settings.issues).toHaveLength(1)
        expect(settings.issues[0]).toMatchObject({ _tag: "SettingsIssue", path: s.projectFile, field: "(file)" })
        expect(settings.issues[0]!.message).toMatch(/invalid JSON/)
        expect(Settings.formatIssue(settings.issues[0]!)).toContain(s.projectFile)
        expect(raws(settings, "allow")).toEqual(["Bash(npm test *)"])
      }))

    it.scoped("a wrong field is reported with path and field while the rest of the file loads", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.projectFile, {
          permissions: {
            allow: ["Bash(npm test *)", 42, "Bash(unbalanced", "Read(src/**)"],
            ask: "Bash(git push *)",
            deny: ["Bash(rm *)"],
            defaultMode: "sometimes",
            additionalDirectories: ["../ok", false]
          },
          hooks: {
            PreToolUse: [
              {
                matcher: "Bash",
                hooks: [{ type: "command", command: "good.sh" }, { type: "command", command: "bad.sh", timeout: -1 }]
              },
              { matcher: 7, hooks: [{ type: "command", command: "skipped.sh" }] },
              { matcher: "Edit", hooks: [{ type: "prompt", prompt: "is this ok?" }] }
            ],
            PostToolUse: "nope",
            Notification: [{ hooks: [{ type: "command", command: "notify.sh" }] }]
          },
          env: { GOOD: "1", BAD: 2 },
          model: 5,
          somethingNew: { any: ["thing"] }
        })
        const settings = yield* s.load()
        const path = yield* Path.Path
        expect(settings.issues.every((issue) => issue.path === s.projectFile)).toBe(true)
        expect(settings.issues.map((issue) => issue.field)).toEqual([
          "permissions.allow[1]",
          "permissions.allow[2]",
          "permissions.ask",
          "permissions.defaultMode",
          "permissions.additionalDirectories[1]",
          "hooks.PreToolUse[0].hooks[1].timeout",
          "hooks.PreToolUse[1].matcher",
          "hooks.PreToolUse[2].hooks[0].type",
          "hooks.PostToolUse",
          "env.BAD",
          "model"
        ])
        const messageOf = (field: string) => settings.issues.find((issue) => issue.field === field)?.message
        expect(messageOf("permissions.defaultMode")).toContain("\"acceptEdits\"")
        expect(messageOf("permissions.defaultMode")).toContain("actual \"sometimes\"")
        expect(messageOf("hooks.PreToolUse[0].hooks[1].timeout")).toContain("-1")
        expect(messageOf("permissions.allow[2]")).toContain("Bash(unbalanced")
        // The valid parts load.
        expect(raws(settings, "allow")).toEqual(["Bash(npm test *)", "Read(src/**)"])
        expect(raws(settings, "deny")).toEqual(["Bash(rm *)"])
        expect(settings.permissions.mode).toBe("default")
        expect(settings.permissions.additionalDirectories).toEqual([path.join(path.dirname(s.project), "ok")])
        expect(settings.hooks.PreToolUse).toEqual([{
          matcher: "Bash",
          hooks: [{ type: "command", command: "good.sh" }]
        }])
        expect(settings.env).toEqual({ GOOD: "1" })
        expect(settings.values["somethingNew"]).toEqual({ any: ["thing"] })
        expect(settings.values["model"]).toBeUndefined()
      }))

    it.scoped("a file that is not an object is reported and skipped", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.local, ["Bash"])
        const settings = yield* s.load()
        expect(settings.issues.map((issue) => [issue.path, issue.field])).toEqual([[s.local, "(root)"]])
        expect(settings.files).toEqual([])
      }))
  })

  describe("a Claude Code settings file", () => {
    it.scoped("the .claude/settings.json fixture loads as is", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const fixture = path.join(__dirname, "../../../test/fixtures/claude-project/.claude/settings.json")
        const s = yield* scratch
        const settings = yield* s.load([fixture])
        expect(settings.issues).toEqual([])
        expect(settings.permissions.mode).toBe("acceptEdits")
        expect(raws(settings, "allow")).toContain("Bash(npm run test:*)")
        expect(raws(settings, "deny")).toEqual(["Bash(rm -rf *)", "Read(./.env)", "Read(./secrets/**)", "WebSearch"])
        expect(settings.permissions.rules.every((rule) => rule.root === path.dirname(path.dirname(fixture)))).toBe(true)
        expect(Object.keys(settings.hooks)).toEqual(["PreToolUse", "PostToolUse"])
        expect(settings.values["statusLine"]).toBeDefined()
        expect(settings.values["hooks"]).toHaveProperty("Notification")
      }))
  })

  describe("writing", () => {
    it.scoped("addRules creates the directory and file, and does not repeat rules", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const project = yield* fs.makeTempDirectoryScoped()
        const file = yield* Settings.addRules({
          projectDir: project,
          behavior: "allow",
          rules: ["Bash(make *)", "Bash(make *)"]
        })
        expect(file).toBe(path.join(project, ".switchyard", "settings.local.json"))
        yield* Settings.addRules({ projectDir: project, behavior: "allow", rules: ["Bash(make *)", "Read(//opt/**)"] })
        yield* Settings.addRules({ projectDir: project, behavior: "deny", rules: ["Bash(rm *)"] })
        expect(JSON.parse(yield* fs.readFileString(file))).toEqual({
          permissions: { allow: ["Bash(make *)", "Read(//opt/**)"], deny: ["Bash(rm *)"] }
        })
        expect(yield* fs.readDirectory(path.dirname(file))).toEqual(["settings.local.json"])
      }))

    it.scoped("addRules refuses to overwrite a file it cannot read as settings", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.local, { permissions: { allow: "Bash" } })
        const error = yield* Effect.flip(
          Settings.addRules({ projectDir: s.project, behavior: "allow", rules: ["Read"] })
        )
        expect(error).toMatchObject({ _tag: "SettingsWriteError", path: s.local })
        expect(error.message).toContain("permissions.allow")
        expect(JSON.parse(yield* (yield* FileSystem.FileSystem).readFileString(s.local))).toEqual({
          permissions: { allow: "Bash" }
        })
      }))
  })
})
