/**
 * The sandbox's filtering proxy: an HTTP proxy on a Unix socket, run by the
 * runtime outside the sandbox for as long as a command's scope is open.
 * `CONNECT host:port` (HTTPS and anything tunnelled) and plain
 * `GET http://host/…` requests are let through only to hosts the policy
 * allows; everything else gets `403` and is recorded, so the result can say
 * what was blocked.
 *
 * Inside the sandbox (its own network namespace) nothing but this socket
 * leads out; `relay.ts` makes it reachable as `http://127.0.0.1:PORT`.
 *
 * @internal
 */
import * as Sandbox from "@switchyard/core/Sandbox"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"

/** A running proxy. */
export interface Proxy {
  readonly socketPath: string
  /** `host:port` of every refused connection, in order, once each. */
  readonly blocked: () => ReadonlyArray<string>
}

const splitHostPort = (authority: string, defaultPort: number): { host: string; port: number } | undefined => {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority)
  if (match === null) return undefined
  const port = match[2] === undefined ? defaultPort : Number(match[2])
  return Number.isInteger(port) && port > 0 && port < 65536 ? { host: match[1]!, port } : undefined
}

const refusal = (host: string) =>
  `Blocked by the Switchyard sandbox: ${host} is not in sandbox.network.allowedDomains.\n`

/** Start the proxy on `socketPath`; the scope stops it and ends every open connection. */
export const start = (
  socketPath: string,
  network: Sandbox.NetworkPolicy
): Effect.Effect<Proxy, Sandbox.SandboxError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly proxy: Proxy; readonly close: () => void }, Sandbox.SandboxError>((resume) => {
      const blocked: Array<string> = []
      const sockets = new Set<net.Socket>()
      const track = (socket: net.Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => socket.destroy())
      }
      const refuse = (host: string, port: number) => {
        const key = `${host}:${port}`
        if (!blocked.includes(key)) blocked.push(key)
      }
      const server = http.createServer((request, response) => {
        // A proxied plain-HTTP request names its target in absolute form.
        let target: URL
        try {
          target = new URL(request.url ?? "")
        } catch {
          response.writeHead(400).end("A proxy request needs an absolute http:// URL.\n")
          return
        }
        const port = target.port === "" ? 80 : Number(target.port)
        const host = target.hostname.replace(/^\[|\]$/g, "")
        if (target.protocol !== "http:" || !Sandbox.hostAllowed(network, host, port)) {
          refuse(host, port)
          response.writeHead(403, { "content-type": "text/plain" }).end(refusal(host))
          return
        }
        const headers = { ...request.headers }
        delete headers["proxy-connection"]
        delete headers["proxy-authorization"]
        const upstream = http.request(
          { host, port, method: request.method, path: `${target.pathname}${target.search}`, headers },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(response)
          }
        )
        upstream.on("error", (error) => {
          if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" })
          response.end(`The sandbox proxy could not reach ${host}: ${error.message}\n`)
        })
        request.pipe(upstream)
      })
      server.on("connection", track)
      server.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
        const target = splitHostPort(request.url ?? "", 443)
        if (target === undefined || !Sandbox.hostAllowed(network, target.host, target.port)) {
          if (target !== undefined) refuse(target.host, target.port)
          const body = refusal(target?.host ?? String(request.url))
          client.end(
            `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`
          )
          return
        }
        const upstream = net.connect(target.port, target.host, () => {
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
          if (head.length > 0) upstream.write(head)
          upstream.pipe(client)
          client.pipe(upstream)
        })
        track(upstream)
        upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"))
        client.on("close", () => upstream.destroy())
      })
      server.on("error", (error) =>
        resume(Effect.fail(new Sandbox.SandboxError({ message: `The sandbox proxy did not start: ${error.message}` }))))
      server.listen(socketPath, () =>
        resume(Effect.succeed({
          proxy: {
            socketPath,
            blocked: () =>
              blocked.slice()
          },
          close: () => {
            server.close()
            for (const socket of sockets) {
              socket.destroy()
            }
            fs.rmSync(socketPath, { force: true })
          }
        })))
    }),
    ({ close }) =>
      Effect.sync(close)
  ).pipe(Effect.map(({ proxy }) => proxy))

/**
 * The relay run inside the sandbox (by the runtime's own `node`): it listens
 * on `127.0.0.1` (an ephemeral port of the sandbox's private loopback),
 * forwards every connection to the proxy's Unix socket, and runs the command
 * with `HTTP_PROXY`/`HTTPS_PROXY` and the lowercase spellings (curl reads only
 * `http_proxy` for http) pointing at itself. It exits with the command's
 * status. It ignores SIGTERM, SIGINT and SIGHUP — a `pkill node` inside must
 * not end the command through it; ending a sandbox signals every process in
 * it from outside anyway, and SIGKILL ends the relay with the rest.
 *
 * Why a node script rather than `socat`: a process in a new network
 * namespace cannot reach a host Unix socket over TCP, so something inside
 * must relay, and `node` is always there (it runs Switchyard), while `socat`
 * would be one more system package to install; the relay's start (a few tens
 * of milliseconds) is paid only by commands that have network access.
 */
export const RELAY_SCRIPT = String.raw`
import * as net from "node:net"
import { spawn } from "node:child_process"
const [socketPath, ...command] = process.argv.slice(2)
let child
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath)
  const end = () => { client.destroy(); upstream.destroy() }
  client.on("error", end); upstream.on("error", end); client.on("close", end); upstream.on("close", end)
  client.pipe(upstream); upstream.pipe(client)
})
server.listen(0, "127.0.0.1", () => {
  const url = "http://127.0.0.1:" + server.address().port
  const env = { ...process.env, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url }
  delete env.NO_PROXY; delete env.no_proxy
  child = spawn(command[0], command.slice(1), { stdio: "inherit", env })
  child.on("error", (error) => { process.stderr.write(error.message + "\n"); process.exit(127) })
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1)
    for (const name of ["SIGTERM", "SIGINT", "SIGHUP"]) process.removeAllListeners(name)
    process.kill(process.pid, signal)
  })
})
for (const name of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(name, () => {})
`
