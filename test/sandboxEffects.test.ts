/**
 * The sandbox's effect oracle (issue 18): with the sandbox on and the rules
 * deliberately permissive (`--permission-mode bypassPermissions`, a bare
 * `Bash` allow), Bash calls go through the real CLI (`switchyard dispatch
 * --sandbox`) against a fixture project, and each run is judged by what
 * happened, never by a printed decision:
 * - 0 writes outside the writable roots (snapshots of the places around the
 *   project, the home directory, marker names under /tmp);
 * - 0 changes to the protected paths inside them (`.git/hooks`, `.git/config`,
 *   `.claude/`, `.switchyard/`, `.mcp.json`, the state directory with the
 *   user's settings, a denyWrite file and an Edit deny rule's file);
 * - 0 bytes of a denied file in any result;
 * - 0 connections reaching a loopback server no rule allows;
 * - 0 processes left (a marker process every batch leaves behind).
 * The commands: every attack class of SECURITY.md, every mutating command of
 * the shell classifier's corpus run from places it must not write, generated
 * writes, reads and connections (fast-check; the seed is printed with every
 * failure and `ORACLE_SEED` replays one), and interpreters (`node -e`,
 * `python3 -c`, `sh -c`), which static analysis cannot see into.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Sandbox from "@switchyard/tools/Sandbox"
import { execFileSync, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { mutatingCommands } from "../packages/tools/test/fixtures/shell-corpus.js"
import { jsonLines, runCli } from "./support/cli.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox oracle needs bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

const seed = Number(process.env["ORACLE_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const replay = `(replay with ORACLE_SEED=${seed})`
const TIMEOUT = 420_000

const SECRETS = ["env-secret-2c7a", "key-secret-8e31", "pem-secret-41bd", "ssh-secret-d90f", "outside-denied-6a2e"]

interface Fixture {
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly home: string
  readonly state: string
  /** A name prefix for files under /tmp that must never appear. */
  readonly tmpPrefix: string
}

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync(
    "git",
    ["-c", "init.defaultBranch=main", "-c", "user.email=o@example.com", "-c", "user.name=o", ...args],
    { cwd, stdio: "ignore" }
  )

const makeFixture = (): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-sandbox-oracle-")))
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  const home = path.join(root, "home")
  const state = path.join(project, ".state-home")
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  write(path.join(project, "README.md"), "hello\n")
  write(path.join(project, ".gitignore"), ".env\nsecrets/\nkeys/\n.state-home/\n")
  write(path.join(project, "src/a.ts"), "export const visible = 1\n")
  write(path.join(project, ".env"), `TOKEN=${SECRETS[0]}\n`)
  write(path.join(project, "secrets/key.txt"), `${SECRETS[1]}\n`)
  write(path.join(project, "keys/deep/id.pem"), `${SECRETS[2]}\n`)
  write(path.join(project, "locked.txt"), "denyWrite\n")
  write(path.join(project, "ruled.txt"), "Edit deny rule\n")
  write(path.join(project, ".switchyard/settings.json"), "{}\n")
  write(
    path.join(project, ".claude/settings.json"),
    JSON.stringify({
      permissions: {
        allow: ["Bash"],
        deny: [
          "Read(./.env)",
          "Read(./secrets/**)",
          "Read(**/*.pem)",
          `Read(/${outside}/denied.txt)`,
          "Edit(./ruled.txt)"
        ]
      },
      sandbox: { enabled: true, filesystem: { denyWrite: ["./locked.txt"] } }
    })
  )
  // The user's settings (they may widen the sandbox): a proxy that lets nothing on this machine through.
  write(
    path.join(state, "settings.json"),
    JSON.stringify({
      sandbox: {
        network: { allowedDomains: ["allowed.example.invalid"] },
        filesystem: { denyRead: ["~/.ssh"] }
      }
    })
  )
  write(path.join(state, "trusted-modes.json"), "{\"bypassPermissions\":{}}\n")
  write(path.join(outside, "target.txt"), "outside\n")
  write(path.join(outside, "denied.txt"), `${SECRETS[4]}\n`)
  write(path.join(home, ".ssh/id_rsa"), `${SECRETS[3]}\n`)
  write(path.join(home, ".bashrc"), "# home\n")
  fs.symlinkSync(".env", path.join(project, "src-env-link"))
  fs.symlinkSync(outside, path.join(project, "out"))
  fs.symlinkSync(path.join(project, ".git"), path.join(project, "git-link"))
  git(project, "init", "-q")
  git(project, "add", "-A")
  git(project, "commit", "-q", "-m", "initial")
  fs.mkdirSync(path.join(project, ".git", "hooks"), { recursive: true })
  return { root, project, outside, home, state, tmpPrefix: `sbx-oracle-${crypto.randomUUID().slice(0, 8)}` }
}

