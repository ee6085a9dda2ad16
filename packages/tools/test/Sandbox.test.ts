/**
 * The bubblewrap sandbox (issue 18), judged by effects: the files on disk
 * before and after, the bytes of every result, a local server's connection
 * log and the process table — never by a printed decision. Rules are
 * deliberately permissive (bypassPermissions, every call allowed): only the
 * sandbox stands between the command and the machine.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Messages from "@switchyard/core/Messages"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Execution from "@switchyard/core/Execution"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { liveWith, makeProject, type Project, SECRETS, snapshot } from "./fixtures/sandboxProject.js"
import { dispatch, makeContext, toolsLayer } from "./fixtures/toolHarness.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox tests need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

const Grace = Layer.succeed(Bash.ShellSettings, {
  ...Bash.defaultSettings,
  killGracePeriod: Duration.millis(300),
  outputDrainTimeout: Duration.millis(300)
})

const layerFor = (project: Project, options: Sandbox.Options = {}) =>
  toolsLayer(
    Layer.mergeAll(Bash.layer, BackgroundShells.layerTools).pipe(
      Layer.provideMerge(BackgroundShells.layer),
      Layer.provide(Grace)
    )
  ).pipe(Layer.provideMerge(Sandbox.layer({ settings: project.settings, home: project.home, ...options })))

/** Run in the project with every call allowed (bypassPermissions) and the project's deny rules. */
const contextOf = (project: Project) =>
  makeContext(project.project, {
    permissions: { mode: "bypassPermissions", rules: project.rules, additionalDirectories: [] }
  })

const bashIn = (project: Project, command: string, extra: Partial<Bash.BashInput> = {}) =>
  Effect.flatMap(contextOf(project), (context) => dispatch(context, "Bash", { command, ...extra }))

const withProject = <A, E, R>(
  body: (project: Project) => Effect.Effect<A, E, R>,
  settings: Parameters<typeof makeProject>[0] = {}
) =>
  Effect.acquireUseRelease(
    Effect.sync(() => makeProject(settings)),
    body,
    (project) => Effect.sync(project.cleanup)
  )

const secretsIn = (text: string) => Object.values(SECRETS).filter((secret) => text.includes(secret))

