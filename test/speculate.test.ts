/**
 * `switchyard speculate` as a child process (SPEC §4.12): every row of the
 * permission table with a replayed suggestion, the JSON report's exact
 * names, the text report (boundary, unified diff, time saved), `--accept`,
 * and the exit codes (0 whenever it ran, 2 for bad usage).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"
import { runCli } from "./support/cli.js"

const tempDir = (prefix: string) => NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), prefix)))

const project = () => {
  const root = tempDir("speculate-cli-")
  NFS.writeFileSync(NPath.join(root, "greet.ts"), "export const greet = () => \"hello\"\n")
  NFS.writeFileSync(NPath.join(root, "notes.txt"), "remember the milk\n")
  return root
}

type Block = Record<string, unknown>
const use = (id: string, name: string, input: Record<string, unknown>): Block => ({
  block: { type: "tool_use", id, name, input }
})
const say = (text: string): Block => ({ block: { type: "text", text } })

/** Write a transcript (one tool turn per entry, then a closing text) and run speculate on it. */
const speculate = async (
  cwd: string,
  turns: ReadonlyArray<ReadonlyArray<Block>>,
  args: ReadonlyArray<string> = [],
  extra: Record<string, unknown> = {}
) => {
  const transcript = NPath.join(tempDir("speculate-transcript-"), "t.json")
  NFS.writeFileSync(transcript, JSON.stringify({ turns: turns.map((blocks) => ({ blocks })), ...extra }))
  const result = await runCli([
    "speculate",
    "Do the task",
    "--replay",
    transcript,
    "--cwd",
    cwd,
    "--output-format",
    "json",
    ...args
  ])
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
  return JSON.parse(result.stdout) as {
    readonly type: string
    readonly boundary: { readonly type: string; readonly tool_name?: string; readonly input?: Record<string, unknown> }
    readonly written_paths: ReadonlyArray<string>
    readonly accepted: boolean
    readonly conflicts: ReadonlyArray<string>
    readonly time_saved_ms: number
    readonly messages: ReadonlyArray<
      { readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }
    >
  }
}

const snapshot = (root: string) =>
  Object.fromEntries(
    NFS.readdirSync(root, { recursive: true, encoding: "utf8" }).sort().map((p) => {
      const abs = NPath.join(root, p)
      return [p, NFS.statSync(abs).isDirectory() ? "<dir>" : NFS.readFileSync(abs, "utf8")]
    })
  )

// Each run is a cold start of the CLI; on a loaded machine several take a while.
const SLOW = 180_000

