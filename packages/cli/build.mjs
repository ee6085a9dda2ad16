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
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const here = path.dirname(fileURLToPath(import.meta.url))
const outdir = path.join(here, "bundle")

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

/** Run the bundled full parser (not the front) with these arguments; its stdout as a terminal would see it. */
const renderFull = (args) =>
  execFileSync(process.execPath, ["--import", `data:text/javascript,process.stdout.isTTY=true`, path.join(outdir, "main.js"), ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: undefined, TERM: "xterm-256color", FORCE_COLOR: undefined }
  })

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

const rootHelp = renderFull(["--help"])
const pages = {}
for (const args of frontArguments(rootHelp)) pages[args.join(" ")] = renderFull(args)
fs.writeFileSync(path.join(outdir, "help.json"), JSON.stringify(pages) + "\n")
fs.writeFileSync(stamp, inputs)
console.log(`cli bundle: ${Object.keys(pages).length} pages rendered for the front`)