suite("Sandbox: normal work still works inside", () => {
  it.scopedLive("writes in cwd, runs the project's tests, git status/add/commit, reads outside the deny set", () =>
    withProject((project) =>
      Effect.gen(function*() {
        fs.writeFileSync(
          path.join(project.project, "test.mjs"),
          "import assert from 'node:assert'\nassert.equal(1 + 1, 2)\nconsole.log('1 test passed')\n"
        )
        const work = yield* bashIn(
          project,
          [
            "echo made > made.txt",
            "mkdir -p build && cp README.md build/",
            "node test.mjs",
            "git status --porcelain >/dev/null",
            // Everything: no placeholder the sandbox holds a protected name's place with may be staged.
            "git add -A",
            "git -c user.email=m@example.com -c user.name=m commit -q -m sandboxed",
            "cat link-out/target.txt",
            "f=$(mktemp) && echo tmp > \"$f\" && cat \"$f\""
          ].join(" && ")
        )
        expect(work.status, work.text).toBe("success")
        expect(work.text).toContain("1 test passed")
        expect(work.text).toContain("outside")
        expect(work.text).toContain("tmp")
        expect(fs.readFileSync(path.join(project.project, "made.txt"), "utf8")).toBe("made\n")
        expect(fs.existsSync(path.join(project.project, "build", "README.md"))).toBe(true)
        const log = execFileSync("git", ["log", "--format=%s"], { cwd: project.project, encoding: "utf8" })
        expect(log.split("\n")[0]).toBe("sandboxed")
        const committed = execFileSync("git", ["show", "--name-only", "--format=", "HEAD"], {
          cwd: project.project,
          encoding: "utf8"
        })
        expect(committed.trim().split("\n").sort()).toEqual(["build/README.md", "made.txt", "test.mjs"])
        expect(execFileSync("git", ["status", "--porcelain"], { cwd: project.project, encoding: "utf8" })).toBe("")
        // No mount point the sandbox made for itself is left in the project.
        expect(fs.existsSync(path.join(project.project, ".mcp.json"))).toBe(false)
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("the private temp directory is fresh per command and removed afterwards", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const first = yield* bashIn(project, "echo $TMPDIR; touch $TMPDIR/mark; ls $TMPDIR")
        const [dir] = first.text.split("\n")
        expect(first.text).toContain("mark")
        expect(fs.existsSync(dir!)).toBe(false)
        const second = yield* bashIn(project, "echo $TMPDIR; ls $TMPDIR")
        expect(second.text.split("\n")[0]).not.toBe(dir)
        expect(second.text).not.toContain("mark")
      }).pipe(Effect.provide(layerFor(project)))
    ))
})

/** Interpreters and programs writing one absolute path each: what static analysis cannot see. */
const writers = (target: string): ReadonlyArray<string> => [
  `echo x > '${target}'`,
  `touch '${target}'`,
  `sh -c 'echo x > "$0"' '${target}'`,
  `node -e 'require("fs").writeFileSync(process.argv[1], "x")' '${target}'`,
  `python3 -c 'import sys; open(sys.argv[1], "w").write("x")' '${target}'`,
  `cp README.md '${target}'`,
  `mkdir -p '${target}'`,
  `ln -s /etc/passwd '${target}'`
]

suite("Sandbox: nothing is written outside the writable roots", () => {
  it.scopedLive("generated targets outside, written by shells and interpreters, do not appear", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const before = { outside: snapshot(project.outside), home: snapshot(project.home) }
        const places = [project.outside, project.home, path.join(project.home, ".ssh"), project.root, "/tmp"]
        const samples = FastCheck.sample(
          FastCheck.record({
            place: FastCheck.constantFrom(...places),
            name: FastCheck.stringMatching(/^[a-z][a-z0-9_.-]{0,12}$/),
            writer: FastCheck.nat({ max: 7 })
          }),
          { numRuns: 24 }
        )
        const targets: Array<string> = []
        const commands = samples.map(({ name, place, writer }) => {
          const target = path.join(place, `escape-${name}`)
          targets.push(target)
          return writers(target)[writer]!
        })
        // Through a link out of the project too.
        commands.push("echo x > link-out/through-link.txt", "echo x >> link-out/target.txt")
        const result = yield* bashIn(project, commands.map((command) => `${command} 2>&1`).join("; "))
        for (const target of targets) expect(fs.existsSync(target), target).toBe(false)
        expect(snapshot(project.outside)).toEqual(before.outside)
        expect(snapshot(project.home)).toEqual(before.home)
        expect(result.text).toContain("Read-only file system")
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("a refused write ends with one line naming the path and how to proceed", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const target = path.join(project.outside, "new.txt")
        const result = yield* bashIn(project, `touch ${target}`)
        expect(result.status).toBe("error")
        const lines = result.text.split("\n")
        expect(lines.some((line) => line.includes("Read-only file system"))).toBe(true)
        const explanation = lines[lines.length - 1]!
        expect(explanation).toContain(`Sandbox: a write to ${target} was blocked`)
        expect(explanation).toContain("sandbox.filesystem.allowWrite")
        expect(explanation).toContain("dangerouslyDisableSandbox: true")
        expect(fs.existsSync(target)).toBe(false)
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("sandbox.filesystem.allowWrite and additional directories are writable", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const extra = path.join(project.root, "extra")
        fs.mkdirSync(extra)
        const settings = {
          ...project.settings,
          filesystem: { ...project.settings.filesystem, allowWrite: [{ path: project.outside, source: "test" }] }
        }
        const context = yield* makeContext(project.project, {
          permissions: { mode: "bypassPermissions", rules: project.rules, additionalDirectories: [extra] }
        })
        const result = yield* dispatch(context, "Bash", {
          command: `echo a > ${project.outside}/allowed.txt && echo b > ${extra}/added.txt`
        }).pipe(Effect.provide(layerFor(project, { settings })))
        expect(result.status, result.text).toBe("success")
        expect(fs.readFileSync(path.join(project.outside, "allowed.txt"), "utf8")).toBe("a\n")
        expect(fs.readFileSync(path.join(extra, "added.txt"), "utf8")).toBe("b\n")
      }).pipe(Effect.provide(layerFor(project)))
    ))
})

