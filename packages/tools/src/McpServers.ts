/**
 * MCP servers as tools (issue 11, issue 21). `McpServers.layer(configs)`
 * connects every configured server at start-up, in parallel, each within
 * the connect timeout, and registers its tools in the `ToolPool` as
 * `mcp__<server>__<tool>` (`isMcp`, deferred by default, SPEC §4.3; a
 * server's `alwaysLoad` keeps them loaded). Each server is a scoped resource:
 * when the layer's scope closes its process gets TERM, then KILL after the
 * grace period, and a streamable HTTP session gets `DELETE`. A server that
 * fails to connect is reported once (`onFailure`, and `servers` for `mcp
 * list`); its tools are absent and everything else works.
 *
 * Transports: stdio, streamable HTTP and the deprecated SSE. A remote request
 * that never reached a live session (refused, or the server no longer knows
 * the session because it restarted) starts a new session and is sent again
 * once; one whose connection broke after it was sent is sent again only when
 * that is harmless (read-only or idempotent), else that call fails saying so.
 * A 401 says that OAuth is not supported and how to pass a header.
 *
 * A call sends a `progressToken` and streams `notifications/progress` as
 * `Progress` events; interrupting it sends `notifications/cancelled`. Limits:
 * the server's `timeout` or `MCP_TOOL_TIMEOUT` bounds a call in wall-clock
 * time; `MCP_TOOL_IDLE_TIMEOUT`, when set shorter, bounds the silence between
 * progress notifications. Output over `MAX_MCP_OUTPUT_TOKENS` (default 25 000,
 * 4 characters each; a tool's `_meta["anthropic/maxResultSizeChars"]`
 * overrides it) is persisted like any large result, and output over 10 000
 * tokens sends a warning as progress. `notifications/tools/list_changed`
 * refreshes the server's tools, and the next read of the pool waits for it.
 * The options' `env` (settings `env`) comes before the process environment.
 *
 * Resources and prompts: `ListMcpResourcesTool` and `ReadMcpResourceTool`
 * are in the pool while a connected server offers resources; `readResource`
 * and `getPrompt` serve `@server:uri` mentions and prompt slash commands.
 *
 * The MCP SDK is imported only when some server is configured.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as McpConfig from "./McpConfig.js"
import * as McpConnection from "./internal/mcpConnection.js"
import * as McpResourceTools from "./internal/mcpResourceTools.js"
import * as McpResult from "./internal/mcpResult.js"
import * as McpTool from "./internal/mcpTool.js"

/**
 * How a server's connection stands: `connected`, `failed` (with why),
 * `needs-auth` (it answered 401), or `pending` (not connected yet).
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerStatus {
  readonly name: string
  readonly source: string
  readonly transport: McpConfig.Transport["_tag"]
  readonly state: "connected" | "failed" | "needs-auth" | "pending"
  /** Why it failed (or why its last reconnect failed). */
  readonly error: string | undefined
  /** The names of its tools as the model sees them. */
  readonly tools: ReadonlyArray<string>
  /** The stdio server's current process id. */
  readonly pid: number | undefined
  /** Whether it offers resources. */
  readonly resources: boolean
  /** Its prompts (`/mcp__<server>__<prompt>` in the interactive session). */
  readonly prompts: ReadonlyArray<PromptInfo>
}

/**
 * A prompt a server offers.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptInfo {
  readonly name: string
  readonly description: string | undefined
  readonly arguments: ReadonlyArray<{
    readonly name: string
    readonly description?: string | undefined
    readonly required?: boolean | undefined
  }>
}

/**
 * A resource a server offers, with the server's name.
 *
 * @since 0.1.0
 * @category models
 */
export type ListedResource = McpResourceTools.ListedResource

