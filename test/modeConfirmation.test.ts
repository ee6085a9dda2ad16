/**
 * A project's `defaultMode: bypassPermissions` in a real terminal (tmux): the
 * CLI asks once, a "y" makes it take effect and is remembered for this project
 * and file content; a changed file asks again, and "n" leaves the prompts on.
 * Judged by the file the dispatched Write creates or not.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Tmux from "./support/tmux.js"

describe.skipIf(!Tmux.hasTmux)("bypassPermissions from a project file, in a terminal (tmux)", () => {
  it.scoped("is asked once, remembered, asked again after a change, and a no keeps the prompts", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-confirm-"))
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-home-"))
      const settings = path.join(dir, ".claude", "settings.json")
      fs.mkdirSync(path.dirname(settings))
      fs.writeFileSync(settings, JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }))
      let round = 0
      /** Dispatch a Write of `name` in a fresh terminal. */
      const start = (name: string) => {
        round += 1
        const calls = path.join(dir, `calls-${round}.json`)
        fs.writeFileSync(calls, JSON.stringify([{ type: "tool_use", id: "w", name: "Write", input: { file_path: name, content: "x\n" } }]))
        return Tmux.start(["dispatch", calls, "--cwd", dir], { SWITCHYARD_HOME: home })
      }
      /** Wait for the program to end; its exit status. */
      const exitCode = (terminal: Tmux.Terminal) =>
        Effect.map(terminal.exited(30_000), (exited) => (exited ? terminal.exitCode() : undefined))
      const first = yield* start("first.txt")
      yield* first.waitFor(/Trust this file for this project\? \[y\/N\]/)
      first.send("y", "Enter")
      expect(yield* exitCode(first)).toBe(0)
      expect(fs.existsSync(path.join(dir, "first.txt"))).toBe(true)

      // Remembered: no question this time.
      const second = yield* start("second.txt")
      expect(yield* exitCode(second)).toBe(0)
      expect(second.screen()).not.toContain("Trust this file")
      expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(true)

      // A changed file is asked again; "n" leaves bypassPermissions off, so the Write is denied.
      fs.writeFileSync(settings, JSON.stringify({ permissions: { defaultMode: "bypassPermissions", allow: [] } }))
      const third = yield* start("third.txt")
      yield* third.waitFor(/Trust this file for this project\? \[y\/N\]/)
      third.send("n", "Enter")
      expect(yield* exitCode(third)).toBe(1)
      expect(fs.existsSync(path.join(dir, "third.txt"))).toBe(false)
    }), { timeout: 180_000 })
})
