/**
 * Start-up where users feel it (issue 25): the three commands a script, a
 * hook or a CI step calls again and again, each as a fresh `switchyard`
 * process in a project with a `.claude/settings.json` and a `CLAUDE.md`, side
 * by side with a bare `node -e 0`, interleaved:
 *
 * - `switchyard -p hi` to its answer, against a local Messages API
 *   (test/support/messagesServer.ts, through `ANTHROPIC_BASE_URL`);
 * - `switchyard tools list`;
 * - `switchyard dispatch call.json` with one `Read` call;
 * - `switchyard dispatch bash.json` with one `Bash` call (`ls`), which loads
 *   and compiles the shell grammar (tree-sitter-bash's WebAssembly).
 *
 * Peak RSS is each process's own `process.resourceUsage().maxRSS`, reported
 * at exit by a preload in separate, untimed runs (so the preload costs the
 * timed rounds nothing).
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import * as Server from "../test/support/messagesServer.js"
import { compare, note, ratio, recordStats, stats, type Stats } from "./harness.js"

const SUITE = "startup"
const bin = path.join(import.meta.dirname, "..", "packages/cli/bin/switchyard.js")
const run = promisify(execFile)

/** A project like a real one: settings with rules and a hook-free env, a CLAUDE.md, a file to read. */
const makeProject = () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-bench-startup-")))
  const project = path.join(root, "project")
  const home = path.join(root, "home")
  fs.mkdirSync(path.join(project, ".claude"), { recursive: true })
  fs.mkdirSync(home)
  fs.writeFileSync(
    path.join(project, ".claude", "settings.json"),
    JSON.stringify(
      {
        permissions: {
          allow: ["Read", "Bash(ls)", "Bash(git status)", "Bash(npm test *)"],
          deny: ["WebFetch", "Bash(rm -rf *)"]
        },
        env: { BENCH: "1" }
      },
      null,
      2
    )
  )
  fs.writeFileSync(
    path.join(project, "CLAUDE.md"),
    "# Project\n\nRun `npm test` before committing. Two-space indent.\n"
  )
  fs.writeFileSync(path.join(project, "notes.txt"), "alpha\nbeta\n")
  fs.writeFileSync(
    path.join(root, "call.json"),
    JSON.stringify([{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "notes.txt" } }])
  )
  fs.writeFileSync(
    path.join(root, "bash.json"),
    JSON.stringify([{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }])
  )
  return { root, project, home, call: path.join(root, "call.json"), bash: path.join(root, "bash.json") }
}

/** A preload that writes the process's peak RSS (KiB) to $SWITCHYARD_BENCH_RSS at exit. */
const rssPreload = "data:text/javascript," + encodeURIComponent(
  "import * as fs from 'node:fs';" +
    "process.on('exit', () => " +
    "fs.writeFileSync(process.env.SWITCHYARD_BENCH_RSS, String(process.resourceUsage().maxRSS)))"
)

/** Peak RSS (KiB) of each command over three untimed runs. */
const peakRss = async (
  dirs: ReturnType<typeof makeProject>,
  env: Readonly<Record<string, string>>,
  answer: () => void
): Promise<Record<"node" | "print" | "list" | "dispatch" | "bash", Stats>> => {
  const file = path.join(dirs.root, "rss")
  const measure = async (args: ReadonlyArray<string>) => {
    await run(process.execPath, ["--import", rssPreload, ...args], {
      cwd: dirs.project,
      env: { ...env, SWITCHYARD_BENCH_RSS: file },
      encoding: "utf8"
    })
    return Number(fs.readFileSync(file, "utf8"))
  }
  const samples = {
    node: [] as Array<number>,
    print: [] as Array<number>,
    list: [] as Array<number>,
    dispatch: [] as Array<number>,
    bash: [] as Array<number>
  }
  for (let i = 0; i < 3; i++) {
    samples.node.push(await measure(["-e", "0"]))
    answer()
    samples.print.push(await measure([bin, "-p", "hi"]))
    samples.list.push(await measure([bin, "tools", "list"]))
    samples.dispatch.push(await measure([bin, "dispatch", dirs.call]))
    samples.bash.push(await measure([bin, "dispatch", dirs.bash]))
  }
  return {
    node: stats(samples.node),
    print: stats(samples.print),
    list: stats(samples.list),
    dispatch: stats(samples.dispatch),
    bash: stats(samples.bash)
  }
}

