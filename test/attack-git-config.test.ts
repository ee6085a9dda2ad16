/**
 * A repository's own git configuration can make git's read-only commands run
 * a program (`core.fsmonitor` for `git status`, a `textconv` driver for `git
 * log -p`). Through the real CLI (`switchyard dispatch` with settings), judged
 * by effects: the program's mark, never the decision printed. The read-only
 * set and narrow allow rules (`Bash(git status:*)`) do not let such a
 * configuration run without asking; `bypassPermissions` skips the ask.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const TIMEOUT = 240_000

const hasGit = spawnSync("git", ["--version"]).status === 0
if (!hasGit) console.warn("attack-git-config.test.ts: git is not installed; skipped")

const git = (cwd: string, ...args: ReadonlyArray<string>) => {
  const result = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
}

const repository = (dir: string) => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "a.txt"), "a\n")
  git(dir, "init", "-q")
  git(dir, "add", "a.txt")
  git(dir, "commit", "-qm", "init")
  fs.writeFileSync(path.join(dir, "a.txt"), "changed\n")
}

interface Fixture {
  readonly root: string
  readonly project: string
  readonly marks: string
}

const makeFixture = (settings: Record<string, unknown>): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-gitconfig-")))
  const project = path.join(root, "project")
  const marks = path.join(root, "marks")
  fs.mkdirSync(marks)
  fs.mkdirSync(path.join(root, "home"))
  repository(project)
  fs.mkdirSync(path.join(project, ".claude"))
  fs.writeFileSync(path.join(project, ".claude", "settings.json"), JSON.stringify(settings))
  return { root, project, marks }
}

const dispatch = async (f: Fixture, mode: string, commands: ReadonlyArray<readonly [string, string]>) => {
  const result = await runCli(
    ["dispatch", "-", "--cwd", f.project, "--output-format", "stream-json", "--permission-mode", mode],
    {
      input: JSON.stringify(
        commands.map(([id, command]) => ({ type: "tool_use", id, name: "Bash", input: { command } }))
      ),
      env: { SWITCHYARD_HOME: path.join(f.root, "state"), HOME: path.join(f.root, "home") },
      timeoutMs: 120_000
    }
  )
  const results = jsonLines(result).filter((line) => line["type"] === "result")
  expect(results.length, result.stderr).toBe(commands.length)
  return new Map(results.map((line) => [String(line["tool_use_id"]), line]))
}

const marksOf = (f: Fixture) => fs.readdirSync(f.marks).sort()

describe.skipIf(!hasGit)("attack: a repository's git configuration that runs programs, through the CLI", () => {
  it("the project's own .git/config: read-only git asks (denied headless); bypassPermissions runs it", async () => {
    const f = makeFixture({})
    git(f.project, "config", "core.fsmonitor", `touch ${f.marks}/fsmonitor; false`)
    fs.writeFileSync(path.join(f.project, ".gitattributes"), "*.txt diff=shown\n")
    git(f.project, "config", "diff.shown.textconv", `sh -c 'touch ${f.marks}/textconv; cat "$0"'`)
    const results = await dispatch(f, "default", [["status", "git status"], ["log", "git log -p -1"]])
    expect(marksOf(f)).toEqual([])
    expect(String(results.get("status")?.["content"])).toContain("`core.fsmonitor`")
    expect(results.get("status")?.["status"]).toBe("denied")
    // The ask is the only thing in the way: bypassPermissions skips it, and the program runs.
    await dispatch(f, "bypassPermissions", [["status", "git status"]])
    expect(marksOf(f)).toEqual(["fsmonitor"])
  }, TIMEOUT)

  it("narrow allow rules do not let an embedded repository's configuration run (cd, -C)", async () => {
    const f = makeFixture({
      permissions: { allow: ["Bash(cd:*)", "Bash(git status:*)", "Bash(git -C lib status)", "Bash(git log:*)"] }
    })
    const lib = path.join(f.project, "lib")
    repository(lib)
    git(lib, "config", "core.fsmonitor", `touch ${f.marks}/lib; false`)
    const results = await dispatch(f, "default", [["cd", "cd lib && git status"], ["C", "git -C lib status"]])
    expect(marksOf(f)).toEqual([])
    expect(String(results.get("cd")?.["content"])).toContain(`${lib}/.git/config`)
    // The project's own plain repository: the rule allows, and git runs (a failed Bash call cancels its
    // siblings, so on its own).
    const plain = (await dispatch(f, "default", [["plain", "git log -1 --oneline"]])).get("plain")
    expect(plain?.["status"]).toBe("success")
    expect(String(plain?.["content"])).toContain("init")
  }, TIMEOUT)
})
