/**
 * Settings that must not weaken the permission layer by accident (issue 9,
 * item 11; issue 13): Claude Code's `.claude/` project files load; a deny rule
 * that cannot be read fails closed for the tools it names; lowercase tool
 * names warn; 150 000 rules load and match; a project file's
 * `bypassPermissions` needs a confirmation, remembered per project and content.
 */
import { Hooks, PermissionChain, type PermissionContext, Settings, type Tool, ToolUseContext } from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { Bash, HOME, Read, WebFetch } from "../../../test/fixtures/permissionTools.js"

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = yield* fs.makeTempDirectoryScoped()
  const project = path.join(root, "project")
  const stateDir = path.join(root, "state")
  yield* fs.makeDirectory(project, { recursive: true })
  const write = (relative: string, content: unknown) =>
    Effect.gen(function*() {
      const file = path.isAbsolute(relative) ? relative : path.join(project, relative)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, typeof content === "string" ? content : JSON.stringify(content))
      return file
    })
  const load = (extraFiles: ReadonlyArray<string> = []) =>
    Settings.load({ cwd: project, home: HOME, stateDir, extraFiles })
  return { root, project, stateDir, write, load, path }
})

/** What the chain decides for a call under loaded permissions (nobody to ask: an ask is reported as such). */
const decide = (
  permissions: PermissionContext.PermissionContext,
  cwd: string,
  tool: Tool.Any,
  input: unknown
) =>
  Effect.gen(function*() {
    const chain = yield* PermissionChain.make({ home: HOME })
    let asked = false
    const decision = yield* chain.decide({
      tool,
      toolUseId: "toolu_1",
      input,
      context: ToolUseContext.make({ cwd, permissions }),
      hook: Hooks.emptyPreToolUse,
      emit: () => Effect.void
    }).pipe(
      Effect.provideService(PermissionChain.PermissionPrompt, {
        ask: () =>
          Effect.sync(() => {
            asked = true
            return { answer: "unavailable", reason: "test" } as const
          })
      })
    )
    return asked ? "ask" : decision.behavior
  })