export const run_ = async () => {
  console.log(`\n## ${SUITE}`)
  if (!fs.existsSync(path.join(import.meta.dirname, "..", "packages/cli/bundle/front.js"))) {
    throw new Error("no CLI bundle: run `npm run build` first")
  }
  const dirs = makeProject()
  await Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const server = yield* Server.start()
      const env = {
        PATH: process.env["PATH"] ?? "",
        HOME: dirs.home,
        SWITCHYARD_HOME: path.join(dirs.home, ".switchyard"),
        ANTHROPIC_API_KEY: "sk-bench",
        ANTHROPIC_BASE_URL: server.url
      }
      const node = (args: ReadonlyArray<string>, check?: (stdout: string) => boolean) => async () => {
        const { stdout } = await run(process.execPath, args, { cwd: dirs.project, env, encoding: "utf8" })
        if (check !== undefined && !check(stdout)) throw new Error(`${args.join(" ")}: unexpected output ${stdout}`)
      }
      const answer = () =>
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
      const print = node([bin, "-p", "hi"], (out) => out.includes("Hello there."))
      const candidates = {
        node: node(["-e", "0"]),
        print: async () => {
          answer()
          await print()
        },
        list: node([bin, "tools", "list"], (out) => out.includes("Read")),
        dispatch: node([bin, "dispatch", dirs.call], (out) => out.includes("success")),
        bash: node([bin, "dispatch", dirs.bash], (out) => out.includes("success"))
      }
      const t = yield* Effect.promise(() => compare(candidates, { rounds: 11, warmup: 1 }))
      const rss = yield* Effect.promise(() => peakRss(dirs, env, answer))
      const kb = (s: Stats) => `${(s.median / 1024).toFixed(0)} MB`
      recordStats(SUITE, "node -e 0", t.node, "ms", `peak RSS ${kb(rss.node)}`)
      recordStats(
        SUITE,
        "switchyard -p hi, to its answer",
        t.print,
        "ms",
        `${ratio(t.print, t.node)} bare node (goal ≤ 3×); peak RSS ${kb(rss.print)} (goal ≤ 80 MB)`
      )
      recordStats(
        SUITE,
        "switchyard tools list",
        t.list,
        "ms",
        `${ratio(t.list, t.node)} bare node (goal ≤ 2×); peak RSS ${kb(rss.list)}`
      )
      recordStats(
        SUITE,
        "switchyard dispatch, one Read call",
        t.dispatch,
        "ms",
        `${ratio(t.dispatch, t.node)} bare node (goal ≤ 2.5×); peak RSS ${kb(rss.dispatch)}`
      )
      recordStats(
        SUITE,
        "switchyard dispatch, one Bash call (loads the shell grammar)",
        t.bash,
        "ms",
        `${ratio(t.bash, t.node)} bare node; peak RSS ${kb(rss.bash)}`
      )
    })).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(dirs.root, { recursive: true, force: true }))))
  )
  note(
    SUITE,
    "Each command is a fresh process in a project with a `.claude/settings.json` (allow and deny rules, an `env`) " +
      "and a `CLAUDE.md`, with its own HOME; `-p` talks to a local Messages API (test/support/messagesServer.ts). " +
      "Peak RSS is the process's own maxRSS at exit, from separate untimed runs. Ratios are of medians of the same " +
      "interleaved rounds, which survive a busy machine better than the absolute times."
  )
}

export { run_ as run }
