/**
 * MCP servers as tools (issue 11). `McpServers.layer(configs)` connects every
 * configured server at start-up, in parallel, each within the connect
 * timeout, and registers its tools in the `ToolPool` as
 * `mcp__<server>__<tool>` (`isMcp`, deferred by default, SPEC §4.3). Each
 * server is a scoped resource: when the layer's scope closes its process
 * gets TERM, then KILL after the grace period. A server that fails to
 * connect is reported once (`onFailure`, and `servers` for `mcp list`); its
 * tools are absent and everything else works.
 *
 * A call sends a `progressToken` and streams `notifications/progress` as
 * `Progress` events; interrupting it sends `notifications/cancelled`. Limits:
 * the server's `timeout` or `MCP_TOOL_TIMEOUT` bounds a call in wall-clock
 * time, and `MCP_TOOL_IDLE_TIMEOUT` (default 5 minutes) bounds the silence
 * between progress notifications. Output over `MAX_MCP_OUTPUT_TOKENS`
 * (default 25 000, 4 characters each) is persisted like any large result.
 * A server that dies mid-call fails that call naming the server; the next
 * call reconnects once. `notifications/tools/list_changed` refreshes the
 * server's tools for the next turn.
 *
 * The MCP SDK is imported only when some server is configured.
 *
 * @since 0.1.0
 */
import * as Footprint from "@switchyard/core/Footprint"
import * as Journal from "@switchyard/core/Journal"
import * as Tool from "@switchyard/core/Tool"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as McpClient from "./internal/mcpClient.js"
import * as McpResult from "./internal/mcpResult.js"
import * as McpSchema from "./internal/mcpSchema.js"
import type * as Messages from "@switchyard/core/Messages"
import type * as McpConfig from "./McpConfig.js"

/**
 * How a server's connection stands.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerStatus {
  readonly name: string
  readonly source: string
  readonly transport: "stdio" | "http"
  readonly state: "connected" | "failed"
  /** Why it failed (or why its last reconnect failed). */
  readonly error: string | undefined
  /** The names of its tools as the model sees them. */
  readonly tools: ReadonlyArray<string>
  /** The stdio server's current process id. */
  readonly pid: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Every configured server, in configuration order. */
  readonly servers: Effect.Effect<ReadonlyArray<ServerStatus>>
}

/**
 * @since 0.1.0
 * @category services
 */
export class McpServers extends Context.Tag("@switchyard/tools/McpServers")<McpServers, Service>() {}

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
  /** Longest silence between progress notifications; default `MCP_TOOL_IDLE_TIMEOUT` (ms), else 5 minutes. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Default `MAX_MCP_OUTPUT_TOKENS`, else 25 000. */
  readonly maxOutputTokens?: number | undefined
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
 * `mcp__<server>__<tool>`, with characters outside `[A-Za-z0-9_-]` as `_`.
 *
 * @since 0.1.0
 * @category naming
 */
export const toolName = (server: string, tool: string): string => `mcp__${sanitize(server)}__${sanitize(tool)}`

/**
 * @since 0.1.0
 * @category naming
 */
export const sanitize = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_")

const integerConfig = (name: string) =>
  Config.integer(name).pipe(Config.option, Effect.orElseSucceed(() => Option.none<number>()), Effect.map(Option.getOrUndefined))

/** A call's error result when a limit is hit or the server fails. */
const toolError = (message: string) => new Tool.ToolError({ message })

interface Limits {
  readonly connectTimeout: Duration.Duration
  readonly killGrace: Duration.Duration
  readonly toolTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly maxResultChars: number
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
  configs.length === 0 ? Layer.succeed(McpServers, { servers: Effect.succeed([]) }) : Layer.scoped(McpServers, make(configs, options))

const make = (
  configs: ReadonlyArray<McpConfig.ServerConfig>,
  options: Options
): Effect.Effect<Service, never, Tool.ToolPool | Scope.Scope> =>
  Effect.gen(function*() {
    const pool = yield* Tool.ToolPool
    const limits: Limits = {
      connectTimeout: Duration.decode(options.connectTimeout ?? (yield* integerConfig("MCP_TIMEOUT")) ?? "30 seconds"),
      killGrace: Duration.decode(options.killGrace ?? "2 seconds"),
      toolTimeoutMs: options.toolTimeout !== undefined
        ? Duration.toMillis(options.toolTimeout)
        : (yield* integerConfig("MCP_TOOL_TIMEOUT")) ?? DEFAULT_TOOL_TIMEOUT_MS,
      idleTimeoutMs: options.idleTimeout !== undefined
        ? Duration.toMillis(options.idleTimeout)
        : (yield* integerConfig("MCP_TOOL_IDLE_TIMEOUT")) ?? 300_000,
      maxResultChars: (options.maxOutputTokens ?? (yield* integerConfig("MAX_MCP_OUTPUT_TOKENS")) ??
        DEFAULT_MAX_OUTPUT_TOKENS) * 4
    }
    const runtime = yield* Effect.runtime<never>()
    const servers = yield* Effect.forEach(configs, (config) => makeServer(config, limits, pool, runtime), {
      concurrency: "unbounded"
    })
    for (const server of servers) {
      const status = server.status()
      if (status.state === "failed" && options.onFailure !== undefined) yield* options.onFailure(status)
    }
    return { servers: Effect.sync(() => servers.map((server) => server.status())) }
  })

interface Server {
  readonly status: () => ServerStatus
}

const makeServer = (
  config: McpConfig.ServerConfig,
  limits: Limits,
  pool: Tool.ToolPool["Type"],
  runtime: Runtime.Runtime<never>
): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Connections (reconnects included) live as long as the layer.
    const layerScope = yield* Effect.scope
    let connection: McpClient.Connection | undefined
    let error: string | undefined
    let registered = new Map<string, Tool.Any>()
    // Reconnects happen one at a time.
    const lock = yield* Effect.makeSemaphore(1)

