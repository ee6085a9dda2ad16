/**
 * One configured MCP server while the layer lives: its connection (and
 * reconnections), its tools in the pool, its prompts, and every request to it
 * with the recovery rules of issue 21:
 *
 * - a stdio server that died between calls is restarted by the next call; one
 *   that dies mid-call fails that call, naming the server;
 * - a remote server's request that never reached a live session (the
 *   connection was refused, or the server answered that it does not know the
 *   session — it restarted) starts a new session and is sent again, once; a
 *   request whose connection broke after it was sent is sent again only when
 *   repeating it is harmless (a read-only or idempotent tool, a listing),
 *   otherwise that call fails saying it may or may not have run;
 * - a 401 says that OAuth is not supported and how to pass a header.
 *
 * `tools/list_changed` refreshes the server's tools, and the pool's readers
 * wait for that refresh (`ToolPool.beginUpdate`), so the next model request
 * has the new list.
 *
 * @internal
 */
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import type * as McpConfig from "../McpConfig.js"
import * as McpClient from "./mcpClient.js"
import * as McpHttp from "./mcpHttp.js"
import * as McpResult from "./mcpResult.js"
import * as McpTool from "./mcpTool.js"

/** The limits every call obeys. */
export interface Limits {
  readonly connectTimeout: Duration.Duration
  readonly killGrace: Duration.Duration
  readonly toolTimeoutMs: number
  /** Longest silence between progress notifications; `undefined`: the call's wall-clock limit. */
  readonly idleTimeoutMs: number | undefined
  readonly maxResultChars: number
  /** Past this many characters of output the call warns (Claude Code: 10 000 tokens). */
  readonly warnChars: number
}

/** How a server's connection stands, as `McpServers.ServerStatus` reports it. */
export interface Status {
  readonly name: string
  readonly source: string
  readonly transport: McpConfig.Transport["_tag"]
  readonly state: "connected" | "failed" | "needs-auth" | "pending"
  readonly error: string | undefined
  readonly tools: ReadonlyArray<string>
  readonly pid: number | undefined
  readonly resources: boolean
  readonly prompts: ReadonlyArray<McpClient.McpPrompt>
}

/** One server. */
export interface Server {
  readonly config: McpConfig.ServerConfig
  readonly status: () => Status
  /** Close the connection and open a new one (`/mcp` reconnect); fails with why it could not connect. */
  readonly reconnect: Effect.Effect<void, string>
  /** Every resource (all pages of `resources/list`). */
  readonly listResources: Effect.Effect<ReadonlyArray<McpClient.McpResource>, Tool.ToolError>
  readonly readResource: (uri: string) => Effect.Effect<unknown, Tool.ToolError>
  readonly getPrompt: (name: string, args: Readonly<Record<string, string>>) => Effect.Effect<unknown, Tool.ToolError>
}

const toolError = (message: string) => new Tool.ToolError({ message })

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isConnectionClosed = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "CONNECTION_CLOSED"

type Progress = { readonly progress: number; readonly total?: number | undefined; readonly message?: string | undefined }

/** Why a request failed, and whether sending it again on a new connection is safe. */
type Failure =
  | { readonly _tag: "Retry"; readonly why: string }
  | { readonly _tag: "Lost"; readonly why: string }
  | { readonly _tag: "Fail"; readonly message: string }

/**
 * Start one server (its first connection is made here; a failure leaves it
 * `failed` with why).
 */
