/**
 * Issue 11: what deferral saves and what MCP costs. Request size (characters
 * / 4 of the tool definitions) with 300 MCP tools deferred vs not; ToolSearch
 * latency over 1 000 and 10 000 tools; connecting 3 stdio servers in
 * parallel vs one by one; loading the SDK in a fresh process: from
 * node_modules vs the CLI's bundle/mcp-sdk.cjs and its code cache.
 */
import { Model, Tool, ToolSearch } from "@switchyard/core"
import * as Deferral from "@switchyard/core/Deferral"
import * as McpServers from "@switchyard/tools/McpServers"
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { flags as snapshotFlags } from "../packages/cli/scripts/snapshot.mjs"
import { fmt, ratio, recordStats, record, stats, timeEffect } from "./harness.js"

const SUITE = "mcp"
const root = path.join(import.meta.dirname, "..")
const EVERYTHING = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const FILESYSTEM = path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")

const objects = [
  "issue",
  "pull_request",
  "branch",
  "release",
  "comment",
  "label",
  "milestone",
  "webhook",
  "team",
  "user"
]
const verbs = ["create", "list", "get", "update", "delete", "archive", "search", "export", "import", "sync"]

/** `count` MCP tools with realistic schemas, spread over services of 10 objects × 10 verbs. */
const generate = (count: number): ReadonlyArray<Tool.Any> =>
  Array.from({ length: count }, (_, i) => {
    const service = `service${Math.floor(i / 100)}`
    const object = objects[Math.floor(i / 10) % 10]!
    const verb = verbs[i % 10]!
    return Tool.make(`mcp__${service}__${verb}_${object}`, {
      description:
        `${verb} a ${object.replace("_", " ")} in ${service}. Returns the ${object} as JSON; fails when the ` +
        `caller lacks access to the ${service} workspace or the ${object} does not exist.`,
      input: Schema.Struct({
        workspace: Schema.String.annotations({ description: `The ${service} workspace` }),
        id: Schema.optional(Schema.String.annotations({ description: `The ${object} id` })),
        fields: Schema.optional(Schema.Array(Schema.String).annotations({ description: "Fields to return" })),
        limit: Schema.optional(Schema.Int.annotations({ description: "Page size" }))
      }),
      isMcp: true,
      call: () => Effect.succeed("ok")
    }) as Tool.Any
  })

const requestTokens = (tools: ReadonlyArray<Tool.Any>) =>
  Math.ceil(
    JSON.stringify(tools.map((tool) => Model.toolDefinition(tool, { deferred: Tool.isDeferred(tool) }))).length / 4
  )

const stdio = (name: string, args: ReadonlyArray<string>): McpConfig.ServerConfig => ({
  name,
  source: "bench",
  transport: { _tag: "stdio", command: process.execPath, args, env: {}, cwd: undefined },
  timeoutMs: undefined
})

const connectAll = (configs: ReadonlyArray<McpConfig.ServerConfig>) =>
  Effect.scoped(
    Layer.build(
      McpServers.layer(configs, { killGrace: "500 millis" }).pipe(
        Layer.provide(Layer.effect(Tool.ToolPool, Tool.ToolPool.make))
      )
    )
  )

/**
 * CPU (user + system, ms) of loading the SDK's client and stdio modules in a fresh `node` under the launcher's
 * V8 flags, measured by the child around the load only, interleaved over `rounds`.
 */
