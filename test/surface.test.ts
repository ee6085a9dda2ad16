/**
 * The packages' public surface, as an embedder meets it: the built packages
 * imported by their public names in a separate Node process (so `exports` in
 * each package.json decides, not the test's aliases). The root of
 * `@switchyard/core` exports the modules an embedder uses and not the internal
 * ones; every `internal/*` module is refused by Node; the entry points the
 * README and docs/DESIGN.md name are there; and no file outside a package
 * imports its internals.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const packages = ["core", "tools", "durable", "cli"] as const

const internalModules = (pkg: string): Array<string> => {
  const dir = path.join(root, "packages", pkg, "src", "internal")
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `@switchyard/${pkg}/internal/${name.replace(/\.ts$/, "")}`)
}

interface Probe {
  /** Entry → namespace → its run-time members (name → typeof). */
  readonly entries: Record<string, Record<string, Record<string, string>>>
  /** Entry → export → its typeof. */
  readonly kinds: Record<string, Record<string, string>>
  /** Specifier → the error code importing it failed with, or "loaded". */
  readonly refused: Record<string, string>
}

/** Import the entries and the internal modules from a child process at the repository root. */
const probe = (entries: ReadonlyArray<string>, internals: ReadonlyArray<string>): Probe => {
  const script = `
    const entries = ${JSON.stringify(entries)}, internals = ${JSON.stringify(internals)}
    const out = { entries: {}, kinds: {}, refused: {} }
    for (const entry of entries) {
      const module = await import(entry)
      out.entries[entry] = {}
      out.kinds[entry] = {}
      for (const [name, value] of Object.entries(module)) {
        out.kinds[entry][name] = typeof value
        const members = {}
        if (value !== null && typeof value === "object") {
          for (const [member, inner] of Object.entries(value)) members[member] = typeof inner
        }
        out.entries[entry][name] = members
      }
    }
    for (const specifier of internals) {
      try { await import(specifier); out.refused[specifier] = "loaded" }
      catch (error) { out.refused[specifier] = error.code ?? String(error) }
    }
    process.stdout.write(JSON.stringify(out))
  `
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024
  })
  return JSON.parse(stdout) as Probe
}

const internals = packages.flatMap(internalModules)
const result = probe(
  [
    "@switchyard/core",
    "@switchyard/tools",
    "@switchyard/durable",
    "@switchyard/cli",
    "@switchyard/core/anthropic",
    "@switchyard/core/Validation"
  ],
  internals
)
const core = result.entries["@switchyard/core"]!
const tools = result.entries["@switchyard/tools"]!

/** `namespace.member` must exist with this `typeof`. */
const expectApi = (
  surface: Record<string, Record<string, string>>,
  api: Record<string, Record<string, "function" | "object">>
) => {
  const missing: Array<string> = []
  for (const [namespace, members] of Object.entries(api)) {
    for (const [member, kind] of Object.entries(members)) {
      const actual = surface[namespace]?.[member]
      if (actual !== kind) missing.push(`${namespace}.${member}: ${actual ?? "absent"}, expected ${kind}`)
    }
  }
  expect(missing).toEqual([])
}

