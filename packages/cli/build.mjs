/**
 * Bundles the CLI for a fast cold start (run by the root `build`/`prepare`
 * after `tsc -b`):
 *
 * 1. esbuild bundles `src/front.ts` (and, behind it, `src/main.ts`) into
 *    `bundle/` as ESM with code splitting, so what a command imports lazily
 *    (the Anthropic SDK, tree-sitter, the terminal UI) stays in chunks that
 *    load only when it runs. `fast-check` (which `effect/Schema` imports for
 *    arbitraries, never used by the CLI) is replaced by an empty module.
 *    `bundle/` sits next to `dist/`, so `../package.json` and `../assets/`
 *    resolve alike from both.
 * 2. The help of every command (and --version) is rendered by the full parser once, here, and
 *    stored in `bundle/help.json`; the front prints it without loading
 *    `@effect/cli`.
 * 3. `tools list`, `tools list --json` and `tools schema NAME` (every tool and
 *    alias) are rendered by the full parser in a fresh working directory and
 *    home (once more with SWITCHYARD_HOME set to a fresh directory), under a
 *    preload (scripts/recordAccess.mjs) that records what the command read.
 *    `bundle/tools.json` stores the pages with those inputs as conditions:
 *    every variable read must be unset and every path touched must be as it
 *    was (absent, or a directory), so a settings file, an `.mcp.json` or
 *    `SWITCHYARD_SIMPLE` sends the command to the full parser. A page is left
 *    out when it failed, wrote to stderr, named its directories, read a file,
 *    called `node:os`, started a process or enumerated the environment.
 * 4. The MCP SDK and its dependencies are bundled into one CommonJS file,
 *    `bundle/mcp-sdk.cjs`, with V8's code cache beside it (written by a
 *    process under the launcher's V8 flags); the CLI's imports of the SDK
 *    load it through src/internal/mcpSdk.ts (≈ 0.35 → 0.05–0.09 s of CPU).
 * 5. The start-up snapshots (scripts/snapshot.mjs).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import * as esbuild from "esbuild"
import { buildSnapshot, flags as snapshotFlags } from "./scripts/snapshot.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const outdir = path.join(here, "bundle")
const recorder = path.join(here, "scripts", "recordAccess.mjs")

/** Modules the CLI never needs at run time, replaced by an empty ES module. */
const emptied = ["fast-check", "pure-rand"]

const emptyModules = {
  name: "empty-modules",
  setup(build) {
    const filter = new RegExp(`^(${emptied.join("|")})(/.*)?$`)
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "empty" }))
    build.onLoad({ filter: /.*/, namespace: "empty" }, () => ({ contents: "export {}", loader: "js" }))
  }
}

/**
 * The CLI's `import()` of the MCP SDK (in the tools package) loads src/internal/mcpSdk.ts instead, which runs
 * bundle/mcp-sdk.cjs from its code cache.
 */
const mcpSdkModule = {
  name: "mcp-sdk-module",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/client(\/stdio)?$/ }, () => ({
      path: path.join(here, "src", "internal", "mcpSdk.ts")
    }))
  }
}

// Skip when nothing the bundle is made of changed since it was built (the test setup runs this every time).
const root = path.join(here, "..", "..")
const newestInput = () => {
  let newest = 0
  const visit = (p) => {
    const stat = fs.statSync(p)
    if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) visit(path.join(p, entry))
    else newest = Math.max(newest, stat.mtimeMs)
  }
  for (const pkg of ["core", "tools", "durable", "cli"]) {
    visit(path.join(root, "packages", pkg, "src"))
    visit(path.join(root, "packages", pkg, "package.json"))
  }
  visit(fileURLToPath(import.meta.url))
  visit(recorder)
  visit(path.join(here, "scripts", "snapshot.mjs"))
  const lock = path.join(root, "node_modules", ".package-lock.json")
  if (fs.existsSync(lock)) visit(lock)
  return String(newest)
}
const stamp = path.join(outdir, "stamp")
const inputs = newestInput()
if (!process.argv.includes("--force") && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === inputs) {
  process.exit(0)
}

