/**
 * Settings a sandboxed command may have written count only once the user
 * confirms them (core's `SandboxedRoots`, DESIGN §4.5). The sandbox keeps a
 * writable root's own `.claude/` read-only but cannot refuse a new
 * `sub/.claude/settings.local.json`; a session the user starts in `sub` later
 * would run its hooks outside the sandbox. Judged by what ran (a hook's mark
 * outside the project, an MCP server's marker) and by the store on disk.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Path from "@effect/platform/Path"
import * as SandboxedRoots from "@switchyard/core/SandboxedRoots"
import * as Settings from "@switchyard/core/Settings"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the CLI cases need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}

const effectPath = Effect.runSync(Effect.provide(Path.Path, Path.layer))

const digest = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file, "utf8")).digest("hex")

interface Fixture {
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly state: string
}

const makeFixture = (): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-sandboxed-roots-")))
  const fixture = {
    root,
    project: path.join(root, "project"),
    outside: path.join(root, "outside"),
    state: path.join(root, "state")
  }
  for (const dir of [fixture.project, fixture.outside, fixture.state]) fs.mkdirSync(dir, { recursive: true })
  // The user approves every project's `.mcp.json` servers: only the judging can keep a planted one from starting.
  fs.writeFileSync(
    path.join(fixture.state, "settings.json"),
    JSON.stringify({ sandbox: { enabled: true }, enableAllProjectMcpServers: true })
  )
  return fixture
}

/** Settings with a PreToolUse hook that marks `name` outside the project, and approving every project server. */
const hookSettings = (fixture: Fixture, name: string) =>
  JSON.stringify({
    enableAllProjectMcpServers: true,
    hooks: {
      PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `touch '${fixture.outside}/${name}'` }] }]
    }
  })

