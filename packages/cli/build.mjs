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
 *    home, under a preload (scripts/recordAccess.mjs) that records what the
 *    command read. `bundle/tools.json` stores the pages with those inputs as
 *    conditions: every variable read must be unset and every path touched
 *    must be as it was (absent, or a directory), so a settings file, an
 *    `.mcp.json` or `SWITCHYARD_SIMPLE` sends the command to the full parser.
 *    A page is left out when it failed, wrote to stderr, named the scratch
 *    directories, read a file, called `node:os`, started a process or
 *    enumerated the environment, or when its terminal and piped renderings differ by more
 *    than colour.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import * as esbuild from "esbuild"

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

// Skip when nothing the bundle is made of changed since it was built (the test setup runs this every time).
const root = path.join(here, "..", "..")
const newestInput = () => {
  let newest = 0
  const visit = (p) => {
    const stat = fs.statSync(p)
    if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) visit(path.join(p, entry))
    else newest = Math.max(newest, stat.mtimeMs)
  }
  for (const pkg of ["core", "tools", "cli"]) {
    visit(path.join(root, "packages", pkg, "src"))
    visit(path.join(root, "packages", pkg, "package.json"))
  }
  visit(fileURLToPath(import.meta.url))
  visit(recorder)
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
await esbuild.build({
  entryPoints: { front: path.join(here, "src/front.ts"), main: path.join(here, "src/main.ts") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // The tree-sitter runtime finds its own .wasm next to its module, so it is loaded from node_modules.
  // The MCP SDK too: it loads only when servers are configured (a test traces that import).
  external: ["web-tree-sitter", "tree-sitter-bash", "@modelcontextprotocol/client"],
  plugins: [emptyModules],
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
 * Render `tools …` with the full parser in a fresh working directory and home
 * and nothing in the environment but PATH, HOME and TERM, recording what it
 * read. Resolves to the page (as a terminal sees it) and its conditions, or
 * to the reason it cannot be stored.
 */
const renderRecorded = async (args) => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-build-")))
  const cwd = path.join(scratch, "project")
  const home = path.join(scratch, "home")
  fs.mkdirSync(cwd)
  fs.mkdirSync(home)
  const once = async (terminal) => {
    const log = path.join(scratch, `access-${terminal}.json`)
    const preload = ["--import", pathToFileURL(recorder).href, ...(terminal ? ["--import", asTerminal] : [])]
    const { stdout, stderr } = await run(process.execPath, [...preload, path.join(outdir, "main.js"), ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: home, TERM: "xterm-256color", SWITCHYARD_ACCESS_LOG: log }
    })
    return { stdout, stderr, access: JSON.parse(fs.readFileSync(log, "utf8")) }
  }
  try {
    const [terminal, piped] = [await once(true), await once(false)]
    const paths = new Map()
    for (const { access } of [terminal, piped]) {
      if (access.enumerated) return { reason: "it enumerated the environment" }
      if (access.spawned) return { reason: "it started a process" }
      if (access.os.length > 0) return { reason: `it called os.${access.os.join(", os.")}` }
      for (const p of access.paths) {
        // Module loading (the bundle, node_modules) is code, not input.
        if (p === here || p.startsWith(here + path.sep) || p.split(path.sep).includes("node_modules")) continue
        const kind = kindOf(p)
        if (kind !== "absent" && kind !== "directory") return { reason: `it read ${p}` }
        const under = (dir, name) => (p === dir || p.startsWith(dir + path.sep) ? name + p.slice(dir.length) : undefined)
        paths.set(under(cwd, "<cwd>") ?? under(home, "<home>") ?? p, kind)
      }
    }
    if (terminal.stderr !== "" || piped.stderr !== "") return { reason: `it wrote to stderr: ${terminal.stderr || piped.stderr}` }
    if (terminal.stdout.replace(ANSI, "") !== piped.stdout) return { reason: "a terminal sees more than colour" }
    if (terminal.stdout.includes(scratch)) return { reason: "it names the working directory" }
    const variables = new Set([...terminal.access.variables, ...piped.access.variables])
    // The front handles these itself: colour (NO_COLOR, TERM) and the home directory.
    for (const handled of ["HOME", "NO_COLOR", "TERM", "SWITCHYARD_ACCESS_LOG"]) variables.delete(handled)
    return { page: terminal.stdout, variables: [...variables], paths: [...paths] }
  } catch (error) {
    return { reason: error instanceof Error ? error.message.split("\n")[0] : String(error) }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** The `tools` pages the front may print, with their conditions; pages that cannot be stored are reported. */
const renderToolPages = async () => {
  const list = await renderRecorded(["tools", "list", "--json"])
  if (list.page === undefined) return { pages: {}, variables: [], paths: [], skipped: [`tools list --json: ${list.reason}`] }
  const names = JSON.parse(list.page.replace(ANSI, "")).flatMap((tool) => [tool.name, ...tool.aliases])
  const argsList = [["tools", "list"], ...names.map((name) => ["tools", "schema", name])]
  const rendered = [[["tools", "list", "--json"], list], ...(await mapConcurrently(argsList, async (args) => [args, await renderRecorded(args)]))]
  const pages = {}
  const variables = new Set()
  const paths = new Map()
  const skipped = []
  for (const [args, result] of rendered) {
    if (result.page === undefined) {
      skipped.push(`${args.join(" ")}: ${result.reason}`)
      continue
    }
    pages[args.join(" ")] = result.page
    for (const variable of result.variables) variables.add(variable)
    for (const [p, kind] of result.paths) paths.set(p, kind)
  }
  return {
    pages,
    variables: [...variables].sort(),
    paths: [...paths].sort().map(([p, kind]) => ({ path: p, kind })),
    skipped
  }
}

const rootHelp = await renderFull(["--help"])
const pages = Object.fromEntries(await mapConcurrently(frontArguments(rootHelp), async (args) => [args.join(" "), await renderFull(args)]))
fs.writeFileSync(path.join(outdir, "help.json"), JSON.stringify(pages) + "\n")
const tools = await renderToolPages()
for (const line of tools.skipped) console.warn(`cli bundle: the front will not print ${line}`)
fs.writeFileSync(path.join(outdir, "tools.json"), JSON.stringify({ variables: tools.variables, paths: tools.paths, pages: tools.pages }) + "\n")
fs.writeFileSync(stamp, inputs)
console.log(`cli bundle: ${Object.keys(pages).length} help pages and ${Object.keys(tools.pages).length} tools pages rendered for the front`)
