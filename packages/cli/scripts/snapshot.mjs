/**
 * Builds the CLI's start-up snapshot (run by build.mjs after the bundle):
 *
 * 1. esbuild bundles src/internal/snapshot.ts, and everything the commands import (lazily or not), into one
 *    CommonJS script, `bundle/snapshot.cjs` (a Node 20 snapshot takes one script, no ES modules);
 *    src/internal/snapshotLight.ts, only what `tools list` and `dispatch FILE` run, into
 *    `bundle/snapshot-light.cjs`; and src/internal/snapshotPrint.ts, only what `-p PROMPT` runs, into
 *    `bundle/snapshot-print.cjs`.
 * 2. `node --build-snapshot` runs each and writes the heap to `bundle/snapshot.blob` (and
 *    `snapshot-light.blob`, `snapshot-print.blob`): Effect, the engine, the tools and the common commands
 *    loaded, evaluated and compiled.
 * 3. Each blob is tried (`--version`, an empty `dispatch`, or `-p` without an API key must answer) and
 *    `bundle/snapshot.node` records the Node binary they belong to (its size and modification time, then its
 *    path): bin/switchyard starts that binary from a blob only while it is the same file, and falls back to
 *    bin/switchyard.js otherwise.
 *
 * What a snapshot cannot hold is deferred to the first use after it is started: the built-in modules Node does
 * not support in a snapshot (lib/internal/main/mksnapshot.js: http, child_process, tty, readline, …) are
 * stand-ins that load the real module on first access, and packages outside the bundle (tree-sitter, the MCP
 * SDK, libsql) are required from node_modules when first imported. Array methods V8 installs only after
 * deserializing (`toSorted` and friends) are lent to the build and removed before the heap is written.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import { builtinModules, createRequire } from "node:module"
import * as path from "node:path"
import { promisify } from "node:util"
import * as esbuild from "esbuild"

const run = promisify(execFile)
const require = createRequire(import.meta.url)

/** Built-ins a snapshot cannot hold (Node 20's list of supported modules, inverted): loaded on first use. */
const deferredBuiltins = [
  "_http_agent", "_http_client", "_http_common", "_http_incoming", "_http_outgoing", "_http_server", "_tls_common",
  "_tls_wrap", "async_hooks", "child_process", "cluster", "dgram", "dns/promises", "domain", "http", "http2",
  "https", "inspector", "module", "perf_hooks", "readline", "readline/promises", "repl", "tls", "trace_events",
  "tty", "vm", "worker_threads"
]

/** V8 flags the blob is built and started with; a snapshot only starts under the flags it was built with. */
export const flags = ["--liftoff-only"]

/**
 * Packages the commands import only when they need them (`import()`: WebFetch's HTML to Markdown, the JSON Schema
 * validator of `--json-schema`, the PostgreSQL driver of a `postgres://` journal), and that share no state with
 * Effect: left out of the snapshot's script, they are required from node_modules on first use instead of being in
 * the heap every process deserialises (≈ 0.4 MB of source).
 */
const lateExternal = ["node-html-markdown", "ajv", "pg"]

/**
 * Packages outside the bundle that a module the snapshot evaluates imports statically (the journal's SQLite
 * binding, a native module): stand-ins too, required from node_modules on first access.
 */
const deferredPackages = ["libsql"]

/**
 * Runs first in the script: lends the build the array methods it lacks, removed again before the heap is
 * written (V8 installs the real ones when the snapshot starts and refuses to find them there already).
 */
const lend = `for (const [name, method] of [
  ["toSorted", function (compare) { return this.slice().sort(compare) }],
  ["toReversed", function () { return this.slice().reverse() }],
  ["toSpliced", function (...args) { const copy = this.slice(); copy.splice(...args); return copy }],
  ["with", function (index, value) { const copy = this.slice(); copy[index < 0 ? copy.length + index : index] = value; return copy }]
]) {
  if (typeof Array.prototype[name] !== "function") {
    Object.defineProperty(Array.prototype, name, { value: method, writable: true, configurable: true })
    require("node:v8").startupSnapshot.addSerializeCallback(() => {
      if (Array.prototype[name] === method) delete Array.prototype[name]
    })
  }
}
`

