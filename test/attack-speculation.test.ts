/**
 * Adversarial review of speculation (issue 12, SPEC §4.12): what a speculated
 * run may do must be no more than the normal chain lets it do, since accept
 * applies it without asking. Judged by the effect — the real tree after
 * accept, and whether a secret reached the messages — not by the verdict.
 */
import type { PermissionContext, ReplayModel, Speculation } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import { spawnSync } from "node:child_process"
import * as NFS from "node:fs"
import * as Net from "node:net"
import * as NPath from "node:path"
import { tempDir, treeHash, project, use, say, turn, environment, speculate } from "./support/speculation.js"

const SECRET = "key-secret-91c2"
const OUTSIDE_SECRET = "outside-secret-0b9e"

/** A project with a denied `secrets/` directory and links into it. */
const guarded = () => {
  const root = project()
  NFS.mkdirSync(NPath.join(root, "secrets"))
  NFS.writeFileSync(NPath.join(root, "secrets", "key.txt"), `${SECRET}\n`)
  NFS.symlinkSync(NPath.join(root, "secrets"), NPath.join(root, "src", "secrets-link"))
  NFS.symlinkSync("../secrets/key.txt", NPath.join(root, "src", "key-link"))
  return root
}

const messagesText = (speculation: Speculation.Speculation) =>
  Effect.map(speculation.messages, (messages) => JSON.stringify(messages))

