/**
 * Drive `switchyard` in a real terminal: a tmux server of our own, a session
 * running the built binary, keys sent and the pane read back.
 */
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { bin, root } from "./cli.js"
import * as System from "./system.js"

export const hasTmux = System.has("tmux")

export interface Terminal {
  /** Send keys (tmux key names, or literal text with `literal`). */
  readonly send: (...keys: ReadonlyArray<string>) => void
  readonly type: (text: string) => void
  readonly screen: () => string
  /** Poll the pane until `pattern` shows up (or fail with what the pane shows). */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Effect.Effect<string>
  /** Whether the session (the program) is still running. */
  readonly alive: () => boolean
  /** Wait until the program has exited. */
  readonly exited: (timeoutMs?: number) => Effect.Effect<boolean>
  /** The program's exit status, once it has exited. */
  readonly exitCode: () => number | undefined
}

let counter = 0

const quote = (part: string) => `'${part.replace(/'/g, "'\\''")}'`

/**
 * Start `switchyard ...args` in a terminal (160×50 unless `size` says); the tmux server is killed when the scope closes.
 * Next-prompt suggestions are off unless `env` turns them on: each would be one more request to the
 * scripted Messages server (their own tmux test is `suggestion.interactive.test.ts`).
 */
export const start = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>,
  size: { readonly width: number; readonly height: number } = { width: 160, height: 50 }
): Effect.Effect<Terminal, never, Scope.Scope> =>
  Effect.gen(function*() {
    const socket = `switchyard-test-${process.pid}-${++counter}`
    const tmux = (...a: ReadonlyArray<string>) => execFileSync("tmux", ["-L", socket, ...a], { encoding: "utf8" })
    const session = "sy"
    const command = [
      "env",
      ...Object.entries({
        NO_COLOR: "1",
        SWITCHYARD_SUGGESTIONS: "0",
        // Never the real ~/.claude/CLAUDE.md.
        CLAUDE_CONFIG_DIR: path.join(root, ".switchyard-test", "claude"),
        ...env
      }).map(([k, v]) => `${k}=${v}`),
      bin,
      ...args
    ]
      .map(quote)
      .join(" ")
    // Keep the pane after the program exits, to read its last words: set in the same tmux call,
    // so even a program that dies at once leaves its pane.
    tmux(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      String(size.width),
      "-y",
      String(size.height),
      command,
      ";",
      "set-option",
      "-t",
      session,
      "remain-on-exit",
      "on"
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => spawnSync("tmux", ["-L", socket, "kill-server"])))
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session)
    const alive = () => tmux("display-message", "-p", "-t", session, "#{pane_dead}").trim() !== "1"
    return {
      send: (...keys) => void tmux("send-keys", "-t", session, ...keys),
      type: (text) => void tmux("send-keys", "-t", session, "-l", text),
      screen,
      alive,
      waitFor: (pattern, timeoutMs = 30_000) =>
        Effect.promise(async () => {
          const deadline = Date.now() + timeoutMs
          let shown = ""
          while (Date.now() < deadline) {
            const dead = !alive()
            shown = screen()
            if (pattern.test(shown)) return shown
            if (dead) throw new Error(`switchyard exited before ${pattern} showed up:\n${shown}`)
            await new Promise((r) => setTimeout(r, 100))
          }
          throw new Error(`timed out waiting for ${pattern} in the terminal:\n${shown}`)
        }),
      exitCode: () => {
        const status = tmux("display-message", "-p", "-t", session, "#{pane_dead}:#{pane_dead_status}").trim().split(
          ":"
        )
        // Empty when a signal ended it.
        return status[0] === "1" && status[1] !== "" ? Number(status[1]) : undefined
      },
      exited: (timeoutMs = 15_000) =>
        Effect.promise(async () => {
          const deadline = Date.now() + timeoutMs
          while (Date.now() < deadline && alive()) await new Promise((r) => setTimeout(r, 100))
          return !alive()
        })
    }
  })
