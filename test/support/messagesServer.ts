/**
 * A local HTTP server that speaks the Anthropic Messages API streaming
 * protocol, for running the real `@anthropic-ai/sdk` against scripted
 * responses.
 *
 * `POST /v1/messages` serves the next scripted response: a Server-Sent Events
 * stream (`event: <name>\ndata: <json>\n\n`, with optional delays before
 * events, ending normally or by destroying the socket mid-stream) or an HTTP
 * error with the API's JSON error body. Every request is recorded with its
 * headers, parsed JSON body, arrival time and how its response ended
 * (`completed`, `aborted` by the client, or `destroyed` by the script).
 */
import { ReplayModel } from "@switchyard/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** One Server-Sent Event; `delayMs` is waited before it is written. */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
  readonly delayMs?: number
}

export type ScriptedResponse =
  | {
    readonly _tag: "Events"
    readonly events: ReadonlyArray<SseEvent>
    /** `destroy`: the socket is destroyed after the last event (a stream broken mid-way). */
    readonly ending: "end" | "destroy"
  }
  | {
    readonly _tag: "HttpError"
    readonly status: number
    readonly body: unknown
    readonly headers: Readonly<Record<string, string>>
  }

/** How a response ended: sent in full, the client went away, or the script broke it. */
export type Outcome = "completed" | "aborted" | "destroyed"

export interface RecordedRequest {
  /** 0-based, in arrival order. */
  readonly index: number
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The parsed JSON body (the raw text when it is not JSON). */
  readonly body: unknown
  /** `Date.now()` when the request body had arrived. */
  readonly arrivedAt: number
  /** `Date.now()` when the response ended, once it has. */
  readonly endedAt: () => number | undefined
  /** How the response ended, once it has. */
  readonly outcome: () => Outcome | undefined
  /** Waits until the response has ended. */
  readonly settled: Effect.Effect<Outcome>
}

export interface MessagesServer {
  /** The base URL, for `ANTHROPIC_BASE_URL`. */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Adds responses to serve, in order. */
  readonly enqueue: (...responses: ReadonlyArray<ScriptedResponse>) => void
  /** How many scripted responses have not been served yet. */
  readonly pending: () => number
  /** Waits until request `index` (0-based) has arrived. */
  readonly request: (index: number) => Effect.Effect<RecordedRequest>
}

// -----------------------------------------------------------------------------
// responses
// -----------------------------------------------------------------------------

/** An SSE event named after its payload's `type`. */
export const event = <A extends { readonly type: string }>(data: A, delayMs = 0): SseEvent => ({
  event: data.type,
  data,
  delayMs
})

/** A stream of the given events that ends normally. */
export const events = (list: ReadonlyArray<SseEvent>): ScriptedResponse => ({
  _tag: "Events",
  events: list,
  ending: "end"
})

/** A stream of the given events after which the socket is destroyed. */
export const broken = (list: ReadonlyArray<SseEvent>): ScriptedResponse => ({
  _tag: "Events",
  events: list,
  ending: "destroy"
})

let messageCounter = 0

/**
 * The SSE events of a complete assistant message, built from content blocks
 * like a replay turn (`chunks` splits text and tool input JSON into that many
 * deltas; `delayMs`/`chunkDelayMs` are waited before blocks and between
 * deltas). `message_start` carries the API's full message object and a `ping`
 * follows it, as the real API does.
 */
export const messageEvents = (
  turn: ReplayModel.Turn,
  options: { readonly id?: string; readonly model?: string } = {}
): ReadonlyArray<SseEvent> => {
  const id = options.id ?? `msg_test_${++messageCounter}`
  const timed = ReplayModel.turnEvents(turn, { messageId: id, model: options.model ?? "claude-test" })
  return timed.flatMap(({ delayMs, event: data }): ReadonlyArray<SseEvent> =>
    data.type === "message_start"
      ? [
        event({
          ...data,
          message: { ...data.message, type: "message", content: [], stop_reason: null, stop_sequence: null }
        }, delayMs),
        event({ type: "ping" })
      ]
      : [event(data, delayMs)]
  )
}

