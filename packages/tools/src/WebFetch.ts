/**
 * WebFetch: fetch a URL, turn HTML into Markdown, and answer `prompt` over it
 * (Claude Code's `WebFetch`).
 *
 * The request goes through the `@effect/platform` `HttpClient` with a timeout
 * and a size cap; interrupting the call aborts it. `http:` is upgraded to
 * `https:` except for local hosts. Redirects are followed only within the same
 * host (`www.` aside); a redirect elsewhere is reported to the model, which can
 * fetch the new URL itself (so a permission rule for one domain is never
 * sidestepped by a redirect). When a `LanguageModel` service is in the
 * context, the prompt is answered over the page by streaming a request to it;
 * without one, the Markdown itself is the result.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Model from "@switchyard/core/Model"
import * as Footprint from "@switchyard/core/Footprint"
import * as Tool from "@switchyard/core/Tool"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The whole fetch, redirects included. */
  readonly timeout: Duration.DurationInput
  /** Bytes of body read; the rest is not downloaded. */
  readonly maxBytes: number
  /** Characters of Markdown returned or given to the model. */
  readonly maxMarkdownChars: number
  readonly maxRedirects: number
  readonly maxAnswerTokens: number
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = {
  timeout: "30 seconds",
  maxBytes: 10 * 1024 * 1024,
  maxMarkdownChars: 100_000,
  maxRedirects: 10,
  maxAnswerTokens: 2048
}

/**
 * WebFetch's limits; `defaultOptions` unless provided.
 *
 * @since 0.1.0
 * @category services
 */
export class WebFetchOptions extends Context.Reference<WebFetchOptions>()("@switchyard/tools/WebFetch/Options", {
  defaultValue: (): Options => defaultOptions
}) {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const WebFetchInput = Schema.Struct({
  url: Schema.String.annotations({ description: "The URL to fetch content from (http: is upgraded to https:)" }),
  prompt: Schema.String.annotations({ description: "What to extract from or answer about the fetched content" })
})

/**
 * @since 0.1.0
 * @category models
 */
export type WebFetchInput = Schema.Schema.Type<typeof WebFetchInput>

/**
 * @since 0.1.0
 * @category models
 */
export type WebFetchOutput =
  | {
    readonly _tag: "Content"
    readonly url: string
    readonly status: number
    readonly contentType: string
    readonly bytes: number
    /** The model's answer, or the Markdown when no model is available. */
    readonly result: string
    readonly answeredByModel: boolean
  }
  | {
    readonly _tag: "Redirect"
    readonly url: string
    readonly redirectUrl: string
    readonly status: number
    readonly prompt: string
  }

/**
 * @since 0.1.0
 * @category errors
 */
export class WebFetchError extends Schema.TaggedError<WebFetchError>()("WebFetchError", {
  url: Schema.String,
  reason: Schema.Literal("InvalidUrl", "Timeout", "Http", "Transport", "Unsupported", "TooManyRedirects", "Model"),
  message: Schema.String
}) {}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const isLocal = (url: URL) => LOCAL_HOSTS.has(url.hostname) || url.hostname.endsWith(".localhost")

/**
 * Check and normalise a URL as WebFetch fetches it: http(s) only, no
 * credentials, at most 2000 characters, `http:` upgraded to `https:` except
 * for local hosts. The left side says what is wrong.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeUrl = (raw: string): Either.Either<URL, string> => {
  if (raw.length > 2000) return Either.left("the URL is longer than 2000 characters")
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left("it is not a valid absolute URL")
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(`only http and https URLs can be fetched, not ${url.protocol}`)
  }
  if (url.username !== "" || url.password !== "") return Either.left("URLs with credentials are not fetched")
  // Claude Code upgrades http to https; local servers (tests, dev servers) keep http.
  if (url.protocol === "http:" && !isLocal(url)) url.protocol = "https:"
  return Either.right(url)
}

const stripWww = (host: string) => host.replace(/^www\./, "")

/** A redirect WebFetch follows itself: same protocol, port and host (`www.` aside). */
const isPermittedRedirect = (from: URL, to: URL) =>
  from.protocol === to.protocol &&
  from.port === to.port &&
  stripWww(from.hostname) === stripWww(to.hostname) &&
  to.username === "" &&
  to.password === ""

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml|x-ndjson))|\+json|\+xml/

interface Page {
  readonly _tag: "Page"
  readonly url: URL
  readonly status: number
  readonly contentType: string
  readonly body: Uint8Array
  readonly truncated: boolean
}