/** The \`require\` the bundled script sees: built-ins, deferred built-ins, and packages from \`from\`'s node_modules. */
const requireShim = (from, keys, packageKeys) => `(() => {
  const base = require
  const building = () => base("node:v8").startupSnapshot.isBuildingSnapshot()
  const keys = ${JSON.stringify(keys)}
  const packageKeys = ${JSON.stringify(packageKeys)}
  const builtins = new Set(${JSON.stringify(builtinModules)})
  // createRequire at build time: only JSON (package.json for the version) may be read then.
  const moduleAtBuild = {
    createRequire: (url) => {
      const dir = base("node:path").dirname(base("node:url").fileURLToPath(url))
      let real
      const get = () => real ??= base("node:module").createRequire(url)
      const required = (id) => {
        if (!building()) return get()(id)
        if (id.endsWith(".json")) return JSON.parse(base("node:fs").readFileSync(base("node:path").resolve(dir, id), "utf8"))
        throw new Error("the snapshot's build required " + id + " while loading")
      }
      required.resolve = (id, options) => get().resolve(id, options)
      return required
    }
  }
  let outside
  const required = (id) => {
    if (building()) throw new Error("the snapshot's build required " + id + " while loading")
    outside ??= base("node:module").createRequire(${JSON.stringify(from)})
    return outside(id)
  }
  // A stand-in answers the property names the real module had when the bundle was built (so esbuild's
  // interop can copy them) and loads the real module when one is read.
  const standIns = new Map()
  // A module that is a function (libsql's Database class) gets a function to stand on, so it can be called
  // and constructed; the target's own "prototype" is reported as it is (a proxy may not hide it).
  const standIn = ([callable, names], load) => {
    let real
    const get = () => real ??= load()
    const target = callable ? function () { "use strict" } : {}
    const own = callable ? [...names.filter((name) => name !== "prototype"), "prototype"] : names
    const proxy = new Proxy(target, {
      get: (_, key) => get()[key],
      has: (_, key) => key in get(),
      ownKeys: () => [...own],
      getOwnPropertyDescriptor: (_, key) =>
        callable && key === "prototype"
          ? Reflect.getOwnPropertyDescriptor(target, key)
          : names.includes(key) ? { configurable: true, enumerable: true, writable: true, value: undefined } : undefined,
      apply: (_, self, args) => Reflect.apply(get(), self, args),
      construct: (_, args, newTarget) => Reflect.construct(get(), args, newTarget === proxy ? get() : newTarget)
    })
    return proxy
  }
  const cached = (id, make) => {
    if (!standIns.has(id)) standIns.set(id, make())
    return standIns.get(id)
  }
  return (id) => {
    const bare = id.startsWith("node:") ? id.slice(5) : id
    if (Object.hasOwn(keys, bare)) {
      return cached(bare, () =>
        standIn([false, keys[bare]], () => bare === "module" && building() ? moduleAtBuild : base("node:" + bare)))
    }
    if (id.startsWith("node:") || builtins.has(id)) return base(id)
    if (Object.hasOwn(packageKeys, id)) return cached(id, () => standIn(packageKeys[id], () => required(id)))
    return required(id)
  }
})()`

/**
 * The snapshots: the full one (every command, main.ts's parser behind the front), the light one for the
 * commands scripts call most (`tools list`, `dispatch FILE`) and the print one for `-p PROMPT`
 * (src/internal/frontStart.ts's `fastCommand`, which bin/switchyard mirrors), smaller and so cheaper to
 * deserialise. `check` is run from the blob (with `input` on
 * stdin) and must answer as `expected` says: the full one its version, the light one a dispatch of nothing
 * refused as bad input (its decoding and error reporting ran), the print one a prompt refused for want of an
 * API key (settings read, the model's setup ran).
 */
const snapshots = (version) => [
  {
    name: "snapshot",
    entry: "src/internal/snapshot.ts",
    check: { args: ["--version"], input: "", expected: ({ code, stdout }) => code === 0 && stdout.trim() === version }
  },
  {
    name: "snapshot-light",
    entry: "src/internal/snapshotLight.ts",
    check: {
      args: ["dispatch", "-"],
      input: "[]",
      expected: ({ code, stderr }) => code === 2 && stderr === "switchyard: stdin has no tool_use blocks\n"
    }
  },
  {
    name: "snapshot-print",
    entry: "src/internal/snapshotPrint.ts",
    // Without an API key, in a fresh home (so no settings can give one): settings read, the model's setup
    // refuses before any request is made (ModelLayer's message), reported as every command reports.
    check: {
      args: ["-p", "hi"],
      input: "",
      freshHome: true,
      expected: ({ code, stderr }) => code === 2 && stderr.startsWith("switchyard: No API key")
    }
  }
]

/** Run `node args…` with `input` on stdin; resolves to its exit code and output (a failed exit too). */
const answer = (args, input, cwd, env = process.env) =>
  new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd, env }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : error.code, stdout, stderr }))
    child.stdin?.end(input)
  })

