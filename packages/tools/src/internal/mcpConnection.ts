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
import * as Journal from "@switchyard/core/Journal"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
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
  readonly getPrompt: (
    name: string,
    args: Readonly<Record<string, string>>
  ) => Effect.Effect<unknown, Tool.ToolError>
}

const toolError = (message: string) => new Tool.ToolError({ message })

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isConnectionClosed = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "CONNECTION_CLOSED"

type Progress = {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** Why a request failed, and whether sending it again on a new connection is safe. */
type Failure =
  | { readonly _tag: "Retry"; readonly why: string }
  | { readonly _tag: "Lost"; readonly why: string }
  | { readonly _tag: "Fail"; readonly message: string }

/** Sends a request on a connection. */
type Send<A> = (conn: McpClient.Connection, signal: AbortSignal) => Promise<A>

/** Sends a request with the recovery rules; `repeatable`: sending it twice is harmless. */
type Request = <A>(what: string, repeatable: boolean, send: Send<A>) => Effect.Effect<A, Tool.ToolError>

/** One page of a listing. */
interface Page<A> {
  readonly nextCursor?: string | undefined
  readonly items: ReadonlyArray<A>
}

/** A paged listing: every page, up to 100. */
const listAll = <A>(
  page: (cursor: string | undefined) => Promise<Page<A>>
): Promise<ReadonlyArray<A>> =>
  (async () => {
    const out: Array<A> = []
    let cursor: string | undefined
    for (let pages = 0; pages < 100; pages++) {
      const next = await page(cursor)
      out.push(...next.items)
      cursor = next.nextCursor
      if (cursor === undefined) break
    }
    return out
  })()

const cursorOf = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor })

/** The mutable state of one server. */
interface State {
  connection: McpClient.Connection | undefined
  error: string | undefined
  needsAuth: boolean
  registered: Map<string, Tool.Any>
  prompts: ReadonlyArray<McpClient.McpPrompt>
}

const statusOf = (config: McpConfig.ServerConfig, state: State): Status => {
  const { connection } = state
  const open = connection !== undefined && !connection.isClosed()
  return {
    name: config.name,
    source: config.source,
    transport: config.transport._tag,
    state: state.needsAuth ? "needs-auth" : open && state.error === undefined ? "connected" : "failed",
    error: state.error ??
      (connection?.isClosed() ? "the server closed the connection; the next call reconnects" : undefined),
    tools: [...state.registered.values()].filter((tool) => tool.isEnabled()).map((tool) => tool.name),
    pid: connection?.pid,
    resources: connection?.capabilities().resources !== undefined,
    prompts: state.prompts
  }
}

