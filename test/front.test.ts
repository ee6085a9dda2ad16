/**
 * The bundled binary's front (packages/cli/src/front.ts) answers `--help`,
 * `<command> --help`, `--version` and `tools list` without the full parser.
 * Its answers must equal the full parser's, for every command that exists,
 * so the two never drift (issue 14).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as ToolsCommand from "@switchyard/cli/ToolsCommand"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const bundle = path.join(root, "packages/cli/bundle")
const pages = (): Record<string, string> => JSON.parse(fs.readFileSync(path.join(bundle, "help.json"), "utf8"))
interface ToolPages {
  readonly set: ReadonlyArray<string>
  readonly variables: ReadonlyArray<string>
  readonly paths: ReadonlyArray<{ readonly path: string; readonly kind: string }>
  readonly pages: Record<string, string>
}
/** The stored `tools` pages: without and with SWITCHYARD_HOME. */
const toolPages = (): ReadonlyArray<ToolPages> =>
  JSON.parse(fs.readFileSync(path.join(bundle, "tools.json"), "utf8")).variants
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/** A fresh working directory, home and state directory (for SWITCHYARD_HOME), removed after `f`. */
const inFreshDirs = async <A>(
  f: (dirs: { readonly cwd: string; readonly home: string; readonly state: string }) => Promise<A>
): Promise<A> => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-front-")))
  const dirs = {
    cwd: path.join(scratch, "project"),
    home: path.join(scratch, "home"),
    state: path.join(scratch, "state")
  }
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir)
  try {
    return await f(dirs)
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** The environment a variant was rendered with, in these directories. */
const variantEnv = (
  variant: ToolPages,
  dirs: { readonly home: string; readonly state: string }
): Record<string, string> =>
  variant.set.includes("SWITCHYARD_HOME") ? { HOME: dirs.home, SWITCHYARD_HOME: dirs.state } : { HOME: dirs.home }

// Effect keeps its global values on globalThis under keys named `effect/GlobalValue…`: if one exists at exit, Effect was loaded.
const reportEffect = `data:text/javascript,${
  encodeURIComponent(
    "process.on('exit', () => {" +
      " const named = (k) => String(typeof k === 'symbol' ? k.description : k);" +
      " if (Reflect.ownKeys(globalThis).some((k) => named(k).startsWith('effect/'))) process.stderr.write('[effect loaded]');" +
      // @effect/cli registers its command descriptors in Effect's global store: the full parser ran.
      " const stores = Reflect.ownKeys(globalThis).filter((k) => named(k).startsWith('effect/GlobalValue'));" +
      " if (stores.some((k) => globalThis[k] instanceof Map && [...globalThis[k].keys()].some((key) =>" +
      "  String(key).startsWith('@effect/cli/')))) process.stderr.write('[parser loaded]') })"
  )
}`

/**
 * Run a process to its end, its stdin empty, without blocking the worker's event loop: a test of many
 * synchronous runs held it for 40 s at load 11, and vitest's worker calls time out after 60 s of that.
 */
const run = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly input?: string }
): Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** Run the binary (front) or the full parser with exactly this environment (no SWITCHYARD_HOME unless given). */
const spawnIn = async (
  entry: "front" | "full",
  args: ReadonlyArray<string>,
  cwd: string,
  env: Record<string, string>
) => {
  const script = entry === "front" ? path.join(root, "packages/cli/bin/switchyard.js") : path.join(bundle, "main.js")
  const result = await run(["--import", reportEffect, script, ...args], {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", ...env }
  })
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr.replace("[effect loaded]", "").replace("[parser loaded]", ""),
    loadedEffect: result.stderr.includes("[effect loaded]"),
    loadedParser: result.stderr.includes("[parser loaded]")
  }
}