interface Redirected {
  readonly _tag: "Redirected"
  readonly url: URL
  readonly location: URL
  readonly status: number
}

const readCapped = (stream: Stream.Stream<Uint8Array, unknown>, maxBytes: number) =>
  Effect.map(
    // Folding stops at the cap; the rest of the body is never downloaded (the stream, and the request, end there).
    Stream.runFoldWhile(
      stream,
      { chunks: [] as Array<Uint8Array>, size: 0, truncated: false },
      (state) => state.size < maxBytes,
      (state, chunk) => {
        const room = maxBytes - state.size
        const taken = chunk.length > room ? chunk.subarray(0, room) : chunk
        state.chunks.push(taken)
        return {
          chunks: state.chunks,
          size: state.size + taken.length,
          truncated: state.truncated || chunk.length > room
        }
      }
    ),
    (state) => {
      const body = new Uint8Array(state.size)
      let offset = 0
      for (const chunk of state.chunks) {
        body.set(chunk, offset)
        offset += chunk.length
      }
      return { body, truncated: state.truncated || state.size >= maxBytes }
    }
  )

const fetchPage = (
  start: URL,
  options: Options
): Effect.Effect<Page | Redirected, WebFetchError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let url = start
    for (let hops = 0;; hops++) {
      const request = HttpClientRequest.get(url).pipe(
        HttpClientRequest.setHeaders({
          "user-agent": "Switchyard-WebFetch/0.1 (+https://github.com/switchyard)",
          accept: "text/html, text/markdown, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5"
        })
      )
      const response = yield* client.execute(request).pipe(
        Effect.mapError((error) =>
          new WebFetchError({
            url: url.href,
            reason: "Transport",
            message: `Could not fetch ${url.href}: ${error.message}`
          })
        )
      )
      if (REDIRECT_STATUSES.has(response.status)) {
        const location = response.headers["location"]
        if (location === undefined) {
          return yield* new WebFetchError({
            url: url.href,
            reason: "Http",
            message: `${url.href} answered ${response.status} without a Location header`
          })
        }
        const next = new URL(location, url)
        if (!isPermittedRedirect(url, next)) return { _tag: "Redirected", url, location: next, status: response.status }
        if (hops >= options.maxRedirects) {
          return yield* new WebFetchError({
            url: start.href,
            reason: "TooManyRedirects",
            message: `More than ${options.maxRedirects} redirects starting at ${start.href}`
          })
        }
        url = next
        continue
      }
      if (response.status >= 400) {
        return yield* new WebFetchError({
          url: url.href,
          reason: "Http",
          message: `${url.href} answered HTTP ${response.status}`
        })
      }
      const contentType = response.headers["content-type"] ?? ""
      const { body, truncated } = yield* readCapped(response.stream, options.maxBytes).pipe(
        Effect.mapError((error) =>
          new WebFetchError({
            url: url.href,
            reason: "Transport",
            message: `Reading ${url.href} failed: ${String(error)}`
          })
        )
      )
      return { _tag: "Page", url, status: response.status, contentType, body, truncated }
    }
  })

const decodeBody = (body: Uint8Array, contentType: string): string => {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? "utf-8"
  try {
    return new TextDecoder(charset).decode(body)
  } catch {
    return new TextDecoder("utf-8").decode(body)
  }
}

const isHtml = (contentType: string, text: string) =>
  contentType.includes("html") || (contentType === "" && /^\s*<(!doctype html|html)/i.test(text))

const toMarkdown = (page: Page, options: Options): Effect.Effect<string, WebFetchError> =>
  Effect.gen(function*() {
    const contentType = page.contentType.toLowerCase()
    if (contentType !== "" && !TEXT_TYPES.test(contentType)) {
      return yield* new WebFetchError({
        url: page.url.href,
        reason: "Unsupported",
        message: `${page.url.href} is ${page.contentType}, which WebFetch cannot read as text`
      })
    }
    const text = decodeBody(page.body, contentType)
    const markdown = isHtml(contentType, text)
      // The converter is loaded on first use, not when the tool set is built.
      ? (yield* Effect.promise(() => import("node-html-markdown"))).NodeHtmlMarkdown.translate(text)
      : text
    const notes: Array<string> = []
    let content = markdown
    if (page.truncated) notes.push(`[Only the first ${options.maxBytes} bytes of the response were read.]`)
    if (content.length > options.maxMarkdownChars) {
      notes.push(`[Content truncated: ${content.length} characters, the first ${options.maxMarkdownChars} shown.]`)
      content = content.slice(0, options.maxMarkdownChars)
    }
    return notes.length === 0 ? content : `${content}\n\n${notes.join("\n")}`
  })