describe("the public surface", () => {
  it("@switchyard/core's root exports the embedder's modules, and only those", () => {
    expect(Object.keys(core).sort()).toEqual([
      "Batches",
      "DispatchEvent",
      "Execution",
      "Footprint",
      "HookRunner",
      "Hooks",
      "Interruption",
      "Journal",
      "Messages",
      "Model",
      "OverlayFileSystem",
      "PermissionChain",
      "PermissionContext",
      "Permissions",
      "QueryLoop",
      "Registry",
      "ReplayModel",
      "Results",
      "Sandbox",
      "Settings",
      "ShellAnalysis",
      "Speculation",
      "StreamingExecutor",
      "SuggestionGenerator",
      "Tool",
      "ToolCall",
      "ToolSearch",
      "ToolUseContext"
    ])
    // The internal steps stay reachable by their module name for the sibling packages.
    expect(result.entries["@switchyard/core/Validation"]!["decodeInput"]).toBeDefined()
  })

  it("@switchyard/tools's root exports every built-in tool's module, the MCP modules, the shell analysis, the sandbox and Claude Code's permission chain", () => {
    expect(Object.keys(tools).sort()).toEqual([
      "Agent",
      "BackgroundShells",
      "Bash",
      "Builtins",
      "ClaudeCodePermissions",
      "Edit",
      "Glob",
      "Grep",
      "McpConfig",
      "McpServers",
      "NotebookEdit",
      "Read",
      "Sandbox",
      "ShellCommand",
      "TodoWrite",
      "WebFetch",
      "Write"
    ])
  })

  it("the entry points the README and the design name are there", () => {
    expectApi(core, {
      Tool: { make: "function", layer: "function", layerGated: "function", ToolError: "function", isTool: "function" },
      Registry: { layer: "function", layerTools: "function", ToolRegistry: "function", findToolByName: "function" },
      Results: { layer: "object", layerDirectory: "function", layerMemory: "object", ResultStore: "function" },
      ToolUseContext: { make: "function" },
      QueryLoop: { run: "function", collect: "function", finalText: "function", makeSession: "function" },
      ReplayModel: { layer: "function", layerFile: "function", load: "function" },
      Model: { LanguageModel: "function", ModelError: "function" },
      Execution: { runToolUse: "function", makeEnvironment: "function" },
      Batches: { runTools: "function", partitionToolCalls: "function" },
      StreamingExecutor: { make: "function", runAll: "function" },
      Permissions: { PermissionPolicy: "function", allowAll: "object", failClosed: "object" },
      PermissionChain: { layer: "function", make: "function" },
      PermissionContext: { empty: "object", parseRule: "function" },
      HookRunner: { layer: "function", make: "function" },
      Settings: { load: "function" },
      Speculation: { start: "function" },
      OverlayFileSystem: { layer: "function", make: "function" },
      SuggestionGenerator: { fromList: "function", layerList: "function" },
      ShellAnalysis: { ShellAnalysis: "function" }
    })
    expectApi(tools, {
      Builtins: { layer: "function", names: "object" },
      Read: { layer: "object" },
      Bash: { layer: "object" },
      ShellCommand: { layer: "object", isReadOnly: "function", split: "function" },
      McpServers: { layer: "function" }
    })
    expectApi(result.kinds, { "@switchyard/core/anthropic": { layer: "function", layerConfig: "function" } })
  })

  it("Node refuses every internal/ module of every package by its public name", () => {
    expect(internals.length).toBeGreaterThan(30)
    const loaded = Object.entries(result.refused).filter(([, code]) => code !== "ERR_PACKAGE_PATH_NOT_EXPORTED")
    expect(loaded).toEqual([])
  })

  it("no test, benchmark, script, README or other package imports a package's internals", () => {
    const skipped = new Set(["node_modules", "dist", "bundle", ".generated", ".git"])
    const walk = (dir: string): Array<string> =>
      fs.existsSync(dir)
        ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
          const full = path.join(dir, entry.name)
          if (entry.isDirectory()) return skipped.has(entry.name) ? [] : walk(full)
          return /\.(ts|mts|mjs|js|md)$/.test(entry.name) ? [full] : []
        })
        : []
    const files = [
      ...walk(path.join(root, "packages")),
      ...walk(path.join(root, "test")),
      ...walk(path.join(root, "bench")),
      ...walk(path.join(root, "scripts")),
      path.join(root, "README.md")
    ]
    const offenders = files.flatMap((file) => {
      const own = /packages\/([a-z]+)\//.exec(path.relative(root, file))?.[1]
      const text = fs.readFileSync(file, "utf8")
      const specifiers = Array.from(text.matchAll(/(?:from\s+|import\()\s*["']([^"']+)["']/g), (match) => match[1]!)
      return specifiers
        .filter((specifier) => {
          if (/^@switchyard\/[a-z]+\/internal\//.test(specifier)) return true
          if (!specifier.startsWith(".")) return false
          // A relative path into another package's src/internal.
          const target = path.relative(root, path.resolve(path.dirname(file), specifier))
          const into = /^packages\/([a-z]+)\/src\/internal\//.exec(target)?.[1]
          return into !== undefined && into !== own
        })
        .map((specifier) => `${path.relative(root, file)}: ${specifier}`)
    })
    expect(offenders).toEqual([])
  })
})