/**
 * A prompt's messages, as `prompts/get` returns them.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptMessage {
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<Messages.ToolResultContentBlock>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Every configured server, in configuration order. */
  readonly servers: Effect.Effect<ReadonlyArray<ServerStatus>>
  /** Close a server's connection and open a new one. */
  readonly reconnect: (server: string) => Effect.Effect<ServerStatus, Tool.ToolError>
  /** Every resource of one server, or of all. */
  readonly listResources: (server?: string) => Effect.Effect<ReadonlyArray<ListedResource>, Tool.ToolError>
  /** One resource's contents as content blocks. */
  readonly readResource: (
    server: string,
    uri: string
  ) => Effect.Effect<ReadonlyArray<Messages.ToolResultContentBlock>, Tool.ToolError>
  /** A prompt's messages for these arguments. */
  readonly getPrompt: (
    server: string,
    prompt: string,
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<ReadonlyArray<PromptMessage>, Tool.ToolError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class McpServers extends Context.Tag("@switchyard/tools/McpServers/McpServers")<McpServers, Service>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `MCP_TIMEOUT` (ms), else 30 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Between TERM and KILL when a stdio server ends; default 2 s. */
  readonly killGrace?: Duration.DurationInput | undefined
  /** Wall-clock limit of a call when the server sets none; default `MCP_TOOL_TIMEOUT` (ms), else 100 000 000 ms. */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /**
   * Longest silence between progress notifications; default
   * `MCP_TOOL_IDLE_TIMEOUT` (ms), else the call's wall-clock limit.
   */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Default `MAX_MCP_OUTPUT_TOKENS`, else 25 000. */
  readonly maxOutputTokens?: number | undefined
  /** Variables read before the process environment (the settings' `env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Called once per server that fails to connect at start-up. */
  readonly onFailure?: ((status: ServerStatus) => Effect.Effect<void>) | undefined
}

/**
 * The limit Claude Code uses when `MCP_TOOL_TIMEOUT` is unset (about 28 hours).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 100_000_000

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 25_000

/**
 * Output past this many tokens gets a warning (Claude Code's threshold).
 *
 * @since 0.1.0
 * @category constants
 */
export const OUTPUT_WARNING_TOKENS = 10_000

/**
 * The variables the MCP layer reads; the settings' `env` may set them.
 *
 * @since 0.1.0
 * @category constants
 */
export const VARIABLES: ReadonlyArray<string> = [
  "MCP_TIMEOUT",
  "MCP_TOOL_TIMEOUT",
  "MCP_TOOL_IDLE_TIMEOUT",
  "MAX_MCP_OUTPUT_TOKENS"
]

/**
 * `mcp__<server>__<tool>`, with characters outside `[A-Za-z0-9_-]` as `_`.
 *
 * @since 0.1.0
 * @category naming
 */
export const toolName: (server: string, tool: string) => string = McpTool.toolName

/**
 * @since 0.1.0
 * @category naming
 */
export const sanitize: (name: string) => string = McpTool.sanitize

/**
 * The JSON Schema sent to the API: the server's, as a plain object schema.
 *
 * @since 0.1.0
 * @category json schema
 */
export const inputJsonSchema: (schema: unknown) => Tool.JsonObjectSchema = McpTool.inputJsonSchema

/**
 * The `_meta` key of a `tools/call` that carries the journal's idempotency
 * key (SPEC §4.14): a server can drop a repeat of a call it already did.
 *
 * @since 0.1.0
 * @category constants
 */
export const IDEMPOTENCY_KEY_META: "io.switchyard/idempotency-key" = McpTool.IDEMPOTENCY_KEY_META

const integerSetting = (name: string, env: Readonly<Record<string, string | undefined>> | undefined) => {
  const given = env?.[name]
  if (given !== undefined && given.trim() !== "" && Number.isInteger(Number(given))) {
    return Effect.succeed(Number(given))
  }
  return Config.integer(name).pipe(
    Config.option,
    Effect.orElseSucceed(() => Option.none<number>()),
    Effect.map(Option.getOrUndefined)
  )
}