/** What the live sources (not the bundle) print for `tools …` in `cwd` with only these variables set. */
const live = (action: ToolsCommand.Action, json: boolean, cwd: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const write = process.stdout.write
    process.stdout.write = ((chunk: string | Uint8Array) => {
      chunks.push(String(chunk))
      return true
    }) as typeof process.stdout.write
    yield* ToolsCommand.run({
      cwd,
      settingsFiles: [],
      permissionMode: undefined,
      allowedTools: [],
      disallowedTools: [],
      additionalDirectories: [],
      verbose: false,
      mcpConfigFiles: [],
      strictMcpConfig: false,
      json,
      action
    }).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.ensuring(Effect.sync(() => (process.stdout.write = write)))
    )
    return chunks.join("").replace(ANSI, "")
  })

/** The full parser (bundle/main.js, no front), piped like the tests' binary. */
const full = async (args: ReadonlyArray<string>, tty = false) => {
  const env = { ...process.env }
  delete env["FORCE_COLOR"]
  delete env["NO_COLOR"]
  const preload = tty ? ["--import", "data:text/javascript,process.stdout.isTTY=true"] : []
  const result = await run([...preload, path.join(bundle, "main.js"), ...args], { env, cwd: root })
  return { code: result.status, stdout: result.stdout }
}
const fullOut = async (args: ReadonlyArray<string>, tty = false) => (await full(args, tty)).stdout

/**
 * What the full parser prints, piped, for each of these command lines, as `full` runs it, but all in one process
 * (test/fixtures/fullParserPages.mjs: bundle/main.js evaluated afresh per line, its exit recorded): one start
 * instead of one per line (≈ 0.4 CPU-s each).
 */
