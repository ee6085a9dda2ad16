/**
 * The MCP SDK behind a small seam: loaded with a dynamic `import()` the
 * first time a server connects (so start-up without servers never pays for
 * it), one connection per server with its process ended on scope close.
 */
import type * as Sdk from "@modelcontextprotocol/client"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as McpConfig from "../McpConfig.js"
import * as McpProcess from "./mcpProcess.js"

interface Modules {
  readonly Client: typeof Sdk.Client
  readonly StreamableHTTPClientTransport: typeof Sdk.StreamableHTTPClientTransport
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
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment
  }))
  return modules
})

/** A tool as `tools/list` describes it. */
export type McpTool = Sdk.Tool

/** A live connection. */
export interface Connection {
  readonly client: Sdk.Client
  /** The stdio server's process id (for tests and `mcp list`). */
  readonly pid: number | undefined
  /** Whether the transport has closed (the server died or was closed). */
  readonly isClosed: () => boolean
  /** The last lines the server wrote to stderr. */
  readonly stderrTail: () => string
  /** End the connection and its process. */
  readonly close: Effect.Effect<void>
}

const STDERR_TAIL = 2_000

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Connect to one server within `connectTimeout`. On failure or timeout its
 * process is already ended. `onClose` runs once when the transport closes
 * while the connection is live; `onToolsChanged` on `notifications/tools/list_changed`.
 */
export const connect = (
  config: McpConfig.ServerConfig,
  options: {
    readonly connectTimeout: Duration.Duration
    readonly killGrace: Duration.Duration
    readonly onClose: () => void
    readonly onToolsChanged: () => void
  }
): Effect.Effect<Connection, string, Scope.Scope> =>
  Effect.gen(function*() {
    const sdk = yield* loadSdk
    const parent = yield* Effect.scope
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    let stderr = ""
    let closing = false
    let closed = false
    let stdio: InstanceType<Modules["StdioClientTransport"]> | undefined
    const transport = config.transport._tag === "stdio"
      ? (stdio = new sdk.StdioClientTransport({
        command: config.transport.command,
        args: [...config.transport.args],
        env: { ...sdk.getDefaultEnvironment(), ...config.transport.env },
        ...(config.transport.cwd !== undefined ? { cwd: config.transport.cwd } : {}),
        stderr: "pipe"
      }))
      : new sdk.StreamableHTTPClientTransport(new URL(config.transport.url), {
        requestInit: { headers: { ...config.transport.headers } }
      })
    stdio?.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL)
    })
    const client = new sdk.Client({ name: "switchyard", version: "0.1.0" }, {
      capabilities: {},
      listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => options.onToolsChanged() } }
    })
    client.onclose = () => {
      closed = true
      if (!closing) options.onClose()
    }
    // Ignore transport errors here: a dead connection shows as a closed one.
    client.onerror = () => {}
    let pid: number | undefined
    const close = Effect.suspend(() => {
      closing = true
      const target = stdio?.pid ?? pid
      return (target === undefined || target === null
        ? Effect.void
        : McpProcess.terminate(target, Duration.toMillis(options.killGrace))).pipe(
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
      try: (signal) => client.connect(transport, { signal, timeout: Duration.toMillis(options.connectTimeout) + 1_000 }),
      catch: (error) => describe(error)
    }).pipe(
      Effect.timeoutFail({
        duration: options.connectTimeout,
        onTimeout: () => `no answer to initialize within ${Duration.format(options.connectTimeout)}`
      }),
      Effect.exit
    )
    pid = stdio?.pid ?? undefined
    if (Exit.isFailure(connected)) {
      closing = true
      yield* Scope.close(scope, Exit.void)
      const reason = Cause.failureOption(connected.cause)
      const message = reason._tag === "Some" ? reason.value : Cause.pretty(connected.cause)
      const tail = stderr.trim().split("\n").slice(-3).join(" | ")
      return yield* Effect.fail(tail.length > 0 ? `${message} (stderr: ${tail})` : message)
    }
    return {
      client,
      pid,
      isClosed: () => closed,
      stderrTail: () => stderr.trim().split("\n").slice(-3).join(" | "),
      close: Scope.close(scope, Exit.void)
    }
  })
