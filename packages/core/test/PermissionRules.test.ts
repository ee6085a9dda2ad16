import type { Tool } from "@switchyard/core"
import { PermissionContext, ShellAnalysis, ToolUseContext } from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as Path from "@effect/platform/Path"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Bash, Edit, Grep, HOME, mcp, Read, WebFetch } from "../../../test/fixtures/permissionTools.js"

const CWD = "/work/p"

const rule = (raw: string, behavior: PermissionContext.RuleBehavior = "allow", root: string | undefined = CWD) => {
  const parsed = PermissionContext.parseRule(raw, behavior, "test", root)
  if (parsed === undefined) throw new Error(`not a rule: ${raw}`)
  return parsed
}

const environment = Effect.map(
  Path.Path,
  (path) =>
    PermissionRules.makeEnvironment({ cwd: CWD, home: HOME, additionalDirectories: ["/shared", "~/notes"], path })
)

describe("PermissionRules (SPEC §4.5)", () => {
  describe("Bash specifiers", () => {
    it.each(
      [
        ["ls *", "ls", true],
        ["ls *", "ls -la", true],
        ["ls *", "lsof", false],
        ["ls*", "lsof", true],
        ["npm run:*", "npm run", true],
        ["npm run:*", "npm run build", true],
        ["npm run:*", "npm runx", false],
        ["git * main", "git merge main", true],
        ["git * main", "git merge main2", false],
        ["* --version", "node --version", true],
        ["npm run build", "npm run build", true],
        ["npm run build", "npm run build:dev", false],
        ["npm  run   build", "npm run build", true],
        ["a.b *", "axb c", false],
        ["echo (x) *", "echo (x) y", true],
        ["git commit *", "git commit -m \"a\nb\"", true]
      ] as const
    )("Bash(%s) against %j is %s", (specifier, command, expected) => {
      expect(PermissionRules.matchesCommand(specifier, command)).toBe(expected)
    })
  })

  layer(Path.layer)("path specifiers", (it) => {
    it.effect.each(
      [
        ["Read(//etc/**)", "/etc/ssh/sshd_config", true],
        ["Read(//etc)", "/etc/hosts", true],
        ["Read(//etc/*.conf)", "/etc/a/b.conf", false],
        ["Read(~/.ssh/**)", `${HOME}/.ssh/id_rsa`, true],
        ["Read(~/.ssh/**)", "/root/.ssh/id_rsa", false],
        ["Read(/docs/**)", `${CWD}/docs/a.md`, true],
        ["Read(/docs/**)", "/docs/a.md", false],
        ["Read(./docs/**)", `${CWD}/docs/a/b.md`, true],
        ["Read(docs/*.md)", `${CWD}/docs/a.md`, true],
        ["Read(docs/*.md)", `${CWD}/docs/sub/a.md`, false],
        ["Read(*.pem)", `${CWD}/a/b/c/key.pem`, true],
        ["Read(*.pem)", "/elsewhere/key.pem", false],
        ["Read(../sibling/**)", "/work/sibling/x", true],
        ["Read(src/**/*.ts)", `${CWD}/src/a/b.ts`, true],
        ["Read(src/**/*.ts)", `${CWD}/src/a/b.js`, false]
      ] as const
    )("%s against %s is %s", ([raw, target, expected]) =>
      Effect.gen(function*() {
        expect(PermissionRules.matchesPath(rule(raw), target, yield* environment)).toBe(expected)
      }))

    it.effect("a rule without a project root anchors `/x` at the cwd", () =>
      Effect.gen(function*() {
        expect(
          PermissionRules.matchesPath(rule("Edit(/src/**)", "allow", undefined), `${CWD}/src/a`, yield* environment)
        ).toBe(true)
      }))

    it.effect("a directory matches when everything inside it does", () =>
      Effect.gen(function*() {
        const env = yield* environment
        expect(PermissionRules.matchesPath(rule("Read(./secrets/**)"), `${CWD}/secrets`, env, { directory: true }))
          .toBe(true)
        expect(PermissionRules.matchesPath(rule("Read(./secrets/**)"), `${CWD}/secrets`, env)).toBe(false)
        expect(PermissionRules.matchesPath(rule("Read(*.env)"), CWD, env, { directory: true })).toBe(false)
      }))

    it.effect("working directories resolve `~` and relative entries", () =>
      Effect.gen(function*() {
        expect((yield* environment).workingDirectories).toEqual([CWD, "/shared", `${HOME}/notes`])
      }))
  })

  describe("domains", () => {
    it.each(
      [
        ["domain:example.com", "https://example.com/a", true],
        ["domain:example.com", "http://EXAMPLE.com:8080/a", true],
        ["domain:example.com", "https://www.example.com/", false],
        ["domain:*.example.com", "https://www.example.com/", true],
        ["domain:*.example.com", "https://example.com/", false],
        ["domain:example.com", "https://user@evil.io/?example.com", false],
        ["domain:example.com", "not a url", false],
        ["example.com", "https://example.com/", false]
      ] as const
    )("WebFetch(%s) against %s is %s", (specifier, url, expected) => {
      expect(PermissionRules.matchesDomain(specifier, url)).toBe(expected)
    })
  })

  describe("suggestions for \"always\"", () => {
    it.each(
      [
        [["npm", "run", "test", "--watch"], "Bash(npm run test *)"],
        [["git", "status"], "Bash(git status *)"],
        [["git", "push", "origin", "main"], "Bash(git push origin *)"],
        [["rm", "-rf", "build"], "Bash(rm -rf build)"],
        [["python", "script.py"], "Bash(python script.py)"],
        [["./run.sh", "x"], "Bash(./run.sh x)"],
        [["make"], "Bash(make)"]
      ] as const
    )("%j → %s", (argv, expected) => {
      expect(PermissionRules.suggestCommandRule(argv)).toBe(expected)
    })
  })

  layer(Path.layer)("assess", (it) => {
    const assess = (
      tool: Tool.Any,
      input: unknown,
      rules: ReadonlyArray<PermissionContext.PermissionRule>,
      session: ReadonlyArray<PermissionContext.PermissionRule> = []
    ) =>
      Effect.gen(function*() {
        const context = ToolUseContext.make({
          cwd: CWD,
          permissions: { mode: "default", rules, additionalDirectories: [] }
        })
        return yield* PermissionRules.assess({ tool, input, context }, {
          ruleSets: [rules, session],
          env: yield* environment
        })
      })

    it.effect("without an analyser, deny rules see every part and no allow rule matches", () =>
      Effect.gen(function*() {
        const denied = yield* assess(Bash, { command: "git status && FOO=1 timeout 3 rm -rf x" }, [
          rule("Bash(rm *)", "deny")
        ])
        expect(denied.match).toMatchObject({ behavior: "deny", subject: "rm -rf x" })
        const notAllowed = yield* assess(Bash, { command: "git status" }, [rule("Bash(git status *)")])
        expect(notAllowed).toMatchObject({ match: undefined, allowed: false, readOnly: false, allowedWithEdits: false })
        expect(notAllowed.reason).toMatch(/could not be analysed/)
        const blanket = yield* assess(Bash, { command: "ls" }, [rule("Bash", "ask")])
        expect(blanket.match?.behavior).toBe("ask")
      }))

    it.effect("with an analyser, a read-only command is read-only and allowed without a rule", () =>
      Effect.gen(function*() {
        const result = yield* assess(Bash, { command: "cat a.txt" }, []).pipe(
          Effect.provideService(ShellAnalysis.ShellAnalysis, {
            split: (command) => Effect.succeed([command]),
            isReadOnly: () => Effect.succeed(true),
            analyze: (command) =>
              Effect.succeed(Option.some({
                commands: [{
                  text: command,
                  argv: command.split(" "),
                  assignments: [],
                  redirects: [],
                  ...ShellAnalysis.unknownPaths
                }],
                hasDynamicParts: false,
                runsUnseen: false,
                readOnly: true
              }))
          })
        )
        expect(result).toMatchObject({ allowed: true, readOnly: true, allowRules: [] })
      }))

    it.effect("with 200 rules, the one that matches is found and reported", () =>
      Effect.gen(function*() {
        const rules = Array.from({ length: 200 }, (_, i) =>
          rule(
            i % 2 === 0 ? `Read(./dir${i}/**)` : `WebFetch(domain:host${i}.example.com)`,
            i === 151 ? "deny" : "allow"
          ))
        const denied = yield* assess(WebFetch, { url: "https://host151.example.com/x" }, rules)
        expect(denied.match).toMatchObject({ behavior: "deny", rule: { raw: "WebFetch(domain:host151.example.com)" } })
        const allowed = yield* assess(Read, { file_path: "dir198/a" }, rules)
        expect(allowed.allowRules.map((r) => r.raw)).toEqual(["Read(./dir198/**)"])
        // Evaluated again with the same rule array: the compiled index is reused and answers the same.
        expect((yield* assess(Read, { file_path: "dir198/a" }, rules)).allowRules).toEqual(allowed.allowRules)
      }))

    it.effect("session rules are a second rule set", () =>
      Effect.gen(function*() {
        const result = yield* assess(Edit, { file_path: "a.ts" }, [], [rule("Edit(//work/p/a.ts)")])
        expect(result.allowed).toBe(true)
        expect(result.suggestions).toEqual(["Edit(//work/p/a.ts)"])
      }))

    it.effect("blanket rules cover a tool's family and MCP servers", () =>
      Effect.gen(function*() {
        expect((yield* assess(Grep, { pattern: "x" }, [rule("Read", "deny")])).match?.behavior).toBe("deny")
        expect((yield* assess(Edit, { file_path: "a" }, [rule("Read(./a)", "deny")])).match?.behavior).toBe("deny")
        expect((yield* assess(Read, { file_path: "a" }, [rule("Edit(./a)", "deny")])).match).toBeUndefined()
        expect((yield* assess(mcp("mcp__db__query"), {}, [rule("mcp__db__*", "ask")])).match?.behavior).toBe("ask")
        expect(
          PermissionRules.isBlanketDenied(
            { mode: "default", rules: [rule("Edit", "deny")], additionalDirectories: [] },
            "NotebookEdit"
          )
        ).toBe(true)
      }))
  })
})
