/**
 * The MCP SDK behind a small seam: loaded with a dynamic `import()` the
 * first time a server connects (so start-up without servers never pays for
 * it), one connection per server with its process ended on scope close.
 *
 * Remote servers (streamable HTTP, and the deprecated SSE transport) get
 * `classifyingFetch`, so a call's failure says whether the request reached a
 * live session (`mcpHttp.ts`). When the server's stream breaks while calls
 * are in flight (the server died), the connection is closed so that those
 * calls fail at once instead of waiting for a response that cannot come.
 * Closing a streamable HTTP connection ends its session with `DELETE`.
 */
import type * as Sdk from "@modelcontextprotocol/client"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as McpConfig from "../McpConfig.js"
import * as McpHttp from "./mcpHttp.js"
import * as McpProcess from "./mcpProcess.js"

interface Modules {
  readonly Client: typeof Sdk.Client
  readonly StreamableHTTPClientTransport: typeof Sdk.StreamableHTTPClientTransport
  readonly SSEClientTransport: typeof Sdk.SSEClientTransport
  readonly StdioClientTransport: typeof import("@modelcontextprotocol/client/stdio").StdioClientTransport
  readonly getDefaultEnvironment: typeof import("@modelcontextprotocol/client/stdio").getDefaultEnvironment
}

let modules: Promise<Modules> | undefined

/** The SDK, imported once, on first use. */
export const loadSdk: Effect.Effect<Modules> = Effect.promise(() => {
  modules ??= Promise.all([import("@modelcontextprotocol/client"), import("@modelcontextprotocol/client/stdio")]).then((
    [client, stdio]
  ) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
    SSEClientTransport: client.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment
  }))
  return modules
})

/** A tool as `tools/list` describes it. */
export type McpTool = Sdk.Tool

/** A resource as `resources/list` describes it. */
export type McpResource = Sdk.Resource

/** A prompt as `prompts/list` describes it. */
export type McpPrompt = Sdk.Prompt

/** A live connection. */
export interface Connection {
  readonly client: Sdk.Client
  /** The stdio server's process id (for tests and `mcp list`). */
  readonly pid: number | undefined
  /** Whether the transport has closed (the server died or was closed). */
  readonly isClosed: () => boolean
  /** The last lines the server wrote to stderr. */
  readonly stderrTail: () => string
  /** What the server said it can do. */
  readonly capabilities: () => Sdk.ServerCapabilities
  /** Count a request in flight for as long as `effect` runs. */
  readonly inFlight: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Why the connection was closed from our side (its stream broke mid-call), if it was. */
  readonly brokenReason: () => string | undefined
  /** The server no longer has this session (it restarted or is gone): closing sends no `DELETE`. */
  readonly markLost: () => void
  /** End the connection and its process (a streamable HTTP session gets `DELETE`). */
  readonly close: Effect.Effect<void>
}

const STDERR_TAIL = 2_000

/** Why connecting failed: `NeedsAuth` for a server that answered 401. */
export type ConnectError =
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "NeedsAuth"; readonly message: string }

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Connect to one server within `connectTimeout`. On failure or timeout its
 * process is already ended. `onToolsChanged` runs on
 * `notifications/tools/list_changed`.
 */
