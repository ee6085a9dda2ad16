/**
 * The Anthropic adapter's mechanics: how SDK failures become `ModelError`s,
 * the retry policy, and pulling the SDK's raw event stream into a decoded
 * `Stream`.
 */
import type Anthropic from "@anthropic-ai/sdk"
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Model from "../Model.js"

type Reason = Model.ModelError["reason"]

/** A failed attempt to open a stream: the error and how long the API asked us to wait. */
export interface AttemptFailure {
  readonly error: Model.ModelError
  readonly retryAfter: Option.Option<Duration.Duration>
}

/** Longest `retry-after` we honour; a longer one is the schedule's business. */
const maxRetryAfter = Duration.seconds(60)

const retryAfterOf = (headers: Headers | undefined): Option.Option<Duration.Duration> => {
  const clamp = (ms: number) => Option.some(Duration.min(Duration.millis(Math.max(0, ms)), maxRetryAfter))
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms)) return clamp(ms)
  const raw = headers?.get("retry-after")
  if (raw === null || raw === undefined) return Option.none()
  const seconds = Number.parseFloat(raw)
  if (Number.isFinite(seconds)) return clamp(seconds * 1000)
  const date = Date.parse(raw)
  return Number.isFinite(date) ? clamp(date - Date.now()) : Option.none()
}

/** The reason and retryability of an API error `type` (from a body or an `error` event). */
const byErrorType = (type: string | null | undefined): readonly [Reason, boolean] | undefined => {
  switch (type) {
    case "overloaded_error":
      return ["overloaded", true]
    case "rate_limit_error":
      return ["rate_limited", true]
    case "api_error":
    case "timeout_error":
      return ["api", true]
    case "authentication_error":
    case "permission_error":
      return ["authentication", false]
    case "invalid_request_error":
    case "not_found_error":
    case "request_too_large":
      return ["invalid_request", false]
    default:
      return undefined
  }
}

const byStatus = (status: number): readonly [Reason, boolean] =>
  status === 429
    ? ["rate_limited", true]
    : status === 529
    ? ["overloaded", true]
    : status === 401 || status === 403
    ? ["authentication", false]
    : status === 408 || status === 409 || status >= 500
    ? ["api", true]
    : ["invalid_request", false]

const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : ""
  return `${error.message}${cause}`
}

/** Classifies anything the SDK can throw. */
export const classify = (error: unknown): AttemptFailure => {
  const fail = (reason: Reason, retryable: boolean, message: string, status?: number) => ({
    error: new Model.ModelError({ reason, message, retryable, ...(status !== undefined ? { status } : {}) }),
    retryAfter: Option.none<Duration.Duration>()
  })
  if (error instanceof APIUserAbortError) return fail("network", false, "the request was aborted")
  if (error instanceof APIConnectionTimeoutError) {
    return fail("network", true, "the request to the Anthropic API timed out")
  }
  if (error instanceof APIConnectionError) {
    return fail("network", true, `cannot reach the Anthropic API: ${describe(error)}`)
  }
  if (error instanceof APIError) {
    const detail = `${error.type ?? "error"}: ${error.apiMessage ?? error.message}${
      error.requestID ? ` (request ${error.requestID})` : ""
    }`
    if (error.status === undefined) {
      // An `error` event in the SSE stream: only its type says what happened.
      const [reason, retryable] = byErrorType(error.type) ?? ["api", false]
      return fail(reason, retryable, `the Anthropic API sent an error event: ${detail}`)
    }
    const [statusReason, statusRetryable] = byStatus(error.status)
    const [reason, byType] = error.type === "overloaded_error"
      ? ["overloaded" as const, true]
      : [statusReason, statusRetryable]
    if (error.status === 401 || error.status === 403) {
      // A bad key stays bad: never retried, whatever the response says.
      return fail(
        "authentication",
        false,
        `Anthropic API ${error.status} ${detail}; check ANTHROPIC_API_KEY`,
        error.status
      )
    }
    // The API can say explicitly whether a retry makes sense.
    const shouldRetry = error.headers?.get("x-should-retry")
    const retryable = shouldRetry === "true" ? true : shouldRetry === "false" ? false : byType
    return {
      ...fail(reason, retryable, `Anthropic API ${error.status} ${detail}`, error.status),
      retryAfter: retryAfterOf(error.headers)
    }
  }
  if (error instanceof SyntaxError) {
    return fail("protocol", false, `the Anthropic API sent malformed data: ${error.message}`)
  }
  // undici reports a connection that broke while reading the body as a TypeError ("terminated").
  if (error instanceof TypeError) {
    return fail("network", true, `the connection to the Anthropic API broke: ${describe(error)}`)
  }
  return fail("api", false, describe(error))
}