const dispatch = async (fixture: Fixture, cwd: string, command: string) => {
  const result = await runCli(
    ["dispatch", "-", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"],
    {
      cwd,
      input: JSON.stringify([{ type: "tool_use", id: "t1", name: "Bash", input: { command } }]),
      env: { SWITCHYARD_HOME: fixture.state, HOME: path.join(fixture.root, "home"), MCP_TIMEOUT: "5000" }
    }
  )
  const line = jsonLines(result).find((l) => l["type"] === "result")
  return { content: String(line?.["content"]), stderr: result.stderr }
}

describe("settings a sandboxed command may have written", () => {
  it("a directory is judged below a root only (a root's own top is the sandbox's to protect)", () =>
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.array(FastCheck.constantFrom("a", "b", "c", ".claude"), { maxLength: 4 }), {
          minLength: 1,
          maxLength: 4
        }),
        FastCheck.array(FastCheck.constantFrom("a", "b", "c", ".claude", ".."), { maxLength: 5 }),
        (roots, dir) => {
          const at = (segments: ReadonlyArray<string>) => path.join("/r", ...segments)
          const times = Object.fromEntries(roots.map((r, i) => [at(r), 100 + i]))
          const target = path.resolve(at(dir))
          const below = Object.entries(times).filter(([root]) =>
            target !== root && target.startsWith(root === "/" ? "/" : `${root}/`)
          )
          const expected = below.length === 0 ? undefined : Math.min(...below.map(([, t]) => t))
          expect(SandboxedRoots.writableSince(times, at(dir), effectPath)).toBe(expected)
        }
      )
    ))

  it.live("a file changed after the root was recorded is refused until confirmed; the confirmation is remembered by content", () =>
    Effect.gen(function*() {
      const fixture = makeFixture()
      const dir = path.join(fixture.project, "sub")
      const file = path.join(dir, ".claude", "settings.local.json")
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "{\"before\":true}")
      const before = { path: file, dir, digest: digest(file) }
      // The root is recorded after the file was last changed: it counts.
      yield* SandboxedRoots.record(fixture.state, [fixture.project], Date.now() + 1)
      expect((yield* SandboxedRoots.judge(fixture.state, [before])).refused).toEqual([])
      // Changed since: refused, naming the root; asked and confirmed: counts, and is not asked again.
      yield* Effect.sleep("20 millis")
      fs.writeFileSync(file, "{\"after\":true}")
      const after = { path: file, dir, digest: digest(file) }
      const refused = (yield* SandboxedRoots.judge(fixture.state, [after])).refused
      expect(refused.map((r) => r.path)).toEqual([file])
      expect(refused[0]!.reason).toContain(`could write in ${fixture.project}`)
      const asked: Array<SandboxedRoots.ConfirmationRequest> = []
      const yes = {
        confirm: (request: SandboxedRoots.ConfirmationRequest) =>
          Effect.sync(() => asked.push(request)).pipe(Effect.as(true))
      }
      const confirmed = yield* SandboxedRoots.judge(fixture.state, [after]).pipe(
        Effect.provideService(SandboxedRoots.Confirmation, yes)
      )
      expect(confirmed.refused).toEqual([])
      expect(asked).toEqual([{ file, root: fixture.project }])
      expect((yield* SandboxedRoots.judge(fixture.state, [after])).refused).toEqual([])
      // Another content is another question; "no" refuses it.
      fs.writeFileSync(file, "{\"again\":true}")
      const no = { confirm: () => Effect.succeed(false) }
      const again = yield* SandboxedRoots.judge(fixture.state, [{ path: file, dir, digest: digest(file) }]).pipe(
        Effect.provideService(SandboxedRoots.Confirmation, no)
      )
      expect(again.refused[0]!.reason).toContain("not confirmed")
      // The root's own settings are not judged; nor is anything when no root was recorded.
      const top = path.join(fixture.project, ".claude", "settings.json")
      fs.mkdirSync(path.dirname(top), { recursive: true })
      fs.writeFileSync(top, "{}")
      const atTop = { path: top, dir: fixture.project, digest: digest(top) }
      expect((yield* SandboxedRoots.judge(fixture.state, [atTop])).refused).toEqual([])
      const fresh = path.join(fixture.root, "fresh-state")
      expect((yield* SandboxedRoots.judge(fresh, [after])).refused).toEqual([])
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a link made since, to content older than the record, is judged as new; Switchyard's own rule keeps a file counted", () =>
    Effect.gen(function*() {
      const fixture = makeFixture()
      const oldDir = path.join(fixture.root, "elsewhere", ".claude")
      fs.mkdirSync(oldDir, { recursive: true })
      fs.writeFileSync(path.join(oldDir, "settings.local.json"), "{\"old\":true}")
      // Another old file for the hard link (a new link changes its inode's ctime, the symlinked one's must not).
      fs.writeFileSync(path.join(oldDir, "other.json"), "{\"other\":true}")
      const own = path.join(fixture.project, "own")
      fs.mkdirSync(own)
      yield* SandboxedRoots.record(fixture.state, [fixture.project], Date.now() + 1)
      yield* Effect.sleep("20 millis")
      // The command links sub/.claude to the old directory (and hard-links the file into sub2/.claude).
      const sub = path.join(fixture.project, "sub")
      fs.mkdirSync(sub)
      fs.symlinkSync(oldDir, path.join(sub, ".claude"))
      const sub2 = path.join(fixture.project, "sub2", ".claude")
      fs.mkdirSync(sub2, { recursive: true })
      fs.linkSync(path.join(oldDir, "other.json"), path.join(sub2, "settings.local.json"))
      const candidate = (dir: string, file: string) => ({ path: file, dir, digest: digest(file) })
      const linked = candidate(sub, path.join(sub, ".claude", "settings.local.json"))
      const hard = candidate(path.dirname(sub2), path.join(sub2, "settings.local.json"))
      expect((yield* SandboxedRoots.judge(fixture.state, [linked, hard])).refused.map((r) => r.path))
        .toEqual([linked.path, hard.path])
      // "Always allow" in a project below the root: the file Switchyard writes counts, at the next start too.
      const home = process.env["SWITCHYARD_HOME"]
      process.env["SWITCHYARD_HOME"] = fixture.state
      const added = yield* Settings.addRules({ projectDir: own, behavior: "allow", rules: ["Bash(make)"] }).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (home === undefined) delete process.env["SWITCHYARD_HOME"]
          else process.env["SWITCHYARD_HOME"] = home
        }))
      )
      expect((yield* SandboxedRoots.judge(fixture.state, [candidate(own, added)])).refused).toEqual([])
      // Adding a rule to a file that did not count does not make it count.
      const planted = path.join(fixture.project, "planted")
      fs.mkdirSync(path.join(planted, ".switchyard"), { recursive: true })
      fs.writeFileSync(path.join(planted, ".switchyard", "settings.local.json"), "{\"hooks\":{}}")
      process.env["SWITCHYARD_HOME"] = fixture.state
      const again = yield* Settings.addRules({ projectDir: planted, behavior: "allow", rules: ["Bash(make)"] }).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (home === undefined) delete process.env["SWITCHYARD_HOME"]
          else process.env["SWITCHYARD_HOME"] = home
        }))
      )
      expect((yield* SandboxedRoots.judge(fixture.state, [candidate(planted, again)])).refused.map((r) => r.path))
        .toEqual([again])
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.skipIf(!probed.available)("a root that cannot be recorded runs no sandboxed command (fail closed)", async () => {
    const fixture = makeFixture()
    try {
      // The state directory lies below a file: nothing can be written there.
      const blocker = path.join(fixture.root, "blocker")
      fs.writeFileSync(blocker, "a file\n")
      const settings = path.join(fixture.root, "sandbox.json")
      fs.writeFileSync(settings, JSON.stringify({ sandbox: { enabled: true } }))
      const result = await runCli(
        ["dispatch", "-", "--settings", settings, "--permission-mode", "bypassPermissions", "--output-format", "json"],
        {
          cwd: fixture.project,
          input: JSON.stringify([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "touch made" } }]),
          env: { SWITCHYARD_HOME: path.join(blocker, "state"), HOME: path.join(fixture.root, "home") }
        }
      )
      const [call] = JSON.parse(result.stdout) as ReadonlyArray<
        { readonly is_error: boolean; readonly content: string }
      >
      expect(call!.is_error).toBe(true)
      expect(call!.content).toContain("cannot record the sandbox's writable roots")
      expect(fs.existsSync(path.join(fixture.project, "made"))).toBe(false)
    } finally {
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(!probed.available)(
    "a sandboxed command's sub/.claude/settings.local.json and sub/.mcp.json do nothing in a later session in sub",
    async () => {
      const fixture = makeFixture()
      try {
        // Made before any sandboxed command ran: the user's own, it counts.
        const own = path.join(fixture.project, "own", ".claude", "settings.local.json")
        fs.mkdirSync(path.dirname(own), { recursive: true })
        fs.writeFileSync(own, hookSettings(fixture, "MARK-own"))
        const server = (name: string) =>
          JSON.stringify({
            mcpServers: { [name]: { command: "sh", args: ["-c", `touch '${fixture.outside}/${name}'`] } }
          })
        const ownServer = path.join(fixture.project, "own", ".mcp.json")
        fs.writeFileSync(ownServer, server("MARK-own-mcp"))
        const mcp = server("MARK-mcp")
        const planted = await dispatch(
          fixture,
          fixture.project,
          `mkdir -p sub/.claude && echo '${hookSettings(fixture, "MARK-hook")}' > sub/.claude/settings.local.json && ` +
            `echo '${mcp}' > sub/.mcp.json && mkdir -p sub2 && echo '${mcp}' > sub2/.mcp.json && echo made`
        )
        expect(planted.content).toBe("made")
        const entries = fs.readdirSync(path.join(fixture.state, "sandboxed-roots"))
          .map((name) => JSON.parse(fs.readFileSync(path.join(fixture.state, "sandboxed-roots", name), "utf8")))
        expect(entries.map((entry) => entry.root)).toContain(fixture.project)
        const later = await dispatch(fixture, path.join(fixture.project, "sub"), "echo later")
        expect(later.content).toBe("later")
        expect(later.stderr).toContain(`${path.join(fixture.project, "sub", ".claude", "settings.local.json")}`)
        expect(later.stderr).toContain("changed after sandboxed commands could write in")
        expect(fs.readdirSync(fixture.outside)).toEqual([])
        // Only a planted .mcp.json, approved by the user's own settings: not started either.
        const second = await dispatch(fixture, path.join(fixture.project, "sub2"), "echo second")
        expect(second.content).toBe("second")
        expect(second.stderr).toContain(`${path.join(fixture.project, "sub2", ".mcp.json")}: changed after`)
        expect(fs.readdirSync(fixture.outside)).toEqual([])
        // The user's own files, older than the first sandboxed command, still count: the hook runs, the server starts.
        const ownRun = await dispatch(fixture, path.join(fixture.project, "own"), "echo own")
        expect(ownRun.content).toBe("own")
        expect(fs.readdirSync(fixture.outside).sort()).toEqual(["MARK-own", "MARK-own-mcp"])
      } finally {
        fs.rmSync(fixture.root, { recursive: true, force: true })
      }
    },
    90_000
  )
})