suite("Sandbox: protected paths inside the writable roots stay as they are", () => {
  const attacks = [
    "echo 'exit 1' > .git/hooks/pre-commit",
    "chmod +x .git/hooks/* ; ln -s /bin/true .git/hooks/post-checkout",
    "git config core.hooksPath /tmp/evil",
    "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config",
    "mv .git .git-old && mkdir .git",
    "rm -rf .git/hooks .claude .switchyard",
    "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .claude/settings.json",
    "echo '{}' > .claude/settings.local.json",
    "mkdir -p .switchyard && echo '{}' > .switchyard/settings.local.json",
    "echo '{\"mcpServers\":{}}' > .mcp.json",
    "python3 -c 'open(\".claude/settings.json\",\"w\").write(\"{}\")'",
    "node -e 'require(\"fs\").rmSync(\".switchyard\", {recursive: true})'",
    "echo changed > locked.txt",
    "rm -f ruled.txt",
    "mv ruled.txt moved.txt"
  ]

  it.scopedLive("git hooks and config, .claude, .switchyard, .mcp.json, denyWrite and Edit deny rules", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const guarded = [".git/hooks", ".git/config", ".claude", ".switchyard", "locked.txt", "ruled.txt"]
        const before = snapshot(project.project)
        const result = yield* bashIn(project, attacks.map((attack) => `${attack} 2>&1`).join("; "))
        const after = snapshot(project.project)
        for (const [file, hash] of Object.entries(before)) {
          const relative = path.relative(project.project, file)
          if (guarded.some((name) => relative === name || relative.startsWith(`${name}/`))) {
            expect(after[file], relative).toBe(hash)
          }
        }
        for (const file of Object.keys(after)) {
          const relative = path.relative(project.project, file)
          if (guarded.some((name) => relative.startsWith(`${name}/`))) expect(before[file], relative).toBeDefined()
        }
        expect(fs.existsSync(path.join(project.project, ".mcp.json"))).toBe(false)
        expect(fs.existsSync(path.join(project.project, ".git-old"))).toBe(false)
        expect(result.text).toContain("Sandbox: a write to")
        expect(result.text).toContain("protected inside the working directories")
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("no repository can be made where there is none (git init and a planted hook)", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const bare = path.join(project.root, "bare")
        fs.mkdirSync(bare)
        const context = yield* makeContext(bare, {
          permissions: { mode: "bypassPermissions", rules: [], additionalDirectories: [] }
        })
        const result = yield* dispatch(context, "Bash", {
          command: "git init -q 2>&1; mkdir -p .git/hooks 2>&1; echo x > .git/hooks/pre-commit 2>&1; echo done"
        })
        expect(result.text).toContain("done")
        // The placeholder that stopped it is gone again; the directory is as it was.
        expect(fs.readdirSync(bare)).toEqual([])
        // An empty `.git` left behind (a runtime killed mid-command) is no way in either.
        const leftover = path.join(project.root, "leftover")
        fs.mkdirSync(path.join(leftover, ".git"), { recursive: true })
        const again = yield* dispatch(
          yield* makeContext(leftover, {
            permissions: { mode: "bypassPermissions", rules: [], additionalDirectories: [] }
          }),
          "Bash",
          { command: "git init -q 2>&1; echo '[core] fsmonitor = touch x' > .git/config 2>&1; echo done" }
        )
        expect(again.text).toContain("done")
        expect(fs.readdirSync(path.join(leftover, ".git"))).toEqual([])
      }).pipe(Effect.provide(layerFor(project)))
    ))
})

