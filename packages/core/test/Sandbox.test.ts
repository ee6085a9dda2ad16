/**
 * The sandbox port (issue 18): Claude Code's `sandbox` keys read from
 * settings files (per key, merged like Claude Code merges them, a project
 * unable to widen the sandbox), and the policy computed from the settings,
 * the rules and the working directories. The bubblewrap implementation and
 * its effects are tested in @switchyard/tools (Sandbox.test.ts).
 */
import { PermissionContext, Sandbox, Settings } from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"

const HOME = "/home/tester"

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = yield* fs.makeTempDirectoryScoped()
  const project = path.join(root, "project")
  const stateDir = path.join(root, "state")
  yield* fs.makeDirectory(project, { recursive: true })
  yield* fs.makeDirectory(stateDir, { recursive: true })
  const write = (file: string, content: unknown) =>
    Effect.gen(function*() {
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, JSON.stringify(content))
      return file
    })
  return {
    root,
    project,
    write,
    user: path.join(stateDir, "settings.json"),
    shared: path.join(project, ".claude", "settings.json"),
    local: path.join(project, ".claude", "settings.local.json"),
    load: (extraFiles: ReadonlyArray<string> = []) => Settings.load({ cwd: project, home: HOME, stateDir, extraFiles })
  }
})

layer(NodeContext.layer)("Settings: the sandbox keys (Claude Code's names and defaults)", (it) => {
  it.scoped("defaults: off, auto-allow on, unsandboxed commands allowed, no network, nothing extra", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      expect((yield* s.load()).sandbox).toEqual(Sandbox.defaultSettings)
      expect(Sandbox.defaultSettings).toMatchObject({
        enabled: false,
        autoAllowBashIfSandboxed: true,
        allowUnsandboxedCommands: true,
        failIfUnavailable: false,
        network: { allowedDomains: [], allowLocalBinding: false, allowAllUnixSockets: false }
      })
    }))

  it.scoped("lists concatenate, scalars come from the highest file, paths resolve by prefix", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* s.write(s.user, {
        sandbox: {
          enabled: true,
          excludedCommands: ["docker"],
          network: { allowedDomains: ["github.com"] },
          filesystem: { allowWrite: ["~/.kube", "//tmp/build"], denyRead: ["~/.aws/credentials"] }
        }
      })
      yield* s.write(s.shared, {
        sandbox: { autoAllowBashIfSandboxed: false, filesystem: { denyRead: ["./secrets"], denyWrite: ["/etc/hosts"] } }
      })
      const extra = yield* s.write(`${s.root}/extra.json`, {
        sandbox: {
          enabled: false,
          failIfUnavailable: true,
          network: { allowedDomains: ["*.npmjs.org"], allowLocalBinding: true }
        }
      })
      const settings = yield* s.load([extra])
      expect(settings.issues).toEqual([])
      const sandbox = settings.sandbox
      expect(sandbox.enabled).toBe(false)
      expect(sandbox.autoAllowBashIfSandboxed).toBe(false)
      expect(sandbox.failIfUnavailable).toBe(true)
      expect(sandbox.excludedCommands).toEqual(["docker"])
      expect(sandbox.network).toEqual({
        allowedDomains: ["github.com", "*.npmjs.org"],
        allowLocalBinding: true,
        allowAllUnixSockets: false
      })
      expect(sandbox.filesystem.allowWrite.map((entry) => entry.path)).toEqual([`${HOME}/.kube`, "/tmp/build"])
      expect(sandbox.filesystem.denyRead.map((entry) => entry.path)).toEqual([
        `${HOME}/.aws/credentials`,
        `${s.project}/secrets`
      ])
      expect(sandbox.filesystem.denyWrite).toEqual([{ path: "/etc/hosts", source: s.shared }])
    }))

  it.scoped("a project's own files cannot widen the sandbox: reported, the rest still loads", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      for (const file of [s.shared, s.local]) {
        yield* s.write(file, {
          sandbox: {
            enabled: true,
            excludedCommands: ["curl"],
            network: { allowedDomains: ["evil.example"] },
            filesystem: { allowWrite: ["~"], denyRead: ["./private"] }
          }
        })
      }
      const settings = yield* s.load()
      expect(settings.sandbox.enabled).toBe(true)
      expect(settings.sandbox.excludedCommands).toEqual([])
      expect(settings.sandbox.network.allowedDomains).toEqual([])
      expect(settings.sandbox.filesystem.allowWrite).toEqual([])
      expect(settings.sandbox.filesystem.denyRead.length).toBe(2)
      const fields = settings.issues.map((issue) => `${issue.path}: ${issue.field}`)
      for (const file of [s.shared, s.local]) {
        for (const key of ["excludedCommands", "network.allowedDomains", "filesystem.allowWrite"]) {
          expect(fields).toContain(`${file}: sandbox.${key}`)
        }
      }
    }))

  it.scoped("a project's own files cannot turn a scalar the wide way: the user's sandbox stays on, with prompts", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* s.write(s.user, {
        sandbox: {
          enabled: true,
          failIfUnavailable: true,
          autoAllowBashIfSandboxed: false,
          allowUnsandboxedCommands: false,
          network: { allowLocalBinding: false }
        }
      })
      const wide = {
        enabled: false,
        failIfUnavailable: false,
        autoAllowBashIfSandboxed: true,
        allowUnsandboxedCommands: true,
        network: { allowLocalBinding: true, allowAllUnixSockets: true }
      }
      yield* s.write(s.shared, { sandbox: wide })
      yield* s.write(s.local, { sandbox: wide })
      const settings = yield* s.load()
      expect(settings.sandbox).toMatchObject({
        enabled: true,
        failIfUnavailable: true,
        autoAllowBashIfSandboxed: false,
        allowUnsandboxedCommands: false,
        network: { allowLocalBinding: false, allowAllUnixSockets: false }
      })
      const fields = settings.issues.map((issue) => `${issue.path}: ${issue.field}`)
      for (const file of [s.shared, s.local]) {
        for (
          const key of [
            "enabled",
            "failIfUnavailable",
            "autoAllowBashIfSandboxed",
            "allowUnsandboxedCommands",
            "network.allowLocalBinding",
            "network.allowAllUnixSockets"
          ]
        ) expect(fields).toContain(`${file}: sandbox.${key}`)
      }
      // The narrowing way counts from a project: it may turn the sandbox on and its prompts back on.
      yield* s.write(s.user, { sandbox: { enabled: false } })
      yield* s.write(s.shared, { sandbox: { enabled: true, autoAllowBashIfSandboxed: false } })
      yield* s.write(s.local, {})
      const narrowed = yield* s.load()
      expect(narrowed.sandbox).toMatchObject({ enabled: true, autoAllowBashIfSandboxed: false })
      expect(narrowed.issues).toEqual([])
    }))

  it.scoped("wrong types are reported per field; wildcards in allowWrite are refused", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* s.write(s.user, {
        sandbox: {
          enabled: "yes",
          excludedCommands: "docker",
          network: { allowedDomains: ["ok.example", 3] },
          filesystem: { allowWrite: ["/data/*", "/data/exact"] }
        }
      })
      const settings = yield* s.load()
      expect(settings.sandbox.enabled).toBe(false)
      expect(settings.sandbox.network.allowedDomains).toEqual(["ok.example"])
      expect(settings.sandbox.filesystem.allowWrite.map((entry) => entry.path)).toEqual(["/data/exact"])
      expect(settings.issues.map((issue) => issue.field).sort()).toEqual([
        "sandbox.enabled",
        "sandbox.excludedCommands",
        "sandbox.filesystem.allowWrite[0]",
        "sandbox.network.allowedDomains[1]"
      ])
    }))
})

