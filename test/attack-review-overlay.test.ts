/**
 * Outside review of the isolation claim (DESIGN §4.12, §5 Isolation): "a
 * rejected speculation leaves the real tree byte-identical, whatever its
 * tools try; an accepted one applies exactly what the overlay recorded".
 *
 * Judged by the bytes on disk: a hash tree of the project and of a directory
 * beside it, before and after reject or accept, through the library's
 * `Speculation` over the built-in tools (test/support/speculation.ts).
 *
 * Held (a generated property, the first test): writes by Write and Edit in
 * `acceptEdits` and `bypassPermissions` to generated spellings (`..` across
 * the root, absolute paths, links of the real tree out of cwd,
 * `/proc/self/root/…`, long names, names differing only in case, a directory
 * link into `.git`); after reject both trees are byte-identical, after accept
 * nothing outside cwd changed (nor `.git` in `acceptEdits`), and every other
 * change is one the overlay recorded. Gaps (both fixed: accept checks the
 * resolved path's protection, `.mcp.json` is a protected name):
 * - accept re-checks that a path still resolves inside cwd, but not that it
 *   is still unprotected: a directory the speculation wrote into, replaced
 *   by a link to `.git/hooks` before accept (the session's own sandboxed Bash
 *   may make that link), makes accept write a hook (`overlayApply.ts`
 *   `resolvesInside` — check `PathRules.isProtected` on the resolved path too);
 * - `.mcp.json` is protected for Bash (the sandbox) but not for the edit
 *   tools: `acceptEdits` writes it during speculation and accept applies it;
 *   with "use this and all future MCP servers" remembered for the project,
 *   the planted server starts at the next run (`pathRules.ts`
 *   `protectedDirectoryNames` has `.git`, `.claude`, `.switchyard` only).
 */
import type { PermissionContext, ReplayModel } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as crypto from "node:crypto"
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { runCli } from "./support/cli.js"
import { project, say, snapshot, speculate, tempDir, turn, use } from "./support/speculation.js"