/** What is reported before a retry. */
export interface RetryNotice {
  readonly error: Model.ModelError
  /** The attempt that failed, from 1. */
  readonly attempt: number
  readonly delay: Duration.Duration
}

/**
 * The retry policy: `schedule` over retryable failures, each delay at least
 * the failure's `retry-after`; a connection that cannot be made at all is
 * given up after `maxConnectionFailures` attempts in a row (a wrong URL should
 * not cost a minute of silence). Make one per request: it counts attempts.
 */
export const retryPolicy = (
  schedule: Schedule.Schedule<unknown, Model.ModelError>,
  options: {
    readonly onRetry?: ((notice: RetryNotice) => Effect.Effect<void>) | undefined
    readonly maxConnectionFailures?: number | undefined
  } = {}
): Schedule.Schedule<unknown, AttemptFailure> => {
  let attempts = 0
  let connectionFailures = 0
  const maxConnectionFailures = options.maxConnectionFailures ?? 3
  return Schedule.identity<AttemptFailure>().pipe(
    Schedule.intersect(Schedule.mapInput(schedule, (failure: AttemptFailure) => failure.error)),
    Schedule.whileInput((failure: AttemptFailure) => {
      attempts++
      connectionFailures = isConnectionFailure(failure.error) ? connectionFailures + 1 : 0
      return failure.error.retryable && connectionFailures < maxConnectionFailures
    }),
    Schedule.modifyDelay(([failure], delay) =>
      Option.match(failure.retryAfter, { onNone: () => delay, onSome: (wait) => Duration.max(delay, wait) })
    ),
    Schedule.modifyDelayEffect(([failure], delay) =>
      options.onRetry === undefined
        ? Effect.succeed(delay)
        : Effect.as(options.onRetry({ error: failure.error, attempt: attempts, delay }), delay)
    )
  )
}

/** A failure to connect at all (no HTTP status), as opposed to an error response. */
export const isConnectionFailure = (error: Model.ModelError): boolean =>
  error.reason === "network" && error.status === undefined && error.message.startsWith("cannot reach")

/** An opened stream: its iterator and its first result. */
export interface Opened {
  readonly iterator: AsyncIterator<unknown>
  readonly first: IteratorResult<unknown>
}

const idleError = (idleTimeout: Duration.Duration, where = "") => () => ({
  error: new Model.ModelError({
    reason: "network",
    message: `no event from the Anthropic API for ${Duration.format(idleTimeout)}${where}`,
    retryable: true
  }),
  retryAfter: Option.none<Duration.Duration>()
})

/**
 * One attempt: send the request and read the first event, so a failure before
 * any event is emitted (an HTTP error, a refused connection, an early `error`
 * event) can be retried. The request is aborted when the scope closes.
 */