fs.rmSync(outdir, { recursive: true, force: true })
// The tree-sitter runtime finds its own .wasm next to its module, so it is loaded from node_modules.
// The MCP SDK too: it loads only when servers are configured (a test traces that import).
// The journal's SQLite binding (libsql) is a native module, loaded from node_modules; pg's optional
// native driver is never used.
const external = ["web-tree-sitter", "tree-sitter-bash", "libsql", "pg-native"]
const plugins = [emptyModules, mcpSdkModule]
await esbuild.build({
  entryPoints: { front: path.join(here, "src/bin.ts"), main: path.join(here, "src/internal/mainEntry.ts") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  plugins,
  chunkNames: "[name]-[hash]",
  // Bundled CommonJS dependencies call `require`; give the ESM chunks one.
  banner: { js: "import { createRequire as __switchyardRequire } from 'node:module'; const require = __switchyardRequire(import.meta.url);" },
  logLevel: "warning",
  legalComments: "none",
  minify: process.env.SWITCHYARD_NO_MINIFY === undefined
})
fs.writeFileSync(path.join(outdir, "package.json"), JSON.stringify({ type: "module" }) + "\n")

const run = promisify(execFile)
const asTerminal = "data:text/javascript,process.stdout.isTTY=true"

/** Run the bundled full parser (not the front) with these arguments; its stdout as a terminal would see it. */
const renderFull = async (args) =>
  (await run(process.execPath, ["--import", asTerminal, path.join(outdir, "main.js"), ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: undefined, TERM: "xterm-256color", FORCE_COLOR: undefined }
  })).stdout

/** `f` over `items`, a few at a time (each item is a Node process), in order. */
const mapConcurrently = async (items, f) => {
  const results = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await f(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(items.length, Math.max(2, os.availableParallelism())) }, worker))
  return results
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/**
 * The command paths the root help lists (`run`, `tools list`, …): the lines
 * of its commands section indented by two spaces (`  - run …` or `  run …`),
 * up to the next unindented line; their leading lower-case words.
 */
export const commandPaths = (rootHelp) => {
  const lines = rootHelp.replace(ANSI, "").split("\n")
  const start = lines.findIndex((line) => /^(COMMANDS|Commands:?)\s*$/.test(line))
  const paths = []
  if (start === -1) return paths
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break
    const match = /^ {2}(?:- )?([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?= |$)/.exec(line)
    if (match !== null) paths.push(match[1])
  }
  return [...new Set(paths)]
}

/** The arguments the front answers: --version, --help and every command's --help. */
export const frontArguments = (rootHelp) => [["--version"], ["--help"], ...commandPaths(rootHelp).map((p) => [...p.split(" "), "--help"])]

/** What a path is: the front compares this kind, so a file that appears (a settings file) counts as a change. */
const kindOf = (p) => {
  try {
    const stat = fs.statSync(p, { throwIfNoEntry: false })
    return stat === undefined ? "absent" : stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other"
  } catch {
    return "other"
  }
}

/**
 * Variables that name a directory the commands read settings from. The
 * `tools` pages are rendered once with each unset and once with each set to a
 * fresh directory, so the front can answer for both.
 */
const directoryVariables = ["SWITCHYARD_HOME"]

/**
 * Render `tools …` with the full parser, as a terminal sees it, in a fresh
 * working directory and home, with nothing in the environment but PATH, HOME,
 * TERM and the `set` directory variables, recording what it read. Paths
 * under those directories are stored as `<cwd>/…` and `$NAME/…`. Resolves to
 * the page and its conditions, or to the reason it cannot be stored.
 */
