/**
 * Outside review of the `/proc` claim (core's `realPaths.ts` `reachesProcess`,
 * `bashPaths.ts`): "a Bash path that reaches /proc/self, /proc/thread-self or
 * /proc/<pid> — written so or through any link on the way — is unknown, so a
 * deny rule (`Read(./.env)`) fails closed even beside `Bash(cat *)` or in
 * bypassPermissions".
 *
 * Judged by the effect: every line the permission chain allows is run for real
 * with bash in a throwaway fixture whose `.env` holds a secret, and its output
 * must not hold the secret.
 *
 * - Held: paths into the process's own view written so, or through links that
 *   exist when the line is judged (`/proc`, `/dev/fd`, `..` after them, links to
 *   links), and `/dev/stdin`/`/dev/stderr` opened on a directory.
 * - Gaps, each fixed and flipped to `it.effect` (core's `bashPaths.ts`/`bashRules.ts`): a part that may make
 *   links leaves the other parts' paths unknown; `$(<FILE)`, `source FILE` are reads of FILE; a word of an
 *   undescribed invocation naming a covered path, or a `find -exec … {}` tree holding one, asks.
 * - Gap: a link the line itself makes
 *   before it reads through it (`ln -s /proc/self/cwd l && cat l/.env`, or
 *   simply `ln -s . l && cat l/.env`). When the line is judged the link does
 *   not exist yet, so the path is resolved as written, misses the deny rule,
 *   and is allowed.
 * - Gap: bash reads a file without any program: `$(<.env)` and `source .env`.
 * - Beyond /proc: undescribed invocations naming `.env` (`tar cf - .env`,
 *   `link`, `install`, `find -exec cat {} +`) run in bypassPermissions.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Bash, decide } from "./fixtures/permissionTools.js"

const SECRET = "env-secret-review-3b7e"

const DENY = ["Read(./.env)"]

/** Narrow rules beside the deny rule, for the default mode: the programs the lines use. */
const ALLOW = [
  "Bash(cat *)",
  "Bash(head *)",
  "Bash(tail *)",
  "Bash(sort *)",
  "Bash(grep *)",
  "Bash(ln *)",
  "Bash(echo *)"
]

const MODES = ["default", "bypassPermissions"] as const

/** A project whose `.env` is denied, with links into the process's own view made before any line is judged. */
const makeFixture = (): string => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-review-proc-")))
  fs.writeFileSync(path.join(root, ".env"), `TOKEN=${SECRET}\n`)
  fs.mkdirSync(path.join(root, "src"))
  fs.writeFileSync(path.join(root, "src", "a.ts"), "export const visible = 1\n")
  fs.symlinkSync("/proc/self/cwd", path.join(root, "here"))
  fs.symlinkSync("/proc", path.join(root, "p"))
  fs.symlinkSync("/dev", path.join(root, "d"))
  fs.symlinkSync("../here", path.join(root, "src", "up"))
  return root
}

const run = (root: string, command: string): string => {
  const result = spawnSync("bash", ["-c", command], { cwd: root, encoding: "utf8", input: "", timeout: 10_000 })
  return `${result.stdout}${result.stderr}`
}

/** The lines the chain allowed (in either mode) whose run, each in a fresh fixture, printed the secret. */
const leaksOf = (commands: ReadonlyArray<string>, fresh: boolean) =>
  Effect.gen(function*() {
    const shared = fresh ? undefined : makeFixture()
    const leaked: Array<string> = []
    for (const command of commands) {
      for (const mode of MODES) {
        const root = shared ?? makeFixture()
        const { outcome } = yield* decide({ cwd: root, mode, deny: DENY, allow: ALLOW }, Bash, { command })
        if (outcome === "allow" && run(root, command).includes(SECRET)) leaked.push(`${mode}: ${command}`)
      }
    }
    return leaked
  })

/** A link the line makes, and the path through it that reaches `.env`. */
const madeLinks = FastCheck.constantFrom(
  { target: ".", name: "l", read: "l/.env" },
  { target: "..", name: "src/l", read: "src/l/.env" },
  { target: "/proc/self/cwd", name: "l", read: "l/.env" },
  { target: "/proc/self/cwd", name: "src/l", read: "src/l/.env" },
  { target: "/proc/thread-self/cwd", name: "l", read: "l/.env" },
  { target: "/proc/self", name: "l", read: "l/cwd/.env" },
  { target: "/dev/fd/..", name: "l", read: "l/cwd/.env" },
  { target: "../here", name: "src/l", read: "src/l/.env" },
  { target: "here", name: "l", read: "l/.env" },
  { target: ".env", name: "l", read: "l" },
  { target: "../.env", name: "src/l", read: "src/l" },
  { target: "src", name: "l", read: "l/../.env" }
)
const makers = FastCheck.constantFrom("ln -s", "ln -sf", "ln -s --", "ln -sT", "ln -sn")
const readers = FastCheck.constantFrom("cat", "head -n 5", "tail -n 5", "sort", "grep TOKEN", "cat <")
const separators = FastCheck.constantFrom(" && ", "; ", "\n")

const linkLines = FastCheck.tuple(madeLinks, makers, readers, separators).map(([link, maker, reader, separator]) =>
  `${maker} ${link.target} ${link.name}${separator}${reader} ${link.read}`
)