layer(NodeContext.layer)("Settings safety", (it) => {
  describe("Claude Code project files", () => {
    it.scoped(".claude/settings.json and .claude/settings.local.json load, and sources lists what was read", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const claude = yield* s.write(".claude/settings.json", { permissions: { deny: ["Read(./.env)"] } })
        const claudeLocal = yield* s.write(".claude/settings.local.json", {
          permissions: { ask: ["Bash(git push *)"] }
        })
        const own = yield* s.write(".switchyard/settings.json", { permissions: { allow: ["Bash(npm test *)"] } })
        const settings = yield* s.load()
        expect(settings.sources.map((source) => source.path)).toEqual([claude, own, claudeLocal])
        expect(settings.sources.map((source) => source.scope)).toEqual(["project", "project", "local"])
        expect(yield* decide(settings.permissions, s.project, Read, { file_path: ".env" })).toBe("deny")
        expect(yield* decide(settings.permissions, s.project, Bash, { command: "git push origin main" })).toBe("ask")
      }))

    it.scoped("a file given with --settings is read once, and a broken file is still listed as read", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const claude = yield* s.write(".claude/settings.json", { permissions: { deny: ["Read(./.env)"] } })
        const broken = yield* s.write(".switchyard/settings.json", "{ not json")
        const settings = yield* s.load([claude])
        expect(settings.sources.map((source) => [source.path, source.scope])).toEqual([
          [broken, "project"],
          [claude, "flag"]
        ])
        expect(settings.permissions.rules.filter((rule) => rule.behavior === "deny")).toHaveLength(1)
      }))
  })

  describe("broken deny rules fail closed", () => {
    it.scoped("an unbalanced deny rule makes its tool ask, even in bypassPermissions; other tools are unaffected", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(".switchyard/settings.json", { permissions: { deny: ["Bash(rm *", "Read(./.env)"] } })
        const settings = yield* s.load()
        const issue = settings.issues.find((i) => i.field === "permissions.deny[0]")
        expect(issue?.message).toContain("until it is fixed, every Bash call asks")
        const bypass = { ...settings.permissions, mode: "bypassPermissions" as const }
        expect(yield* decide(bypass, s.project, Bash, { command: "rm -rf build" })).toBe("ask")
        expect(yield* decide(bypass, s.project, Bash, { command: "ls" })).toBe("ask")
        expect(yield* decide(bypass, s.project, Read, { file_path: "src/a.ts" })).toBe("allow")
        // The rest of the file still loads.
        expect(yield* decide(bypass, s.project, Read, { file_path: ".env" })).toBe("deny")
      }))

    it.scoped("`deny` as a string fails closed for the tool it names", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(".switchyard/settings.json", {
          permissions: { deny: "Read(./.env)", allow: ["WebFetch(domain:example.com)"] }
        })
        const settings = yield* s.load()
        expect(settings.issues.map((i) => i.message).join("\n")).toContain("every Read call asks")
        const bypass = { ...settings.permissions, mode: "bypassPermissions" as const }
        expect(yield* decide(bypass, s.project, Read, { file_path: ".env" })).toBe("ask")
        expect(yield* decide(settings.permissions, s.project, WebFetch, { url: "https://example.com/" })).toBe("allow")
      }))

    it.scoped("a file that is not JSON fails closed for the tools its deny rules name", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(
          ".claude/settings.json",
          `{ "permissions": { "deny": ["WebFetch(domain:*.internal)", "Bash(curl *)"], } `
        )
        const settings = yield* s.load()
        expect(settings.issues[0]?.message).toMatch(/invalid JSON.*every WebFetch, Bash call asks/)
        const bypass = { ...settings.permissions, mode: "bypassPermissions" as const }
        expect(yield* decide(bypass, s.project, Bash, { command: "curl http://127.0.0.1" })).toBe("ask")
        expect(yield* decide(bypass, s.project, WebFetch, { url: "http://a.internal/" })).toBe("ask")
        expect(yield* decide(bypass, s.project, Read, { file_path: "a.txt" })).toBe("allow")
      }))

    it.scoped("a deny entry that is not a string fails closed for the tools it names, or every one", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(".switchyard/settings.json", { permissions: { deny: [{ tool: "Bash" }] } })
        const named = { ...(yield* s.load()).permissions, mode: "bypassPermissions" as const }
        expect(yield* decide(named, s.project, Bash, { command: "ls" })).toBe("ask")
        expect(yield* decide(named, s.project, Read, { file_path: "a.txt" })).toBe("allow")
        yield* s.write(".switchyard/settings.json", { permissions: { deny: [42] } })
        const unnamed = { ...(yield* s.load()).permissions, mode: "bypassPermissions" as const }
        expect(yield* decide(unnamed, s.project, Read, { file_path: "a.txt" })).toBe("ask")
        expect(yield* decide(unnamed, s.project, Bash, { command: "ls" })).toBe("ask")
        expect(yield* decide(unnamed, s.project, WebFetch, { url: "https://example.com/" })).toBe("ask")
      }))

    it.scoped("a broken allow rule fails nothing closed: it is reported and skipped", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(".switchyard/settings.json", { permissions: { allow: ["Bash(ls *"] } })
        const settings = yield* s.load()
        expect(settings.issues).toHaveLength(1)
        expect(settings.permissions.rules).toEqual([])
      }))
  })

  it.scoped("a lowercase tool name is a warning that names the intended tool", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* s.write(".switchyard/settings.json", {
        permissions: { deny: ["bash(rm *)", "read(./.env)", "mcp__srv__x"] }
      })
      const settings = yield* s.load()
      expect(settings.issues.map((i) => [i.field, i.message.includes("did you mean")])).toEqual([
        ["permissions.deny[0]", true],
        ["permissions.deny[1]", true]
      ])
      expect(settings.issues[0]?.message).toContain(`"Bash"`)
    }))

  it.scoped("150 000 rules load and the last one still matches", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      const deny = Array.from({ length: 150_000 }, (_, i) => `Bash(tool-${i} *)`)
      yield* s.write(".switchyard/settings.json", { permissions: { deny } })
      yield* s.write(".switchyard/settings.local.json", { permissions: { deny: ["Read(./.env)"] } })
      const settings = yield* s.load()
      expect(settings.permissions.rules).toHaveLength(150_001)
      expect(yield* decide(settings.permissions, s.project, Bash, { command: "tool-149999 --go" })).toBe("deny")
      expect(yield* decide(settings.permissions, s.project, Read, { file_path: ".env" })).toBe("deny")
    }), { timeout: 60_000 })

  describe("bypassPermissions from a project file", () => {
    const confirming = (answers: Ref.Ref<Array<string>>, answer: boolean) =>
      Effect.provideService(Settings.ModeConfirmation, {
        confirm: (request) => Effect.as(Ref.update(answers, (list) => [...list, request.file]), answer)
      })

    it.scoped("without a terminal it is ignored with a warning", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const file = yield* s.write(".claude/settings.json", { permissions: { defaultMode: "bypassPermissions" } })
        const settings = yield* s.load()
        expect(settings.permissions.mode).toBe("default")
        expect(settings.issues.map((i) => [i.path, i.field])).toEqual([[file, "permissions.defaultMode"]])
        expect(settings.issues[0]?.message).toContain("confirm it once in a terminal")
        expect(yield* decide(settings.permissions, s.project, Bash, { command: "rm -rf build" })).toBe("ask")
      }))

    it.scoped("confirmed once, it is remembered for this project and content; a change asks again", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const asked = yield* Ref.make<Array<string>>([])
        const file = yield* s.write(".switchyard/settings.json", { permissions: { defaultMode: "bypassPermissions" } })
        const first = yield* s.load().pipe(confirming(asked, true))
        expect(first.permissions.mode).toBe("bypassPermissions")
        // Remembered: no question, and even with nobody to ask.
        const second = yield* s.load().pipe(confirming(asked, false))
        expect(second.permissions.mode).toBe("bypassPermissions")
        expect((yield* s.load()).permissions.mode).toBe("bypassPermissions")
        expect(yield* Ref.get(asked)).toEqual([file])
        // Another content is another question, here declined.
        yield* s.write(".switchyard/settings.json", {
          permissions: { defaultMode: "bypassPermissions", allow: ["Bash"] }
        })
        const changed = yield* s.load().pipe(confirming(asked, false))
        expect(changed.permissions.mode).toBe("default")
        expect(changed.issues[0]?.message).toContain("not confirmed")
        expect(yield* Ref.get(asked)).toEqual([file, file])
      }))

    it.scoped("the same file in another project is not trusted", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        const asked = yield* Ref.make<Array<string>>([])
        const content = { permissions: { defaultMode: "bypassPermissions" } }
        yield* s.write(".switchyard/settings.json", content)
        yield* s.load().pipe(confirming(asked, true))
        const other = s.path.join(s.root, "other")
        yield* s.write(s.path.join(other, ".switchyard", "settings.json"), content)
        const settings = yield* Settings.load({ cwd: other, home: HOME, stateDir: s.stateDir })
        expect(settings.permissions.mode).toBe("default")
      }))

    it.scoped("the user's own file and a --settings file need no confirmation", () =>
      Effect.gen(function*() {
        const s = yield* scratch
        yield* s.write(s.path.join(s.stateDir, "settings.json"), { permissions: { defaultMode: "bypassPermissions" } })
        expect((yield* s.load()).permissions.mode).toBe("bypassPermissions")
        const flag = yield* s.write(s.path.join(s.root, "mine.json"), { permissions: { defaultMode: "acceptEdits" } })
        expect((yield* s.load([flag])).permissions.mode).toBe("acceptEdits")
      }))
  })
})