const renderRecorded = async (args, set) => {
  let scratch
  try {
    scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-build-")))
    const dirs = { "<cwd>": path.join(scratch, "project"), $HOME: path.join(scratch, "home") }
    for (const name of set) dirs[`$${name}`] = path.join(scratch, name.toLowerCase())
    for (const dir of Object.values(dirs)) fs.mkdirSync(dir)
    const log = path.join(scratch, "access.json")
    const env = { PATH: process.env.PATH, TERM: "xterm-256color", SWITCHYARD_ACCESS_LOG: log }
    for (const [name, dir] of Object.entries(dirs)) if (name.startsWith("$")) env[name.slice(1)] = dir
    const preload = ["--import", pathToFileURL(recorder).href, "--import", asTerminal]
    const { stdout, stderr } = await run(process.execPath, [...preload, path.join(outdir, "main.js"), ...args], {
      cwd: dirs["<cwd>"],
      encoding: "utf8",
      env
    })
    const access = JSON.parse(fs.readFileSync(log, "utf8"))
    if (access.enumerated) return { reason: "it enumerated the environment" }
    if (access.spawned) return { reason: "it started a process" }
    if (access.os.length > 0) return { reason: `it called os.${access.os.join(", os.")}` }
    if (stderr !== "") return { reason: `it wrote to stderr: ${stderr}` }
    if (stdout.includes(scratch)) return { reason: "it names its directories" }
    const paths = []
    for (const p of access.paths) {
      // Module loading (the bundle, node_modules) is code, not input.
      if (p === here || p.startsWith(here + path.sep) || p.split(path.sep).includes("node_modules")) continue
      const kind = kindOf(p)
      if (kind !== "absent" && kind !== "directory") return { reason: `it read ${p}` }
      const [name, dir] = Object.entries(dirs).find(([, dir]) => p === dir || p.startsWith(dir + path.sep)) ?? ["", ""]
      paths.push([name === "" ? p : name + p.slice(dir.length), kind])
    }
    // The front handles these itself: colour (NO_COLOR, TERM) and the directories.
    const handled = new Set(["HOME", "NO_COLOR", "TERM", "SWITCHYARD_ACCESS_LOG", ...set])
    return { page: stdout, variables: access.variables.filter((name) => !handled.has(name)), paths }
  } catch (error) {
    return { reason: error instanceof Error ? error.message.split("\n")[0] : String(error) }
  } finally {
    if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * The `tools` pages the front may print with these directory variables set,
 * and their conditions; pages that cannot be stored are reported.
 */
const renderToolPages = async (set) => {
  const label = (args) => `${args.join(" ")}${set.length === 0 ? "" : ` (with ${set.join(", ")})`}`
  const list = await renderRecorded(["tools", "list", "--json"], set)
  if (list.page === undefined) {
    return { set, variables: [], paths: [], pages: {}, skipped: [`${label(["tools", "list", "--json"])}: ${list.reason}`] }
  }
  const names = JSON.parse(list.page.replace(ANSI, "")).flatMap((tool) => [tool.name, ...tool.aliases])
  const argsList = [["tools", "list"], ...names.map((name) => ["tools", "schema", name])]
  const others = await mapConcurrently(argsList, async (args) => [args, await renderRecorded(args, set)])
  const rendered = [[["tools", "list", "--json"], list], ...others]
  const pages = {}
  const variables = new Set()
  const paths = new Map()
  const skipped = []
  for (const [args, result] of rendered) {
    if (result.page === undefined) {
      skipped.push(`${label(args)}: ${result.reason}`)
      continue
    }
    pages[args.join(" ")] = result.page
    for (const variable of result.variables) variables.add(variable)
    for (const [p, kind] of result.paths) paths.set(p, kind)
  }
  return {
    set,
    variables: [...variables].sort(),
    paths: [...paths].sort().map(([p, kind]) => ({ path: p, kind })),
    pages,
    skipped
  }
}

/**
 * `bundle/mcp-sdk.cjs` (what src/internal/mcpSdk.ts loads) and its code cache, written and then tried by a process
 * under the launcher's V8 flags (a cache made under other flags is refused). Resolves to a line for the log.
 */
async function buildMcpSdk() {
  const file = path.join(outdir, "mcp-sdk.cjs")
  await esbuild.build({
    stdin: {
      contents: 'export { Client, StreamableHTTPClientTransport, SSEClientTransport } from "@modelcontextprotocol/client"\n' +
        'export { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio"\n',
      resolveDir: here,
      loader: "js"
    },
    outfile: file,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // A vm.Script has no dynamic import(): a bundled module's becomes require().
    supported: { "dynamic-import": false },
    logLevel: "warning",
    legalComments: "none",
    minify: process.env.SWITCHYARD_NO_MINIFY === undefined
  })
  const compiled = pathToFileURL(path.join(here, "dist", "internal", "compiledScript.js")).href
  const inChild = (code) =>
    run(process.execPath, [...snapshotFlags, "--input-type=module", "-e", `import * as C from ${JSON.stringify(compiled)}\n${code}`], {
      encoding: "utf8"
    })
  await inChild(`C.writeCache(${JSON.stringify(file)})`)
  const { stdout } = await inChild(`process.stdout.write(C.run(${JSON.stringify(file)}).cache)`)
  const size = `${(fs.statSync(file).size / 2 ** 10).toFixed(0)} kB`
  if (stdout !== "accepted") console.warn(`cli bundle: V8 refused mcp-sdk.cjs's code cache (${stdout})`)
  return `the MCP SDK in mcp-sdk.cjs (${size}, code cache ${stdout})`
}

const rootHelp = await renderFull(["--help"])
const pages = Object.fromEntries(
  await mapConcurrently(frontArguments(rootHelp), async (args) => [args.join(" "), await renderFull(args)])
)
fs.writeFileSync(path.join(outdir, "help.json"), JSON.stringify(pages) + "\n")
const variants = [await renderToolPages([]), await renderToolPages(directoryVariables)]
for (const line of variants.flatMap((variant) => variant.skipped)) console.warn(`cli bundle: the front will not print ${line}`)
fs.writeFileSync(
  path.join(outdir, "tools.json"),
  JSON.stringify({ variants: variants.map(({ skipped, ...variant }) => variant) }) + "\n"
)
const mcpSdk = await buildMcpSdk()
const snapshot = await buildSnapshot({ here, outdir, external, plugins })
fs.writeFileSync(stamp, inputs)
console.log(`cli bundle: ${mcpSdk}`)
console.log(`cli bundle: ${snapshot}`)
console.log(
  `cli bundle: ${Object.keys(pages).length} help pages and ` +
    `${variants.map((v) => Object.keys(v.pages).length).join(" + ")} tools pages rendered for the front`
)