export const open = (
  client: Anthropic,
  params: Anthropic.MessageCreateParamsStreaming,
  idleTimeout: Duration.Duration,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<Opened, AttemptFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const controller = yield* Effect.acquireRelease(
      Effect.sync(() => new AbortController()),
      (controller) => Effect.sync(() => controller.abort())
    )
    return yield* Effect.gen(function*() {
      const stream = yield* Effect.tryPromise({
        try: () => client.messages.create(params, { signal: controller.signal, headers }),
        catch: classify
      })
      const iterator = stream[Symbol.asyncIterator]()
      const first = yield* Effect.tryPromise({ try: () => iterator.next(), catch: classify }).pipe(
        Effect.timeoutFail({ duration: idleTimeout, onTimeout: idleError(idleTimeout, " after the response headers") })
      )
      return { iterator, first }
    }).pipe(
      // A failed attempt releases its connection now, not when the whole stream ends.
      Effect.tapError((failure) =>
        Effect.zipRight(
          Effect.sync(() => controller.abort()),
          Effect.logDebug(`Anthropic request attempt failed: ${failure.error.message}`)
        )
      )
    )
  })

// Fields the schemas do not name are kept: consumers (the CLI's stream_event lines) see the API's event as sent.
const decodeEvent = Schema.decodeUnknown(Model.ModelStreamEvent, { onExcessProperty: "preserve" })

/** The issues of a decoding error as `path: message`, the first per path (unions repeat themselves). */
const formatIssues = (error: ParseResult.ParseError): string => {
  const byPath = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map(String).join(".") || "(event)"
    if (!byPath.has(path)) byPath.set(path, `${path}: ${issue.message}`)
  }
  return [...byPath.values()].join("; ")
}

const typeOf = (value: unknown): string =>
  typeof value === "object" && value !== null && "type" in value && typeof value.type === "string"
    ? value.type
    : typeof value

/**
 * The decoded events of an opened stream. It ends at `message_stop`; ending
 * before it, breaking, stalling for `idleTimeout` or sending an undecodable
 * event fails with a `ModelError` (not retryable: events were emitted).
 */
export const events = (
  opened: Opened,
  idleTimeout: Duration.Duration
): Stream.Stream<Model.ModelStreamEvent, Model.ModelError> =>
  Stream.suspend(() => {
    let pending: IteratorResult<unknown> | undefined = opened.first
    let count = 0
    let stopped = false
    const openBlocks = new Set<number>()
    const where = () =>
      `after ${count} event(s)${openBlocks.size > 0 ? `, inside content block ${[...openBlocks].join(", ")}` : ""}`
    const midStream = (failure: AttemptFailure) =>
      new Model.ModelError({
        reason: failure.error.reason,
        message: `the model stream failed ${where()}: ${failure.error.message}`,
        retryable: false,
        ...(failure.error.status !== undefined ? { status: failure.error.status } : {})
      })
    const next: Effect.Effect<IteratorResult<unknown>, Model.ModelError> = Effect.suspend(() => {
      const ready = pending
      pending = undefined
      return ready !== undefined
        ? Effect.succeed(ready)
        : Effect.tryPromise({ try: () => opened.iterator.next(), catch: classify }).pipe(
          Effect.timeoutFail({ duration: idleTimeout, onTimeout: idleError(idleTimeout) }),
          Effect.mapError(midStream)
        )
    })
    const track = (event: Model.ModelStreamEvent) => {
      count++
      if (event.type === "content_block_start") openBlocks.add(event.index)
      else if (event.type === "content_block_stop") openBlocks.delete(event.index)
      else if (event.type === "message_stop") stopped = true
    }
    const pull: Effect.Effect<Model.ModelStreamEvent, Option.Option<Model.ModelError>> = Effect.suspend(() =>
      stopped
        ? Effect.fail(Option.none())
        : next.pipe(
          Effect.flatMap((result) =>
            result.done
              ? Effect.fail(
                new Model.ModelError({
                  reason: "network",
                  message: `the model stream ended without message_stop ${where()}`,
                  retryable: false
                })
              )
              : decodeEvent(result.value).pipe(
                Effect.mapError((error) =>
                  new Model.ModelError({
                    reason: "protocol",
                    message: `the Anthropic API sent an undecodable "${typeOf(result.value)}" event ${where()}: ${
                      formatIssues(error)
                    }`,
                    retryable: false
                  })
                )
              )
          ),
          Effect.tap((event) => Effect.sync(() => track(event))),
          Effect.mapError(Option.some)
        )
    )
    return Stream.repeatEffectOption(pull)
  })
