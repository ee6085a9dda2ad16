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
 *   and compiles the shell grammar (tree-sitter-bash's WebAssembly);
 * - `switchyard run -p hi`, the same prompt through the full snapshot and the
 *   parser (the way `-p hi` started before the print snapshot).
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

type Measured =
  | "node"
  | "help"
  | "print"
  | "printParsed"
  | "printOptions"
  | "printOptionsParsed"
  | "list"
  | "dispatch"
  | "bash"
  | "printScript"
  | "listScript"
  | "dispatchScript"

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
      if (key.startsWith("print")) answer()
      samples[key]!.push(await measure(commands[key]))
    }
  }
  return Object.fromEntries(keys.map((key) => [key, {
    rss: stats(samples[key]!.map((s) => s.rss)),
    cpu: stats(samples[key]!.map((s) => s.cpu))
  }])) as Record<Measured, { readonly rss: Stats; readonly cpu: Stats }>
}

/**
 * Where the time goes (issue 25 item 1), from `node --cpu-prof` of the unminified bundle, a module-loader hook's
 * log and `strace`. These are a profile's findings, not re-measured by the suite.
 */
const profile: ReadonlyArray<string> = [
  "**The start-up snapshot.** `switchyard` (bin/switchyard, a shell launcher) execs `node --snapshot-blob " +
  "bundle/snapshot.blob` when the build wrote one for this Node binary (packages/cli/scripts/snapshot.mjs): the " +
  "whole CLI bundled as one CommonJS script, run once by `node --build-snapshot` with Effect, the engine, the tools, " +
  "the journal, the Anthropic SDK and the common commands loaded and evaluated, and a Read/Write dispatch run in a " +
  "throwaway project so V8 keeps those functions' bytecode. A process started from it skips loading, compiling and " +
  "evaluating ≈ 1 MB of JavaScript: the rows above show the launcher beside `node bin/switchyard.js` (the same CLI " +
  "from the ES-module bundle) in the same rounds. Deserialising the heap is paid before any work, ≈ 9 ms of CPU per " +
  "MB of blob here: `--version` answered from the 10.6 MB blob costs ≈ 1.8× bare node, from a blob of an empty " +
  "script (4.1 MB, Node's own) 1.0×. So the help pages skip it (the launcher runs them from Node's own snapshot), " +
  "the bundled script is ASCII (one curly quote in a regular expression had made V8 hold the whole source at two " +
  "bytes a character: 13.7 MB → 11.1 MB), and the packages loaded only by `import()` and sharing nothing with " +
  "Effect (WebFetch's HTML converter, ajv, pg) are required from node_modules on first use (→ 10.6 MB). The warm-up " +
  "adds 0.6 MB and saves more than it costs (20–40 ms of CPU on `tools list` and `dispatch`, measured without " +
  "it). Node 20 forbids some built-ins in a snapshot (http, child_process, tty, …): they are stand-ins " +
  "loaded on first use. What cannot be in it: Node's fetch (undici needs WebAssembly, which the snapshot builder " +
  "lacks), the shell grammar's WebAssembly and native modules (libsql), loaded when first used. The MCP SDK is " +
  "left out too (every start would deserialise it) and loaded with the first server: not from node_modules " +
  "(≈ 300 files, 0.4 s of CPU) but from bundle/mcp-sdk.cjs, the SDK and its dependencies in one file, with V8's " +
  "code cache the build wrote beside it (src/internal/compiledScript.ts; ≈ 0.1 s, the mcp suite's rows).",
  "**The light and print snapshots.** `tools list [--json]` and `dispatch FILE` (FILE a path or `-`) start " +
  "from `bundle/snapshot-light.blob` (src/internal/snapshotLight.ts: the engine, the tools and the front's fast " +
  "paths, 7.9 MB), `-p PROMPT` and `--print PROMPT`, alone or with the options scripts pass most " +
  "(`--output-format`, `--model`, `--allowed-tools`, `--resume`, …: internal/printArguments.ts; one whose value " +
  "the parser must judge runs from the full blob from there) from `bundle/snapshot-print.blob` (snapshotPrint.ts: the " +
  "same with the conversation, the journal and the Anthropic SDK, 9.5 MB), neither with main.ts/@effect/cli or " +
  "the terminal UI; every other command line from the full blob (10.7 MB; Node's own is 3.8 MB). Which one is " +
  "src/internal/frontStart.ts's `fastCommand`, which the launcher mirrors; these commands run without the parser, " +
  "with its defaults (internal/fastTools.ts, fastDispatch.ts, fastPrint.ts; test/front.test.ts compares each " +
  "with the full parser). `-p hi` from the print blob against the full blob and the parser, interleaved (load " +
  "8–10, two runs of 13 rounds, CPU from wait4): CPU 0.95 and 0.95, wall 0.91 and 0.89, peak RSS 94 → 90 and " +
  "94 → 89 MB (the `run -p hi` row below is that old path).",
  "**Layers** (CPU inside the light snapshot's `tools list`, from `process.cpuUsage()` around each step, a busy " +
  "machine): building `Runtime.layer` took ≈ 44 ms, more than reading the settings (≈ 12 ms) and printing " +
  "together. A Layer costs on every start (a memo entry, a scope, fiber-ref diffs, and a forked fiber for each " +
  "side of a merge): Runtime.layer's ≈ 30 merged and provided Layers are now one `Layer.scopedContext` that builds " +
  "each sub-Layer in turn, in the context the graph gave it, with the ambient memo map (Runtime.ts `build`); the " +
  "Node platform is NodeContext's five Layers built in turn (internal/platform.ts: 18 → 11.5 ms), the built-in " +
  "tools one Layer (13.5 → 10 ms), the registry one `effectContext` (11 → 4.5 ms). What remains of the command " +
  "itself: settings (≈ 10 ms: files read concurrently, decoded with Schema), the MCP setup (≈ 4 ms), the sandbox " +
  "service (≈ 4 ms), the built-in tools' registration (≈ 10 ms), then Effect's fiber runtime spread thin; before " +
  "the first line of the command runs, Node's bootstrap and the blob's deserialisation are most of the CPU. For " +
  "`-p`, the journal (libsql's native module, whose loader calls `process.report.getReport()` to tell glibc from " +
  "musl), undici (the SDK's `Headers` and `fetch`: it compiles WebAssembly when loaded, so it cannot be in a Node " +
  "20 snapshot) and the SDK's request. Bare node's own start is ≈ 20–40 ms of CPU here. A shell with " +
  "`NODE_EXTRA_CA_CERTS` set makes every Node process parse that bundle at start (≈ 30 % of a `tools list` in a " +
  "`perf` profile): the suite runs the commands without it, as a user's shell usually is.",
  "**The floors, measured side by side** (issue 25's levers; scratch experiments, CPU over bare node's from " +
  "wait4 in the same interleaved rounds, load 8–13 on 2 cores, which compresses ratios: bare node's own start " +
  "was ≈ 130 ms of CPU then). Deserialising alone, as a command refused at once: the light blob 1.71×, the full " +
  "one 1.84×; `tools list` from the light blob 1.9–2.0×, a Read dispatch 2.1–2.5×: the command's own work is " +
  "≈ 0.2–0.7× and the blob the rest. (a) What the light blob holds (`--profile-deserialization`): an isolate part " +
  "of 5.45 MB and a context of 1.9 MB against Node's own 0.50 and 0.51; a heap snapshot of the same modules " +
  "evaluated: code objects 2.8 MB (bytecode 0.34, scope infos, function data, feedback cells), strings 1.5 MB " +
  "(0.74 MB of it the script's source, which V8 keeps to compile functions lazily), object shapes 1.1, arrays " +
  "1.1, closures 0.9: it grows with the code evaluated, not with one part. V8's coverage of `tools list` and a " +
  "Read dispatch over that bundle: 47 % of Effect's bytes run, 35 % of core's, 26 % of tools' (the MCP " +
  "connection, QueryLoop, the shell analysis, picomatch/fdir/tinyglobby, diff under 10 %): a smaller blob means " +
  "the tools' implementations loaded on their first call, in packages/tools and core. (b) No snapshot: an " +
  "esbuild CommonJS bundle of exactly the light path (745 kB) run through `vm.Script` with V8's code cache " +
  "(accepted, 1.3 MB) costs 2.75× for `tools list` against the light blob's 2.00× in the same rounds (4.25× " +
  "without the cache): reading 0.05×, compiling from the cache 0.1×, evaluating the modules (Effect's and the " +
  "tools' top level) 0.85× alone, so its floor is above the blob's. (c) At build time: the `tools` pages are " +
  "already served for a fresh directory (bundle/tools.json); in a project with settings the list depends on them " +
  "(deny rules hide tools, MCP servers add some), and deciding that is the engine's settings code, i.e. (a)'s " +
  "floor. V8 flags: `--max-opt=1` (no TurboFan) gave CPU 0.91–0.98 and 4 MB less RSS on all three commands, but " +
  "a hot JavaScript loop ran 4–5× slower and lifting the cap at run time did not restore it (Glob and Grep run " +
  "in JavaScript): not taken. `--min-semi-space-size=16`: `tools list` 1.15, `-p` 0.93, `-p` RSS +11 MB: not " +
  "taken. `--single-threaded-gc`: within the noise. For `-p` (a `--cpu-prof` timeline of the full blob's run): " +
  "the parser ≈ 15 % (now skipped), libsql's load and the journal's open ≈ 11 %, the conversation's setup ≈ 18 %, " +
  "undici's load and the request ≈ 16 %, the streamed answer ≈ 13 %, the journal's writes and exit ≈ 11 %. " +
  "Loaded alone, undici is ≈ 0.4× bare node's CPU and 12 MB of RSS, libsql ≈ 0.45× and 8 MB. The SDK (1.14) " +
  "builds every request's headers with `new Headers()`, the global that loads Node's bundled undici, so a " +
  "`node:http` fetch would not spare undici's load: not tried further.",
  "**What each command loads from disk** (test/startupLoading.test.ts, through `bin/switchyard.js` and a module " +
  "loader hook): `-p` loads the Anthropic SDK and neither the terminal UI, the shell grammar nor the MCP SDK; " +
  "`tools list` and a `Read` dispatch load none of the four; the first Bash analysis loads the grammar " +
  "(test/mcpCli.test.ts: the MCP SDK only with servers configured). At start the process reads the settings " +
  "files, `.mcp.json` and the working directory's status, and scans nothing (`strace -e trace=%file`).",
  "**The shell grammar.** V8's optimizing tier recompiled tree-sitter-bash's 1.3 MB of WebAssembly on background " +
  "threads that Node waits for at exit (a one-call Bash `dispatch` lingered ≈ 17 s): both entries run with " +
  "`--liftoff-only` (the launcher passes it, the snapshot is built with it); the grammar is compiled by the " +
  "baseline tier, ≈ 0.2 s, per process (Node 20 cannot persist a compiled WebAssembly module).",
  "**`-p` and stdin.** With a PROMPT argument and a piped stdin that stays open and silent, `-p` waits " +
  "`Run.stdinWaitMs` (3 s, as Claude Code does) for piped input; the suite closes stdin, as `< /dev/null` does. " +
  "An earlier version of this suite measured that wait as start-up."
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
        help: [launcher, "--help"],
        print: [launcher, "-p", "hi"],
        printParsed: [launcher, "run", "-p", "hi"],
        printOptions: [launcher, "-p", "hi", "--output-format", "json", "--allowed-tools", "Read"],
        printOptionsParsed: [launcher, "run", "-p", "hi", "--output-format", "json", "--allowed-tools", "Read"],
        list: [launcher, "tools", "list"],
        dispatch: [launcher, "dispatch", dirs.call],
        bash: [launcher, "dispatch", dirs.bash],
        printScript: [process.execPath, script, "-p", "hi"],
        listScript: [process.execPath, script, "tools", "list"],
        dispatchScript: [process.execPath, script, "dispatch", dirs.call]
      }
      const expected: Partial<Record<Measured, string>> = {
        help: "dispatch",
        print: "Hello there.",
        printParsed: "Hello there.",
        printOptions: "Hello there.",
        printOptionsParsed: "Hello there.",
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
        if (key.startsWith("print")) answer()
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
        cpu("switchyard run -p hi (the full snapshot and parser)", rss.printParsed.cpu)
        cpu("switchyard -p hi --output-format json --allowed-tools Read", rss.printOptions.cpu)
        cpu("the same with run first (the full snapshot and parser)", rss.printOptionsParsed.cpu)
        cpu("switchyard tools list", rss.list.cpu)
        cpu("switchyard dispatch, one Read call", rss.dispatch.cpu)
        cpu("switchyard dispatch, one Bash call", rss.bash.cpu)
        cpu("node bin/switchyard.js -p hi (no snapshot)", rss.printScript.cpu)
        cpu("node bin/switchyard.js tools list (no snapshot)", rss.listScript.cpu)
        cpu("node bin/switchyard.js dispatch, one Read call (no snapshot)", rss.dispatchScript.cpu)
      }
      const row = (name: string, key: Measured, goal: string) =>
        recordStats(SUITE, name, t[key], "ms", `${ratio(t[key], t.node)} bare node${goal}; ${kb(key)}`)
      row("switchyard --help (the front, from Node's own snapshot)", "help", "")
      row("switchyard -p hi, to its answer", "print", " (goal ≤ 3×, peak RSS ≤ 80 MB)")
      row("switchyard run -p hi (the full snapshot and the parser, as -p was before)", "printParsed", "")
      row("switchyard -p hi --output-format json --allowed-tools Read (the print snapshot)", "printOptions", "")
      row(
        "the same with run first (the full snapshot and the parser, as such lines were before)",
        "printOptionsParsed",
        ""
      )
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