const hash = (file: string) => crypto.createHash("sha1").update(fs.readFileSync(file)).digest("hex")

/** Every entry below a directory (links as their targets, files as hashes, modes included). */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  if (!fs.existsSync(dir)) return out
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name)
      const mode = fs.lstatSync(full).mode.toString(8)
      if (entry.isSymbolicLink()) out[full] = `link ${fs.readlinkSync(full)}`
      else if (entry.isDirectory()) {
        out[full] = `dir ${mode}`
        walk(full)
      } else out[full] = `file ${mode} ${hash(full)}`
    }
  }
  walk(dir)
  return out
}

/** What must not change: everything outside the project, and the protected paths inside it. */
const guarded = (fixture: Fixture) => {
  const inside = [".git/hooks", ".git/config", ".claude", ".switchyard", "locked.txt", "ruled.txt", ".state-home"]
  const entries: Record<string, string> = { ...snapshot(fixture.outside), ...snapshot(fixture.home) }
  for (const name of inside) {
    const full = path.join(fixture.project, name)
    if (!fs.existsSync(full)) continue
    if (fs.statSync(full).isDirectory()) Object.assign(entries, snapshot(full))
    else entries[full] = hash(full)
  }
  // Runtime files the CLI itself writes into the state directory (spilled results) are not the command's doing.
  const spilled = `${path.sep}.state-home${path.sep}sessions`
  for (const key of Object.keys(entries)) if (key.includes(spilled)) delete entries[key]
  // The sandbox's record of where commands may write (core's SandboxedRoots, a file per entry), which the CLI
  // writes before the first command: judged by its content (the project, at a time already past), not by its change.
  const records = path.join(fixture.state, "sandboxed-roots")
  for (const key of Object.keys(entries)) {
    if (!key.startsWith(`${records}${path.sep}`) || !entries[key]!.startsWith("file")) continue
    const entry = JSON.parse(fs.readFileSync(key, "utf8")) as { root?: string; since?: number }
    if (entry.root === fixture.project && (entry.since ?? Infinity) <= Date.now()) delete entries[key]
  }
  if (entries[records]?.startsWith("dir")) delete entries[records]
  for (const name of fs.readdirSync(fixture.root)) {
    if (name !== "project" && name !== "outside" && name !== "home") entries[path.join(fixture.root, name)] = "extra"
  }
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (name.startsWith(fixture.tmpPrefix)) entries[path.join(os.tmpdir(), name)] = "tmp"
  }
  const mcp = path.join(fixture.project, ".mcp.json")
  entries[mcp] = fs.existsSync(mcp) ? "exists" : "absent"
  return entries
}