const answer = (
  model: Model.Service,
  url: string,
  markdown: string,
  prompt: string,
  options: Options
): Effect.Effect<string, WebFetchError> =>
  model.stream({
    system: "You answer a request about the content of a web page. Use only the page content given. " +
      "Be concise; quote exactly where the request needs exact text.",
    messages: [{
      role: "user",
      content: `Web page content from ${url}:\n---\n${markdown}\n---\n\n${prompt}`
    }],
    tools: [],
    maxTokens: options.maxAnswerTokens
  }).pipe(
    Stream.runFoldEffect("", (text, event) => {
      if (event.type === "error") return Effect.fail(new Error(event.error.message))
      return Effect.succeed(
        event.type === "content_block_delta" && event.delta.type === "text_delta" ? text + event.delta.text : text
      )
    }),
    Effect.mapError((error) =>
      new WebFetchError({ url, reason: "Model", message: `The model could not answer about ${url}: ${error.message}` })
    )
  )

/**
 * The WebFetch tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const WebFetch = Tool.make("WebFetch", {
  description: [
    "Fetches content from a URL and processes it with a prompt.",
    "- HTML is converted to Markdown; the prompt is answered over the content.",
    "- http URLs are upgraded to https. Read-only; does not modify anything.",
    "- A redirect to a different host is reported; call WebFetch again with the redirect URL.",
    "- Results may be summarised when the content is very large."
  ].join("\n"),
  input: WebFetchInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  footprint: () => ({ reads: [Footprint.net] }),
  // Room for the Markdown cap (defaultOptions.maxMarkdownChars) plus notes; larger results are persisted (SPEC §4.10).
  maxResultSizeChars: 101_000,
  validateInput: (input) => {
    const parsed = normalizeUrl(input.url)
    return Either.isLeft(parsed)
      ? Effect.fail(new Tool.ToolError({ message: `Invalid URL "${input.url}": ${parsed.left}` }))
      : Effect.void
  },
  call: (input) =>
    Effect.gen(function*() {
      const options = yield* WebFetchOptions
      const parsed = normalizeUrl(input.url)
      if (Either.isLeft(parsed)) {
        return yield* new WebFetchError({
          url: input.url,
          reason: "InvalidUrl",
          message: `Invalid URL "${input.url}": ${parsed.left}`
        })
      }
      // The fetch client follows redirects by itself unless told not to; WebFetch decides which to follow.
      const init = yield* Effect.serviceOption(FetchHttpClient.RequestInit)
      const fetched = yield* fetchPage(parsed.right, options).pipe(
        Effect.provideService(FetchHttpClient.RequestInit, {
          ...Option.getOrElse(init, () => ({})),
          redirect: "manual"
        }),
        Effect.timeoutFail({
          duration: options.timeout,
          onTimeout: () =>
            new WebFetchError({
              url: parsed.right.href,
              reason: "Timeout",
              message: `Fetching ${parsed.right.href} timed out after ${
                Duration.format(Duration.decode(options.timeout))
              }`
            })
        })
      )
      if (fetched._tag === "Redirected") {
        const output: WebFetchOutput = {
          _tag: "Redirect",
          url: fetched.url.href,
          redirectUrl: fetched.location.href,
          status: fetched.status,
          prompt: input.prompt
        }
        return output
      }
      const markdown = yield* toMarkdown(fetched, options)
      // The model is optional: captured from the layer's context (or the caller's) when it is there.
      const model = yield* Effect.serviceOption(Model.LanguageModel)
      const result = Option.isSome(model)
        ? yield* answer(model.value, fetched.url.href, markdown, input.prompt, options)
        : markdown
      const output: WebFetchOutput = {
        _tag: "Content",
        url: fetched.url.href,
        status: fetched.status,
        contentType: fetched.contentType,
        bytes: fetched.body.length,
        result,
        answeredByModel: Option.isSome(model)
      }
      return output
    }),
  mapResult: (output) =>
    output._tag === "Content"
      ? output.result
      : [
        "REDIRECT DETECTED: The URL redirects to a different host.",
        "",
        `Original URL: ${output.url}`,
        `Redirect URL: ${output.redirectUrl}`,
        `Status: ${output.status}`,
        "",
        "To complete your request, fetch the redirected URL with WebFetch again with these parameters:",
        `- url: "${output.redirectUrl}"`,
        `- prompt: "${output.prompt}"`
      ].join("\n")
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(WebFetch)