suite("Sandbox: denied files are masked, by real path", () => {
  it.scopedLive("no byte of a denied file reaches a result, through links, patterns or interpreters", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const readers = [
          "cat .env",
          "cat link-env",
          "cat secrets/key.txt",
          "cat keys/deep/id.pem",
          "grep -r secret . 2>/dev/null",
          `cat ${project.home}/.ssh/id_rsa`,
          "python3 -c 'print(open(\".env\").read())'",
          "node -e 'console.log(require(\"fs\").readFileSync(\"secrets/key.txt\", \"utf8\"))'",
          "sh -c 'cat $(readlink -f link-env)'",
          "tar -cf - . 2>/dev/null | strings",
          "git show HEAD:.env",
          "git stash list; git diff HEAD",
          "cp .env copy.txt; cat copy.txt",
          "ln .env hard.txt; cat hard.txt"
        ]
        const result = yield* bashIn(project, readers.map((reader) => `${reader} 2>&1`).join("; "))
        expect(secretsIn(result.text)).toEqual([])
        // The files themselves are untouched on the host.
        expect(fs.readFileSync(path.join(project.project, ".env"), "utf8")).toContain(SECRETS.env)
      }).pipe(Effect.provide(layerFor(project)))
    ))
})

/** A server on the host's loopback that records every request it gets. */
const loopbackServer = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly log: Array<string>; readonly server: http.Server }>((resume) => {
    const log: Array<string> = []
    const server = http.createServer((request, response) => {
      log.push(`${request.method} ${request.url}`)
      response.end("reached\n")
    })
    server.listen(
      0,
      "127.0.0.1",
      () => resume(Effect.succeed({ port: (server.address() as AddressInfo).port, log, server }))
    )
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

suite("Sandbox: the network", () => {
  it.scopedLive("without allowedDomains nothing is reachable, the host's loopback included", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const { log, port } = yield* loopbackServer
        const result = yield* bashIn(
          project,
          [
            `curl -s -m 3 http://127.0.0.1:${port}/curl`,
            `python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:${port}/python", timeout=3)'`,
            `node -e 'fetch("http://127.0.0.1:${port}/node").catch(() => process.exit(7))'`,
            `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; echo GET /tcp >&3'`
          ].map((command) => `${command} 2>&1`).join("; ")
        )
        expect(log).toEqual([])
        expect(result.text).not.toContain("reached")
      }).pipe(Effect.provide(layerFor(project)))
    ))

  const hasCurl = spawnSync("curl", ["--version"]).status === 0
  if (!hasCurl) console.log("skipped: the proxy test needs curl (Debian package curl)")
  it.scopedLive.skipIf(!hasCurl)(
    "an allowed domain is reached through the proxy; any other host is refused and named",
    () =>
      withProject(
        (project) =>
          Effect.gen(function*() {
            const allowed = yield* loopbackServer
            const other = yield* loopbackServer
            const result = yield* bashIn(
              project,
              [
                `curl -s -m 5 http://localhost:${allowed.port}/plain`,
                `curl -s -m 5 -p http://localhost:${allowed.port}/tunnel`,
                `curl -s -m 5 http://127.0.0.1:${other.port}/other`,
                `curl -s -m 5 -p http://127.0.0.1:${other.port}/other-tunnel`,
                `curl -s -m 5 --noproxy '*' http://localhost:${other.port}/direct`
              ].map((command) => `${command} 2>&1; echo`).join("; ")
            )
            expect(allowed.log.sort()).toEqual(["GET /plain", "GET /tunnel"])
            expect(other.log).toEqual([])
            expect(result.text).toContain("Blocked by the Switchyard sandbox")
            expect(result.text).toContain(`Sandbox: connections to 127.0.0.1:${other.port}`)
          }).pipe(Effect.provide(layerFor(project))),
        { network: { allowedDomains: ["localhost"] } }
      )
  )

  it.scopedLive.skipIf(!hasCurl)(
    "an allowedDomains entry host:port lets that port through and no other port of the host",
    () =>
      Effect.gen(function*() {
        const allowed = yield* loopbackServer
        const other = yield* loopbackServer
        yield* withProject(
          (project) =>
            Effect.gen(function*() {
              const result = yield* bashIn(
                project,
                [
                  `curl -s -m 5 http://localhost:${allowed.port}/plain`,
                  `curl -s -m 5 -p http://localhost:${allowed.port}/tunnel`,
                  `curl -s -m 5 http://localhost:${other.port}/other`,
                  `curl -s -m 5 -p http://localhost:${other.port}/other-tunnel`
                ].map((command) => `${command} 2>&1; echo`).join("; ")
              )
              expect(allowed.log.sort()).toEqual(["GET /plain", "GET /tunnel"])
              expect(other.log).toEqual([])
              expect(result.text).toContain(`Sandbox: connections to localhost:${other.port}`)
            }).pipe(Effect.provide(layerFor(project))),
          { network: { allowedDomains: [`localhost:${allowed.port}`] } }
        )
      })
  )
})