/** `check` run from `blob`: in a fresh home with only PATH set when it asks for one (removed afterwards). */
const tryBlob = async (blob, check, cwd) => {
  const args = [...flags, "--snapshot-blob", blob, "--", ...check.args]
  if (check.freshHome !== true) return answer(args, check.input, cwd)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-snapshot-check-"))
  try {
    const env = { PATH: process.env.PATH, HOME: home, SWITCHYARD_HOME: path.join(home, "state") }
    return await answer(args, check.input, home, env)
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
  }
}

/** Bundle `entry` into `<name>.cjs`, run it with `--build-snapshot` into `<name>.blob` and start it once. */
const buildOne = async ({ here, outdir, external, plugins, keys, packageKeys }, { name, entry, check }) => {
  const script = path.join(outdir, `${name}.cjs`)
  const blob = path.join(outdir, `${name}.blob`)
  // Modules resolve their files (package.json, assets) next to the bundle's chunks, as in bundle/*.js.
  const url = new URL(`file://${script}`).href
  await esbuild.build({
    entryPoints: [path.join(here, entry)],
    outfile: script,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    external: [...external, ...lateExternal],
    plugins,
    // import() of a package outside the bundle becomes require(): a snapshot has no ES module loader.
    supported: { "dynamic-import": false },
    define: {
      "import.meta.url": JSON.stringify(url),
      SWITCHYARD_SNAPSHOT_BIN: JSON.stringify(path.join(here, "bin", "switchyard.js"))
    },
    banner: { js: `${lend}(function (require) {` },
    footer: { js: `})(${requireShim(script, keys, packageKeys)});` },
    logLevel: "error",
    legalComments: "none",
    minify: process.env.SWITCHYARD_NO_MINIFY === undefined
  })
  const report = path.join(outdir, `${name}.warm-up`)
  fs.rmSync(report, { force: true })
  await run(process.execPath, [...flags, "--snapshot-blob", blob, "--build-snapshot", script], {
    cwd: outdir,
    env: { ...process.env, SWITCHYARD_SNAPSHOT_REPORT: report }
  })
  const warmUp = fs.existsSync(report) ? fs.readFileSync(report, "utf8").split("\n")[0] : undefined
  fs.rmSync(report, { force: true })
  const answered = await tryBlob(blob, check, outdir)
  if (!check.expected(answered)) {
    throw new Error(`started from ${name}.blob, ${check.args.join(" ")} answered ${JSON.stringify(answered)}`)
  }
  return `${(fs.statSync(blob).size / 2 ** 20).toFixed(1)} MB` +
    (warmUp === undefined ? "" : ` (its warm-up failed: ${warmUp})`)
}

/**
 * Build `bundle/snapshot{,-light,-print}.{cjs,blob}` and `bundle/snapshot.node`; resolves to a line for the build's
 * log.
 * A failure removes them (the binary then starts from the bundle) and is reported, not thrown: the snapshot only
 * makes starting faster.
 */
export const buildSnapshot = async ({ here, outdir, external, plugins }) => {
  const stamp = path.join(outdir, "snapshot.node")
  const version = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8")).version
  const remove = () => {
    for (const { name } of snapshots(version)) {
      for (const file of [`${name}.cjs`, `${name}.blob`]) fs.rmSync(path.join(outdir, file), { force: true })
    }
    fs.rmSync(stamp, { force: true })
  }
  try {
    const keys = Object.fromEntries(deferredBuiltins.map((id) => [id, Object.getOwnPropertyNames(require(`node:${id}`))]))
    const fromCli = createRequire(path.join(here, "package.json"))
    const packageKeys = Object.fromEntries(deferredPackages.map((id) => {
      const loaded = fromCli(id)
      return [id, [typeof loaded === "function", Object.getOwnPropertyNames(loaded)]]
    }))
    const options = { here, outdir, external, plugins, keys, packageKeys }
    // One at a time: each build runs the warm-up, and the machine may be shared.
    const sizes = []
    for (const snapshot of snapshots(version)) sizes.push(`${snapshot.name} ${await buildOne(options, snapshot)}`)
    const node = fs.realpathSync(process.execPath)
    const info = fs.statSync(node)
    fs.writeFileSync(stamp, `${info.size}:${Math.floor(info.mtimeMs / 1000)} ${node}\n`)
    return `start-up snapshots for ${process.version}: ${sizes.join(", ")}`
  } catch (error) {
    if (process.env.SWITCHYARD_KEEP_SNAPSHOT === undefined) remove()
    // Node's warnings about built-ins in a snapshot come first on stderr; the error is the line that says so.
    const lines = String(error instanceof Error ? error.stderr || error.message : error).split("\n")
      .filter((line) => line.trim() !== "" && !/^\(node:\d+\) Warning|^It may still|^To request|^\(Use `node/.test(line))
    const message = lines.find((line) => /Error|error/.test(line)) ?? lines[0]
    return `no start-up snapshot (${message}); the binary starts from the bundle`
  }
}