    const status = (): ServerStatus => ({
      name: config.name,
      source: config.source,
      transport: config.transport._tag,
      state: connection !== undefined && !connection.isClosed() && error === undefined ? "connected" : "failed",
      error: error ?? (connection?.isClosed() ? "the server closed the connection; the next call reconnects" : undefined),
      tools: [...registered.values()].filter((tool) => tool.isEnabled()).map((tool) => tool.name),
      pid: connection?.pid
    })

    const refreshTools = (conn: McpClient.Connection) =>
      Effect.tryPromise({ try: () => conn.client.listTools(), catch: (e) => (e instanceof Error ? e.message : String(e)) }).pipe(
        Effect.flatMap(({ tools }) =>
          Effect.gen(function*() {
            const next = new Map<string, Tool.Any>()
            for (const definition of tools) {
              const tool = makeTool(config, definition, limits, call)
              next.set(tool.name, tool)
              yield* pool.register(tool)
            }
            // A tool the server no longer lists is disabled: the registry drops disabled tools.
            for (const [name, tool] of registered) {
              if (!next.has(name)) yield* pool.register({ ...tool, isEnabled: () => false })
            }
            registered = next
          })
        )
      )

    const open: Effect.Effect<McpClient.Connection, string> = Effect.gen(function*() {
      const conn = yield* McpClient.connect(config, {
        connectTimeout: limits.connectTimeout,
        killGrace: limits.killGrace,
        onToolsChanged: () => {
          const current = connection
          if (current !== undefined) Runtime.runFork(runtime)(Effect.ignore(refreshTools(current)))
        }
      })
      yield* refreshTools(conn).pipe(Effect.tapError(() => conn.close))
      return conn
    }).pipe(Effect.provideService(Scope.Scope, layerScope))

    /** The live connection, reconnecting once if the last one closed. */
    const live: Effect.Effect<McpClient.Connection, Tool.ToolError> = lock.withPermits(1)(Effect.gen(function*() {
      if (connection !== undefined && !connection.isClosed()) return connection
      if (connection === undefined && error !== undefined && registered.size === 0) {
        return yield* Effect.fail(toolError(`MCP server "${config.name}" is not connected: ${error}`))
      }
      if (connection !== undefined) yield* connection.close
      connection = undefined
      const reopened = yield* Effect.either(open)
      if (reopened._tag === "Left") {
        error = `reconnecting failed: ${reopened.left}`
        return yield* Effect.fail(toolError(`MCP server "${config.name}" is not connected: ${error}`))
      }
      error = undefined
      connection = reopened.right
      return reopened.right
    }))

