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

/** A preload that writes the peak RSS (KiB) and CPU time (user + system, µs) to $SWITCHYARD_BENCH_RSS at exit. */
const rssPreload = "data:text/javascript," + encodeURIComponent(
  "import * as fs from 'node:fs';" +
    "process.on('exit', () => { const u = process.resourceUsage(); " +
    "fs.writeFileSync(process.env.SWITCHYARD_BENCH_RSS, JSON.stringify([u.maxRSS, u.userCPUTime + u.systemCPUTime])) })"
)

/** Peak RSS (KiB) and CPU time (ms) of each command over three untimed runs. */
const peakRss = async (
  dirs: ReturnType<typeof makeProject>,
  env: Readonly<Record<string, string>>,
  answer: () => void
): Promise<Record<"node" | "print" | "list" | "dispatch" | "bash", { readonly rss: Stats; readonly cpu: Stats }>> => {
  const file = path.join(dirs.root, "rss")
  const measure = async (args: ReadonlyArray<string>) => {
    await run(process.execPath, ["--import", rssPreload, ...args], {
      cwd: dirs.project,
      env: { ...env, SWITCHYARD_BENCH_RSS: file },
      encoding: "utf8"
    })
    const [rss, cpu] = JSON.parse(fs.readFileSync(file, "utf8")) as [number, number]
    return { rss, cpu: cpu / 1000 }
  }
  const samples = {
    node: [] as Array<{ rss: number; cpu: number }>,
    print: [] as Array<{ rss: number; cpu: number }>,
    list: [] as Array<{ rss: number; cpu: number }>,
    dispatch: [] as Array<{ rss: number; cpu: number }>,
    bash: [] as Array<{ rss: number; cpu: number }>
  }
  for (let i = 0; i < 5; i++) {
    samples.node.push(await measure(["-e", "0"]))
    answer()
    samples.print.push(await measure([bin, "-p", "hi"]))
    samples.list.push(await measure([bin, "tools", "list"]))
    samples.dispatch.push(await measure([bin, "dispatch", dirs.call]))
    samples.bash.push(await measure([bin, "dispatch", dirs.bash]))
  }
  const of = (list: ReadonlyArray<{ rss: number; cpu: number }>) => ({
    rss: stats(list.map((s) => s.rss)),
    cpu: stats(list.map((s) => s.cpu))
  })
  return {
    node: of(samples.node),
    print: of(samples.print),
    list: of(samples.list),
    dispatch: of(samples.dispatch),
    bash: of(samples.bash)
  }
}

/**
 * Where the time goes (issue 25 item 1), from `node --cpu-prof` of the
 * unminified bundle (its source maps give each sample its package), a
 * module-loader hook's log and `strace`, on this machine at load ≈ 17. These
 * are a profile's findings, not re-measured by the suite; CPU times are
 * user + system medians.
 */
