/**
 * Start-up loads what a command needs, when it needs it (issue 25 item 2):
 * the built binary runs in a project with a `.claude/settings.json` and a
 * `CLAUDE.md` under a module-loader hook that logs every module the process
 * loads (and whether its source is the Anthropic SDK's). The log is the
 * effect judged: `-p PROMPT` loads the SDK but neither the terminal UI, the
 * shell grammar nor the full parser (nor with `--output-format`, `--max-turns` …; with another option it loads the parser); `tools list` and a one-call `Read` dispatch load none of
 * them, nor the full command-line parser; the first Bash analysis loads the grammar and still not the SDK.
 * (The MCP SDK is judged the same way in test/mcpCli.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

/** A loader hook that appends `url<TAB>sdk|-` per loaded module to $SWITCHYARD_LOAD_LOG (hooks run off-thread). */
const hooks = "data:text/javascript," + encodeURIComponent(
  "import * as fs from 'node:fs';" +
    "export async function load(url, context, next) {" +
    " const result = await next(url, context);" +
    " const source = result.source === undefined || result.source === null ? '' : String(result.source);" +
    " const sdk = source.includes('X-Stainless-Lang') ? 'sdk' : '-';" +
    " fs.appendFileSync(process.env.SWITCHYARD_LOAD_LOG, url + '\\t' + sdk + '\\n');" +
    " return result }"
)
const register = "data:text/javascript," + encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(hooks)})`
)

interface Loaded {
  readonly urls: ReadonlyArray<string>
  readonly sdk: boolean
  readonly terminalUi: boolean
  readonly grammar: boolean
  readonly mcpSdk: boolean
  /** The full command-line parser (main.ts, with @effect/cli): the bundle's main chunk, or dist/main.js. */
  readonly parser: boolean
}

const readLog = (file: string): Loaded => {
  const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : []
  const urls = lines.map((line) => line.split("\t")[0]!)
  return {
    urls,
    sdk: lines.some((line) => line.endsWith("\tsdk")) || urls.some((u) => u.includes("/@anthropic-ai/sdk/")),
    // The interactive UI: the bundle's Terminal chunk, or dist/Terminal.js and dist/TerminalUi.js without a bundle.
    terminalUi: urls.some((u) => /\/(Terminal|TerminalUi)(-[A-Z0-9]+)?\.js$/.test(u)),
    grammar: urls.some((u) => u.includes("/web-tree-sitter/")),
    // The SDK from node_modules, or the bundle's chunk that loads bundle/mcp-sdk.cjs (src/internal/mcpSdk.ts).
    mcpSdk: urls.some((u) => u.includes("/@modelcontextprotocol/") || /\/mcpSdk(-[A-Z0-9]+)?\.js$/.test(u)),
    parser: urls.some((u) => /\/bundle\/main-[A-Z0-9]+\.js$/.test(u) || u.endsWith("/dist/main.js"))
  }
}

/** A project like a real one, its own HOME and state directory, and the call files; removed at the end of the scope. */
const project = Effect.acquireRelease(
  Effect.sync(() => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-startup-")))
    const dir = path.join(root, "project")
    fs.mkdirSync(path.join(dir, ".claude"), { recursive: true })
    fs.mkdirSync(path.join(root, "home"))
    fs.writeFileSync(
      path.join(dir, ".claude", "settings.json"),
      JSON.stringify({ permissions: { allow: ["Read", "Bash(ls)"], deny: ["WebFetch"] }, env: { PROJECT_FLAG: "1" } })
    )
    fs.writeFileSync(path.join(dir, "CLAUDE.md"), "# Project\n\nTwo-space indent.\n")
    fs.writeFileSync(path.join(dir, "notes.txt"), "alpha\nbeta\n")
    const call = (name: string, input: Record<string, unknown>) => {
      const file = path.join(root, `${name}.json`)
      fs.writeFileSync(file, JSON.stringify([{ type: "tool_use", id: "toolu_1", name, input }]))
      return file
    }
    return {
      root,
      dir,
      env: { HOME: path.join(root, "home"), SWITCHYARD_HOME: path.join(root, "home", ".switchyard") },
      read: call("Read", { file_path: "notes.txt" }),
      bash: call("Bash", { command: "ls" })
    }
  }),
  ({ root }) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
)

/** Run the binary in the project with the hook; its result and what it loaded. */
const traced = (
  p: Effect.Effect.Success<typeof project>,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {}
) =>
  Effect.promise(async () => {
    const log = path.join(p.root, `load-${args.join("-").replace(/[^a-z]/gi, "")}.log`)
    const result = await runCli(args, {
      cwd: p.dir,
      env: { ...p.env, ...env, NODE_OPTIONS: `--import ${register}`, SWITCHYARD_LOAD_LOG: log }
    })
    return { result, loaded: readLog(log) }
  })

describe("start-up loads per command", () => {
  it.scoped(
    "-p PROMPT loads the Anthropic SDK, not the terminal UI, the shell grammar, the MCP SDK or the parser",
    () =>
      Effect.gen(function*() {
        const p = yield* project
        const server = yield* Server.start()
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
        const { loaded, result } = yield* traced(p, ["-p", "hi"], {
          ANTHROPIC_API_KEY: "sk-test",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(result.stderr).toBe("")
        expect(result.stdout).toContain("Hello there.")
        expect(server.requests.length).toBe(1)
        // The hook saw the process's modules (the entry at least), so an absence below is a real absence.
        expect(loaded.urls.some((u) => u.endsWith("/bin/switchyard.js"))).toBe(true)
        expect(loaded.sdk).toBe(true)
        expect(loaded.terminalUi).toBe(false)
        expect(loaded.grammar).toBe(false)
        expect(loaded.mcpSdk).toBe(false)
        // `-p PROMPT` runs without @effect/cli (internal/fastPrint.ts), with the options scripts pass most too
        // (printArguments.ts); with another option it loads it.
        expect(loaded.parser).toBe(false)
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
        const optioned = yield* traced(p, ["-p", "hi", "--max-turns", "2", "--output-format", "json"], {
          ANTHROPIC_API_KEY: "sk-test",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(optioned.result.stdout).toContain("Hello there.")
        expect(optioned.loaded.parser).toBe(false)
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
        const parsed = yield* traced(p, ["-p", "hi", "--max-budget-usd", "2"], {
          ANTHROPIC_API_KEY: "sk-test",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(parsed.result.stdout).toContain("Hello there.")
        expect(parsed.loaded.parser).toBe(true)
        expect(parsed.loaded.terminalUi).toBe(false)
      }),
    60_000
  )

  it.scoped(
    "tools list and a one-call Read dispatch load none of the SDK, the terminal UI, the grammar, MCP, the parser",
    () =>
      Effect.gen(function*() {
        const p = yield* project
        const list = yield* traced(p, ["tools", "list"])
        expect(list.result.code).toBe(0)
        // The project's deny rule is applied: WebFetch is hidden, as from the model.
        expect(list.result.stdout).toMatch(/^Read\s/m)
        expect(list.result.stdout).not.toMatch(/^WebFetch\s/m)
        const read = yield* traced(p, ["dispatch", p.read])
        expect(read.result.code).toBe(0)
        expect(read.result.stdout).toContain("alpha")
        for (const { loaded } of [list, read]) {
          expect(loaded.urls.some((u) => u.endsWith("/bin/switchyard.js"))).toBe(true)
          expect(loaded).toMatchObject({ sdk: false, terminalUi: false, grammar: false, mcpSdk: false, parser: false })
        }
      }),
    60_000
  )

  it.scoped(
    "the first Bash analysis loads the shell grammar, still without the SDK or the terminal UI",
    () =>
      Effect.gen(function*() {
        const p = yield* project
        // Digits sort first, so the summary line (the first line of the output) names it.
        fs.writeFileSync(path.join(p.dir, "0-listed-by-ls"), "")
        const { loaded, result } = yield* traced(p, ["dispatch", p.bash])
        expect(result.code).toBe(0)
        expect(result.stdout).toContain("success")
        expect(result.stdout).toContain("0-listed-by-ls")
        expect(loaded.grammar).toBe(true)
        expect(loaded).toMatchObject({ sdk: false, terminalUi: false, mcpSdk: false })
      }),
    60_000
  )
})
