/**
 * A project's `defaultMode: bypassPermissions` in a real terminal (tmux): the
 * CLI asks once, a "y" makes it take effect and is remembered for this project
 * and file content; a changed file asks again, and "n" leaves the prompts on.
 * Judged by the file the dispatched Write creates or not.
 */
import { describe, expect, it } from "@effect/vitest"
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
})
