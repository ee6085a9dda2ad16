/**
 * `switchyard mcp list`: every configured MCP server with connected/failed,
 * why it failed, and its tool count.
 *
 * @since 0.1.0
 */
import * as McpServers from "@switchyard/tools/McpServers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly json: boolean
}

/**
 * @since 0.1.0
 * @category running
 */
export const list = (options: Options) =>
  Effect.gen(function*() {
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    if ((prepared.mcp?.servers.length ?? 0) === 0) {
      if (options.json) return yield* Output.line("[]")
      return yield* Output.line("No MCP servers configured (.mcp.json or --mcp-config FILE).")
    }
    const statuses = yield* Effect.scoped(
      Effect.flatMap(McpServers.McpServers, (service) => service.servers).pipe(
        Effect.provide(Runtime.mcpLayer(prepared, { reportFailures: false }).pipe(Layer.provide(Runtime.toolPoolLayer)))
      )
    )
    if (options.json) {
      yield* Output.line(JSON.stringify(statuses.map((s) => ({
        name: s.name,
        source: s.source,
        transport: s.transport,
        status: s.state,
        error: s.error ?? null,
        tools: s.tools.length
      })), null, 2))
    } else {
      for (const s of statuses) {
        const state = s.state === "connected" ? Output.paint("green", "connected") : Output.paint("red", "failed")
        const detail = s.state === "connected"
          ? `${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`
          : `${s.error ?? "unknown error"}`
        yield* Output.line(`${Output.paint("bold", s.name)} ${state} · ${s.transport} · ${detail}`)
      }
    }
  })