    const call: CallTool = (toolNameOnServer, qualified, input, context, idempotent) =>
      Effect.gen(function*() {
        const conn = yield* live
        // An idempotent tool gets the journal's idempotency key (SPEC §4.14): the same on every run of the call.
        const key = idempotent ? yield* Journal.currentIdempotencyKey : Option.none<string>()
        const pings = yield* Queue.unbounded<{ readonly progress: number; readonly total?: number | undefined; readonly message?: string | undefined }>()
        const request = Effect.tryPromise({
          try: (signal) =>
            conn.client.callTool({
              name: toolNameOnServer,
              arguments: input as Record<string, unknown>,
              ...(key._tag === "Some" ? { _meta: { [IDEMPOTENCY_KEY_META]: key.value } } : {})
            }, {
              signal,
              // Our own timers bound the call; the SDK's must never fire first.
              timeout: 2_147_483_647,
              onprogress: (progress) => Queue.unsafeOffer(pings, progress)
            }),
          catch: (cause) => cause
        }).pipe(
          Effect.catchAll((cause) =>
            Effect.fail(
              conn.isClosed() || isConnectionClosed(cause)
                ? toolError(
                  `Error: MCP server "${config.name}" closed the connection during ${qualified}` +
                    (conn.stderrTail() === "" ? "" : ` (stderr: ${conn.stderrTail()})`) +
                    "; the next call reconnects"
                )
                : toolError(`Error: MCP server "${config.name}" failed ${qualified}: ${describe(cause)}`)
            )
          )
        )
        const idleMs = limits.idleTimeoutMs
        const watchProgress = Queue.take(pings).pipe(
          Effect.timeoutFail({
            duration: idleMs,
            onTimeout: () =>
              toolError(
                `Error: MCP tool ${qualified} (server "${config.name}") sent no progress for ${idleMs} ms (MCP_TOOL_IDLE_TIMEOUT) and was cancelled`
              )
          }),
          Effect.flatMap((progress) => context.progress(progress)),
          Effect.forever
        )
        const wallMs = config.timeoutMs ?? limits.toolTimeoutMs
        const result = yield* Effect.raceFirst(request, watchProgress).pipe(
          Effect.timeoutFail({
            duration: wallMs,
            onTimeout: () =>
              toolError(
                `Error: MCP tool ${qualified} (server "${config.name}") timed out after ${wallMs} ms (${
                  config.timeoutMs !== undefined ? "the server's timeout" : "MCP_TOOL_TIMEOUT"
                }) and was cancelled`
              )
          })
        )
        // Progress that arrived with the result still reaches the stream.
        for (const progress of yield* Queue.takeAll(pings)) yield* context.progress(progress)
        const content = McpResult.toContent(result)
        if (McpResult.isError(result)) {
          return yield* Effect.fail(toolError(McpResult.text(content) || `Error: ${qualified} failed`))
        }
        return content
      })

    const first = yield* Effect.either(open)
    if (first._tag === "Right") connection = first.right
    else error = first.left
    return { status }
  })

type CallTool = (
  toolNameOnServer: string,
  qualified: string,
  input: unknown,
  context: Tool.CallContext<unknown>,
  idempotent: boolean
) => Effect.Effect<ReadonlyArray<Messages.ToolResultContentBlock>, Tool.ToolError>

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isConnectionClosed = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "CONNECTION_CLOSED"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const MAX_DESCRIPTION = 2_048

/**
 * The `_meta` key of a `tools/call` that carries the journal's idempotency
 * key (SPEC §4.14): a server can drop a repeat of a call it already did.
 *
 * @since 0.1.0
 * @category constants
 */
export const IDEMPOTENCY_KEY_META = "io.switchyard/idempotency-key"

/**
 * The JSON Schema sent to the API: the server's, as a plain object schema.
 *
 * @since 0.1.0
 * @category json schema
 */
export const inputJsonSchema = (schema: unknown): Tool.JsonObjectSchema => {
  const record = isRecord(schema) ? schema : {}
  const { $schema: _schema, ...rest } = record
  return { ...rest, type: "object" } as Tool.JsonObjectSchema
}

const makeTool = (
  config: McpConfig.ServerConfig,
  definition: McpClient.McpTool,
  limits: Limits,
  call: CallTool
): Tool.Any => {
  const name = toolName(config.name, definition.name)
  const annotations = definition.annotations ?? {}
  const meta = isRecord(definition._meta) ? definition._meta : {}
  const readOnly = annotations.readOnlyHint === true
  const resource = Footprint.mcp(config.name)
  const destructive = annotations.destructiveHint === true
  const description = (definition.description ?? "").slice(0, MAX_DESCRIPTION)
  const hint = typeof meta["anthropic/searchHint"] === "string"
    ? meta["anthropic/searchHint"]
    : (description.split("\n", 1)[0] ?? "") || definition.title || definition.name
  return Tool.make(name, {
    description: description.length > 0 ? description : `${definition.name} (MCP server ${config.name})`,
    searchHint: hint.length > 120 ? `${hint.slice(0, 117)}...` : hint,
    input: McpSchema.fromJsonSchema(definition.inputSchema),
    inputJsonSchema: inputJsonSchema(definition.inputSchema),
    isMcp: true,
    alwaysLoad: meta["anthropic/alwaysLoad"] === true,
    // Claude Code runs MCP calls one by one; a read-only tool may run in parallel.
    isConcurrencySafe: () => readOnly,
    isReadOnly: () => readOnly,
    isDestructive: () => destructive,
    // A durable session (SPEC §4.14) runs an idempotent call again after a crash, with the same key.
    isIdempotent: () => annotations.idempotentHint === true,
    // The server is the resource (SPEC §4.13): calls to one server keep their order around its
    // writes, and calls to different servers, or to files, need not wait for each other.
    footprint: () => readOnly ? { reads: [resource] } : { writes: [resource] },
    maxResultSizeChars: limits.maxResultChars,
    userFacingName: () => `${config.name} - ${definition.title ?? definition.name} (MCP)`,
    // MCP tools are judged by their own rules (mcp__server…), not as file paths.
    getPath: () => undefined,
    call: (input, context) => call(definition.name, name, input, context, annotations.idempotentHint === true),
    mapResult: (content: ReadonlyArray<Messages.ToolResultContentBlock>) => content
  }) as Tool.Any
}
