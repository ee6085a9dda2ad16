/**
 * What went wrong with a request to a remote MCP server, told apart where it
 * happens: in `fetch`. The transports are given `classifyingFetch`, which
 * turns the failures recovery cares about into an `HttpFailure` that the SDK
 * passes through to the call:
 *
 * - `refused` — the connection was refused (the server is down or
 *   restarting): the request was never sent;
 * - `session-lost` — the server answered 404, or 400 with a JSON-RPC error
 *   about the session, to a request carrying `Mcp-Session-Id`: it does not
 *   know the session (it restarted), so the request did not run;
 * - `reset` — the connection broke after the request was sent: it may or may
 *   not have run;
 * - `unauthorized` — 401: the server wants OAuth, which is not supported.
 *
 * @internal
 */

/** How a request failed. */
export type FailureKind = "refused" | "session-lost" | "reset" | "unauthorized"

/** A request to a remote server failed in a way recovery knows. */
export class HttpFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number | undefined
  ) {
    super(message)
    this.name = "HttpFailure"
  }
}

const REFUSED = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT"
])

const causeCode = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

const causeMessage = (error: unknown): string => {
  const cause = typeof error === "object" && error !== null ? (error as { cause?: unknown }).cause : undefined
  const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error)
  return message
}

/** A session error in a 400 body: `{"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`. */
export const isSessionError = (body: string): boolean => /session/i.test(body)

/** The request's method and whether it carried a session id. */
const describeRequest = (init: RequestInit | undefined) => {
  const headers = new Headers(init?.headers)
  return { method: (init?.method ?? "GET").toUpperCase(), session: headers.get("mcp-session-id") }
}

/**
 * `fetch` for the MCP transports, failing with an `HttpFailure` where the
 * kind of failure matters.
 */
export const classifyingFetch = (base: typeof fetch = fetch): typeof fetch => async (input, init) => {
  const request = describeRequest(init)
  let response: Response
  try {
    response = await base(input, init)
  } catch (error) {
    // An abort is the caller's own doing (an interrupted call): not a failure of the server.
    if (init?.signal?.aborted === true) throw error
    const code = causeCode(error)
    if (code !== undefined && REFUSED.has(code)) {
      throw new HttpFailure("refused", `cannot connect (${causeMessage(error)})`)
    }
    throw new HttpFailure("reset", `the connection broke (${causeMessage(error)})`)
  }
  if (response.status === 401) {
    await response.body?.cancel().catch(() => undefined)
    throw new HttpFailure("unauthorized", "401 Unauthorized", 401)
  }
  if (request.session !== null && request.method === "POST" && (response.status === 404 || response.status === 400)) {
    const body = response.status === 400 ? await response.clone().text().catch(() => "") : ""
    if (response.status === 404 || isSessionError(body)) {
      await response.body?.cancel().catch(() => undefined)
      throw new HttpFailure(
        "session-lost",
        `the server does not know the session (${response.status}${body === "" ? "" : ` ${body.slice(0, 200)}`})`,
        response.status
      )
    }
  }
  return response
}

/** The `HttpFailure` in an error or its causes. */
export const failureOf = (error: unknown): HttpFailure | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof HttpFailure) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * What a 401 means here, and what to do instead: pass a token as a header.
 */
export const unauthorizedMessage = (server: string, url: string): string =>
  `MCP server "${server}" (${url}) answered 401 Unauthorized: it wants OAuth, which Switchyard does not support. ` +
  `Pass a token as a header instead: switchyard mcp add --transport http --header "Authorization: Bearer YOUR_TOKEN" ` +
  `${server} ${url} (or "headers": {"Authorization": "Bearer \${TOKEN}"} in its .mcp.json entry)`