/** Spellings of `.env` through the process's own view, links that exist when the line is judged included. */
const procPaths = FastCheck.constantFrom(
  "/proc/self/cwd/.env",
  "/proc/thread-self/cwd/.env",
  "/proc/./self/cwd/.env",
  "/proc//self/cwd/src/../.env",
  "/proc/self/task/../cwd/.env",
  "/proc/self/fd/../cwd/.env",
  "/dev/fd/../cwd/.env",
  "here/.env",
  "here/./.env",
  "here/src/../.env",
  "p/self/cwd/.env",
  "p/thread-self/cwd/.env",
  "d/fd/../cwd/.env",
  "src/up/.env",
  "src/up/src/up/.env"
)
const procReaders = FastCheck.constantFrom("cat", "head -n 5", "sort", "grep TOKEN", "cat <", "cd src && cat ../")
const procLines = FastCheck.tuple(procReaders, procPaths).map(([reader, file]) =>
  reader.endsWith("../") ? `cd src && cat ../${file}` : `${reader} ${file}`
)

/** `/dev/stdin`, `/dev/stderr` opened on the project's directory: the path after them is the project's. */
const streamLines = [
  "cat /dev/stdin/.env < .",
  "head /dev/stdin/.env 0<.",
  "cat /dev/stderr/.env 2< .",
  "cat /dev/stdin/.env < src/..",
  "cd src && cat /dev/stdin/.env < .."
]

const seed = Number(process.env["ATTACK_SEED"] ?? Math.floor(Math.random() * 2 ** 31))

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

layer(TestLayer)("review: paths into /proc/self, judged by what the line prints", (it) => {
  describe("held", () => {
    it.effect(`/proc spellings and links that exist when judged print no secret (ATTACK_SEED=${seed})`, () =>
      Effect.gen(function*() {
        const lines = [...new Set([...FastCheck.sample(procLines, { numRuns: 40, seed }), ...streamLines])]
        expect(yield* leaksOf(lines, false)).toEqual([])
      }))

    it.effect("the oracle sees a leak: the same lines, unguarded, print the secret", () =>
      Effect.sync(() => {
        const root = makeFixture()
        for (const line of ["cat here/.env", "cat d/fd/../cwd/.env", "cat /dev/stdin/.env < .", "cat src/up/.env"]) {
          expect(run(root, line), line).toContain(SECRET)
        }
        for (const line of ["ln -s /proc/self/cwd l && cat l/.env", "ln -s . m; cat m/.env"]) {
          expect(run(makeFixture(), line), line).toContain(SECRET)
        }
        expect(run(root, "echo \"$(<.env)\"")).toContain(SECRET)
      }))
  })

  describe("gaps the review found (fixed)", () => {
    // Why: at decision time `l` does not exist; the path is resolved as written (`<root>/l/.env`), matches no
    // deny rule and is allowed. Fix: a line that makes a link (`ln -s`, `cp -s`, `ln` of a directory's entries…)
    // makes every later path on it that goes through the link's name unknown — simplest: after a command that
    // creates a symlink, treat any path under (or equal to) the link's name as unknown for the rest of the line.
    it.effect(`a link the line makes before it reads through it (ATTACK_SEED=${seed})`, () =>
      Effect.gen(function*() {
        const lines = [...new Set(FastCheck.sample(linkLines, { numRuns: 30, seed }))]
        expect(yield* leaksOf(lines, true)).toEqual([])
      }))

    it.effect("minimal: ln -s /proc/self/cwd l && cat l/.env; ln -s . l && cat l/.env", () =>
      Effect.gen(function*() {
        expect(yield* leaksOf(["ln -s /proc/self/cwd l && cat l/.env", "ln -s . l && cat l/.env"], true)).toEqual([])
      }))

    // Why: bash itself reads the file: `$(<file)` is a substitution with no command, `source`/`.` read and run
    // it. Neither is a program with a path argument, so no read is recorded. Fix: treat `$(<P)`/`` `<P` `` as a
    // read of P, and `source P`/`. P` as a read (and a run) of P.
    it.effect("bash reads without a program: $(<.env), source .env", () =>
      Effect.gen(function*() {
        const lines = [
          "echo \"$(<.env)\"",
          "x=$(< .env); echo \"$x\"",
          "source .env; echo $TOKEN",
          ". ./.env; echo $TOKEN"
        ]
        expect(yield* leaksOf(lines, true)).toEqual([])
      }))

    // Beyond /proc (a design question for the lead): invocations the analyser cannot describe (`tar c`,
    // `install`, `link`, `find -exec … {}`) run in bypassPermissions even when a word names the denied file
    // outright, while `cp -r .` or `grep -r .` beside them are denied. Fix: when Read deny rules exist, a word
    // of an undescribed invocation that resolves to a denied path (or a directory holding one, for find/tar)
    // denies; `{}` of find's -exec counts as every path under find's roots.
    it.effect("undescribed invocations that name the denied file or find it", () =>
      Effect.gen(function*() {
        const lines = [
          "tar cf - .env | tar xOf -",
          "link .env src/x; cat src/x",
          "install -m 644 .env src/i; cat src/i",
          "find . -name .env -exec cat {} +"
        ]
        expect(yield* leaksOf(lines, true)).toEqual([])
      }))
  })
})
