/**
 * Memory files (issue 24, item 2), judged by what the Messages server
 * received: CLAUDE.md and CLAUDE.local.md from the repository root down to
 * the working directory (outside a repository: the working directory and its
 * parents), the user's ~/.claude/CLAUDE.md ($CLAUDE_CONFIG_DIR) and
 * $SWITCHYARD_HOME/CLAUDE.md, `@path` imports, sent as Claude Code sends them
 * (a system-reminder block at the start of the first user message of every
 * request) and never recorded in the transcript.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tree = (files: Record<string, string>) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-memory-")))
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), content)
  }
  return dir
}

const text = (t: string) => Server.message({ blocks: [{ block: { type: "text", text: t } }] })
type Block = { type: string; text?: string }
type Body = { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Block> }> }
const firstUser = (server: Server.MessagesServer, i: number) => (server.requests[i]!.body as Body).messages[0]!

describe("memory files (issue 24, 2)", () => {
  it.scoped("in a repository: the user's files, then the root's down to the working directory, imports after their file", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const root = tree({
        "CLAUDE.md": "Above the repository: never read.\n",
        "repo/.git/HEAD": "ref: refs/heads/main\n",
        "repo/CLAUDE.md": "Use tabs. See @docs/style.md for more.\n",
        "repo/docs/style.md": "Prefer small functions. @../CLAUDE.md\n",
        "repo/pkg/CLAUDE.local.md": "My own notes.\n",
        "repo/pkg/.claude/CLAUDE.md": "The package's rules.\n",
        "claude/CLAUDE.md": "The user's rule.\n",
        "home/CLAUDE.md": "Switchyard's user rule.\n",
        "repo/pkg/a.txt": "alpha\n"
      })
      const cwd = path.join(root, "repo", "pkg")
      server.enqueue(
        Server.message({
          blocks: [{ block: { type: "tool_use", id: "toolu_r", name: "Read", input: { file_path: "a.txt" } } }]
        }),
        text("Done.")
      )
      const result = yield* Effect.promise(() =>
        runCli(["-p", "what now?", "--output-format", "json"], {
          cwd,
          env: {
            ANTHROPIC_API_KEY: "k",
            ANTHROPIC_BASE_URL: server.url,
            SWITCHYARD_HOME: path.join(root, "home"),
            CLAUDE_CONFIG_DIR: path.join(root, "claude")
          }
        })
      )
      expect(result.code).toBe(0)
      const first = firstUser(server, 0)
      expect(first.role).toBe("user")
      expect(first.content).toHaveLength(2)
      expect(first.content[1]).toEqual({ type: "text", text: "what now?" })
      const reminder = first.content[0]!.text!
      const contents = (file: string, kind: string) => `Contents of ${file} (${kind}):\n\n`
      const project = "project instructions, checked into the codebase"
      expect(reminder).toBe([
        "<system-reminder>",
        "As you answer the user's questions, you can use the following context:",
        "# claudeMd",
        "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These " +
        "instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n" +
        [
          contents(path.join(root, "claude/CLAUDE.md"), "user's private global instructions for all projects") +
          "The user's rule.\n",
          contents(path.join(root, "home/CLAUDE.md"), "user's private global instructions for all projects") +
          "Switchyard's user rule.\n",
          contents(path.join(root, "repo/CLAUDE.md"), project) + "Use tabs. See @docs/style.md for more.\n",
          // Imported by the file above; the import back to it is not read twice.
          contents(path.join(root, "repo/docs/style.md"), project) + "Prefer small functions. @../CLAUDE.md\n",
          contents(path.join(root, "repo/pkg/.claude/CLAUDE.md"), project) + "The package's rules.\n",
          contents(path.join(root, "repo/pkg/CLAUDE.local.md"), "user's private project instructions, not checked in") +
          "My own notes.\n"
        ].join("\n\n"),
        "# currentDate",
        `Today's date is ${new Date().toISOString().slice(0, 10)}.`,
        "",
        "      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context " +
        "unless it is highly relevant to your task.",
        "</system-reminder>"
      ].join("\n"))
      expect(reminder).not.toContain("never read")
      // Every request starts so; the transcript keeps the conversation without it.
      expect(firstUser(server, 1).content[0]!.text).toBe(reminder)
      const sessionId = JSON.parse(result.stdout).session_id as string
      const projects = path.join(root, "home", "projects")
      const transcript = fs.readFileSync(
        path.join(projects, fs.readdirSync(projects)[0]!, `${sessionId}.jsonl`),
        "utf8"
      )
      expect(transcript).toContain("what now?")
      expect(transcript).not.toContain("system-reminder")
    }))

  it.scoped("outside a repository: the working directory and its parents; without memory files nothing is added", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const root = tree({ "a/CLAUDE.md": "From the parent.\n", "a/b/CLAUDE.md": "From here.\n", "empty/x": "" })
      const env = {
        ANTHROPIC_API_KEY: "k",
        ANTHROPIC_BASE_URL: server.url,
        SWITCHYARD_HOME: path.join(root, "nohome"),
        CLAUDE_CONFIG_DIR: path.join(root, "noclaude")
      }
      server.enqueue(text("ok"), text("ok"))
      yield* Effect.promise(() => runCli(["-p", "hi"], { cwd: path.join(root, "a", "b"), env }))
      const reminder = firstUser(server, 0).content[0]!.text!
      expect(reminder.indexOf("From the parent.")).toBeGreaterThan(-1)
      expect(reminder.indexOf("From the parent.")).toBeLessThan(reminder.indexOf("From here."))
      yield* Effect.promise(() => runCli(["-p", "hi"], { cwd: path.join(root, "empty"), env }))
      expect(firstUser(server, 1).content).toEqual([{ type: "text", text: "hi" }])
    }))
})