export const make = (
  config: McpConfig.ServerConfig,
  limits: Limits,
  pool: Tool.ToolPool["Type"],
  runtime: Runtime.Runtime<never>,
  provide: McpTool.ProvidePlatform | undefined,
  onChange: () => void
): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Connections (reconnects included) live as long as the layer.
    const layerScope = yield* Effect.scope
    let connection: McpClient.Connection | undefined
    let error: string | undefined
    let needsAuth = false
    let registered = new Map<string, Tool.Any>()
    let prompts: ReadonlyArray<McpClient.McpPrompt> = []
    const lock = yield* Effect.makeSemaphore(1)
    const remote = config.transport._tag === "stdio" ? undefined : config.transport

    const status = (): Status => ({
      name: config.name,
      source: config.source,
      transport: config.transport._tag,
      state: needsAuth
        ? "needs-auth"
        : connection !== undefined && !connection.isClosed() && error === undefined
        ? "connected"
        : "failed",
      error: error ?? (connection?.isClosed() ? "the server closed the connection; the next call reconnects" : undefined),
      tools: [...registered.values()].filter((tool) => tool.isEnabled()).map((tool) => tool.name),
      pid: connection?.pid,
      resources: connection?.capabilities().resources !== undefined,
      prompts
    })

    const listAll = <A>(
      page: (cursor: string | undefined) => Promise<{ readonly nextCursor?: string | undefined; readonly items: ReadonlyArray<A> }>
    ): Effect.Effect<ReadonlyArray<A>, string> =>
      Effect.tryPromise({
        try: async () => {
          const out: Array<A> = []
          let cursor: string | undefined
          for (let pages = 0; pages < 100; pages++) {
            const next = await page(cursor)
            out.push(...next.items)
            cursor = next.nextCursor
            if (cursor === undefined) break
          }
          return out
        },
        catch: describe
      })

    const refreshTools = (conn: McpClient.Connection) =>
      listAll((cursor) => conn.client.listTools(cursor === undefined ? {} : { cursor }).then((r) => ({ ...r, items: r.tools })))
        .pipe(
          Effect.flatMap((tools) =>
            Effect.gen(function*() {
              const next = new Map<string, Tool.Any>()
              for (const definition of tools) {
                const tool = McpTool.make(config, definition, limits, call, provide)
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

    const refreshPrompts = (conn: McpClient.Connection) =>
      conn.capabilities().prompts === undefined
        ? Effect.sync(() => void (prompts = []))
        : listAll((cursor) =>
          conn.client.listPrompts(cursor === undefined ? {} : { cursor }).then((r) => ({ ...r, items: r.prompts }))
        ).pipe(
          Effect.map((list) => void (prompts = list)),
          Effect.catchAll(() => Effect.void)
        )

    const inBackground = (effect: Effect.Effect<void, unknown>, tracked: boolean) => {
      // Marked before the refresh starts, so a reader right after the notification waits for it.
      const done = tracked ? pool.beginUpdate() : Effect.void
      Runtime.runFork(runtime)(
        effect.pipe(Effect.timeout(limits.connectTimeout), Effect.ignore, Effect.ensuring(done), Effect.ensuring(Effect.sync(onChange)))
      )
    }

    const open: Effect.Effect<McpClient.Connection, McpClient.ConnectError> = Effect.gen(function*() {
      const conn = yield* McpClient.connect(config, {
        connectTimeout: limits.connectTimeout,
        killGrace: limits.killGrace,
        onToolsChanged: () => {
          const current = connection
          if (current !== undefined) inBackground(refreshTools(current), true)
        },
        onListChanged: (what) => {
          const current = connection
          if (current !== undefined && what === "prompts") inBackground(refreshPrompts(current), false)
          else if (what === "resources") onChange()
        }
      })
      yield* refreshTools(conn).pipe(
        Effect.mapError((message): McpClient.ConnectError => ({ _tag: "Failed", message })),
        Effect.tapError(() => conn.close)
      )
      yield* refreshPrompts(conn)
      return conn
    }).pipe(Effect.provideService(Scope.Scope, layerScope))

    /** Open a new connection in place of the current one (closed first). */
    const replace = Effect.gen(function*() {
      if (connection !== undefined) yield* connection.close
      connection = undefined
      const reopened = yield* Effect.either(open)
      if (Either.isLeft(reopened)) {
        needsAuth = reopened.left._tag === "NeedsAuth"
        error = needsAuth ? reopened.left.message : `reconnecting failed: ${reopened.left.message}`
        return yield* Effect.fail(needsAuth ? reopened.left.message : `${reopened.left.message}`)
      }
      needsAuth = false
      error = undefined
      connection = reopened.right
      onChange()
      return reopened.right
    })

    /** The live connection, reconnecting if the last one closed. */
    const live: Effect.Effect<McpClient.Connection, Tool.ToolError> = lock.withPermits(1)(Effect.gen(function*() {
      if (connection !== undefined && !connection.isClosed()) return connection
      if (connection === undefined && error !== undefined && registered.size === 0) {
        return yield* Effect.fail(toolError(`MCP server "${config.name}" is not connected: ${error}`))
      }
      return yield* Effect.mapError(replace, (why) => toolError(`MCP server "${config.name}" is not connected: ${why}`))
    }))

    /** A new session in place of `stale` (unless another call already made one). */
    const renew = (stale: McpClient.Connection): Effect.Effect<McpClient.Connection, string> =>
      lock.withPermits(1)(
        connection !== undefined && connection !== stale && !connection.isClosed()
          ? Effect.succeed(connection)
          : replace
      )

    const classify = (cause: unknown, conn: McpClient.Connection, what: string, repeatable: boolean): Failure => {
      const failure = McpHttp.failureOf(cause)
      if (failure?.kind === "unauthorized" && remote !== undefined) {
        needsAuth = true
        error = McpHttp.unauthorizedMessage(config.name, remote.url)
        return { _tag: "Fail", message: `Error: ${error}` }
      }
      if (failure?.kind === "refused" || failure?.kind === "session-lost") {
        conn.markLost()
        return { _tag: "Retry", why: failure.message }
      }
      const lost = failure?.kind === "reset" || conn.isClosed() || isConnectionClosed(cause)
      if (!lost) return { _tag: "Fail", message: `Error: MCP server "${config.name}" failed ${what}: ${describe(cause)}` }
      conn.markLost()
      const why = failure?.message ?? conn.brokenReason() ?? "the server closed the connection"
      if (remote !== undefined && repeatable) return { _tag: "Retry", why }
      const tail = conn.stderrTail()
      return {
        _tag: "Lost",
        why: remote === undefined
          ? `Error: MCP server "${config.name}" closed the connection during ${what}` +
            (tail === "" ? "" : ` (stderr: ${tail})`) + "; the next call reconnects"
          : `Error: the connection to MCP server "${config.name}" was lost during ${what} (${why}); ` +
            "it may or may not have run, so it was not sent again; the next call starts a new session"
      }
    }

    /**
     * Send a request on the live connection; when it did not reach a live
     * session (or repeating it is harmless), once more on a new session.
     */
    const request = <A>(
      what: string,
      repeatable: boolean,
      send: (conn: McpClient.Connection, signal: AbortSignal) => Promise<A>
    ): Effect.Effect<A, Tool.ToolError> =>
      Effect.gen(function*() {
        const attempt = (conn: McpClient.Connection) =>
          conn.inFlight(Effect.tryPromise({ try: (signal) => send(conn, signal), catch: (cause) => cause }))
        const conn = yield* live
        const first = yield* Effect.either(attempt(conn))
        if (Either.isRight(first)) return first.right
        const failure = classify(first.left, conn, what, repeatable)
        if (failure._tag === "Fail") return yield* Effect.fail(toolError(failure.message))
        if (failure._tag === "Lost") {
          if (remote !== undefined) yield* lock.withPermits(1)(conn.close)
          return yield* Effect.fail(toolError(failure.why))
        }
        const fresh = yield* Effect.either(renew(conn))
        if (Either.isLeft(fresh)) {
          return yield* Effect.fail(toolError(
            needsAuth
              ? `Error: ${fresh.left}`
              : `Error: MCP server "${config.name}" cannot be reached (${failure.why}; a new session failed too: ` +
                `${fresh.left}); ${what} was not run`
          ))
        }
        const second = yield* Effect.either(attempt(fresh.right))
        if (Either.isRight(second)) return second.right
        const again = classify(second.left, fresh.right, what, false)
        return yield* Effect.fail(toolError(
          again._tag === "Fail" ? again.message : again._tag === "Lost" ? again.why : `Error: MCP server ` +
            `"${config.name}" failed ${what} on a new session too (${again.why})`
        ))
      })

    const call: McpTool.CallTool = (toolNameOnServer, qualified, input, context, repeatable) =>
      Effect.gen(function*() {
        const pings = yield* Queue.unbounded<Progress>()
        const sent = request(qualified, repeatable, (conn, signal) =>
          conn.client.callTool({ name: toolNameOnServer, arguments: input as Record<string, unknown> }, {
            signal,
            // Our own timers bound the call; the SDK's must never fire first.
            timeout: 2_147_483_647,
            onprogress: (progress) => Queue.unsafeOffer(pings, progress)
          }))
        const wallMs = config.timeoutMs ?? limits.toolTimeoutMs
        const idleMs = limits.idleTimeoutMs
        // The idle limit matters only when it is shorter than the wall-clock one.
        const next: Effect.Effect<Progress, Tool.ToolError> = idleMs === undefined || idleMs >= wallMs
          ? Queue.take(pings)
          : Queue.take(pings).pipe(Effect.timeoutFail({
            duration: idleMs,
            onTimeout: () =>
              toolError(
                `Error: MCP tool ${qualified} (server "${config.name}") sent no progress for ${idleMs} ms ` +
                  "(MCP_TOOL_IDLE_TIMEOUT) and was cancelled"
              )
          }))
        const watchProgress = next.pipe(Effect.flatMap((progress) => context.progress(progress)), Effect.forever)
        const result = yield* Effect.raceFirst(sent, watchProgress).pipe(
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
        const chars = McpResult.size(content)
        if (chars > limits.warnChars) {
          const message = `Large MCP response from ${qualified} (~${Math.round(chars / 4 / 1000)}k tokens); ` +
            "this can fill up the context quickly"
          yield* context.progress({ warning: message, output: message })
        }
        return content as ReadonlyArray<Messages.ToolResultContentBlock>
      })

    const first = yield* Effect.either(open)
    if (Either.isRight(first)) connection = first.right
    else {
      needsAuth = first.left._tag === "NeedsAuth"
      error = first.left.message
    }
    return {
      config,
      status,
      reconnect: lock.withPermits(1)(Effect.asVoid(replace)),
      listResources: request("resources/list", true, (conn) =>
        conn.capabilities().resources === undefined
          ? Promise.resolve([])
          : (async () => {
            const out: Array<McpClient.McpResource> = []
            let cursor: string | undefined
            for (let pages = 0; pages < 100; pages++) {
              const page = await conn.client.listResources(cursor === undefined ? {} : { cursor })
              out.push(...page.resources)
              cursor = page.nextCursor
              if (cursor === undefined) break
            }
            return out
          })()),
      readResource: (uri) => request(`resources/read ${uri}`, true, (conn, signal) => conn.client.readResource({ uri }, { signal })),
      getPrompt: (name, args) =>
        request(`prompts/get ${name}`, true, (conn, signal) =>
          conn.client.getPrompt({ name, arguments: { ...args } }, { signal }))
    }
  })