export const connect = (
  config: McpConfig.ServerConfig,
  options: {
    readonly connectTimeout: Duration.Duration
    readonly killGrace: Duration.Duration
    readonly onToolsChanged: () => void
    /** `notifications/resources/list_changed` or `prompts/list_changed`. */
    readonly onListChanged?: ((what: "resources" | "prompts") => void) | undefined
  }
): Effect.Effect<Connection, ConnectError, Scope.Scope> =>
  Effect.gen(function*() {
    const sdk = yield* loadSdk
    const parent = yield* Effect.scope
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    let stderr = ""
    let closed = false
    let broken: string | undefined
    let lost = false
    let calls = 0
    let stdio: InstanceType<Modules["StdioClientTransport"]> | undefined
    let http: InstanceType<Modules["StreamableHTTPClientTransport"]> | undefined
    const remote = config.transport._tag === "stdio" ? undefined : config.transport
    const requestInit = { headers: { ...remote?.headers } }
    const transport = config.transport._tag === "stdio"
      ? (stdio = new sdk.StdioClientTransport({
        command: config.transport.command,
        args: [...config.transport.args],
        env: { ...sdk.getDefaultEnvironment(), ...config.transport.env },
        ...(config.transport.cwd !== undefined ? { cwd: config.transport.cwd } : {}),
        stderr: "pipe"
      }))
      : config.transport._tag === "sse"
      ? new sdk.SSEClientTransport(new URL(config.transport.url), {
        requestInit,
        fetch: McpHttp.classifyingFetch(),
        eventSourceInit: { fetch: McpHttp.classifyingFetch() }
      })
      : (http = new sdk.StreamableHTTPClientTransport(new URL(config.transport.url), {
        requestInit,
        fetch: McpHttp.classifyingFetch(),
        // A broken stream is retried once; a server that is gone shows on the next call.
        reconnectionOptions: {
          maxRetries: 1,
          initialReconnectionDelay: 200,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 1.5
        }
      }))
    stdio?.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL)
    })
    const client = new sdk.Client({ name: "switchyard", version: "0.1.0" }, {
      capabilities: {},
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 0, onChanged: () => options.onToolsChanged() },
        resources: { autoRefresh: false, debounceMs: 0, onChanged: () => options.onListChanged?.("resources") },
        prompts: { autoRefresh: false, debounceMs: 0, onChanged: () => options.onListChanged?.("prompts") }
      }
    })
    client.onclose = () => {
      closed = true
    }
    // A remote stream that broke while calls wait for it will not bring their answers: close, so they fail now.
    // Other transport errors show on the next call (a closed connection, or a failure `mcpHttp` classifies).
    client.onerror = (error) => {
      if (remote === undefined || calls === 0 || closed) return
      const message = error instanceof Error ? error.message : String(error)
      if (!/SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts|terminated/i.test(message)) return
      broken = `the connection to ${remote.url} broke (${message})`
      lost = true
      void client.close().catch(() => undefined)
    }
    let pid: number | undefined
    // Ending a session: DELETE, when the server is still there to hear it.
    const endSession = http === undefined
      ? Effect.void
      : Effect.promise(() => http!.terminateSession().catch(() => undefined)).pipe(
        Effect.timeout(options.killGrace),
        Effect.ignore
      )
    const close = Effect.suspend(() => {
      const target = stdio?.pid ?? pid
      return (target === undefined || target === null
        ? Effect.void
        : McpProcess.terminate(target, Duration.toMillis(options.killGrace))).pipe(
          Effect.zipRight(closed || lost ? Effect.void : endSession),
          Effect.zipRight(
            Effect.promise(() => client.close().catch(() => undefined)).pipe(
              Effect.timeout(options.killGrace),
              Effect.ignore
            )
          )
        )
    })
    yield* Scope.addFinalizer(scope, close)
    const connected = yield* Effect.tryPromise({
      try: (signal) =>
        client.connect(transport, { signal, timeout: Duration.toMillis(options.connectTimeout) + 1_000 }),
      catch: (error): ConnectError => {
        const failure = McpHttp.failureOf(error)
        return failure?.kind === "unauthorized" && remote !== undefined
          ? { _tag: "NeedsAuth", message: McpHttp.unauthorizedMessage(config.name, remote.url) }
          : failure !== undefined
          ? { _tag: "Failed", message: failure.message }
          : { _tag: "Failed", message: describe(error) }
      }
    }).pipe(
      Effect.timeoutFail({
        duration: options.connectTimeout,
        onTimeout: (): ConnectError => ({
          _tag: "Failed",
          message: `no answer to initialize within ${Duration.format(options.connectTimeout)}`
        })
      }),
      Effect.exit
    )
    pid = stdio?.pid ?? undefined
    if (Exit.isFailure(connected)) {
      yield* Scope.close(scope, Exit.void)
      const reason = Cause.failureOption(connected.cause)
      const error: ConnectError = reason._tag === "Some"
        ? reason.value
        : { _tag: "Failed", message: Cause.pretty(connected.cause) }
      const tail = stderr.trim().split("\n").slice(-3).join(" | ")
      return yield* Effect.fail(tail.length > 0 ? { ...error, message: `${error.message} (stderr: ${tail})` } : error)
    }
    return {
      client,
      pid,
      isClosed: () => closed,
      stderrTail: () => stderr.trim().split("\n").slice(-3).join(" | "),
      capabilities: () => client.getServerCapabilities() ?? {},
      inFlight: (effect) =>
        Effect.acquireUseRelease(
          Effect.sync(() => void calls++),
          () => effect,
          () => Effect.sync(() => void calls--)
        ),
      brokenReason: () => broken,
      markLost: () => {
        lost = true
      },
      close: Scope.close(scope, Exit.void)
    }
  })