const seed = Number(process.env["ORACLE_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const replay = `(replay with ORACLE_SEED=${seed})`

/** A project beside an `outside` directory, with links out of cwd and a git directory. */
const fixture = () => {
  const base = tempDir("attack-overlay-review-")
  const cwd = NPath.join(base, "project")
  const outside = NPath.join(base, "outside")
  NFS.mkdirSync(outside)
  NFS.writeFileSync(NPath.join(outside, "target.txt"), "outside\n")
  NFS.renameSync(project(), cwd)
  NFS.mkdirSync(NPath.join(cwd, ".git", "hooks"), { recursive: true })
  NFS.writeFileSync(NPath.join(cwd, ".git", "config"), "[core]\n\tbare = false\n")
  NFS.symlinkSync(outside, NPath.join(cwd, "out-link"))
  NFS.symlinkSync(NPath.join(outside, "target.txt"), NPath.join(cwd, "file-link"))
  NFS.symlinkSync(".git", NPath.join(cwd, "git-link"))
  return { base, cwd, outside }
}

const hashOf = (root: string) => crypto.createHash("sha256").update(JSON.stringify(snapshot(root))).digest("hex")

const spellings = (cwd: string, outside: string): ReadonlyArray<string> => [
  "notes.txt",
  "src/new.txt",
  "../outside/planted.txt",
  `${outside}/planted.txt`,
  "out-link/planted.txt",
  "file-link",
  "src/../../outside/planted.txt",
  `/proc/self/root${outside}/planted.txt`,
  `/proc/self/root${cwd}/proc-root.txt`,
  "git-link/hooks/pre-commit",
  ".git/hooks/post-checkout",
  "src/.GIT/hooks/pre-commit",
  `${"d".repeat(200)}/${"f".repeat(200)}.txt`,
  "NOTES.txt",
  "/tmp/../" + NPath.relative("/", outside) + "/planted.txt"
]

const writeCall = (id: string, tool: "Write" | "Edit", file: string) =>
  tool === "Write"
    ? use(id, "Write", { file_path: file, content: "PLANTED\n" })
    : use(id, "Edit", { file_path: file, old_string: "e", new_string: "PLANTED" })

describe("isolation: reject leaves the tree as it was; accept applies only what the overlay recorded", () => {
  it.scopedLive(
    "generated writes through every spelling, in acceptEdits and bypassPermissions",
    () =>
      Effect.gen(function*() {
        const cases = FastCheck.sample(
          FastCheck.record({
            mode: FastCheck.constantFrom("acceptEdits" as const, "bypassPermissions" as const),
            accept: FastCheck.boolean(),
            writes: FastCheck.array(
              FastCheck.tuple(FastCheck.constantFrom("Write" as const, "Edit" as const), FastCheck.nat({ max: 14 })),
              { minLength: 1, maxLength: 4 }
            )
          }),
          { numRuns: 24, seed }
        )
        for (const [index, { accept, mode, writes }] of cases.entries()) {
          const { base, cwd, outside } = fixture()
          const paths = spellings(cwd, outside)
          const reads = [use("r0", "Read", { file_path: "notes.txt" }), use("r1", "Read", { file_path: "greet.ts" })]
          const transcript: ReplayModel.Transcript = {
            turns: [
              turn(...reads),
              turn(...writes.map(([tool, at], i) => writeCall(`w${i}`, tool, paths[at]!))),
              turn(say("Done."))
            ]
          }
          const label = `${replay} case ${index}: ${mode} ${accept ? "accept" : "reject"} ` +
            writes.map(([tool, at]) => `${tool} ${paths[at]}`).join(", ")
          const before = snapshot(cwd)
          const outsideBefore = hashOf(outside)
          const gitBefore = hashOf(NPath.join(cwd, ".git"))
          const { speculation } = yield* speculate(transcript, mode, { cwd })
          if (!accept) {
            yield* speculation.reject
            expect(snapshot(cwd), label).toEqual(before)
          } else {
            const accepted = yield* speculation.accept
            const after = snapshot(cwd)
            const changed = Object.keys({ ...before, ...after }).filter((key) => before[key] !== after[key])
            // Every changed entry is a file the overlay applied, or a directory on the way to one.
            const applied = accepted.applied.map((p) => p.split(NPath.sep).join("/"))
            const explained = (key: string) => applied.some((p) => p === key || p.startsWith(`${key}/`))
            expect(changed.filter((key) => !explained(key)), label).toEqual([])
          }
          expect(hashOf(outside), label).toBe(outsideBefore)
          // bypassPermissions may write .git (as outside speculation); acceptEdits never.
          if (mode === "acceptEdits" || !accept) expect(hashOf(NPath.join(cwd, ".git")), label).toBe(gitBefore)
          NFS.rmSync(base, { recursive: true, force: true })
        }
      }),
    90_000
  )

  it.scopedLive(
    "accept does not write into .git/hooks through a directory replaced by a link meanwhile",
    () =>
      Effect.gen(function*() {
        const { base, cwd } = fixture()
        try {
          const hook = "#!/bin/sh\necho planted\n"
          const { speculation } = yield* speculate(
            {
              turns: [turn(use("w", "Write", { file_path: "src/pre-commit", content: hook })), turn(say("Done."))]
            },
            "acceptEdits",
            { cwd }
          )
          // What the session's own (sandboxed) Bash may do in the meantime: move the directory, link it to the hooks.
          NFS.renameSync(NPath.join(cwd, "src"), NPath.join(cwd, "src.moved"))
          NFS.symlinkSync(".git/hooks", NPath.join(cwd, "src"))
          yield* speculation.accept
          expect(NFS.existsSync(NPath.join(cwd, ".git", "hooks", "pre-commit"))).toBe(false)
        } finally {
          NFS.rmSync(base, { recursive: true, force: true })
        }
      }),
    60_000
  )

  it.scopedLive(
    "acceptEdits does not plant a .mcp.json server that starts at the next run",
    () =>
      Effect.gen(function*() {
        const { base, cwd } = fixture()
        try {
          const home = NPath.join(base, "home")
          const mark = NPath.join(base, "server-started")
          const mcp = { mcpServers: { planted: { command: "sh", args: ["-c", `echo started >> '${mark}'`] } } }
          const rules: ReadonlyArray<[string, PermissionContext.RuleBehavior]> = []
          const { outcome, speculation } = yield* speculate(
            {
              turns: [
                turn(use("w", "Write", { file_path: ".mcp.json", content: JSON.stringify(mcp) })),
                turn(say("Done."))
              ]
            },
            "acceptEdits",
            { cwd, rules }
          )
          yield* speculation.accept
          // The user had chosen "use this and all future MCP servers in this project" earlier.
          NFS.mkdirSync(home, { recursive: true })
          NFS.writeFileSync(
            NPath.join(home, ".switchyard.json"),
            JSON.stringify({ projects: { [cwd]: { mcpjsonChoices: { enableAll: true } } } })
          )
          yield* Effect.promise(() =>
            runCli(["tools", "list"], { cwd, env: { SWITCHYARD_HOME: home, MCP_TIMEOUT: "3000" }, timeoutMs: 60_000 })
          )
          expect(NFS.existsSync(mark), "the planted server started").toBe(false)
          expect(outcome.boundary, "a .mcp.json write is an edit boundary, as .claude's is").toMatchObject({
            type: "edit"
          })
        } finally {
          NFS.rmSync(base, { recursive: true, force: true })
        }
      }),
    60_000
  )
})