/** A complete streamed message (see {@link messageEvents}). */
export const message = (turn: ReplayModel.Turn, options: { readonly id?: string; readonly model?: string } = {}) =>
  events(messageEvents(turn, options))

/** An HTTP error with the API's error body. */
export const httpError = (
  status: number,
  type: string,
  message: string,
  headers: Readonly<Record<string, string>> = {}
): ScriptedResponse => ({
  _tag: "HttpError",
  status,
  body: { type: "error", error: { type, message } },
  headers
})

/** 529 `overloaded_error`. */
export const overloaded = (): ScriptedResponse => httpError(529, "overloaded_error", "Overloaded")

/** 429 `rate_limit_error` with a `retry-after` in seconds. */
export const rateLimited = (retryAfterSeconds: number): ScriptedResponse =>
  httpError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", {
    "retry-after": String(retryAfterSeconds)
  })

/** An `error` SSE event, as the API sends mid-stream. */
export const errorEvent = (type: string, message: string, delayMs = 0): SseEvent =>
  event({ type: "error", error: { type, message } }, delayMs)

// -----------------------------------------------------------------------------
// server
// -----------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const readBody = (req: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const sendJson = (
  res: Http.ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {}
) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/**
 * Starts a server on 127.0.0.1 (a free port); it closes when the scope ends.
 * `respond`, when given, answers a request the script has no response for,
 * from its body (a model that answers by what it is sent).
 */
export const start = (
  options: { readonly respond?: (body: unknown, index: number) => ScriptedResponse | undefined } = {}
): Effect.Effect<MessagesServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const script: Array<ScriptedResponse> = []
    const requests: Array<RecordedRequest> = []
    const arrivals: Array<Deferred.Deferred<RecordedRequest>> = []
    const arrival = (index: number) => (arrivals[index] ??= Deferred.unsafeMake<RecordedRequest>(FiberId.none))

    const serve = async (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const text = await readBody(req)
      const index = requests.length
      const settled = Deferred.unsafeMake<Outcome>(FiberId.none)
      let outcome: Outcome | undefined
      let endedAt: number | undefined
      let destroying = false
      res.on("close", () => {
        endedAt = Date.now()
        outcome = res.writableFinished ? "completed" : destroying ? "destroyed" : "aborted"
        Deferred.unsafeDone(settled, Effect.succeed(outcome))
      })
      const recorded: RecordedRequest = {
        index,
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: parseJson(text),
        arrivedAt: Date.now(),
        endedAt: () => endedAt,
        outcome: () => outcome,
        settled: Deferred.await(settled)
      }
      requests.push(recorded)
      Deferred.unsafeDone(arrival(index), Effect.succeed(recorded))

      const requestId = `req_test_${index}`
      if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== "/v1/messages") {
        return sendJson(res, 404, {
          type: "error",
          error: { type: "not_found_error", message: `${req.method} ${req.url}` }
        })
      }
      const response = script.shift() ?? options.respond?.(recorded.body, index)
      if (response === undefined) {
        // A 400 is not retried, so a missing script fails the test at once.
        return sendJson(
          res,
          400,
          {
            type: "error",
            error: {
              type: "invalid_request_error",
              message: `messagesServer: no scripted response for request #${index}`
            }
          },
          { "request-id": requestId }
        )
      }
      if (response._tag === "HttpError") {
        return sendJson(res, response.status, response.body, { "request-id": requestId, ...response.headers })
      }
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "request-id": requestId
      })
      res.flushHeaders()
      for (const { data, delayMs, event: name } of response.events) {
        if (delayMs !== undefined && delayMs > 0) await sleep(delayMs)
        if (res.destroyed) return
        res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
      }
      if (response.ending === "destroy") {
        destroying = true
        // Let the written events reach the client before the connection breaks.
        await sleep(10)
        res.destroy()
      } else {
        res.end()
      }
    }

    const server = Http.createServer((req, res) => {
      serve(req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(error) } })
        } else res.destroy()
      })
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      url: `http://127.0.0.1:${port}`,
      requests,
      enqueue: (...responses) => void script.push(...responses),
      pending: () => script.length,
      request: (index) => Deferred.await(arrival(index))
    }
  })