suite("Sandbox: no process is left", () => {
  const STUBBORN = (marker: string) =>
    `trap '' TERM; (trap '' TERM; exec -a ${marker} sleep 600) & (exec -a ${marker} sleep 600) & echo started; wait`

  it.scopedLive("after a timeout, inside the PID namespace too (processes that ignore SIGTERM included)", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const marker = `sbx-timeout-${process.pid}-${Date.now()}`
        const result = yield* bashIn(project, STUBBORN(marker), { timeout: 1500 })
        expect(result.text).toContain("timed out")
        expect(liveWith(marker)).toEqual([])
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("after an interrupt mid-command", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const marker = `sbx-interrupt-${process.pid}-${Date.now()}`
        const context = yield* contextOf(project)
        const env = yield* Execution.makeEnvironment(context)
        const started = yield* Deferred.make<void>()
        const call = Messages.toolUse("i", "Bash", { command: STUBBORN(marker) })
        const fiber = yield* Execution.runToolUse(call, env).pipe(
          Stream.runForEach((event) =>
            DispatchEvent.isProgress(event) ? Deferred.succeed(started, undefined) : Effect.void
          ),
          Effect.fork
        )
        yield* Deferred.await(started)
        // The script echoes before its subshells have necessarily run `exec`: wait until both are there.
        const sleeping = Effect.sync(() => liveWith(marker).filter((line) => line.includes(`${marker} 600`)).length)
        yield* Effect.repeat(sleeping, {
          until: (n) => n >= 2,
          schedule: Schedule.spaced("10 millis").pipe(Schedule.upTo("30 seconds"))
        })
        expect(yield* sleeping).toBe(2)
        yield* Fiber.interrupt(fiber)
        expect(liveWith(marker)).toEqual([])
      }).pipe(Effect.provide(layerFor(project)))
    ))

  it.scopedLive("a background command is sandboxed, and stopped with its whole namespace", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const marker = `sbx-background-${process.pid}-${Date.now()}`
        const context = yield* contextOf(project)
        const started = yield* dispatch(context, "Bash", {
          command: `touch ${project.outside}/bg.txt 2>&1; echo ready; exec -a ${marker} sleep 600`,
          run_in_background: true
        })
        const taskId = /ID: (\S+)/.exec(started.text)![1]!
        const seen = yield* Ref.make("")
        while (!(yield* Ref.get(seen)).includes("ready")) {
          const read = yield* dispatch(context, "TaskOutput", { task_id: taskId, block: true, timeout: 2000 })
          yield* Ref.update(seen, (text) => text + read.text)
        }
        expect(yield* Ref.get(seen)).toContain("Read-only file system")
        expect(fs.existsSync(path.join(project.outside, "bg.txt"))).toBe(false)
        yield* dispatch(context, "TaskStop", { task_id: taskId })
        expect(liveWith(marker)).toEqual([])
      }).pipe(Effect.provide(layerFor(project)))
    ))
})
