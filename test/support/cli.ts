/**
 * Run the built `switchyard` binary as a child process and collect what it
 * printed and how it exited.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"

export const root = path.join(import.meta.dirname, "..", "..")
/** The `switchyard` command as installed: a launcher that starts Node from the CLI's start-up snapshot. */
export const bin = path.join(root, "packages/cli/bin/switchyard")

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly lines: ReadonlyArray<string>
}

export const runCli = (
  args: ReadonlyArray<string>,
  options: {
    readonly cwd?: string
    readonly input?: string
    readonly env?: Readonly<Record<string, string | undefined>>
    readonly timeoutMs?: number
    /** Another launcher than the built one. */
    readonly bin?: string
  } = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (v !== undefined) env[k] = v
    // Never touch the real ~/.switchyard from tests; one state directory per test worker, so that
    // files running side by side never see each other's sessions.
    env["SWITCHYARD_HOME"] ??= path.join(root, ".switchyard-test", `home-${process.env["VITEST_POOL_ID"] ?? "0"}`)
    // Nor the real ~/.claude/CLAUDE.md (memory files).
    env["CLAUDE_CONFIG_DIR"] ??= path.join(root, ".switchyard-test", "claude")
    delete env["FORCE_COLOR"]
    const child = spawn(options.bin ?? bin, args, {
      cwd: options.cwd ?? root,
      env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`switchyard ${args.join(" ")} timed out\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.timeoutMs ?? 120_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, lines: stdout.split("\n").filter((l) => l.trim() !== "") })
    })
    child.stdin.end(options.input ?? "")
  })

/** The JSON objects of a stream-json output. */
export const jsonLines = (result: CliResult): ReadonlyArray<Record<string, unknown>> =>
  result.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