/**
 * Connect the servers and register their tools. With no servers the MCP SDK
 * is never loaded.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  configs: ReadonlyArray<McpConfig.ServerConfig>,
  options: Options = {}
): Layer.Layer<McpServers, never, Tool.ToolPool> =>
  configs.length === 0 ? Layer.succeed(McpServers, empty) : Layer.scoped(McpServers, make(configs, options))

const notConfigured = (server: string) =>
  new Tool.ToolError({ message: `No MCP server named "${server}" is connected` })

const empty: Service = {
  servers: Effect.succeed([]),
  reconnect: (server) => Effect.fail(notConfigured(server)),
  listResources: () => Effect.succeed([]),
  readResource: (server) => Effect.fail(notConfigured(server)),
  getPrompt: (server) => Effect.fail(notConfigured(server))
}

const make = (
  configs: ReadonlyArray<McpConfig.ServerConfig>,
  options: Options
): Effect.Effect<Service, never, Tool.ToolPool | Scope.Scope> =>
  Effect.gen(function*() {
    const pool = yield* Tool.ToolPool
    const env = options.env
    const toolTimeoutMs = options.toolTimeout !== undefined
      ? Duration.toMillis(options.toolTimeout)
      : (yield* integerSetting("MCP_TOOL_TIMEOUT", env)) ?? DEFAULT_TOOL_TIMEOUT_MS
    const idleTimeoutMs = options.idleTimeout !== undefined
      ? Duration.toMillis(options.idleTimeout)
      : yield* integerSetting("MCP_TOOL_IDLE_TIMEOUT", env)
    const limits: McpConnection.Limits = {
      connectTimeout: Duration.decode(
        options.connectTimeout ?? (yield* integerSetting("MCP_TIMEOUT", env)) ?? "30 seconds"
      ),
      killGrace: Duration.decode(options.killGrace ?? "2 seconds"),
      toolTimeoutMs,
      idleTimeoutMs,
      maxResultChars: (options.maxOutputTokens ?? (yield* integerSetting("MAX_MCP_OUTPUT_TOKENS", env)) ??
        DEFAULT_MAX_OUTPUT_TOKENS) * 4,
      warnChars: OUTPUT_WARNING_TOKENS * 4
    }
    const runtime = yield* Effect.runtime<never>()
    // Workspace footprints resolve paths; without a platform they fail closed.
    const fs = yield* Effect.serviceOption(FileSystem.FileSystem)
    const path = yield* Effect.serviceOption(Path.Path)
    const provide: McpTool.ProvidePlatform | undefined = Option.isSome(fs) && Option.isSome(path)
      ? (effect) =>
        effect.pipe(
          Effect.provideService(FileSystem.FileSystem, fs.value),
          Effect.provideService(Path.Path, path.value)
        )
      : undefined
    const servers = yield* Effect.forEach(
      configs,
      (config) => McpConnection.make(config, limits, pool, runtime, provide),
      { concurrency: "unbounded" }
    )
    const withResources = () =>
      servers.filter((server) => server.status().state === "connected" && server.status().resources)
    for (const tool of McpResourceTools.make(withResources)) {
      // In the pool while some connected server offers resources.
      yield* pool.register({ ...tool, isEnabled: () => withResources().length > 0 })
    }
    for (const server of servers) {
      const status = server.status()
      if (status.state !== "connected" && options.onFailure !== undefined) yield* options.onFailure(toStatus(status))
    }
    const find = (name: string) =>
      Effect.fromNullable(servers.find((server) => server.config.name === name)).pipe(
        Effect.mapError(() => notConfigured(name))
      )
    return {
      servers: Effect.sync(() => servers.map((server) => toStatus(server.status()))),
      reconnect: (name) =>
        Effect.gen(function*() {
          const server = yield* find(name)
          yield* server.reconnect.pipe(Effect.ignore)
          return toStatus(server.status())
        }),
      listResources: (name) =>
        Effect.gen(function*() {
          const chosen = name === undefined ? withResources() : [yield* find(name)]
          const lists = yield* Effect.forEach(chosen, (server) =>
            Effect.map(server.listResources, (resources) =>
              resources.map((r): ListedResource => ({
                uri: r.uri,
                name: r.name,
                mimeType: r.mimeType,
                description: r.description,
                server: server.config.name
              }))), { concurrency: "unbounded" })
          return lists.flat()
        }),
      readResource: (name, uri) =>
        Effect.flatMap(find(name), (server) =>
          Effect.map(server.readResource(uri), (result) => McpResourceTools.readContent(name, result))),
      getPrompt: (name, prompt, args) =>
        Effect.flatMap(find(name), (server) =>
          Effect.map(server.getPrompt(prompt, args), promptMessages))
    }
  })

const toStatus = (status: McpConnection.Status): ServerStatus => ({
  ...status,
  prompts: status.prompts.map((p) => ({
    name: p.name,
    description: p.description,
    arguments: (p.arguments ?? []).map((a) => ({ name: a.name, description: a.description, required: a.required }))
  }))
})

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** `prompts/get` messages as content blocks (text, images, embedded resources as text). */
const promptMessages = (result: unknown): ReadonlyArray<PromptMessage> => {
  const messages = isRecord(result) && Array.isArray(result["messages"]) ? result["messages"].filter(isRecord) : []
  return messages.map((message) => ({
    role: message["role"] === "assistant" ? "assistant" : "user",
    content: McpResult.toContent({
      content: Array.isArray(message["content"]) ? message["content"] : [message["content"]]
    })
  }))
}
