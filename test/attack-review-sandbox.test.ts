/**
 * Outside review of the containment claim (DESIGN §4.5 sandbox, §5
 * Containment): "with `sandbox.enabled` and permissive rules, no command
 * writes outside the writable roots, changes a protected path, returns
 * denied content or reaches a host no rule allows; its processes cannot
 * outlive the call".
 *
 * Every command goes through the real CLI (`switchyard dispatch`, Bash
 * allowed, `bypassPermissions`) in a throwaway project, and is judged by
 * effects: a mark file a planted program leaves when the user's own git runs
 * it afterwards, bytes of a secret in a tool_result, a Unix socket server's
 * log, a marker process still alive, a hash tree of the protected paths.
 *
 * Held (a generated property, see the last test): writes, links, renames and
 * creations of the protected names at the root of the writable root
 * (`.git/hooks`, `.git/config`, `.claude/`, `.switchyard/`, `.mcp.json`, also
 * when missing at start), through shells and interpreters; background
 * children after the call (`&`, `nohup`, `setsid`, `run_in_background` at
 * exit). Gaps found, each a test (fixed the same day unless marked open):
 * - a `Read(…)` deny rule's match that is a symbolic link out of the rule's
 *   base is not masked (`mounts.ts` `expand` skips a link whose target is
 *   outside the base), so `node -e` reads what the Read tool denies;
 * - a masked directory's parent can be renamed (the mask moves with it in
 *   the sandbox; on disk the rule no longer names the new path), so the next
 *   call reads the denied content (read-only paths below the root, from
 *   `Edit(…)` deny rules and `denyWrite`, can presumably be moved the same
 *   way; not tested here);
 * - `.git/commondir` can be written (only hooks/config/config.worktree of
 *   `.git` are read-only): it moves git's common directory — config and
 *   hooks — to a directory the command made, so the user's next `git status`
 *   runs its `core.fsmonitor`;
 * - a submodule's git directory (`.git/modules/NAME/config`, `hooks/`) is
 *   writable; the superproject's `git status` recurses into it;
 * - in a linked worktree (or a submodule's checkout) `.git` is a file the
 *   command may rewrite (`gitdir: ./evil`);
 * - Unix sockets of the host are reachable (`--unshare-net` isolates only
 *   abstract sockets and TCP/UDP; a socket file under the read-only `/` can
 *   still be connected to): the PostgreSQL, Docker, D-Bus or ssh-agent socket,
 *   or a tmux server's, through which a command runs outside the sandbox and
 *   outlives the call;
 * - a project's own settings may turn the sandbox off (`sandbox.enabled:
 *   false` in `.claude/settings.local.json` beats the user's `true`) or
 *   loosen `allowUnsandboxedCommands` (only the list keys are treated as
 *   widening in `internal/sandboxSettings.ts`);
 * - the protected names are protected only at the top of a writable root:
 *   `sub/.claude/settings.local.json` and `sub/.mcp.json` made by a sandboxed
 *   command took effect (a hook ran, an MCP server started) when the user
 *   next started switchyard in `sub` (closed by core's `SandboxedRoots`: such
 *   a file counts once the user confirms it; test/sandboxedRoots.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import { execFile, execFileSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox review needs bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

const seed = Number(process.env["ORACLE_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const replay = `(replay with ORACLE_SEED=${seed})`
const TIMEOUT = 90_000
const SECRET = "outside-key-secret-5f0c"

interface Fixture {
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly home: string
  readonly state: string
}

const gitArgs = ["-c", "init.defaultBranch=main", "-c", "user.email=o@example.com", "-c", "user.name=o"]
const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", [...gitArgs, ...args], { cwd, stdio: "ignore" })

const write = (file: string, content: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/**
 * A repository with no `.claude`, `.switchyard` or `.mcp.json` (so their creation is tried too); the rules and
 * the sandbox come from the user's settings, outside the project.
 */
