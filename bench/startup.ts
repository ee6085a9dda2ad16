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
/** The `switchyard` command as installed: starts Node from the start-up snapshot when the build made one. */
const launcher = path.join(import.meta.dirname, "..", "packages/cli/bin/switchyard")
/** The script the launcher falls back to: `node bin/switchyard.js` starts from the ES-module bundle. */
const script = path.join(import.meta.dirname, "..", "packages/cli/bin/switchyard.js")
const execFileAsync = promisify(execFile)
/**
 * Run a command with its stdin closed, as a script's `< /dev/null` does: `-p` with an open, silent stdin waits a
 * moment for piped input before it starts (Run.stdinWaitMs, as Claude Code does), which is not start-up.
 */
const run = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Readonly<Record<string, string>>; readonly encoding: "utf8" }
) => {
  const running = execFileAsync(file, args, options)
  running.child.stdin?.end()
  return running
}
const time = "/usr/bin/time"

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

type Measured = "node" | "print" | "list" | "dispatch" | "bash" | "printScript" | "listScript" | "dispatchScript"

/**
 * Peak RSS (KiB) and CPU time (user + system, ms) of each command over five untimed runs, from GNU time's
 * report on the process it waited for (Debian `time`); undefined without it.
 */
const peakRss = async (
  dirs: ReturnType<typeof makeProject>,
  env: Readonly<Record<string, string>>,
  commands: Record<Measured, ReadonlyArray<string>>,
  answer: () => void
): Promise<Record<Measured, { readonly rss: Stats; readonly cpu: Stats }> | undefined> => {
  if (!fs.existsSync(time)) return undefined
  const file = path.join(dirs.root, "rss")
  const measure = async (command: ReadonlyArray<string>) => {
    await run(time, ["-f", "%M %U %S", "-o", file, ...command], { cwd: dirs.project, env, encoding: "utf8" })
    const [rss, user, system] = fs.readFileSync(file, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number)
    return { rss: rss!, cpu: (user! + system!) * 1000 }
  }
  const keys = Object.keys(commands) as Array<Measured>
  const samples = Object.fromEntries(keys.map((k) => [k, [] as Array<{ rss: number; cpu: number }>]))
  for (let i = 0; i < 5; i++) {
    for (const key of keys) {
      if (key === "print" || key === "printScript") answer()
      samples[key]!.push(await measure(commands[key]))
    }
  }
  return Object.fromEntries(keys.map((key) => [key, {
    rss: stats(samples[key]!.map((s) => s.rss)),
    cpu: stats(samples[key]!.map((s) => s.cpu))
  }])) as Record<Measured, { readonly rss: Stats; readonly cpu: Stats }>
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
      const commands: Record<Measured, ReadonlyArray<string>> = {
        node: [process.execPath, "-e", "0"],
        print: [launcher, "-p", "hi"],
        list: [launcher, "tools", "list"],
        dispatch: [launcher, "dispatch", dirs.call],
        bash: [launcher, "dispatch", dirs.bash],
        printScript: [process.execPath, script, "-p", "hi"],
        listScript: [process.execPath, script, "tools", "list"],
        dispatchScript: [process.execPath, script, "dispatch", dirs.call]
      }
      const expected: Partial<Record<Measured, string>> = {
        print: "Hello there.",
        list: "Read",
        dispatch: "success",
        bash: "success",
        printScript: "Hello there.",
        listScript: "Read",
        dispatchScript: "success"
      }
      const answer = () =>
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
      const candidate = (key: Measured) => async () => {
        if (key === "print" || key === "printScript") answer()
        const [file, ...args] = commands[key]
        const { stdout } = await run(file!, args, { cwd: dirs.project, env, encoding: "utf8" })
        const want = expected[key]
        if (want !== undefined && !stdout.includes(want)) throw new Error(`${key}: unexpected output ${stdout}`)
      }
      const keys = Object.keys(commands) as Array<Measured>
      const candidates = Object.fromEntries(keys.map((key) => [key, candidate(key)])) as Record<
        Measured,
        () => Promise<void>
      >
      const t = yield* Effect.promise(() => compare(candidates, { rounds: 11, warmup: 1 }))
      const rss = yield* Effect.promise(() => peakRss(dirs, env, commands, answer))
      const kb = (key: Measured) =>
        rss === undefined
          ? "peak RSS not measured (no GNU time)"
          : `peak RSS ${(rss[key].rss.median / 1024).toFixed(0)} MB`
      recordStats(SUITE, "node -e 0", t.node, "ms", kb("node"))
      if (rss !== undefined) {
        // CPU time (user + system) is what a busy machine disturbs least: the same work costs the same CPU.
        const cpu = (name: string, s: Stats) =>
          recordStats(SUITE, `${name}, CPU time`, s, "ms", `${ratio(s, rss.node.cpu)} bare node's CPU time`)
        cpu("node -e 0", rss.node.cpu)
        cpu("switchyard -p hi", rss.print.cpu)
        cpu("switchyard tools list", rss.list.cpu)
        cpu("switchyard dispatch, one Read call", rss.dispatch.cpu)
        cpu("switchyard dispatch, one Bash call", rss.bash.cpu)
        cpu("node bin/switchyard.js -p hi (no snapshot)", rss.printScript.cpu)
        cpu("node bin/switchyard.js tools list (no snapshot)", rss.listScript.cpu)
        cpu("node bin/switchyard.js dispatch, one Read call (no snapshot)", rss.dispatchScript.cpu)
      }
      const row = (name: string, key: Measured, goal: string) =>
        recordStats(SUITE, name, t[key], "ms", `${ratio(t[key], t.node)} bare node${goal}; ${kb(key)}`)
      row("switchyard -p hi, to its answer", "print", " (goal ≤ 3×, peak RSS ≤ 80 MB)")
      row("switchyard tools list", "list", " (goal ≤ 2×)")
      row("switchyard dispatch, one Read call", "dispatch", " (goal ≤ 2.5×)")
      row("switchyard dispatch, one Bash call (loads the shell grammar)", "bash", "")
      row("node bin/switchyard.js -p hi (the bundle, no snapshot)", "printScript", "")
      row("node bin/switchyard.js tools list (the bundle, no snapshot)", "listScript", "")
      row("node bin/switchyard.js dispatch, one Read call (the bundle, no snapshot)", "dispatchScript", "")
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