/** What a failed request means for sending it again (and for the server's state: a 401). */
const classify = (
  config: McpConfig.ServerConfig,
  state: State,
  cause: unknown,
  conn: McpClient.Connection,
  what: string,
  repeatable: boolean
): Failure => {
  const remote = config.transport._tag === "stdio" ? undefined : config.transport
  const failure = McpHttp.failureOf(cause)
  if (failure?.kind === "unauthorized" && remote !== undefined) {
    state.needsAuth = true
    state.error = McpHttp.unauthorizedMessage(config.name, remote.url)
    return { _tag: "Fail", message: `Error: ${state.error}` }
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

/** A tool call: progress streamed, the idle and wall-clock limits, the result as content, the size warning. */
const makeCall =
  (config: McpConfig.ServerConfig, limits: Limits, request: Request): McpTool.CallTool =>
  (toolNameOnServer, qualified, input, context, repeatable, idempotent) =>
    Effect.gen(function*() {
      const pings = yield* Queue.unbounded<Progress>()
      // An idempotent tool gets the journal's idempotency key (SPEC §4.14): the same on every run of the call.
      const key = idempotent ? yield* Journal.currentIdempotencyKey : Option.none<string>()
      const meta = Option.match(key, {
        onNone: () => ({}),
        onSome: (value) => ({ _meta: { [McpTool.IDEMPOTENCY_KEY_META]: value } })
      })
      const sent = request(qualified, repeatable, (conn, signal) =>
        conn.client.callTool({ name: toolNameOnServer, arguments: input as Record<string, unknown>, ...meta }, {
          signal,
          // Our own timers bound the call; the SDK's must never fire first.
          timeout: 2_147_483_647,
          onprogress: (progress) =>
            Queue.unsafeOffer(pings, progress)
        }))
      const server = `MCP tool ${qualified} (server "${config.name}")`
      const wallMs = config.timeoutMs ?? limits.toolTimeoutMs
      const idleMs = limits.idleTimeoutMs
      // The idle limit matters only when it is shorter than the wall-clock one.
      const next: Effect.Effect<Progress, Tool.ToolError> = idleMs === undefined || idleMs >= wallMs
        ? Queue.take(pings)
        : Queue.take(pings).pipe(Effect.timeoutFail({
          duration: idleMs,
          onTimeout: () =>
            toolError(`Error: ${server} sent no progress for ${idleMs} ms (MCP_TOOL_IDLE_TIMEOUT) and was cancelled`)
        }))
      const watchProgress = next.pipe(
        Effect.flatMap((progress) =>
          context.progress(progress)
        ),
        Effect.forever
      )
      const limit = config.timeoutMs !== undefined ? "the server's timeout" : "MCP_TOOL_TIMEOUT"
      const result = yield* Effect.raceFirst(sent, watchProgress).pipe(
        Effect.timeoutFail({
          duration: wallMs,
          onTimeout: () => toolError(`Error: ${server} timed out after ${wallMs} ms (${limit}) and was cancelled`)
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

/**
 * Start one server (its first connection is made here; a failure leaves it
 * `failed` with why).
 */
export const make = (
  config: McpConfig.ServerConfig,
  limits: Limits,
  pool: Tool.ToolPool["Type"],
  runtime: Runtime.Runtime<never>,
  provide: McpTool.ProvidePlatform | undefined
): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Connections (reconnects included) live as long as the layer.
    const layerScope = yield* Effect.scope
    const state: State = {
      connection: undefined,
      error: undefined,
      needsAuth: false,
      registered: new Map(),
      prompts: []
    }
    const lock = yield* Effect.makeSemaphore(1)
    const remote = config.transport._tag === "stdio" ? undefined : config.transport

    const refreshTools = (conn: McpClient.Connection): Effect.Effect<void, string> =>
      Effect.tryPromise({
        try: () => listAll((cursor) => conn.client.listTools(cursorOf(cursor)).then((r) => ({ ...r, items: r.tools }))),
        catch: describe
      }).pipe(Effect.flatMap((tools) =>
        Effect.gen(function*() {
          const next = new Map<string, Tool.Any>()
          for (const definition of tools) {
            const tool = McpTool.make(config, definition, limits, call, provide)
            next.set(tool.name, tool)
            yield* pool.register(tool)
          }
          // A tool the server no longer lists is disabled: the registry drops disabled tools.
          for (const [name, tool] of state.registered) {
            if (!next.has(name)) yield* pool.register({ ...tool, isEnabled: () => false })
          }
          state.registered = next
        })
      ))

    const refreshPrompts = (conn: McpClient.Connection): Effect.Effect<void> =>
      conn.capabilities().prompts === undefined
        ? Effect.sync(() => void (state.prompts = []))
        : Effect.tryPromise(() =>
          listAll((cursor) => conn.client.listPrompts(cursorOf(cursor)).then((r) => ({ ...r, items: r.prompts })))
        ).pipe(Effect.map((list) => void (state.prompts = list)), Effect.ignore)

    const inBackground = (effect: Effect.Effect<void, unknown>, tracked: boolean) => {
      // Marked before the refresh starts, so a reader right after the notification waits for it.
      const done = tracked ? pool.beginUpdate() : Effect.void
      Runtime.runFork(runtime)(effect.pipe(Effect.timeout(limits.connectTimeout), Effect.ignore, Effect.ensuring(done)))
    }

    const open: Effect.Effect<McpClient.Connection, McpClient.ConnectError> = Effect.gen(function*() {
      const conn = yield* McpClient.connect(config, {
        connectTimeout: limits.connectTimeout,
        killGrace: limits.killGrace,
        onToolsChanged: () => {
          if (state.connection !== undefined) inBackground(refreshTools(state.connection), true)
        },
        onListChanged: (what) => {
          if (state.connection === undefined || what !== "prompts") return
          inBackground(refreshPrompts(state.connection), false)
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
      if (state.connection !== undefined) yield* state.connection.close
      state.connection = undefined
      const reopened = yield* Effect.either(open)
      if (Either.isLeft(reopened)) {
        state.needsAuth = reopened.left._tag === "NeedsAuth"
        state.error = state.needsAuth ? reopened.left.message : `reconnecting failed: ${reopened.left.message}`
        return yield* Effect.fail(reopened.left.message)
      }
      state.needsAuth = false
      state.error = undefined
      state.connection = reopened.right
      return reopened.right
    })

    const notConnected = (why: string) => toolError(`MCP server "${config.name}" is not connected: ${why}`)

    /** The live connection, reconnecting if the last one closed. */
    const live: Effect.Effect<McpClient.Connection, Tool.ToolError> = lock.withPermits(1)(Effect.gen(function*() {
      const current = state.connection
      if (current !== undefined && !current.isClosed()) return current
      if (current === undefined && state.error !== undefined && state.registered.size === 0) {
        return yield* Effect.fail(notConnected(state.error))
      }
      return yield* Effect.mapError(replace, notConnected)
    }))

    /** A new session in place of `stale` (unless another call already made one). */
    const renew = (stale: McpClient.Connection): Effect.Effect<McpClient.Connection, string> =>
      lock.withPermits(1)(Effect.suspend(() => {
        const current = state.connection
        return current !== undefined && current !== stale && !current.isClosed() ? Effect.succeed(current) : replace
      }))

    /**
     * Send a request on the live connection; when it did not reach a live
     * session (or repeating it is harmless), once more on a new session.
     */
    const request: Request = (what, repeatable, send) =>
      Effect.gen(function*() {
        const attempt = (conn: McpClient.Connection) =>
          conn.inFlight(Effect.tryPromise({ try: (signal) => send(conn, signal), catch: (cause) => cause }))
        const conn = yield* live
        const first = yield* Effect.either(attempt(conn))
        if (Either.isRight(first)) return first.right
        const failure = classify(config, state, first.left, conn, what, repeatable)
        if (failure._tag === "Fail") return yield* Effect.fail(toolError(failure.message))
        if (failure._tag === "Lost") {
          if (remote !== undefined) yield* lock.withPermits(1)(conn.close)
          return yield* Effect.fail(toolError(failure.why))
        }
        const fresh = yield* Effect.either(renew(conn))
        if (Either.isLeft(fresh)) {
          return yield* Effect.fail(toolError(
            state.needsAuth
              ? `Error: ${fresh.left}`
              : `Error: MCP server "${config.name}" cannot be reached (${failure.why}; a new session failed too: ` +
                `${fresh.left}); ${what} was not run`
          ))
        }
        const second = yield* Effect.either(attempt(fresh.right))
        if (Either.isRight(second)) return second.right
        const again = classify(config, state, second.left, fresh.right, what, false)
        return yield* Effect.fail(toolError(
          again._tag === "Fail"
            ? again.message
            : again._tag === "Lost"
            ? again.why
            : `Error: MCP server "${config.name}" failed ${what} on a new session too (${again.why})`
        ))
      })

    const call = makeCall(config, limits, request)

    const first = yield* Effect.either(open)
    if (Either.isRight(first)) state.connection = first.right
    else {
      state.needsAuth = first.left._tag === "NeedsAuth"
      state.error = first.left.message
    }
    return {
      config,
      status: () => statusOf(config, state),
      reconnect: lock.withPermits(1)(Effect.asVoid(replace)),
      listResources: request("resources/list", true, (conn) =>
        conn.capabilities().resources === undefined
          ? Promise.resolve([])
          : listAll((cursor) =>
            conn.client.listResources(cursorOf(cursor)).then((r) => ({ ...r, items: r.resources }))
          )),
      readResource: (uri) =>
        request(`resources/read ${uri}`, true, (conn, signal) => conn.client.readResource({ uri }, { signal })),
      getPrompt: (name, args) =>
        request(
          `prompts/get ${name}`,
          true,
          (conn, signal) => conn.client.getPrompt({ name, arguments: { ...args } }, { signal })
        )
    }
  })