const makeFixture = (userSettings: Record<string, unknown> = {}): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-sandbox-")))
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  const home = path.join(root, "home")
  const state = path.join(root, "state")
  write(path.join(project, "README.md"), "hello\n")
  write(path.join(outside, "prod.key"), `${SECRET}\n`)
  fs.mkdirSync(path.join(project, "config"))
  fs.symlinkSync(path.join(outside, "prod.key"), path.join(project, "config", "prod.key"))
  write(path.join(home, ".bashrc"), "# home\n")
  write(
    path.join(state, "settings.json"),
    JSON.stringify({
      permissions: { allow: ["Bash"], deny: ["Read(./config/*.key)"] },
      sandbox: { enabled: true },
      ...userSettings
    })
  )
  write(path.join(state, "trusted-modes.json"), "{\"bypassPermissions\":{}}\n")
  git(project, "init", "-q")
  git(project, "add", "-A")
  git(project, "commit", "-q", "-m", "initial")
  return { root, project, outside, home, state }
}

const marks = (fixture: Fixture) => fs.readdirSync(fixture.outside).filter((name) => name.startsWith("MARK-"))

/** A program that leaves `MARK-<name>` outside the project when something runs it. */
const planter = (fixture: Fixture, name: string) => `#!/bin/sh\ntouch '${fixture.outside}/MARK-${name}'\n`

interface Call {
  readonly id: string
  readonly command: string
  readonly background?: boolean
}

/** One dispatch of Bash calls with the sandbox on (from the user's settings) and every prompt off. */
const dispatch = async (fixture: Fixture, calls: ReadonlyArray<Call>, cwd = fixture.project) => {
  const blocks = calls.map((call) => ({
    type: "tool_use",
    id: call.id,
    name: "Bash",
    input: { command: call.command, ...(call.background === true ? { run_in_background: true } : {}) }
  }))
  const result = await runCli(
    [
      "dispatch",
      "-",
      "--cwd",
      cwd,
      "--output-format",
      "stream-json",
      "--permission-mode",
      "bypassPermissions",
      "--allowed-tools",
      "Bash",
      "--scheduling",
      "greedy"
    ],
    {
      cwd,
      input: JSON.stringify(blocks),
      env: { SWITCHYARD_HOME: fixture.state, HOME: fixture.home, MCP_TIMEOUT: "5000" },
      timeoutMs: TIMEOUT - 20_000
    }
  )
  const results = jsonLines(result).filter((line) => line["type"] === "result")
  expect(results.length, result.stderr).toBe(calls.length)
  return new Map(results.map((line) => [String(line["tool_use_id"]), line]))
}

const contentOf = (line: Record<string, unknown> | undefined) =>
  typeof line?.["content"] === "string" ? line["content"] : JSON.stringify(line?.["content"])

/** The user's own git afterwards, outside any sandbox (what runs a planted config or hook). */
const userGit = (cwd: string, ...args: ReadonlyArray<string>) =>
  new Promise<void>((resolve) => {
    execFile("git", [...gitArgs, ...args], { cwd, timeout: 20_000 }, () => resolve())
  })

/** A git directory of our own making inside the project: its config runs `fsm` (a planted program). */
const plantGitDir = (fixture: Fixture, dir: string, name: string) =>
  [
    `git init -q --bare ${dir}`,
    `git config -f ${dir}/config core.bare false`,
    `printf '%b' ${JSON.stringify(planter(fixture, name))} > ${dir}/fsm`,
    `chmod +x ${dir}/fsm`,
    `git config -f ${dir}/config core.fsmonitor "$PWD/${dir}/fsm"`
  ].join(" && ")

const cleanup = (fixture: Fixture) => fs.rmSync(fixture.root, { recursive: true, force: true })

