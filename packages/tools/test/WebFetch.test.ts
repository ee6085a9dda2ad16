import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Model, ToolUseContext } from "@switchyard/core"
import * as WebFetch from "@switchyard/tools/WebFetch"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { dispatch, expectPlainObjectSchema, makeContext, toolsLayer } from "./fixtures/toolHarness.js"

const PAGE = `<!doctype html><html><head><title>T</title><script>var secret = 1</script>
<style>p { color: red }</style></head>
<body><h1>Title</h1><p>Some <b>bold</b> text and a <a href="https://example.com/x">link</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>`

interface Server {
  readonly base: string
  /** Completed when /slow receives its request. */
  readonly slowReceived: Deferred.Deferred<void>
  /** Bytes /huge wrote before its client went away. */
  readonly hugeWritten: () => number
}

const HUGE_TOTAL = 200 * 1024 * 1024

/** A local HTTP server with the cases WebFetch must handle. Closed with the scope. */
const startServer = Effect.gen(function*() {
  const slowReceived = yield* Deferred.make<void>()
  let hugeWritten = 0
  const server = http.createServer((req, res) => {
    switch (req.url) {
      case "/page":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)
        return
      case "/text":
        res.writeHead(200, { "content-type": "text/plain" }).end("plain words\n")
        return
      case "/same-host":
        res.writeHead(302, { location: "/page" }).end()
        return
      case "/other-host":
        res.writeHead(301, { location: "https://elsewhere.example/landing" }).end()
        return
      case "/loop":
        res.writeHead(302, { location: "/loop" }).end()
        return
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" }).end("not here")
        return
      case "/image":
        res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([137, 80, 78, 71]))
        return
      case "/slow":
        // Never answers: the client's timeout must end it.
        Deferred.unsafeDone(slowReceived, Exit.void)
        return
      case "/huge": {
        res.writeHead(200, { "content-type": "text/plain" })
        const chunk = Buffer.alloc(64 * 1024, "a")
        const pump = () => {
          while (hugeWritten < HUGE_TOTAL && !res.destroyed) {
            hugeWritten += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          if (!res.destroyed) res.end()
        }
        pump()
        return
      }
      default:
        res.writeHead(500).end()
    }
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
  const { port } = server.address() as AddressInfo
  const result: Server = { base: `http://127.0.0.1:${port}`, slowReceived, hugeWritten: () => hugeWritten }
  return result
})

const layerWith = (services: Layer.Layer<never> | Layer.Layer<Model.LanguageModel> = Layer.empty) =>
  toolsLayer(
    WebFetch.layer.pipe(
      Layer.provide(Layer.mergeAll(FetchHttpClient.layer, services)),
      Layer.provide(
        Layer.succeed(WebFetch.WebFetchOptions, { ...WebFetch.defaultOptions, maxBytes: 40_000, maxRedirects: 3 })
      )
    )
  )

/** A LanguageModel that answers with fixed text deltas and records the requests it got. */
const scriptedModel = (deltas: ReadonlyArray<string>, requests: Array<Model.ModelRequest>, fail = false) =>
  Layer.succeed(Model.LanguageModel, {
    stream: (request) => {
      requests.push(request)
      const events: Array<Model.ModelStreamEvent> = [
        { type: "message_start", message: { id: "msg_1" } },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        ...deltas.map((text): Model.ModelStreamEvent => ({
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text }
        })),
        ...(fail ? [{ type: "error" as const, error: { type: "overloaded_error", message: "Overloaded" } }] : []),
        { type: "content_block_stop", index: 0 },
        { type: "message_stop" }
      ]
      return Stream.fromIterable(events)
    }
  })