const profile: ReadonlyArray<string> = [
  "**Profile of `-p hi` (share of CPU samples).** Effect's fiber runtime running the program 33 % — the Layer " +
  "graph's construction, settings, the registry, the query loop; spread thin: no switchyard function holds more " +
  "than 1–2 % (settings decoding < 1 %, the tools' JSON Schemas ≈ 1 %). Module loading and compiling 21 % " +
  "(≈ 1.2 MB of bundle: effect ≈ 730 KB unminified, the Anthropic SDK ≈ 1 MB with its OpenTelemetry/webhook " +
  "deps, the tools chunk ≈ 580 KB with picomatch and ignore, @effect/cli ≈ 220 KB). Module evaluation 20 % " +
  "(top-level `Schema.Struct`s of Messages/Model/Tool, first calls compiling lazily). GC 7 %. Node's fetch " +
  "(undici, loaded by the SDK's first `Headers`) 4.5 %, ≈ 60–70 ms CPU on its own. @effect/cli's parse 2 %, " +
  "the SDK's request building 2 %.",
  "**CPU time per piece** (ms): `node -e 0` 150; the front answering `--version` 170; + effect's core chunk " +
  "250; + the tools chunk 390; the full parser (`main.js --version`) 390; `tools list` 690 through the front's " +
  "fast path and 660 through the full parser (so @effect/cli's share is within the noise: effect, the tools " +
  "and running the Layer graph are the cost); a `Read` dispatch 760; `-p hi` 1120–1350.",
  "**What each command loads** (test/startupLoading.test.ts, from the module loader's log): `-p` loads the " +
  "Anthropic SDK and neither the terminal UI, the shell grammar nor the MCP SDK; `tools list` and a `Read` " +
  "dispatch load none of the four; the first Bash analysis loads the grammar (test/mcpCli.test.ts: the MCP SDK " +
  "only with servers configured). At start the process reads the settings files, `.mcp.json` and the working " +
  "directory's status, and scans nothing (`strace -e trace=%file`).",
  "**The shell grammar.** A one-call Bash `dispatch` printed its answer after ≈ 2.8 s and exited ≈ 17 s later " +
  "at 3–4 CPU-seconds and 125 MB: V8's optimizing tier recompiled tree-sitter-bash's 1.3 MB of WebAssembly on " +
  "background threads, and Node waits for them at exit. The binary now sets `--liftoff-only` before any " +
  "WebAssembly compiles (packages/cli/bin/switchyard.js): ≈ 3.4 s to exit, 0.9 CPU-seconds, 83 MB; a 170 KB " +
  "script parses as fast or faster in a fresh process, one line in 0.09 ms instead of 0.04 ms. Node 20 cannot " +
  "persist a compiled WebAssembly module, so the grammar is compiled (by the baseline tier, ≈ 0.2 s) per process.",
  "**Node 20's other options, tried.** A V8 code cache: Node 20 has none for ES modules " +
  "(`module.enableCompileCache` is Node 22). A prototype bundling the same sources as one CommonJS file run " +
  "through `vm.Script` with `cachedData` cut CPU time by 21–30 % (Read dispatch 760 → 530 ms, `-p` 1120 → " +
  "880 ms, `tools list` 590 → 430 ms) but raised peak RSS by ≈ 14 MB (the cache materialises every function " +
  "it holds: `-p` 113 → 127 MB) and means CommonJS chunks and a cache written by the build — not shipped; on " +
  "Node 22 it is one `module.enableCompileCache()` line in the bin. `--build-snapshot`: Node 20's user-land " +
  "snapshot takes one CommonJS script and must be started as `node --snapshot-blob FILE`, i.e. the bin would " +
  "re-exec Node — one more bare start, 1× by itself. Tree-shaking: each command's chunks already hold only " +
  "what it imports; what remains is effect's core runtime and the SDK, which `sideEffects: false` would not " +
  "remove (they are imported, not dead).",
  "**Against the goals:** none of the ratio goals is met; the remaining cost is Effect's runtime and compiling " +
  "≈ 1 MB of JavaScript per start. What would move it: fewer fibers and Layers on the start-up path (the " +
  "largest share), a compile cache (Node 22), and for `-p` a model client lighter than the SDK plus undici."
]

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
      recordStats(SUITE, "node -e 0", t.node, "ms", `peak RSS ${kb(rss.node.rss)}`)
      // CPU time (user + system) is what a busy machine disturbs least: the same work costs the same CPU.
      const cpu = (name: string, s: Stats) =>
        recordStats(SUITE, `${name}, CPU time`, s, "ms", `${ratio(s, rss.node.cpu)} bare node's CPU time`)
      cpu("node -e 0", rss.node.cpu)
      cpu("switchyard -p hi", rss.print.cpu)
      cpu("switchyard tools list", rss.list.cpu)
      cpu("switchyard dispatch, one Read call", rss.dispatch.cpu)
      cpu("switchyard dispatch, one Bash call", rss.bash.cpu)
      recordStats(
        SUITE,
        "switchyard -p hi, to its answer",
        t.print,
        "ms",
        `${ratio(t.print, t.node)} bare node (goal ≤ 3×); peak RSS ${kb(rss.print.rss)} (goal ≤ 80 MB)`
      )
      recordStats(
        SUITE,
        "switchyard tools list",
        t.list,
        "ms",
        `${ratio(t.list, t.node)} bare node (goal ≤ 2×); peak RSS ${kb(rss.list.rss)}`
      )
      recordStats(
        SUITE,
        "switchyard dispatch, one Read call",
        t.dispatch,
        "ms",
        `${ratio(t.dispatch, t.node)} bare node (goal ≤ 2.5×); peak RSS ${kb(rss.dispatch.rss)}`
      )
      recordStats(
        SUITE,
        "switchyard dispatch, one Bash call (loads the shell grammar)",
        t.bash,
        "ms",
        `${ratio(t.bash, t.node)} bare node; peak RSS ${kb(rss.bash.rss)}`
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
  for (const text of profile) note(SUITE, text)
}

export { run_ as run }