suite("containment: denied content", () => {
  it("control: the Read tool's rule denies the link, and the sandbox masks a denied file inside the base", async () => {
    const fixture = makeFixture()
    try {
      fs.unlinkSync(path.join(fixture.project, "config", "prod.key"))
      write(path.join(fixture.project, "config", "prod.key"), `${SECRET}\n`)
      const results = await dispatch(fixture, [{
        id: "inside",
        command: "node -e 'process.stdout.write(require(\"fs\").readFileSync(\"config/prod.\" + \"key\", \"utf8\"))'"
      }])
      expect(contentOf(results.get("inside"))).not.toContain(SECRET)
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)

  it("a deny rule's match that links out of the rule's base is not masked", async () => {
    const fixture = makeFixture()
    try {
      const results = await dispatch(fixture, [{
        id: "link",
        command: "node -e 'process.stdout.write(require(\"fs\").readFileSync(\"config/prod.\" + \"key\", \"utf8\"))'"
      }])
      expect(contentOf(results.get("link"))).not.toContain(SECRET)
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)
})

suite("containment: a denied directory's parent", () => {
  it("renaming a parent of a masked directory leaves its content readable by the next call", async () => {
    const fixture = makeFixture({
      permissions: { allow: ["Bash"], deny: ["Read(./config/secrets/**)"] }
    })
    try {
      write(path.join(fixture.project, "config", "secrets", "key.txt"), `${SECRET}\n`)
      const first = await dispatch(fixture, [{
        id: "rename",
        command: "node -e 'require(\"fs\").renameSync(\"config\", \"moved\")' && echo moved"
      }])
      expect(contentOf(first.get("rename"))).toContain("moved")
      const second = await dispatch(fixture, [{ id: "read", command: "cat moved/secrets/key.txt" }])
      expect(contentOf(second.get("read"))).not.toContain(SECRET)
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)
})

suite("containment: git's configuration and hooks", () => {
  it(".git/commondir moves git's config and hooks to a directory the command made", async () => {
    const fixture = makeFixture()
    try {
      await dispatch(fixture, [{
        id: "commondir",
        command: `${plantGitDir(fixture, "evil", "commondir")} && echo ../evil > .git/commondir`
      }])
      await userGit(fixture.project, "status")
      expect(marks(fixture)).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)

  it("a submodule's git directory (.git/modules/NAME) keeps a writable config and hooks", async () => {
    const fixture = makeFixture()
    try {
      const lib = path.join(fixture.root, "lib")
      write(path.join(lib, "l.txt"), "l\n")
      git(lib, "init", "-q")
      git(lib, "add", "-A")
      git(lib, "commit", "-q", "-m", "l")
      git(fixture.project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub")
      git(fixture.project, "commit", "-q", "-m", "sub")
      const dir = ".git/modules/sub"
      await dispatch(fixture, [{
        id: "module",
        command:
          `printf '%b' ${JSON.stringify(planter(fixture, "submodule"))} > ${dir}/fsm && chmod +x ${dir}/fsm && ` +
          `git config -f ${dir}/config core.fsmonitor "$PWD/${dir}/fsm"`
      }])
      await userGit(fixture.project, "status")
      expect(marks(fixture)).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)

  it("a linked worktree's .git file can be pointed at a git directory the command made", async () => {
    const fixture = makeFixture()
    try {
      const worktree = path.join(fixture.root, "wt")
      git(fixture.project, "worktree", "add", "-q", worktree)
      await dispatch(fixture, [{
        id: "gitfile",
        command: `${plantGitDir(fixture, ".evil", "gitfile")} && printf 'gitdir: .evil\\n' > .git`
      }], worktree)
      await userGit(worktree, "status")
      expect(marks(fixture)).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)
})

/** A file's content, or `absent`. */
const contentAt = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "absent")

suite("containment: links out of a deny rule's base (generated)", () => {
  it(
    "a denied name linking out, absolutely, relatively, through a chain or to a directory, reads nothing",
    async () => {
      const fixture = makeFixture()
      try {
        write(path.join(fixture.outside, "dir", "prod.key"), `${SECRET}\n`)
        fs.symlinkSync(path.join(fixture.outside, "prod.key"), path.join(fixture.outside, "chain"))
        const shapes: ReadonlyArray<readonly [string, string]> = [
          [path.join(fixture.outside, "prod.key"), ""],
          ["../../outside/prod.key", ""],
          [path.join(fixture.outside, "chain"), ""],
          [path.join(fixture.outside, "dir"), "/prod.key"],
          ["../../outside/dir", "/prod.key"]
        ]
        const generated = FastCheck.sample(
          FastCheck.tuple(FastCheck.nat({ max: shapes.length - 1 }), FastCheck.stringMatching(/^[a-z][a-z0-9]{0,8}$/)),
          { numRuns: 6, seed }
        )
        const reads = generated.map(([shape, name], i) => {
          const [target, below] = shapes[shape]!
          const link = `config/${name}${i}.key`
          fs.symlinkSync(target, path.join(fixture.project, link))
          return `${link}${below}`
        })
        // Named base64-encoded, so that only the sandbox (not the Bash rules' reading of the line) stands in the way.
        const results = await dispatch(fixture, [{
          id: "links",
          command: `node -e 'for (const f of process.argv.slice(1)) try { process.stdout.write(require("fs")` +
            `.readFileSync(Buffer.from(f, "base64").toString(), "utf8")) } catch {}' ` +
            reads.map((read) => Buffer.from(read).toString("base64")).join(" ")
        }])
        expect(contentOf(results.get("links")), `${replay}: ${reads.join("\n")}`).not.toContain(SECRET)
      } finally {
        cleanup(fixture)
      }
    },
    TIMEOUT
  )
})

suite("containment: parents of denied and protected paths (generated)", () => {
  it(
    "renaming any directory above a masked, Edit-denied or denyWrite path fails, so the next call finds it",
    async () => {
      const fixture = makeFixture({
        permissions: { allow: ["Bash"], deny: ["Read(./r/a/b/**)", "Edit(./e/a/b/keep.txt)"] }
      })
      try {
        const settingsFile = path.join(fixture.state, "settings.json")
        const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8"))
        settings.sandbox.filesystem = { denyWrite: [path.join(fixture.project, "w", "a", "b", "keep.txt")] }
        fs.writeFileSync(settingsFile, JSON.stringify(settings))
        write(path.join(fixture.project, "r", "a", "b", "key.txt"), `${SECRET}\n`)
        write(path.join(fixture.project, "e", "a", "b", "keep.txt"), "kept\n")
        write(path.join(fixture.project, "w", "a", "b", "keep.txt"), "kept\n")
        const ancestors = ["r", "r/a", "r/a/b", "e", "e/a", "e/a/b", "w", "w/a", "w/a/b"]
        const renamers: ReadonlyArray<(from: string, to: string) => string> = [
          (from, to) => `mv ${from} ${to}`,
          (from, to) => `node -e 'require("fs").renameSync(process.argv[1], process.argv[2])' ${from} ${to}`,
          (from, to) => `python3 -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' ${from} ${to}`,
          (from, to) => `mkdir -p moved-${to} && mv ${from} moved-${to}/`
        ]
        const generated = FastCheck.sample(
          FastCheck.tuple(FastCheck.constantFrom(...ancestors), FastCheck.nat({ max: renamers.length - 1 })),
          { numRuns: 8, seed }
        )
        const renames = generated.map(([from, renamer], i) => renamers[renamer]!(from, `m${i}`))
        await dispatch(fixture, [{ id: "rename", command: renames.map((c) => `${c} 2>&1`).join("; ") }])
        // Whatever moved, the next call reads and writes every place the content could be now.
        await dispatch(fixture, [{
          id: "after",
          command: `find . -path ./.git -prune -o -type f \\( -name key.txt -o -name keep.txt \\) -print | ` +
            `while read f; do cat "$f"; echo changed > "$f"; done; true`
        }]).then((second) => expect(contentOf(second.get("after")), replay).not.toContain(SECRET))
        for (const ancestor of ancestors) expect(fs.existsSync(path.join(fixture.project, ancestor)), replay).toBe(true)
        expect(contentAt(path.join(fixture.project, "e", "a", "b", "keep.txt")), replay).toBe("kept\n")
        expect(contentAt(path.join(fixture.project, "w", "a", "b", "keep.txt")), replay).toBe("kept\n")
      } finally {
        cleanup(fixture)
      }
    },
    TIMEOUT
  )
})

suite("containment: git's redirect files (generated)", () => {
  const withSubmodule = (fixture: Fixture) => {
    const lib = path.join(fixture.root, "lib")
    write(path.join(lib, "l.txt"), "l\n")
    git(lib, "init", "-q")
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "l")
    git(fixture.project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub")
    git(fixture.project, "commit", "-q", "-m", "sub")
  }

  it(
    "writes to commondir, a submodule's config, commondir and .git file leave the user's git running nothing",
    async () => {
      const fixture = makeFixture()
      try {
        withSubmodule(fixture)
        const evil = path.join(fixture.project, "evil")
        /** Each target with what, written there, sends the user's git to `evil` (a planted git directory). */
        const targets: ReadonlyArray<readonly [string, string]> = [
          [".git/commondir", evil],
          [".git/modules/sub/commondir", evil],
          [".git/modules/sub/config", `[core]\\n\\tfsmonitor = ${evil}/fsm\\n`],
          [".git/config", `[core]\\n\\tfsmonitor = ${evil}/fsm\\n`],
          ["sub/.git", `gitdir: ${evil}`]
        ]
        const writers: ReadonlyArray<(target: string, content: string) => string> = [
          (t, c) => `printf '${c}\\n' > ${t}`,
          (t, c) => `node -e 'require("fs").writeFileSync(process.argv[1], process.argv[2])' ${t} "$(printf '${c}')"`,
          (t, c) => `printf '${c}\\n' > $TMPDIR/n && mv -f $TMPDIR/n ${t}`,
          (t, c) => `rm -rf ${t}; printf '${c}\\n' > ${t}`,
          (t, c) => `mv $(dirname ${t}) $(dirname ${t}).old; mkdir -p $(dirname ${t}); printf '${c}\\n' > ${t}`
        ]
        const generated = FastCheck.sample(
          FastCheck.tuple(FastCheck.nat({ max: targets.length - 1 }), FastCheck.nat({ max: writers.length - 1 })),
          { numRuns: 10, seed }
        ).map(([target, writer]) => writers[writer]!(...targets[target]!))
        await dispatch(fixture, [{
          id: "redirect",
          command: [
            plantGitDir(fixture, "evil", "redirect"),
            ...generated.map((c) => `${inBash(c)} 2>/dev/null`),
            "true"
          ]
            .join("\n")
        }])
        await userGit(fixture.project, "status")
        await userGit(path.join(fixture.project, "sub"), "status")
        expect(marks(fixture), `${replay}: ${generated.join("\n")}`).toEqual([])
      } finally {
        cleanup(fixture)
      }
    },
    TIMEOUT
  )

  it(
    "control: git works inside (status, commit, a submodule's commit, a worktree) and leaves no placeholder",
    async () => {
      const fixture = makeFixture()
      try {
        withSubmodule(fixture)
        const ci = `git ${gitArgs.join(" ")}`
        const results = await dispatch(fixture, [{
          id: "git",
          command: [
            "git status --porcelain",
            `${ci} commit -q --allow-empty -m inside`,
            `echo s > sub/s.txt && ${ci} -C sub add s.txt && ${ci} -C sub commit -q -m sub-inside`,
            "git -C sub status --porcelain",
            "git worktree add -q wt2 && git -C wt2 status --porcelain",
            "echo ok"
          ].join(" && ")
        }])
        expect(contentOf(results.get("git"))).toContain("ok")
        expect(fs.existsSync(path.join(fixture.project, ".git", "commondir"))).toBe(false)
        expect(fs.existsSync(path.join(fixture.project, ".git", "modules", "sub", "commondir"))).toBe(false)
        const log = execFileSync("git", ["log", "--format=%s", "-1"], { cwd: path.join(fixture.project, "sub") })
        expect(String(log).trim()).toBe("sub-inside")
      } finally {
        cleanup(fixture)
      }
    },
    TIMEOUT
  )
})

suite("containment: hosts", () => {
  it("a Unix socket of the host is not reachable from inside", async () => {
    const fixture = makeFixture()
    const log: Array<string> = []
    const socket = path.join(fixture.outside, "service.sock")
    const server = net.createServer((connection) => {
      log.push("connection")
      connection.end("reached\n")
    })
    await new Promise<void>((resolve) => server.listen(socket, () => resolve()))
    try {
      await dispatch(fixture, [{
        id: "unix",
        command: `node -e 'const s = require("net").connect(process.argv[1]); ` +
          `s.on("data", (d) => { process.stdout.write(String(d)); s.end() }); s.on("error", () => {})' '${socket}'`
      }])
      expect(log).toEqual([])
    } finally {
      server.close()
      cleanup(fixture)
    }
  }, TIMEOUT)
})

const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

suite("containment: leaving through a host socket", () => {
  ;(hasTmux ? it : it.skip)("a tmux server of the user's runs nothing for a sandboxed command", async () => {
    const fixture = makeFixture()
    const socket = path.join(fixture.outside, "tmux.sock")
    const escapee = `atk-review-escapee-${crypto.randomUUID().slice(0, 8)}`
    execFileSync("tmux", ["-S", socket, "new-session", "-d", "-s", "review", "sleep 120"], { stdio: "ignore" })
    try {
      await dispatch(fixture, [{
        id: "tmux",
        command:
          `tmux -S '${socket}' new-window -d "touch '${fixture.outside}/MARK-tmux'; tmux wait-for -S review-done; exec -a ${escapee} sleep 60"`
      }])
      // The window's command runs outside the sandbox (a write outside) and outlives the call.
      // Waits for the window's signal (bounded: once fixed, no window opens and none comes).
      await new Promise<void>((resolve) =>
        execFile("tmux", ["-S", socket, "wait-for", "review-done"], { timeout: 15_000 }, () => resolve())
      )
      expect(marks(fixture)).toEqual([])
    } finally {
      execFileSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" })
      cleanup(fixture)
    }
  }, TIMEOUT)
})

suite("containment: a project's settings", () => {
  it("a project's local settings cannot turn off the sandbox the user turned on", async () => {
    const fixture = makeFixture()
    try {
      write(
        path.join(fixture.project, ".claude", "settings.local.json"),
        JSON.stringify({ sandbox: { enabled: false } })
      )
      await dispatch(fixture, [{ id: "off", command: `touch '${fixture.outside}/MARK-disabled'` }])
      expect(marks(fixture)).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)

  it("protected names made in a subdirectory take no effect when the user starts switchyard there", async () => {
    const fixture = makeFixture()
    try {
      const hook = { type: "command", command: `touch '${fixture.outside}/MARK-hook'` }
      const local = { enableAllProjectMcpServers: true, hooks: { PreToolUse: [{ matcher: "*", hooks: [hook] }] } }
      const mcp = { mcpServers: { planted: { command: "sh", args: ["-c", `touch '${fixture.outside}/MARK-mcp'`] } } }
      const results = await dispatch(fixture, [{
        id: "sub",
        command: `mkdir -p sub/.claude && echo '${JSON.stringify(local)}' > sub/.claude/settings.local.json && ` +
          `echo '${JSON.stringify(mcp)}' > sub/.mcp.json && echo made`
      }])
      expect(contentOf(results.get("sub"))).toContain("made")
      await dispatch(fixture, [{ id: "later", command: "true" }], path.join(fixture.project, "sub"))
      expect(marks(fixture)).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)
})

const hash = (file: string) => crypto.createHash("sha1").update(fs.readFileSync(file)).digest("hex")

/** The protected names at the project's top, as a hash tree (absent ones as absent). */
const protectedTree = (fixture: Fixture): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (full: string) => {
    const stat = fs.lstatSync(full, { throwIfNoEntry: false })
    if (stat === undefined) return void (out[full] = "absent")
    if (stat.isSymbolicLink()) return void (out[full] = `link ${fs.readlinkSync(full)}`)
    if (!stat.isDirectory()) return void (out[full] = `file ${stat.mode.toString(8)} ${hash(full)}`)
    out[full] = `dir ${stat.mode.toString(8)}`
    for (const name of fs.readdirSync(full)) walk(path.join(full, name))
  }
  for (const name of [".git/hooks", ".git/config", ".claude", ".switchyard", ".mcp.json", ".git/commondir"]) {
    walk(path.join(fixture.project, name))
  }
  for (const name of fs.readdirSync(fixture.home)) walk(path.join(fixture.home, name))
  return out
}

/** `bash -c` of a command, passed base64-encoded so the outer shell expands nothing of it. */
const inBash = (command: string) => `bash -c "$(echo ${Buffer.from(command).toString("base64")} | base64 -d)"`

const TARGETS = [
  ".git/hooks/pre-commit",
  ".git/config",
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".switchyard/settings.local.json",
  ".mcp.json",
  "~/.bashrc"
]

/** Ways to get bytes into a target: direct, through links, after moving a parent, by interpreters. */
const attacks: ReadonlyArray<(target: string, payload: string) => string> = [
  (t, p) => `mkdir -p "$(dirname ${t})"; echo '${p}' > ${t}`,
  (t, p) =>
    `node -e 'const f=require("fs"),q=require("path");f.mkdirSync(q.dirname(process.argv[1]),` +
    `{recursive:true});f.writeFileSync(process.argv[1],process.argv[2])' ${t} '${p}'`,
  (t, p) =>
    `python3 -c 'import os,sys; os.makedirs(os.path.dirname(sys.argv[1]) or ".", exist_ok=True); ` +
    `open(sys.argv[1],"w").write(sys.argv[2])' ${t} '${p}'`,
  (t, p) =>
    `mkdir -p "$(dirname ${t})"; ln -sfn "$(dirname ${t})" alias-dir; echo '${p}' > "alias-dir/$(basename ${t})"`,
  (t, p) => `mkdir -p "$(dirname ${t})"; echo '${p}' > $TMPDIR/f; ln -f $TMPDIR/f ${t} || cp $TMPDIR/f ${t}`,
  (t, p) => `d="$(dirname ${t})"; mv "$d" "$d.moved"; mkdir -p "$d"; echo '${p}' > ${t}`,
  (t, p) => `rm -rf "$(dirname ${t})"; mkdir -p "$(dirname ${t})"; echo '${p}' > ${t}`,
  (t, p) => `mkdir -p "$(dirname ${t})"; echo '${p}' > $TMPDIR/n; mv -f $TMPDIR/n ${t}`,
  (t, p) => `git init -q "$(dirname ${t})" 2>/dev/null; echo '${p}' >> ${t}`,
  (t, p) => `mkdir -p "$(dirname ${t})"; exec 3>>${t}; echo '${p}' >&3; echo '${p}' > /proc/self/fd/3`,
  (t, p) => `(sleep 0.3; echo '${p}' > ${t}) & disown; nohup sh -c "echo '${p}' > ${t}" >/dev/null 2>&1 &`
]

suite("containment: the protected names at the root (generated)", () => {
  it("writes, links, renames and creations leave them as they were, and nothing outlives the call", async () => {
    const fixture = makeFixture()
    try {
      const marker = `atk-review-${crypto.randomUUID().slice(0, 8)}`
      const generated = FastCheck.sample(
        FastCheck.tuple(FastCheck.nat({ max: attacks.length - 1 }), FastCheck.constantFrom(...TARGETS)),
        { numRuns: 60, seed }
      ).map(([attack, target]) => attacks[attack]!(target, "[core]\\n\\tfsmonitor = /bin/true"))
      const before = protectedTree(fixture)
      // Each in its own shell under a timeout; one call per ten, so a slow one does not hold the rest.
      const calls: Array<Call> = []
      for (let i = 0; i < generated.length; i += 10) {
        const steps = generated.slice(i, i + 10).map((command) =>
          `timeout -s KILL 3 ${inBash(command)} </dev/null >/dev/null 2>&1`
        )
        calls.push({ id: `g${i / 10}`, command: [...steps, `(exec -a ${marker} sleep 600) &`, "true"].join("\n") })
      }
      calls.push({ id: "bg", command: `exec -a ${marker} sleep 600`, background: true })
      // The control: every way but the background one (which may be ended first) writes a plain path.
      const control = attacks.slice(0, -1).map((attack, i) => attack(`plain-${i}/x.txt`, "x"))
      calls.push({ id: "control", command: control.map((c) => `${inBash(c)} >/dev/null 2>&1`).join("\n") })
      await dispatch(fixture, calls)
      const written = control.map((_, i) => fs.existsSync(path.join(fixture.project, `plain-${i}`, "x.txt")))
      expect(written, "every way of writing works where writing is allowed").toEqual(control.map(() => true))
      const after = protectedTree(fixture)
      const changed = Object.keys({ ...before, ...after }).filter((key) => before[key] !== after[key])
      expect(changed, `${replay}: ${generated.join("\n")}`).toEqual([])
      await userGit(fixture.project, "status")
      expect(marks(fixture), replay).toEqual([])
      const live = execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" })
        .split("\n").filter((line) => line.includes(marker) && !line.trim().startsWith("Z"))
      expect(live, `${replay}: processes left`).toEqual([])
    } finally {
      cleanup(fixture)
    }
  }, TIMEOUT)
})