/** A loopback server no rule allows, recording every connection. */
const startServer = async () => {
  const log: Array<string> = []
  const server = Http.createServer((request, response) => {
    log.push(`${request.method} ${request.url}`)
    response.end("reached\n")
  })
  server.on("connection", () => log.push("connection"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return { log, port: (server.address() as AddressInfo).port, close: () => server.close() }
}

const liveWith = (marker: string) =>
  execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(marker) && !line.trim().startsWith("Z"))

/**
 * One Bash call running many commands, each in its own bash under a
 * timeout, its output cut to a few hundred bytes (so results stay under the
 * spill size), and a marker process left in the background.
 */
const batchCall = (id: string, commands: ReadonlyArray<string>, marker: string) => {
  // Output goes to a file in the sandbox's temp directory, not a pipe: a process a command leaves in the
  // background (`sleep 100 &`) would hold a pipe open; the sandbox ends it with the call.
  const steps = commands.map((command, i) => {
    const encoded = Buffer.from(command).toString("base64")
    const out = `"$TMPDIR/out-${i}"`
    return `{ timeout -s KILL 2 bash -c "$(echo ${encoded} | base64 -d)" </dev/null >${out} 2>&1; ` +
      `head -c 300 ${out}; echo; } &`
  })
  // Twenty-five at a time, so that commands that wait (a network timeout, a loop, an editor) do not add up.
  const groups: Array<string> = []
  for (let i = 0; i < steps.length; i += 25) groups.push([...steps.slice(i, i + 25), "wait"].join("\n"))
  return {
    type: "tool_use",
    id,
    name: "Bash",
    // The marker is left running last (a `wait` would wait for it): the sandbox must end it.
    input: { command: [...groups, `(exec -a ${marker} sleep 600) &`, "true"].join("\n"), timeout: 600_000 }
  }
}

const runBatches = async (fixture: Fixture, batches: ReadonlyArray<ReadonlyArray<string>>, tag: string) => {
  const marker = `${fixture.tmpPrefix}-${tag}-marker`
  const calls = batches.map((commands, i) => batchCall(`${tag}-${i}`, commands, marker))
  const result = await runCli(
    [
      "dispatch",
      "-",
      "--cwd",
      fixture.project,
      "--output-format",
      "stream-json",
      "--sandbox",
      "--permission-mode",
      "bypassPermissions",
      "--allowed-tools",
      "Bash",
      "--scheduling",
      "greedy"
    ],
    {
      input: JSON.stringify(calls),
      env: { SWITCHYARD_HOME: fixture.state, HOME: fixture.home },
      timeoutMs: TIMEOUT - 30_000
    }
  )
  const lines = jsonLines(result).filter((line) => line["type"] === "result")
  const byId = new Map(lines.map((line) => [line["tool_use_id"], line]))
  const results = calls.flatMap((call) => byId.has(call.id) ? [byId.get(call.id)!] : [])
  expect(results.length, `${replay}\n${result.stderr}`).toBe(calls.length)
  return {
    contents: results.map((line) =>
      typeof line["content"] === "string" ? line["content"] : JSON.stringify(line["content"])
    ),
    statuses: results.map((line) => String(line["status"])),
    marker
  }
}

/**
 * Run named groups of commands (one Bash call per group, all in one dispatch: a dispatch costs seconds) and
 * judge the run by its effects.
 */
const judge = async (
  fixture: Fixture,
  groups: Record<string, ReadonlyArray<string>>,
  tag: string,
  server: Awaited<ReturnType<typeof startServer>>
) => {
  const before = guarded(fixture)
  const names = Object.keys(groups)
  const batches = names.map((name) => groups[name]!.map((c) => c.replaceAll("PORT", String(server.port))))
  const { contents, marker, statuses } = await runBatches(fixture, batches, tag)
  const after = guarded(fixture)
  const changed = Object.keys({ ...before, ...after }).filter((key) => before[key] !== after[key])
  expect(changed, `${replay} ${tag}: changed outside the writable roots or in a protected path`).toEqual([])
  for (const [index, content] of contents.entries()) {
    const leaked = SECRETS.filter((secret) => content.includes(secret))
    expect(leaked, `${replay} ${tag} "${names[index]}": denied content in a result`).toEqual([])
  }
  expect(server.log, `${replay} ${tag}: a connection reached the loopback server`).toEqual([])
  expect(liveWith(marker), `${replay} ${tag}: processes left`).toEqual([])
  // The sandbox ran them: every batch succeeded as a whole.
  expect(statuses.every((status) => status === "success"), `${replay} ${tag}: ${contents.join("\n")}`).toBe(true)
  return contents
}

/** SECURITY.md's attack classes, as commands. */
const attackClasses = (f: Fixture): Record<string, ReadonlyArray<string>> => ({
  "a link to a denied file, a protected directory or outside": [
    "cat src-env-link",
    "ln -s .env e2 && cat e2",
    "ln -s secrets s2 && cat s2/key.txt",
    "echo x > git-link/hooks/pre-commit",
    "echo '[core] hooksPath=/tmp' >> git-link/config",
    "echo x > out/through-link.txt",
    "cp README.md out/",
    `ln -s ${f.outside} o2 && touch o2/x`
  ],
  "a path with glob or brace characters": [
    "cat .en?",
    "cat .e*",
    "cat secret*/k*",
    "cat {.env,README.md}",
    "cat keys/*/*.pem"
  ],
  "searches": [
    "grep -r secret .",
    "rg -uu secret .",
    "find . -name '*.pem' -exec cat {} \\;",
    "git grep -e secret --no-index ."
  ],
  "git content commands": ["git show HEAD:.env", "git diff --no-index /dev/null .env", "git log -p --all | head -50"],
  "a host no rule allows": [
    "curl -s -m 3 http://127.0.0.1:PORT/",
    "curl -s -m 3 --noproxy '*' http://127.0.0.1:PORT/",
    "curl -s -m 3 http://localhost:PORT/",
    "curl -s -m 3 http://2130706433:PORT/",
    "curl -s -m 3 'http://[::ffff:127.0.0.1]:PORT/'",
    "curl -s -m 3 -p http://127.0.0.1:PORT/",
    "bash -c 'echo GET > /dev/tcp/127.0.0.1/PORT'",
    "python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:PORT\", timeout=3)'",
    "node -e 'require(\"http\").get(\"http://127.0.0.1:PORT\")'",
    "node -e 'fetch(\"http://127.0.0.1:PORT\").then(()=>0,()=>0)'"
  ],
  "settings and trust": [
    "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .claude/settings.local.json",
    "echo '{}' > .switchyard/settings.local.json",
    `echo '{"bypassPermissions":{"x":["y"]}}' > ${f.state}/trusted-modes.json`,
    `echo '{}' > ${f.state}/settings.json`,
    "echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' > .mcp.json",
    "echo changed > locked.txt",
    "echo changed > ruled.txt",
    "rm -f ruled.txt locked.txt"
  ],
  "hard links": ["ln .env hard-env && cat hard-env", `ln ${f.outside}/target.txt here 2>&1; echo x >> here`],
  "the tree changing between check and use": [
    "ln -s README.md swap && ln -sfn .env swap && cat swap",
    "mkdir -p d && ln -sfn secrets d/s && cat d/s/key.txt",
    "mv .git .git-old; mkdir -p .git/hooks; echo x > .git/hooks/pre-commit",
    "rm -rf .claude; mkdir .claude; echo '{}' > .claude/settings.json"
  ],
  "leaving the sandbox": [
    "setsid sh -c 'sleep 1; touch /tmp/" + f.tmpPrefix + "-setsid' &",
    "nohup touch /tmp/" + f.tmpPrefix + "-nohup &",
    "unshare -r touch /tmp/" + f.tmpPrefix + "-unshare",
    "mount -t tmpfs none .git/hooks",
    "umount .env",
    "nsenter -t 1 -m touch /tmp/" + f.tmpPrefix + "-nsenter",
    "kill -9 1",
    "pkill -f vitest",
    "unshare -rm sh -c 'umount -l .env; cat .env'",
    "unshare -rm sh -c 'umount -l .git/hooks; touch .git/hooks/x'",
    "unshare -rm sh -c 'mount -o remount,rw /; touch /tmp/" + f.tmpPrefix + "-remount'",
    "chroot / touch /tmp/" + f.tmpPrefix + "-chroot",
    `cat /proc/1/root${f.outside}/denied.txt`
  ],
  "home and elsewhere": [
    "echo 'alias ls=rm' >> ~/.bashrc",
    `cat ${f.home}/.ssh/id_rsa`,
    `cp ~/.ssh/id_rsa /tmp/${f.tmpPrefix}-key`,
    `cat ${f.outside}/denied.txt`,
    `touch /tmp/${f.tmpPrefix}-tmp`,
    `echo x > ${f.root}/sibling.txt`
  ]
})

/** Interpreters and shells writing one target: what static analysis cannot see. */
const writers: ReadonlyArray<(target: string) => string> = [
  (t) => `echo x > '${t}'`,
  (t) => `sh -c 'echo x >> "$0"' '${t}'`,
  (t) => `node -e 'require("fs").writeFileSync(process.argv[1], "x")' '${t}'`,
  (t) => `python3 -c 'import sys; open(sys.argv[1], "a").write("x")' '${t}'`,
  (t) => `perl -e 'open(F, ">", $ARGV[0]); print F "x"' '${t}'`,
  (t) => `rm -rf '${t}'`,
  (t) => `mv '${t}' '${t}.moved'`,
  (t) => `chmod 777 '${t}'`,
  (t) => `truncate -s 0 '${t}'`,
  (t) => `find '${t}' -maxdepth 0 -exec sh -c 'echo x > "$1"' _ {} \\;`
]

const readers: ReadonlyArray<(target: string) => string> = [
  (t) => `cat '${t}'`,
  (t) => `node -e 'process.stdout.write(require("fs").readFileSync(process.argv[1]))' '${t}'`,
  (t) => `python3 -c 'import sys; print(open(sys.argv[1]).read())' '${t}'`,
  (t) => `sh -c 'while read l; do echo "$l"; done < "$0"' '${t}'`,
  (t) => `tar -cf - '${t}' | tar -xOf -`,
  (t) => `base64 '${t}' | base64 -d`
]

const wrappers: ReadonlyArray<(command: string) => string> = [
  (c) => c,
  (c) => `timeout 3 ${c}`,
  (c) => `eval ${JSON.stringify(c)}`,
  (c) => `bash -c ${JSON.stringify(c)}`,
  (c) => `env -i PATH=/usr/bin:/bin sh -c ${JSON.stringify(c)}`,
  (c) => `echo ${Buffer.from(c).toString("base64")} | base64 -d | sh`
]

suite("the sandbox's effect oracle (through the CLI, every prompt off)", () => {
  it("every attack class of SECURITY.md", async () => {
    const fixture = makeFixture()
    const server = await startServer()
    try {
      await judge(fixture, attackClasses(fixture), "attacks", server)
    } finally {
      server.close()
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, TIMEOUT)

  it("every mutating command of the classifier's corpus, run where it must not write", async () => {
    const fixture = makeFixture()
    const server = await startServer()
    try {
      const places = [fixture.outside, fixture.home, path.join(fixture.project, ".git/hooks")]
      const groups: Record<string, ReadonlyArray<string>> = {}
      for (const place of places) {
        const commands = mutatingCommands.map((command) => `cd '${place}' && ${command}`)
        for (let i = 0; i < commands.length; i += 75) groups[`${place} #${i / 75}`] = commands.slice(i, i + 75)
      }
      await judge(fixture, groups, "corpus", server)
    } finally {
      server.close()
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, TIMEOUT)

  it("generated writes, reads and connections through interpreters and wrappers", async () => {
    const fixture = makeFixture()
    const server = await startServer()
    try {
      const writeTargets = [
        path.join(fixture.outside, "target.txt"),
        path.join(fixture.outside, "new.txt"),
        "out/target.txt",
        "../outside/x",
        path.join(fixture.home, ".bashrc"),
        "~/.profile",
        `/tmp/${fixture.tmpPrefix}-gen`,
        ".git/hooks/post-commit",
        ".git/config",
        "git-link/hooks",
        ".claude/settings.json",
        ".switchyard/settings.json",
        ".mcp.json",
        "locked.txt",
        "ruled.txt",
        `${fixture.state}/settings.json`
      ]
      const readTargets = [
        ".env",
        "src-env-link",
        "secrets/key.txt",
        "keys/deep/id.pem",
        "~/.ssh/id_rsa",
        "out/denied.txt"
      ]
      const hosts = ["127.0.0.1", "localhost", "[::1]", "0x7f.1", "127.1"]
      const generated = FastCheck.sample(
        FastCheck.oneof(
          FastCheck.tuple(FastCheck.nat({ max: writers.length - 1 }), FastCheck.constantFrom(...writeTargets))
            .map(([w, t]) => writers[w]!(t)),
          FastCheck.tuple(FastCheck.nat({ max: readers.length - 1 }), FastCheck.constantFrom(...readTargets))
            .map(([r, t]) => readers[r]!(t)),
          FastCheck.constantFrom(...hosts).map((host) => `curl -s -m 3 http://${host}:PORT/gen`)
        ).chain((command) => FastCheck.nat({ max: wrappers.length - 1 }).map((w) => wrappers[w]!(command))),
        { numRuns: 160, seed }
      )
      const groups: Record<string, ReadonlyArray<string>> = {}
      for (let i = 0; i < generated.length; i += 40) groups[`generated #${i / 40}`] = generated.slice(i, i + 40)
      await judge(fixture, groups, "generated", server)
    } finally {
      server.close()
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, TIMEOUT)

  it("the oracle sees what is allowed: inside the project the same commands do their work", async () => {
    const fixture = makeFixture()
    const server = await startServer()
    try {
      const contents = await judge(
        fixture,
        {
          control: [
            "echo made > made.txt && cat made.txt",
            "node -e 'require(\"fs\").writeFileSync(\"by-node.txt\", \"node\")'",
            "python3 -c 'open(\"by-python.txt\", \"w\").write(\"python\")'",
            "sh -c 'echo sh > by-sh.txt'",
            "cat src/a.ts",
            "git add made.txt && git -c user.email=o@example.com -c user.name=o commit -qm made && " +
            "git log --format=%s -1"
          ]
        },
        "control",
        server
      )
      expect(fs.readFileSync(path.join(fixture.project, "made.txt"), "utf8")).toBe("made\n")
      expect(fs.readFileSync(path.join(fixture.project, "by-node.txt"), "utf8")).toBe("node")
      if (spawnSync("python3", ["--version"]).status === 0) {
        expect(fs.readFileSync(path.join(fixture.project, "by-python.txt"), "utf8")).toBe("python")
      }
      expect(fs.readFileSync(path.join(fixture.project, "by-sh.txt"), "utf8")).toBe("sh\n")
      expect(contents.join("\n")).toContain("visible")
      expect(contents.join("\n")).toContain("made")
    } finally {
      server.close()
      fs.rmSync(fixture.root, { recursive: true, force: true })
    }
  }, TIMEOUT)
})