describe("switchyard speculate (SPEC §4.12)", () => {
  it("a deny rule denies the call and the speculation goes on; the JSON has exactly the fixed names", async () => {
    const cwd = project()
    const report = await speculate(cwd, [[use("b1", "Bash", { command: "rm notes.txt" })], [say("Could not.")]], [
      "--permission-mode",
      "bypassPermissions",
      "--disallowed-tools",
      "Bash(rm *)"
    ])
    expect(Object.keys(report).sort()).toEqual(
      ["accepted", "boundary", "conflicts", "messages", "time_saved_ms", "type", "written_paths"]
    )
    expect(report).toMatchObject({
      type: "speculation",
      boundary: { type: "complete" },
      written_paths: [],
      accepted: false,
      conflicts: []
    })
    expect(typeof report.time_saved_ms).toBe("number")
    // The denied call is not injected; the final answer is.
    expect(JSON.stringify(report.messages)).not.toContain("tool_use")
    expect(report.messages.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "Could not." }] })
    expect(NFS.existsSync(NPath.join(cwd, "notes.txt"))).toBe(true)
  }, SLOW)

  it("a write outside cwd is denied and the speculation goes on", async () => {
    const cwd = project()
    const outside = tempDir("speculate-outside-")
    const report = await speculate(cwd, [
      [use("w1", "Write", { file_path: NPath.join(outside, "x.txt"), content: "x" })],
      [say("Refused.")]
    ], ["--permission-mode", "acceptEdits", "--accept"])
    expect(report.boundary.type).toBe("complete")
    expect(report.written_paths).toEqual([])
    expect(NFS.readdirSync(outside)).toEqual([])
  }, SLOW)

  it("a write in acceptEdits lands in the overlay: previewed without --accept, applied with it", async () => {
    const turns = [
      [use("w1", "Write", { file_path: "added.txt", content: "new\n" })],
      [use("r1", "Read", { file_path: "added.txt" })],
      [say("Added.")]
    ]
    const cwd = project()
    const before = snapshot(cwd)
    const preview = await speculate(cwd, turns, ["--permission-mode", "acceptEdits"])
    expect(preview).toMatchObject({ boundary: { type: "complete" }, written_paths: ["added.txt"], accepted: false })
    expect(snapshot(cwd)).toEqual(before)
    const applied = await speculate(cwd, turns, ["--permission-mode", "acceptEdits", "--accept"])
    expect(applied).toMatchObject({
      boundary: { type: "complete" },
      written_paths: ["added.txt"],
      accepted: true,
      conflicts: []
    })
    expect(snapshot(cwd)).toEqual({ ...before, "added.txt": "new\n" })
    expect(JSON.stringify(applied.messages)).toContain("new")
  }, SLOW)

  it("a write in the default mode is boundary edit, with the tool and its input", async () => {
    const cwd = project()
    const report = await speculate(cwd, [[use("w1", "Write", { file_path: "x.txt", content: "x" })], [
      say("unreachable")
    ]])
    expect(report.boundary).toEqual({
      type: "edit",
      tool_name: "Write",
      input: { file_path: NPath.join(cwd, "x.txt"), content: "x" }
    })
    expect(report.messages.map((m) => m.role)).toEqual(["user"])
  }, SLOW)

  it("an explicit ask rule is boundary permission", async () => {
    const cwd = project()
    const settings = NPath.join(cwd, "ask.json")
    NFS.writeFileSync(settings, JSON.stringify({ permissions: { ask: ["Grep"] } }))
    const report = await speculate(cwd, [[use("g1", "Grep", { pattern: "milk" })], [say("unreachable")]], [
      "--settings",
      settings
    ])
    expect(report.boundary).toMatchObject({ type: "permission", tool_name: "Grep" })
  }, SLOW)

  it(
    "read-only Bash runs while the overlay is empty; after a write it is boundary bash; other Bash is boundary bash",
    async () => {
      const cwd = project()
      const readOnly = await speculate(cwd, [[use("b1", "Bash", { command: "cat notes.txt" })], [say("Milk.")]])
      expect(readOnly.boundary.type).toBe("complete")
      expect(JSON.stringify(readOnly.messages)).toContain("remember the milk")
      const afterWrite = await speculate(cwd, [
        [use("w1", "Write", { file_path: "fresh.txt", content: "x" })],
        [use("b1", "Bash", { command: "cat fresh.txt" })],
        [say("unreachable")]
      ], ["--permission-mode", "acceptEdits"])
      expect(afterWrite.boundary).toMatchObject({
        type: "bash",
        tool_name: "Bash",
        input: { command: "cat fresh.txt" }
      })
      expect(afterWrite.written_paths).toEqual(["fresh.txt"])
      const other = await speculate(cwd, [[use("b1", "Bash", { command: "touch made" })], [say("unreachable")]], [
        "--permission-mode",
        "bypassPermissions"
      ])
      expect(other.boundary).toMatchObject({ type: "bash", tool_name: "Bash" })
      expect(NFS.existsSync(NPath.join(cwd, "made"))).toBe(false)
    },
    SLOW
  )

  it("any other tool is boundary denied_tool; 20 turns is max_turns", async () => {
    const cwd = project()
    const web = await speculate(cwd, [[use("f1", "WebFetch", { url: "http://127.0.0.1:9/", prompt: "x" })], [
      say("unreachable")
    ]], [
      "--permission-mode",
      "bypassPermissions"
    ])
    expect(web.boundary).toMatchObject({ type: "denied_tool", tool_name: "WebFetch" })
    const many = Array.from({ length: 21 }, (_, i) => [use(`r${i}`, "Read", { file_path: "notes.txt" })])
    const long = await speculate(cwd, many)
    expect(long.boundary).toEqual({ type: "max_turns" })
  }, SLOW)

  it(
    "text output shows the boundary, a unified diff and the time saved; suggestions never change the result",
    async () => {
      const cwd = project()
      const transcript = NPath.join(tempDir("speculate-text-"), "t.json")
      NFS.writeFileSync(
        transcript,
        JSON.stringify({
          turns: [
            { blocks: [use("r1", "Read", { file_path: "greet.ts" })] },
            { blocks: [use("e1", "Edit", { file_path: "greet.ts", old_string: "\"hello\"", new_string: "\"hi\"" })] },
            { blocks: [say("Changed.")] }
          ],
          suggestions: ["now run the tests"]
        })
      )
      const result = await runCli([
        "speculate",
        "Change the greeting",
        "--replay",
        transcript,
        "--cwd",
        cwd,
        "--permission-mode",
        "acceptEdits"
      ])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("Speculation complete")
      expect(result.stdout).toContain("--- a/greet.ts\n+++ b/greet.ts")
      expect(result.stdout).toContain("-export const greet = () => \"hello\"\n+export const greet = () => \"hi\"")
      expect(result.stdout).toMatch(/Time saved: \d+ ms/)
      expect(result.stdout).toContain("Next suggestion: now run the tests")
      expect(NFS.readFileSync(NPath.join(cwd, "greet.ts"), "utf8")).toContain("hello")
    },
    SLOW
  )

  it("bad usage exits 2; a transcript that breaks mid-way exits 1", async () => {
    const cwd = project()
    expect((await runCli(["speculate", "--cwd", cwd])).code).toBe(2)
    const missing = await runCli(["speculate", "x", "--replay", NPath.join(cwd, "nope.json"), "--cwd", cwd])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("Transcript not found")
    expect((await runCli(["speculate", "x", "--output-format", "yaml", "--cwd", cwd])).code).toBe(2)
    const broken = NPath.join(cwd, "broken.json")
    NFS.writeFileSync(broken, JSON.stringify({ turns: [{ blocks: [use("r1", "Read", { file_path: "notes.txt" })] }] }))
    const failed = await runCli(["speculate", "x", "--replay", broken, "--cwd", cwd, "--output-format", "json"])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain("could not run")
  }, SLOW)

  it(
    "demo: the suggested follow-up is speculated while the summary prints, and accepting it is near-instant",
    async () => {
      const result = await runCli(["demo", "--keep"], { env: { ANTHROPIC_API_KEY: undefined }, timeoutMs: 120_000 })
      expect(result.code).toBe(0)
      const summaryAt = result.stdout.indexOf("Summary")
      const suggestedAt = result.stdout.indexOf("Suggested next: \"Add a CHANGELOG.md entry")
      expect(suggestedAt).toBeGreaterThan(-1)
      // The speculation starts before the summary and is accepted after it.
      expect(suggestedAt).toBeLessThan(summaryAt)
      expect(result.stdout).toMatch(
        /Speculation complete[\s\S]*Accepted in \d+ ms: CHANGELOG\.md written; \d+ ms of agent work saved/
      )
      const kept = /kept at (.+)$/m.exec(result.stdout)?.[1]
      expect(fs.readFileSync(NPath.join(kept!, "CHANGELOG.md"), "utf8")).toContain("Discounts round to whole cents")
      fs.rmSync(NPath.dirname(kept!), { recursive: true, force: true })
    },
    SLOW
  )
})
