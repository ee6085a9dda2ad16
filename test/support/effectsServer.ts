/**
 * An MCP server over streamable HTTP (JSON responses) on 127.0.0.1, in the
 * test process, whose tools leave a record of what they did: the durability
 * tests' side-effect counter. Every call appends one JSON line to the log
 * file when it starts and one when it ends — `end` once its response is
 * written, `aborted` when the caller went away first (a killed CLI closes its
 * connection) — so a test sees from the file alone which calls ran, how many
 * times, and which were cut off.
 *
 * Tools (input `{ key, ms }`: a name for the call, and how long it runs):
 * - `probe`: `readOnlyHint` (a read: run again when cut off);
 * - `mutate`: no hints (a write: never run again blindly);
 * - `put`: `idempotentHint` (run again with the same idempotency key, which
 *   the log records from `_meta`).
 */
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface EffectLine {
  readonly event: "start" | "end" | "aborted"
  readonly tool: string
  readonly key: string
  readonly idempotencyKey?: string | undefined
  /** The caller's `x-runner` header, when it sent one. */
  readonly via?: string | undefined
  readonly at: number
}

export interface EffectsServer {
  /** The MCP endpoint, for `{"type":"http","url":…}`. */
  readonly url: string
  readonly log: string
  readonly close: () => Promise<void>
}

const tools = [
  {
    name: "probe",
    description: "Reads something (a test probe)",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, ms: { type: "integer", minimum: 0 } },
      required: ["key"]
    },
    annotations: { readOnlyHint: true }
  },
  {
    name: "mutate",
    description: "Changes something (a test write)",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, ms: { type: "integer", minimum: 0 } },
      required: ["key"]
    }
  },
  {
    name: "put",
    description: "Stores a value under its key (idempotent)",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, ms: { type: "integer", minimum: 0 } },
      required: ["key"]
    },
    annotations: { idempotentHint: true }
  }
]

const readBody = (req: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Reads the log file: every line, in order. */
export const readLog = (file: string): ReadonlyArray<EffectLine> =>
  fs.existsSync(file)
    ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as EffectLine)
    : []

/** Starts the server, logging to `log`; `onStart` is told of each call as it starts. */
export const start = async (log: string, onStart: (line: EffectLine) => void = () => {}): Promise<EffectsServer> => {
  const record = (line: EffectLine) => {
    fs.appendFileSync(log, `${JSON.stringify(line)}\n`)
    if (line.event === "start") onStart(line)
  }
  const server = Http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(req.method === "DELETE" ? 200 : 405).end()
      return
    }
    void readBody(req).then((text) => {
      const message = JSON.parse(text) as {
        readonly id?: number | string
        readonly method: string
        readonly params?: Record<string, unknown>
      }
      const reply = (result: unknown, headers: Record<string, string> = {}) => {
        if (res.destroyed) return false
        res.writeHead(200, { "content-type": "application/json", ...headers })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))
        return true
      }
      if (message.id === undefined) {
        res.writeHead(202).end()
        return
      }
      switch (message.method) {
        case "initialize":
          return void reply(
            {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "effects", version: "1.0.0" }
            },
            { "mcp-session-id": "effects-session" }
          )
        case "tools/list":
          return void reply({ tools })
        case "tools/call": {
          const params = message.params ?? {}
          const tool = String(params["name"])
          const args = (params["arguments"] ?? {}) as { readonly key?: string; readonly ms?: number }
          const meta = (params["_meta"] ?? {}) as Record<string, unknown>
          const key = String(args.key)
          const idempotencyKey = typeof meta["io.switchyard/idempotency-key"] === "string"
            ? String(meta["io.switchyard/idempotency-key"])
            : undefined
          const via = typeof req.headers["x-runner"] === "string" ? req.headers["x-runner"] : undefined
          record({ event: "start", tool, key, idempotencyKey, via, at: Date.now() })
          let done = false
          const timer = setTimeout(() => {
            done = true
            const sent = reply({ content: [{ type: "text", text: `${tool} ${key} ok` }] })
            record({ event: sent ? "end" : "aborted", tool, key, via, at: Date.now() })
          }, args.ms ?? 0)
          res.on("close", () => {
            if (done) return
            clearTimeout(timer)
            record({ event: "aborted", tool, key, via, at: Date.now() })
          })
          return
        }
        default:
          res.writeHead(200, { "content-type": "application/json" })
          res.end(
            JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } })
          )
      }
    })
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  )
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
