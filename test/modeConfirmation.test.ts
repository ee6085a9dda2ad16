/**
 * A project's `defaultMode: bypassPermissions` in a real terminal (tmux): the
 * CLI asks once, a "y" makes it take effect and is remembered for this project
 * and file content; a changed file asks again, and "n" leaves the prompts on.
 * Judged by the file the dispatched Write creates or not. The same for a
 * settings file a sandboxed command may have written (core's
 * `SandboxedRoots`), judged by its hook's mark.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SandboxedRoots from "@switchyard/core/SandboxedRoots"
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin } from "./support/cli.js"
import * as System from "./support/system.js"

const hasTmux = System.has("tmux")
const socket = `switchyard-confirm-${process.pid}`
const tmux = (...args: ReadonlyArray<string>) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" })
const capture = (session: string) => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)

const waitFor = (session: string, pattern: RegExp, timeoutMs = 30_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    let screen = ""
    while (Date.now() < deadline) {
      screen = capture(session)
      if (pattern.test(screen)) return screen
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`timed out waiting for ${pattern} in the terminal:\n${screen}`)
  })

const quote = (part: string) => `'${part.replace(/'/g, "'\\''")}'`

describe.skipIf(!hasTmux)("bypassPermissions from a project file, in a terminal (tmux)", () => {
  it.scoped(
    "is asked once, remembered, asked again after a change, and a no keeps the prompts",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-confirm-"))
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
        const settings = path.join(dir, ".claude", "settings.json")
        fs.mkdirSync(path.dirname(settings))
        fs.writeFileSync(settings, JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }))
        yield* Effect.addFinalizer(() => Effect.sync(() => spawnSync("tmux", ["-L", socket, "kill-server"])))
        let round = 0
        /** Dispatch a Write of `name` in a fresh terminal; returns the session name. */
        const start = (name: string) => {
          round += 1
          const calls = path.join(dir, `calls-${round}.json`)
          fs.writeFileSync(
            calls,
            JSON.stringify([{ type: "tool_use", id: "w", name: "Write", input: { file_path: name, content: "x\n" } }])
          )
          const command = [
            "env",
            `SWITCHYARD_HOME=${home}`,
            "NO_COLOR=1",
            bin,
            "dispatch",
            calls,
            "--cwd",
            dir
          ]
            .map(quote).join(" ")
          const session = `c${round}`
          tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", `${command}; echo EXIT=$?; sleep 60`)
          return session
        }
        const first = start("first.txt")
        yield* waitFor(first, /Trust this file for this project\? \[y\/N\]/)
        tmux("send-keys", "-t", first, "y", "Enter")
        yield* waitFor(first, /EXIT=0/)
        expect(fs.existsSync(path.join(dir, "first.txt"))).toBe(true)

        // Remembered: no question this time.
        const second = start("second.txt")
        const screen = yield* waitFor(second, /EXIT=\d/)
        expect(screen).not.toContain("Trust this file")
        expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(true)

        // A changed file is asked again; "n" leaves bypassPermissions off, so the Write is denied.
        fs.writeFileSync(settings, JSON.stringify({ permissions: { defaultMode: "bypassPermissions", allow: [] } }))
        const third = start("third.txt")
        yield* waitFor(third, /Trust this file for this project\? \[y\/N\]/)
        tmux("send-keys", "-t", third, "n", "Enter")
        const denied = yield* waitFor(third, /EXIT=\d/)
        expect(denied).toContain("EXIT=1")
        expect(fs.existsSync(path.join(dir, "third.txt"))).toBe(false)
      }),
    { timeout: 180_000 }
  )

  it.scoped(
    "a settings file a sandboxed command may have written is asked about once; a no leaves its hook out",
    () =>
      Effect.gen(function*() {
        const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-confirm-sandboxed-")))
        const home = path.join(root, "home")
        const sub = path.join(root, "project", "sub")
        const local = path.join(sub, ".claude", "settings.local.json")
        fs.mkdirSync(path.dirname(local), { recursive: true })
        fs.mkdirSync(home)
        // As the sandbox records it: commands could write in the project from the epoch on.
        yield* SandboxedRoots.record(home, [path.join(root, "project")], 0).pipe(Effect.provide(NodeContext.layer))
        const hook = (mark: string) =>
          JSON.stringify({
            hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `touch ${quote(mark)}` }] }] }
          })
        fs.writeFileSync(local, hook(path.join(root, "MARK-1")))
        yield* Effect.addFinalizer(() => Effect.sync(() => spawnSync("tmux", ["-L", socket, "kill-server"])))
        const calls = path.join(root, "calls.json")
        fs.writeFileSync(
          calls,
          JSON.stringify([{ type: "tool_use", id: "r", name: "Read", input: { file_path: local } }])
        )
        let round = 0
        const start = () => {
          round += 1
          const command = ["env", `SWITCHYARD_HOME=${home}`, "NO_COLOR=1", bin, "dispatch", calls, "--cwd", sub]
            .map(quote).join(" ")
          const session = `s${round}`
          tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", `${command}; echo EXIT=$?; sleep 60`)
          return session
        }
        const question = /may have written it .*use this file\? \[y\/N\]/s
        const first = start()
        yield* waitFor(first, question)
        tmux("send-keys", "-t", first, "y", "Enter")
        yield* waitFor(first, /EXIT=\d/)
        expect(fs.existsSync(path.join(root, "MARK-1"))).toBe(true)
        // Remembered by content: not asked again.
        const second = start()
        expect(yield* waitFor(second, /EXIT=\d/)).not.toMatch(question)
        // Another content is asked about again; "n" leaves the file out, and its hook with it.
        fs.writeFileSync(local, hook(path.join(root, "MARK-2")))
        const third = start()
        yield* waitFor(third, question)
        tmux("send-keys", "-t", third, "n", "Enter")
        const screen = yield* waitFor(third, /EXIT=\d/)
        expect(screen).toContain("not confirmed, so it is ignored")
        expect(fs.existsSync(path.join(root, "MARK-2"))).toBe(false)
        fs.rmSync(root, { recursive: true, force: true })
      }),
    { timeout: 180_000 }
  )
})