describe("attack: speculation does no more than the normal chain", () => {
  it.scopedLive("deny rules judge a link by its target: reads, searches and edits through links to a denied file", () =>
    Effect.gen(function*() {
      const cwd = guarded()
      const rules: ReadonlyArray<[string, PermissionContext.RuleBehavior]> = [["Read(./secrets/**)", "deny"], [
        "Edit(./secrets/**)",
        "deny"
      ]]
      const transcript: ReplayModel.Transcript = {
        turns: [
          turn(
            use("r1", "Read", { file_path: "src/secrets-link/key.txt" }),
            use("r2", "Read", { file_path: "src/key-link" }),
            use("g1", "Grep", { pattern: "secret", path: "src/secrets-link", output_mode: "content" })
          ),
          turn(use("e1", "Edit", { file_path: "src/key-link", old_string: "key", new_string: "HACKED" })),
          turn(use("w1", "Write", { file_path: "src/secrets-link/planted.txt", content: "HACKED\n" })),
          turn(say("Done."))
        ]
      }
      for (const mode of ["acceptEdits", "bypassPermissions"] as const) {
        const { results, speculation } = yield* speculate(transcript, mode, { rules, cwd })
        expect(yield* messagesText(speculation)).not.toContain(SECRET)
        for (const id of ["r1", "r2", "e1", "w1"]) expect(results.get(id)?.is_error, `${mode} ${id}`).toBe(true)
        yield* speculation.accept
        expect(NFS.readFileSync(NPath.join(cwd, "secrets", "key.txt"), "utf8")).toBe(`${SECRET}\n`)
        expect(NFS.existsSync(NPath.join(cwd, "secrets", "planted.txt"))).toBe(false)
      }
    }).pipe(Effect.provide(environment({ turns: [] }))))

  it.scopedLive("acceptEdits and auto never write .git, .claude or .switchyard through speculation: boundary edit, accept writes nothing there", () =>
    Effect.gen(function*() {
      const cases = FastCheck.sample(
        FastCheck.record({
          dir: FastCheck.constantFrom(".git", ".claude", ".switchyard", "src/.git"),
          name: FastCheck.constantFrom("settings.json", "hooks/pre-commit", "config", "settings.local.json"),
          mode: FastCheck.constantFrom("acceptEdits" as const, "auto" as const)
        }),
        { numRuns: 6, seed: 12 }
      )
      for (const { dir, mode, name } of cases) {
        const cwd = project()
        const file = `${dir}/${name}`
        const { outcome, speculation } = yield* speculate(
          {
            turns: [
              turn(use("w", "Write", { file_path: file, content: "{\"permissions\":{\"allow\":[\"Bash\"]}}\n" })),
              turn(say("Done."))
            ]
          },
          mode,
          { cwd }
        )
        expect(outcome.boundary, `${mode} ${file}`).toMatchObject({ type: "edit", toolName: "Write" })
        yield* speculation.accept
        expect(NFS.existsSync(NPath.join(cwd, file)), `${mode} ${file}`).toBe(false)
      }
    }))

  it.scopedLive("an ask rule for an edit stops the speculation (boundary permission) in every editing mode", () =>
    Effect.gen(function*() {
      for (const mode of ["acceptEdits", "auto", "bypassPermissions"] as const) {
        const cwd = project()
        const { outcome, results, speculation } = yield* speculate(
          {
            turns: [
              turn(use("r", "Read", { file_path: "notes.txt" })),
              turn(use("w", "Write", { file_path: "notes.txt", content: "changed\n" })),
              turn(say("Done."))
            ]
          },
          mode,
          { cwd, rules: [["Edit(./notes.txt)", "ask"]] }
        )
        expect(outcome.boundary, `${mode} ${JSON.stringify([...results.values()])}`).toMatchObject({
          type: "permission",
          toolName: "Write"
        })
        yield* speculation.accept
        expect(NFS.readFileSync(NPath.join(cwd, "notes.txt"), "utf8")).toBe("remember the milk\n")
      }
    }))

  it.scopedLive("a read outside the working directory stops the speculation before its content reaches the model", () =>
    Effect.gen(function*() {
      const outside = tempDir("spec-outside-")
      NFS.writeFileSync(NPath.join(outside, "data.txt"), `${OUTSIDE_SECRET}\n`)
      const calls = [
        use("r", "Read", { file_path: NPath.join(outside, "data.txt") }),
        use("g", "Grep", { pattern: "secret", path: outside, output_mode: "content" }),
        use("b", "Bash", { command: `cat ${NPath.join(outside, "data.txt")}` })
      ]
      for (const mode of ["default", "acceptEdits", "plan"] as const) {
        for (const call of calls) {
          const { outcome, speculation } = yield* speculate({ turns: [turn(call), turn(say("Done."))] }, mode)
          expect(yield* messagesText(speculation), `${mode} ${call.block.name}`).not.toContain(OUTSIDE_SECRET)
          expect(outcome.boundary.type, `${mode} ${call.block.name}`).not.toBe("complete")
        }
      }
      // bypassPermissions reads outside, as the normal chain does: the oracle sees the content.
      const { speculation } = yield* speculate({ turns: [turn(calls[0]!), turn(say("Done."))] }, "bypassPermissions")
      expect(yield* messagesText(speculation)).toContain(OUTSIDE_SECRET)
    }))

  it.scopedLive("git status on the real tree leaves .git byte-identical after reject, even with a stale index", () =>
    Effect.gen(function*() {
      const cwd = project()
      const git = (...args: ReadonlyArray<string>) =>
        spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" })
      git("init", "-q")
      git("add", "-A")
      git("commit", "-qm", "init")
      // A stale stat cache: git status would refresh it and rewrite .git/index.
      const old = new Date(Date.now() - 100_000)
      NFS.utimesSync(NPath.join(cwd, "notes.txt"), old, old)
      const before = treeHash(NPath.join(cwd, ".git"))
      // The command runs in the sandbox with the working tree read-only, so no git setting is needed: `git diff`
      // and `git describe --dirty`, which refresh the stat cache whatever GIT_OPTIONAL_LOCKS says, cannot either.
      const commands = [
        "git status",
        "git status --short",
        "git diff",
        "git diff --stat",
        "git describe --always --dirty",
        "git log --oneline",
        "git branch --list"
      ]
      for (const command of commands) {
        const { outcome, results, speculation } = yield* speculate(
          { turns: [turn(use("b", "Bash", { command })), turn(say("Done."))] },
          "default",
          { cwd }
        )
        expect(outcome.boundary.type, command).toBe("complete")
        expect(results.get("b")?.is_error, command).not.toBe(true)
        yield* speculation.reject
        expect(treeHash(NPath.join(cwd, ".git")), command).toBe(before)
      }
    }))

  it.scopedLive("a read-only-looking Bash line that talks to a socket (/dev/tcp) stops the speculation: the server sees nothing", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const server = Net.createServer((socket) => {
        seen.push("connection")
        socket.on("data", (data) => seen.push(data.toString("utf8")))
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => server.close())
      )
      const port = (server.address() as Net.AddressInfo).port
      const commands = [
        `cat < /dev/tcp/127.0.0.1/${port}`,
        `printf 'GET /exfil HTTP/1.0\\r\\n\\r\\n' < /dev/tcp/127.0.0.1/${port} 1>&0`
      ]
      for (const mode of ["default", "acceptEdits", "plan"] as const) {
        for (const command of commands) {
          const { outcome } = yield* speculate(
            { turns: [turn(use("b", "Bash", { command })), turn(say("Done."))] },
            mode
          )
          expect(outcome.boundary.type, `${mode} ${command}`).toBe("bash")
        }
      }
      expect(seen).toEqual([])
    }))
})