describe("WebFetch", () => {
  it.scoped("converts HTML to Markdown and returns it when no model is available", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const result = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/page`, prompt: "What is it?" })
      expect(result.status).toBe("success")
      expect(result.text).toContain("# Title")
      expect(result.text).toContain("Some **bold** text and a [link](https://example.com/x).")
      expect(result.text).toMatch(/\* one\n\* two/)
      expect(result.text).not.toContain("secret")
      const text = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/text`, prompt: "x" })
      expect(text.text).toBe("plain words\n")
    }).pipe(Effect.provide(layerWith())))

  it.scoped("answers the prompt over the content with the LanguageModel, streaming its text", () => {
    const requests: Array<Model.ModelRequest> = []
    return Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const result = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/page`, prompt: "How many items?" })
      expect(result).toMatchObject({ status: "success", text: "There are two items." })
      expect(requests).toHaveLength(1)
      const content = requests[0]!.messages[0]!.content as string
      expect(content).toContain("# Title")
      expect(content).toContain("How many items?")
      expect(requests[0]!.tools).toEqual([])
    }).pipe(Effect.provide(layerWith(scriptedModel(["There are ", "two items."], requests))))
  })

  it.scoped("a model error is an error result", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const result = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/page`, prompt: "x" })
      expect(result.status).toBe("error")
      expect(result.text).toContain("The model could not answer")
      expect(result.text).toContain("Overloaded")
    }).pipe(Effect.provide(layerWith(scriptedModel(["partial"], [], true)))))

  it.scoped("follows a redirect on the same host; reports one to another host", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const same = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/same-host`, prompt: "x" })
      expect(same.text).toContain("# Title")
      const other = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/other-host`, prompt: "summarise" })
      expect(other.status).toBe("success")
      expect(other.text).toBe(
        [
          "REDIRECT DETECTED: The URL redirects to a different host.",
          "",
          `Original URL: ${server.base}/other-host`,
          "Redirect URL: https://elsewhere.example/landing",
          "Status: 301",
          "",
          "To complete your request, fetch the redirected URL with WebFetch again with these parameters:",
          "- url: \"https://elsewhere.example/landing\"",
          "- prompt: \"summarise\""
        ].join("\n")
      )
      const loop = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/loop`, prompt: "x" })
      expect(loop.status).toBe("error")
      expect(loop.text).toContain("More than 3 redirects")
    }).pipe(Effect.provide(layerWith())))

  it.scoped("works the same over the Node HTTP client (which never follows redirects by itself)", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const same = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/same-host`, prompt: "x" })
      expect(same.text).toContain("# Title")
      const other = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/other-host`, prompt: "x" })
      expect(other.text).toContain("Redirect URL: https://elsewhere.example/landing")
    }).pipe(Effect.provide(toolsLayer(WebFetch.layer.pipe(Layer.provide(NodeHttpClient.layer))))))

  it.scoped("a 404 and a binary content type are errors naming the URL", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const missing = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/missing`, prompt: "x" })
      expect(missing).toMatchObject({ status: "error", text: `Error: ${server.base}/missing answered HTTP 404` })
      const image = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/image`, prompt: "x" })
      expect(image.status).toBe("error")
      expect(image.text).toContain("is image/png, which WebFetch cannot read as text")
    }).pipe(Effect.provide(layerWith())))

  it.scoped("a response past the timeout fails, and the request is given up", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const call = yield* Effect.fork(dispatch(ctx, "WebFetch", { url: `${server.base}/slow`, prompt: "x" }))
      yield* Deferred.await(server.slowReceived)
      yield* TestClock.adjust("31 seconds")
      const result = yield* Fiber.join(call)
      expect(result).toMatchObject({
        status: "error",
        text: `Error: Fetching ${server.base}/slow timed out after 30s`
      })
    }).pipe(
      Effect.provide(toolsLayer(WebFetch.layer.pipe(Layer.provide(FetchHttpClient.layer))))
    ))

  it.scoped("reads at most maxBytes of a huge body and stops downloading", () =>
    Effect.gen(function*() {
      const server = yield* startServer
      const ctx = yield* makeContext("/tmp")
      const result = yield* dispatch(ctx, "WebFetch", { url: `${server.base}/huge`, prompt: "x" })
      expect(result.status).toBe("success")
      expect(result.text).toBe(`${"a".repeat(40_000)}\n\n[Only the first 40000 bytes of the response were read.]`)
      expect(server.hugeWritten()).toBeLessThan(HUGE_TOTAL)
    }).pipe(Effect.provide(layerWith())))

  it.scoped("an invalid URL is a validation error", () =>
    Effect.gen(function*() {
      const ctx = yield* makeContext("/tmp")
      const result = yield* dispatch(ctx, "WebFetch", { url: "ftp://example.com/file", prompt: "x" })
      expect(result).toMatchObject({
        status: "error",
        text: "Invalid URL \"ftp://example.com/file\": only http and https URLs can be fetched, not ftp:"
      })
      const relative = yield* dispatch(ctx, "WebFetch", { url: "/just/a/path", prompt: "x" })
      expect(relative.text).toContain("it is not a valid absolute URL")
    }).pipe(Effect.provide(layerWith())))

  it("upgrades http to https except for local hosts", () => {
    const href = (raw: string) => Either.map(WebFetch.normalizeUrl(raw), (url) => url.href)
    expect(href("http://example.com/a")).toEqual(Either.right("https://example.com/a"))
    expect(href("http://localhost:8080/a")).toEqual(Either.right("http://localhost:8080/a"))
    expect(href("http://127.0.0.1/a")).toEqual(Either.right("http://127.0.0.1/a"))
    expect(Either.isLeft(WebFetch.normalizeUrl("https://user:pw@example.com/"))).toBe(true)
  })

  it("is concurrency-safe and read-only", () => {
    const context = ToolUseContext.make({ cwd: "/" })
    expect(WebFetch.WebFetch.isConcurrencySafe({ url: "https://x", prompt: "" }, context)).toBe(true)
    expect(WebFetch.WebFetch.isReadOnly({ url: "https://x", prompt: "" }, context)).toBe(true)
  })

  it("sends a plain inlined object schema", () => {
    const schema = expectPlainObjectSchema(WebFetch.WebFetch)
    expect(schema.required).toEqual(["url", "prompt"])
  })
})