const path = Effect.runSync(Effect.provide(Path.Path, Path.layer))

const policyOf = (
  rules: ReadonlyArray<string>,
  options: Partial<Parameters<typeof Sandbox.policy>[0]> = {}
) =>
  Sandbox.policy({
    settings: { ...Sandbox.defaultSettings, enabled: true },
    cwd: "/work/p",
    home: HOME,
    path,
    readOnly: false,
    protectedFiles: [],
    permissions: {
      mode: "default",
      additionalDirectories: ["../lib"],
      rules: rules.map((raw) => {
        const [behavior, rule] = raw.split(" ", 2) as [PermissionContext.RuleBehavior, string]
        return PermissionContext.parseRule(rule, behavior, "test", "/work/p")!
      })
    },
    ...options
  })

describe("Sandbox.policy", () => {
  it("writable: the working directories and allowWrite; read-only mode: none", () => {
    const settings = {
      ...Sandbox.defaultSettings,
      filesystem: { ...Sandbox.defaultSettings.filesystem, allowWrite: [{ path: "/tmp/build", source: "x" }] }
    }
    expect(policyOf([], { settings }).writable).toEqual(["/work/p", "/work/lib", "/tmp/build"])
    expect(policyOf([], { settings, readOnly: true }).writable).toEqual([])
    expect(policyOf([], { settings, readOnly: true }).roots).toEqual(["/work/p", "/work/lib", "/tmp/build"])
  })

  it("protected names in every writable root, settings files, Edit deny rules and denyWrite are read-only", () => {
    const policy = policyOf(["deny Edit(./dist/**)", "deny Write(//etc/motd)", "allow Edit(./src/**)"], {
      protectedFiles: ["/home/tester/.switchyard/settings.json"]
    })
    const bases = policy.readOnly.map((set) => `${set.base}${set.pattern === undefined ? "" : ` ${set.pattern}`}`)
    for (const root of ["/work/p", "/work/lib"]) {
      for (const name of [".git/hooks", ".git/config", ".claude", ".switchyard", ".mcp.json"]) {
        expect(bases).toContain(`${root}/${name}`)
      }
    }
    expect(bases).toContain("/home/tester/.switchyard/settings.json")
    expect(bases).toContain("/work/p/dist")
    expect(bases).toContain("/etc/motd")
    expect(bases.some((base) => base.includes("/src"))).toBe(false)
  })

  it("deny-read: Read deny rules by their literal base, with the pattern that is left", () => {
    const policy = policyOf([
      "deny Read(./.env)",
      "deny Read(./secrets/**)",
      "deny Read(*.pem)",
      "deny Read(~/.ssh/**)",
      "deny Read(//srv/**/keys/*.key)",
      "deny Read(src/**/private/)",
      "ask Read(./public)",
      "deny Grep(./other)"
    ])
    expect(policy.denyRead.map((set) => [set.base, set.pattern])).toEqual([
      ["/work/p/.env", undefined],
      ["/work/p/secrets", undefined],
      ["/work/p", "*.pem"],
      [`${HOME}/.ssh`, undefined],
      ["/srv", "/**/keys/*.key"],
      ["/work/p/src", "/**/private/"]
    ])
  })

  const specifiers = ["//srv/**/keys/*.key", "./secrets/**", "*.pem", "src/**/private/**", "./a/b.txt", "~/.ssh/**"]
  it.prop("a set covers every path the rule denies (the permission layer's own matching), and no other", [
    FastCheck.constantFrom(...specifiers),
    FastCheck.constantFrom("/srv", "/work/p", HOME),
    FastCheck.array(FastCheck.constantFrom("a", "b.txt", "keys", "x.key", "y.pem", "secrets", "src", ".ssh"), {
      minLength: 1,
      maxLength: 5
    })
  ], ([specifier, under, segments]) => {
    const rule = PermissionContext.parseRule(`Read(${specifier})`, "deny", "test", "/work/p")!
    const [set] = policyOf([`deny Read(${specifier})`]).denyRead
    const absolute = path.join(under, ...segments)
    const env = PermissionRules.makeEnvironment({ cwd: "/work/p", home: HOME, additionalDirectories: [], path })
    const inBase = absolute === set!.base || absolute.startsWith(`${set!.base}/`)
    const bySet = inBase && Sandbox.pathSetMatcher(set!)(path.relative(set!.base, absolute))
    const byBase = inBase && set!.pattern === undefined
    const covered = bySet || byBase
    // Sound: whatever the rule denies is masked. Only the base itself may be masked beyond it (`./secrets/**`
    // masks the directory, so its listing is hidden too).
    if (PermissionRules.matchesPath(rule, absolute, env)) expect(covered).toBe(true)
    else if (covered) expect(absolute).toBe(set!.base)
  })

  it("network: off without allowedDomains; hosts from allowedDomains and WebFetch allow rules, deny rules win", () => {
    expect(policyOf([]).network.enabled).toBe(false)
    const network = policyOf(["allow WebFetch(domain:docs.example)", "deny WebFetch(domain:bad.npmjs.org)"], {
      settings: {
        ...Sandbox.defaultSettings,
        network: { allowedDomains: ["github.com", "*.npmjs.org"], allowLocalBinding: false, allowAllUnixSockets: false }
      }
    }).network
    expect(network.enabled).toBe(true)
    const allowed = (host: string) => Sandbox.hostAllowed(network, host)
    expect(["github.com", "GitHub.com.", "registry.npmjs.org", "docs.example"].every(allowed)).toBe(true)
    const refused = ["api.github.com", "npmjs.org", "bad.npmjs.org", "127.0.0.1", "::1", "evil.example"]
    expect(refused.some(allowed)).toBe(false)
  })

  it("network: an allowedDomains entry with :port allows that port only, as in Claude Code", () => {
    const network = policyOf([], {
      settings: {
        ...Sandbox.defaultSettings,
        network: {
          allowedDomains: ["github.com:443", "*.example.com", "[::1]:8080", "::1"],
          allowLocalBinding: false,
          allowAllUnixSockets: false
        }
      }
    }).network
    expect(Sandbox.hostAllowed(network, "github.com", 443)).toBe(true)
    expect(Sandbox.hostAllowed(network, "github.com", 22)).toBe(false)
    expect(Sandbox.hostAllowed(network, "github.com")).toBe(false)
    expect(Sandbox.hostAllowed(network, "a.example.com", 22)).toBe(true)
    expect(Sandbox.hostAllowed(network, "::1", 8080)).toBe(true)
    // A bare IPv6 address is an entry without a port: every port.
    expect(Sandbox.hostAllowed(network, "::1", 9)).toBe(true)
  })
})