const fullBatch = async (
  lines: ReadonlyArray<ReadonlyArray<string>>
): Promise<ReadonlyArray<{ readonly code: number; readonly stdout: string; readonly stderr: string }>> => {
  const env = { ...process.env }
  delete env["FORCE_COLOR"]
  delete env["NO_COLOR"]
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-front-full-"))
  try {
    const out = path.join(dir, "out.json")
    const driver = path.join(root, "test/fixtures/fullParserPages.mjs")
    const result = await run([driver, out, JSON.stringify(lines)], { env, cwd: root })
    expect(result.status, result.stderr).toBe(0)
    const outputs = JSON.parse(fs.readFileSync(out, "utf8"))
    expect(outputs).toHaveLength(lines.length)
    return outputs
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Every page's command line, and its `-h` form for a `--help` page. */
const pageLines = (): ReadonlyArray<ReadonlyArray<string>> =>
  Object.keys(pages()).flatMap((key) => {
    const args = key.split(" ")
    return args.at(-1) === "--help" ? [args, [...args.slice(0, -1), "-h"]] : [args]
  })
/** The full parser's output for every page line, computed once for the file. */
let fullPagesOnce: Promise<ReadonlyMap<string, string>> | undefined
const fullPages = (): Promise<ReadonlyMap<string, string>> =>
  fullPagesOnce ??= fullBatch(pageLines()).then((outputs) =>
    new Map(
      pageLines().map((args, i) => {
        expect(outputs[i]!.code, args.join(" ")).toBe(0)
        return [args.join(" "), outputs[i]!.stdout]
      })
    )
  )

/** The commands the root help lists: two-space-indented lines of its commands section. */
const commandPaths = (rootHelp: string) => {
  const lines = rootHelp.split("\n")
  const start = lines.findIndex((line) => /^(COMMANDS|Commands:?)\s*$/.test(line))
  const paths: Array<string> = []
  for (const line of start === -1 ? [] : lines.slice(start + 1)) {
    if (/^\S/.test(line)) break
    const match = /^ {2}(?:- )?([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?= |$)/.exec(line)
    if (match !== null) paths.push(match[1]!)
  }
  return paths
}

describe("the CLI front", () => {
  it("has a page for --version, --help and every command's --help that the full parser lists", async () => {
    const rootHelp = (await fullPages()).get("--help")!
    const expected = ["--version", "--help", ...new Set(commandPaths(rootHelp).map((p) => `${p} --help`))]
    expect(Object.keys(pages()).sort()).toEqual(expected.sort())
    expect(expected).toContain("tools list --help")
  })

  it("prints exactly what the full parser prints, piped, for every page and -h", async () => {
    const viaFull = await fullPages()
    for (const key of Object.keys(pages())) {
      const args = key.split(" ")
      const viaFront = await runCli(args)
      expect(viaFront.code, key).toBe(0)
      expect(viaFront.stdout, key).toBe(viaFull.get(key))
      if (args.at(-1) === "--help") {
        const short = [...args.slice(0, -1), "-h"]
        expect((await runCli(short)).stdout, `${key} as -h`).toBe(viaFull.get(short.join(" ")))
      }
    }
  }, 180_000)

  it("gives the same output for a line in the full parser's one-process batch as in a process of its own", async () => {
    // The batch above stands for one process per line: shown here for a page, its -h form and a usage error,
    // each after a line that ended otherwise (an exit code left over would show in the next line).
    const lines = [["tools", "list", "--frobnicate"], ["run", "--help"], ["--version"], ["mcp", "add", "-h"]]
    const batch = await fullBatch(lines)
    for (const [i, args] of lines.entries()) {
      const alone = await full(args)
      expect({ args, code: batch[i]!.code, stdout: batch[i]!.stdout }).toEqual({ args, ...alone })
    }
    expect(batch[0]!.code).toBe(2)
    expect(batch[0]!.stderr).toContain("--frobnicate")
  })

  it("stores the pages as a terminal sees them and prints them without colour when piped", async () => {
    const stored = pages()["--help"]!
    expect(stored).toBe(await fullOut(["--help"], true))
    expect((await runCli(["--help"])).stdout).not.toContain("\x1b[")
  })

  it("runs tools list and tools list --json as the full parser does", async () => {
    for (const args of [["tools", "list"], ["tools", "list", "--json"]]) {
      const viaFront = await runCli(args)
      expect(viaFront.code).toBe(0)
      expect(viaFront.stdout).toBe(await fullOut(args))
      expect(viaFront.stdout.length).toBeGreaterThan(100)
    }
  })

  it("leaves everything else to the full parser: options with --help, bad input", async () => {
    for (
      const args of [["dispatch", "--verbose", "--help"], ["tools", "list", "--frobnicate"], [
        "tools",
        "list",
        "--json",
        "x"
      ]]
    ) {
      const viaFront = await runCli(args)
      const viaFull = await full(args)
      expect(viaFront.code, args.join(" ")).toBe(viaFull.code)
      expect(viaFront.stdout, args.join(" ")).toBe(viaFull.stdout)
    }
    expect((await runCli(["tools", "list", "--frobnicate"])).code).toBe(2)
  })

  it("runs dispatch FILE as the full parser does: calls allowed and denied, stdin, bad and missing input", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-front-dispatch-")))
    try {
      fs.mkdirSync(path.join(dir, ".claude"))
      fs.writeFileSync(
        path.join(dir, ".claude", "settings.json"),
        JSON.stringify({ permissions: { allow: ["Read"], deny: ["Write"] } })
      )
      fs.writeFileSync(path.join(dir, "notes.txt"), "alpha\nbeta\n")
      const calls = (...blocks: ReadonlyArray<object>) =>
        JSON.stringify(blocks.map((block, i) => ({ type: "tool_use", id: `toolu_${i + 1}`, ...block })))
      fs.writeFileSync(path.join(dir, "read.json"), calls({ name: "Read", input: { file_path: "notes.txt" } }))
      fs.writeFileSync(
        path.join(dir, "denied.json"),
        calls({ name: "Read", input: { file_path: "notes.txt" } }, {
          name: "Write",
          input: { file_path: "out.txt", content: "x" }
        })
      )
      fs.writeFileSync(path.join(dir, "broken.json"), "[{ not json")
      fs.writeFileSync(path.join(dir, "shape.json"), JSON.stringify([{ type: "tool_use", id: 3 }]))
      const env = { PATH: process.env["PATH"] ?? "", HOME: dir, SWITCHYARD_HOME: path.join(dir, "state") }
      const cases: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly input?: string }> = [
        { args: ["dispatch", "read.json"] },
        { args: ["dispatch", "denied.json"] },
        { args: ["dispatch", "-"], input: calls({ name: "Read", input: { file_path: "notes.txt" } }) },
        { args: ["dispatch", "-"], input: "[]" },
        { args: ["dispatch", "broken.json"] },
        { args: ["dispatch", "shape.json"] },
        { args: ["dispatch", "missing.json"] },
        { args: ["dispatch", "notes"] }
      ]
      const runCase = async (script: string, c: (typeof cases)[number]) => {
        const result = await run(["--import", reportEffect, script, ...c.args], {
          cwd: dir,
          env,
          input: c.input ?? ""
        })
        // The report's times differ from run to run: per call in ms, the total in ms or, past a second, in s
        // ("Dispatched 2 calls in 1.2 s" beside "1.4 s" failed a run at load ~14).
        const timing = (text: string) => text.replace(/ *\d+(?:\.\d+)? m?s\b/g, " N ms")
        return {
          code: result.status,
          stdout: timing(result.stdout),
          stderr: result.stderr.replace("[effect loaded]", "").replace("[parser loaded]", "")
        }
      }
      for (const c of cases) {
        const label = `${c.args.join(" ")} ${c.input ?? ""}`
        const [viaFront, viaFull] = await Promise.all([
          runCase(path.join(root, "packages/cli/bin/switchyard.js"), c),
          runCase(path.join(bundle, "main.js"), c)
        ])
        expect({ label, ...viaFront }).toEqual({ label, ...viaFull })
      }
      expect((await runCase(path.join(root, "packages/cli/bin/switchyard.js"), cases[1]!)).code).toBe(1)
      expect((await runCase(path.join(root, "packages/cli/bin/switchyard.js"), cases[4]!)).code).toBe(2)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it.scoped(
    "runs -p PROMPT as the full parser does: the answer, the request sent, a missing key, a failed call",
    () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-front-print-")))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        fs.mkdirSync(path.join(dir, ".claude"))
        fs.writeFileSync(
          path.join(dir, ".claude", "settings.json"),
          JSON.stringify({ permissions: { allow: ["Read"], deny: ["WebFetch"] }, env: { FRONT_PRINT: "1" } })
        )
        fs.writeFileSync(path.join(dir, "CLAUDE.md"), "Answer briefly.\n")
        const env = {
          HOME: dir,
          SWITCHYARD_HOME: path.join(dir, "state"),
          ANTHROPIC_API_KEY: "sk-front",
          ANTHROPIC_BASE_URL: server.url
        }
        const answer = Server.message({ blocks: [{ block: { type: "text", text: "Hello from the model." } }] })
        const sent = (index: number) => Effect.map(server.request(index), (request) => request.body)
        const refused = Server.httpError(400, "invalid_request_error", "prompt is too long")
        const cases: ReadonlyArray<{
          readonly args: ReadonlyArray<string>
          readonly env?: Record<string, string>
          readonly response?: Server.ScriptedResponse
        }> = [
          { args: ["-p", "hi"], response: answer },
          { args: ["--print", "what is in notes.txt?"], response: answer },
          // A prompt that is a command's name is still a prompt after -p.
          { args: ["-p", "tools"], response: answer },
          { args: ["-p", "hi"], response: refused },
          { args: ["-p", "hi"], env: { ANTHROPIC_API_KEY: "" } }
        ]
        let requests = 0
        for (const c of cases) {
          const results: Array<unknown> = []
          for (const entry of ["front", "full"] as const) {
            if (c.response !== undefined) server.enqueue(c.response)
            const result = yield* Effect.promise(() => spawnIn(entry, c.args, dir, { ...env, ...c.env }))
            results.push({
              args: c.args,
              code: result.code,
              stdout: result.stdout,
              // The test server numbers its request ids.
              stderr: result.stderr.replace(/req_test_\d+/g, "req_test_N"),
              request: c.response === undefined ? undefined : yield* sent(requests++)
            })
          }
          expect(results[0]).toEqual(results[1])
        }
        expect(server.pending()).toBe(0)
      }),
    60_000
  )

  it.scoped(
    "runs generated -p lines with options as the full parser does, or leaves them to it (printArguments.ts)",
    () =>
      Effect.gen(function*() {
        const seed = Number(process.env["FRONT_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
        const server = yield* Server.start({
          respond: () => Server.message({ blocks: [{ block: { type: "text", text: "Hello from the model." } }] })
        })
        const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-front-print-options-")))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        fs.mkdirSync(path.join(dir, ".claude"))
        fs.writeFileSync(
          path.join(dir, ".claude", "settings.json"),
          JSON.stringify({ permissions: { allow: ["Read"] } })
        )
        fs.writeFileSync(path.join(dir, "extra.json"), JSON.stringify({ permissions: { deny: ["WebFetch"] } }))
        // Options with values the parser takes, and ones it refuses or reads otherwise (left to it).
        const option = FastCheck.oneof(
          FastCheck.constantFrom(
            ["--output-format", "json"],
            ["--output-format", "stream-json"],
            ["--output-format", "text"],
            ["--output-format", "xml"],
            ["--model", "claude-front-test"],
            ["--fallback-model", "claude-other"],
            ["--permission-mode", "plan"],
            ["--permission-mode", "acceptEdits"],
            ["--permission-mode", "sometimes"],
            ["--max-turns", "3"],
            ["--max-turns", "0"],
            ["--max-turns", "many"],
            ["--system-prompt", "You are terse."],
            ["--append-system-prompt", "Answer in French."],
            ["--allowed-tools", "Read,Grep"],
            ["--allowedTools", "Bash(ls)"],
            ["--allowedTools", "Read", "Grep"],
            ["--disallowed-tools", "WebFetch"],
            ["--disallowedTools", "Write"],
            ["--cwd", "."],
            ["--cwd", "missing-dir"],
            ["--settings", "extra.json"],
            ["--add-dir", "."],
            ["--mcp-config", "{\"mcpServers\":{}}"],
            ["--strict-mcp-config"],
            ["--verbose"],
            ["--continue"],
            ["--resume", "no-such-session"],
            ["--resume", "two words"],
            ["--session-id", "not-a-uuid"],
            ["--output-format=json"],
            ["--frobnicate"],
            ["extra", "words"]
          )
        )
        const line = FastCheck.tuple(
          FastCheck.constantFrom("-p", "--print"),
          FastCheck.constantFrom("hi", "tools", "what is in notes.txt?", "true"),
          FastCheck.array(option, { maxLength: 4 })
        )
        const lines = [
          // The line scripts pass most, whatever the sample holds.
          ["-p", "hi", "--output-format", "json", "--allowed-tools", "Read"],
          ...FastCheck.sample(line, { seed, numRuns: 10 }).map((
            [flag, prompt, options]
          ) => [flag, prompt, ...options.flat()])
        ]
        // Per-run values: the session id, durations and the test server's request ids.
        const normal = (text: string) =>
          text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UUID")
            .replace(/"(duration_ms|duration_api_ms)":\d+/g, "\"$1\":N")
            .replace(/(req|msg)_test_\d+/g, "$1_test_N")
        let withoutParser = 0
        for (const args of lines) {
          const results: Array<unknown> = []
          for (const entry of ["front", "full"] as const) {
            // Each run its own state: --continue and --resume find the same (no) sessions.
            const state = fs.mkdtempSync(path.join(dir, "state-"))
            const before = server.requests.length
            const result = yield* Effect.promise(() =>
              spawnIn(entry, args, dir, {
                HOME: dir,
                SWITCHYARD_HOME: state,
                ANTHROPIC_API_KEY: "sk-front",
                ANTHROPIC_BASE_URL: server.url
              })
            )
            results.push({
              args,
              code: result.code,
              stdout: normal(result.stdout),
              stderr: normal(result.stderr),
              requests: server.requests.slice(before).map((request) => request.body)
            })
            if (entry === "full") expect(result.loadedParser).toBe(true)
            if (entry === "front" && !result.loadedParser) withoutParser++
          }
          expect(results[0], `FRONT_SEED=${seed}`).toEqual(results[1])
        }
        // Lines of options only the parser takes are common in the sample, but the front ran some itself.
        expect(withoutParser, `FRONT_SEED=${seed}`).toBeGreaterThan(0)
      }),
    240_000
  )

  it("answers tools list in a directory with a broken settings file like the full parser", async () => {
    const dir = fs.mkdtempSync(path.join(root, ".switchyard-test-front-"))
    try {
      fs.mkdirSync(path.join(dir, ".claude"))
      fs.writeFileSync(path.join(dir, ".claude", "settings.json"), "{ not json")
      const viaFront = await runCli(["tools", "list"], { cwd: dir })
      const viaFull = await runCli(["tools", "list", "--verbose"], { cwd: dir })
      expect(viaFront.code).toBe(viaFull.code)
      expect(viaFront.stdout).toBe(viaFull.stdout)
      expect(viaFront.stderr.split("\n")[0]).toBe(viaFull.stderr.split("\n")[0])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it.effect(
    "stores tools pages equal to what the live tool modules print, for every tool and alias",
    () =>
      Effect.promise(() =>
        inFreshDirs(async (dirs) => {
          const variants = toolPages()
          expect(variants.map((variant) => variant.set)).toEqual([[], ["SWITCHYARD_HOME"]])
          for (const variant of variants) {
            const env = variantEnv(variant, dirs)
            const run = (action: ToolsCommand.Action, json = false) =>
              Effect.runPromise(live(action, json, dirs.cwd, env))
            const listed = JSON.parse(await run({ _tag: "list" }, true)) as ReadonlyArray<
              { name: string; aliases: ReadonlyArray<string> }
            >
            const names = listed.flatMap((tool) => [tool.name, ...tool.aliases])
            expect(names).toContain("Read")
            const stored = variant.pages
            expect(Object.keys(stored).sort()).toEqual(
              ["tools list", "tools list --json", ...names.map((n) => `tools schema ${n}`)].sort()
            )
            expect(stored["tools list --json"]!.replace(ANSI, "")).toBe(await run({ _tag: "list" }, true))
            expect(stored["tools list"]!.replace(ANSI, "")).toBe(await run({ _tag: "list" }))
            for (const name of names) {
              expect(stored[`tools schema ${name}`]!.replace(ANSI, ""), name).toBe(await run({ _tag: "schema", name }))
            }
          }
        })
      ),
    60_000
  )

  it("prints the stored tools pages in a fresh directory without loading Effect, as the full parser would", async () => {
    const [plain, withState] = toolPages()
    expect(plain!.variables).toEqual(
      expect.arrayContaining(["SWITCHYARD_HOME", "SWITCHYARD_SIMPLE", "ENABLE_TOOL_SEARCH"])
    )
    expect(plain!.paths).toEqual(expect.arrayContaining([
      { path: "<cwd>/.claude/settings.json", kind: "absent" },
      { path: "<cwd>/.mcp.json", kind: "absent" },
      { path: "$HOME/.switchyard/settings.json", kind: "absent" }
    ]))
    expect(withState!.variables).not.toContain("SWITCHYARD_HOME")
    expect(withState!.paths).toEqual(
      expect.arrayContaining([{ path: "$SWITCHYARD_HOME/settings.json", kind: "absent" }])
    )
    await inFreshDirs(async (dirs) => {
      for (const variant of [plain!, withState!]) {
        const env = variantEnv(variant, dirs)
        for (
          const args of [["tools", "list"], ["tools", "list", "--json"], ["tools", "schema", "Read"], [
            "tools",
            "schema",
            "Task"
          ]]
        ) {
          const label = `${args.join(" ")} with ${Object.keys(env).join(", ")}`
          const viaFront = await spawnIn("front", args, dirs.cwd, env)
          const viaFull = await spawnIn("full", args, dirs.cwd, env)
          expect(viaFront.loadedEffect, label).toBe(false)
          expect(viaFull.loadedEffect).toBe(true)
          expect(viaFront.code).toBe(0)
          expect(viaFront.stdout, label).toBe(viaFull.stdout)
          expect(viaFront.stdout).toBe(variant.pages[args.join(" ")]!.replace(ANSI, ""))
        }
      }
    })
  })

  it(
    "runs tools list and schema through the full parser when a variable, settings file or .mcp.json it reads is there",
    async () => {
      const stored = toolPages()[0]!.pages
      const cases: ReadonlyArray<{
        readonly name: string
        readonly args: ReadonlyArray<string>
        readonly env?: Record<string, string>
        readonly files?: Record<string, string>
        readonly check: (stdout: string, stderr: string) => void
      }> = [
        {
          name: "SWITCHYARD_SIMPLE",
          args: ["tools", "list"],
          env: { SWITCHYARD_SIMPLE: "1" },
          check: (out) => expect(out.split("\n").filter(Boolean)).toHaveLength(3)
        },
        {
          name: "project deny rule",
          args: ["tools", "list", "--json"],
          files: { "<cwd>/.claude/settings.json": JSON.stringify({ permissions: { deny: ["WebFetch"] } }) },
          check: (out) => expect(out).not.toContain("WebFetch")
        },
        {
          name: "user deny rule",
          args: ["tools", "schema", "Bash"],
          files: { "$HOME/.switchyard/settings.json": JSON.stringify({ permissions: { deny: ["Bash"] } }) },
          check: (out, err) => {
            expect(out).toBe("")
            expect(err).toContain("No such tool available: Bash")
          }
        },
        {
          name: "SWITCHYARD_HOME",
          args: ["tools", "list"],
          env: { SWITCHYARD_HOME: "$SWITCHYARD_HOME" },
          files: { "$SWITCHYARD_HOME/settings.json": JSON.stringify({ permissions: { deny: ["Grep"] } }) },
          check: (out) => expect(out).not.toContain("Grep")
        },
        {
          name: ".mcp.json",
          args: ["tools", "list"],
          files: { "<cwd>/.mcp.json": "{ not json" },
          check: (_, err) => expect(err).toContain(".mcp.json")
        }
      ]
      for (const c of cases) {
        await inFreshDirs(async ({ cwd, home, state }) => {
          const expand = (p: string) =>
            p.replace("<cwd>", cwd).replace("$HOME", home).replace("$SWITCHYARD_HOME", state)
          for (const [file, text] of Object.entries(c.files ?? {})) {
            fs.mkdirSync(path.dirname(expand(file)), { recursive: true })
            fs.writeFileSync(expand(file), text)
          }
          const env = { HOME: home, ...Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, expand(v)])) }
          const viaFront = await spawnIn("front", c.args, cwd, env)
          const viaFull = await spawnIn("full", c.args, cwd, env)
          expect(viaFront.loadedEffect, c.name).toBe(true)
          expect(viaFront.code, c.name).toBe(viaFull.code)
          expect(viaFront.stdout, c.name).toBe(viaFull.stdout)
          expect(viaFront.stderr.split("\n")[0], c.name).toBe(viaFull.stderr.split("\n")[0])
          // What the stored page would have said is wrong here: in the output or as a missing warning.
          expect(viaFront.stdout + viaFront.stderr, c.name).not.toBe(stored[c.args.join(" ")]!.replace(ANSI, ""))
          c.check(viaFront.stdout, viaFront.stderr)
        })
      }
    },
    120_000
  )
})