const sdkLoads = (rounds: number) => {
  const bundled = path.join(root, "packages/cli/bundle/mcp-sdk.cjs")
  if (!fs.existsSync(bundled)) return undefined
  // The same file without its cache beside it.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-bench-mcp-sdk-"))
  const uncached = path.join(scratch, "mcp-sdk.cjs")
  fs.copyFileSync(bundled, uncached)
  const compiled = JSON.stringify(path.join(root, "packages/cli/dist/internal/compiledScript.js"))
  const measure = (load: string) =>
    `const c0 = process.cpuUsage(); ${load}; const c = process.cpuUsage(c0); process.stdout.write(String((c.user + c.system) / 1000))`
  const variants = {
    esm: measure(
      `await import("@modelcontextprotocol/client"); await import("@modelcontextprotocol/client/stdio")`
    ),
    cjs: measure(
      `const { createRequire } = await import("node:module"); const r = createRequire(${
        JSON.stringify(path.join(root, "packages/cli/package.json"))
      }); r("@modelcontextprotocol/client"); r("@modelcontextprotocol/client/stdio")`
    ),
    bundled: `const C = await import(${compiled}); ${measure(`C.run(${JSON.stringify(bundled)})`)}`,
    uncached: `const C = await import(${compiled}); ${measure(`C.run(${JSON.stringify(uncached)})`)}`
  }
  const samples: Record<keyof typeof variants, Array<number>> = { esm: [], cjs: [], bundled: [], uncached: [] }
  for (let round = 0; round < rounds; round++) {
    for (const [key, code] of Object.entries(variants) as Array<[keyof typeof variants, string]>) {
      const out = execFileSync(process.execPath, [...snapshotFlags, "--input-type=module", "-e", code], {
        cwd: path.join(root, "packages/cli"),
        encoding: "utf8"
      })
      if (round > 0) samples[key].push(Number(out))
    }
  }
  fs.rmSync(scratch, { recursive: true, force: true })
  return {
    esm: stats(samples.esm),
    cjs: stats(samples.cjs),
    bundled: stats(samples.bundled),
    uncached: stats(samples.uncached)
  }
}

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const loads = sdkLoads(10)
  if (loads !== undefined) {
    recordStats(SUITE, "load the SDK (client + stdio) from node_modules as ES modules", loads.esm, "CPU ms")
    recordStats(
      SUITE,
      "load the SDK from node_modules with require",
      loads.cjs,
      "CPU ms",
      "what the start-up snapshot did before"
    )
    recordStats(
      SUITE,
      "load the SDK from bundle/mcp-sdk.cjs and its code cache",
      loads.bundled,
      "CPU ms",
      `what the CLI does; require costs ${ratio(loads.cjs, loads.bundled, 1)} as much, ES modules ${
        ratio(loads.esm, loads.bundled, 1)
      }`
    )
    recordStats(SUITE, "load the SDK from bundle/mcp-sdk.cjs without the cache", loads.uncached, "CPU ms")
  }
  const tools300 = generate(300)
  const loaded = Deferral.apply(tools300, { policy: { _tag: "Never" } })
  const deferred = Deferral.apply(tools300, { policy: { _tag: "Always" } })
  const full = requestTokens(loaded)
  // What the model is sent up front when deferred: ToolSearch in full, one system-prompt line per tool.
  const lines = Deferral.systemPrompt("", deferred, []) ?? ""
  const upFront = requestTokens(deferred.filter((t) => !Tool.isDeferred(t))) + Math.ceil(lines.length / 4)
  record(SUITE, "300 MCP tools, all definitions loaded (tokens)", String(full))
  record(
    SUITE,
    "300 MCP tools deferred: ToolSearch + one line each (tokens)",
    String(upFront),
    `${fmt(full / upFront, 1)}× smaller`
  )
  record(
    SUITE,
    "300 MCP tools deferred: request with defer_loading (tokens)",
    String(requestTokens(deferred)),
    "definitions still sent, not loaded into context"
  )

  for (const count of [1_000, 10_000]) {
    const queries = ["service3 create issue", "list pull requests", "archive webhook", "select:mcp__service1__get_team"]
    // First search ever over these tools: every tool is tokenized (then cached on the tool).
    const fresh = generate(count)
    const started = performance.now()
    ToolSearch.search(fresh, queries[0]!)
    const cold = performance.now() - started
    // A new turn: the tokens are cached, the inverted index is rebuilt once.
    const turn = await timeEffect(Effect.sync(() => ToolSearch.search(fresh, queries[1]!)), { samples: 5 })
    const searcher = ToolSearch.makeSearcher(fresh)
    const warm = await timeEffect(Effect.sync(() => queries.forEach((q) => searcher(q))), { samples: 7 })
    record(SUITE, `ToolSearch over ${count} tools: first search, tokenizing all (ms)`, fmt(cold))
    record(SUITE, `ToolSearch over ${count} tools: first query of a turn, index build (ms)`, fmt(turn))
    record(SUITE, `ToolSearch over ${count} tools: later queries (ms per query)`, fmt(warm / queries.length))
  }

  const servers = [
    stdio("everything", [EVERYTHING]),
    stdio("filesystem", [FILESYSTEM, root]),
    stdio("everything2", [EVERYTHING])
  ]
  const parallel = await timeEffect(connectAll(servers), { samples: 3, warmup: 1 })
  const serial = await timeEffect(Effect.forEach(servers, (server) => connectAll([server]), { discard: true }), {
    samples: 3,
    warmup: 0
  })
  record(SUITE, "connect 3 stdio servers in parallel (ms, incl. shutdown)", fmt(parallel, 0))
  record(
    SUITE,
    "connect 3 stdio servers one by one (ms, incl. shutdown)",
    fmt(serial, 0),
    `${fmt(serial / parallel, 1)}× the parallel time`
  )
}
