/**
 * The host's Unix sockets from inside the sandbox (the outside review's gap
 * 6), judged by effects: a socket server the test starts logs every
 * connection, and clients in several languages try to reach it; common
 * commands that use pipes, child processes and socket pairs still work.
 */
import { describe, expect, it } from "@effect/vitest"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { makeProject, type Project } from "./fixtures/sandboxProject.js"
import { dispatch, makeContext, toolsLayer } from "./fixtures/toolHarness.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox tests need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip
const has = (program: string, ...args: ReadonlyArray<string>) => spawnSync(program, args).status === 0

const Grace = Layer.succeed(Bash.ShellSettings, {
  ...Bash.defaultSettings,
  killGracePeriod: Duration.millis(300),
  outputDrainTimeout: Duration.millis(300)
})

const layerFor = (project: Project) =>
  toolsLayer(
    Layer.mergeAll(Bash.layer, BackgroundShells.layerTools).pipe(
      Layer.provideMerge(BackgroundShells.layer),
      Layer.provide(Grace)
    )
  ).pipe(Layer.provideMerge(Sandbox.layer({ settings: project.settings, home: project.home })))

const bashIn = (project: Project, command: string) =>
  Effect.flatMap(
    makeContext(project.project, {
      permissions: { mode: "bypassPermissions", rules: project.rules, additionalDirectories: [] }
    }),
    (context) => dispatch(context, "Bash", { command })
  )

const withProject = <A, E, R>(
  body: (project: Project) => Effect.Effect<A, E, R>,
  settings: Parameters<typeof makeProject>[0] = {}
) => Effect.acquireUseRelease(Effect.sync(() => makeProject(settings)), body, (project) => Effect.sync(project.cleanup))

/** A stream server on a Unix socket outside the project, answering `reached` and logging each connection. */
const socketServer = (file: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly log: Array<string>; readonly server: net.Server }>((resume) => {
      const log: Array<string> = []
      const server = net.createServer((connection) => {
        log.push("connection")
        connection.on("error", () => {})
        connection.end("reached\n")
      })
      server.listen(file, () => resume(Effect.succeed({ log, server })))
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

/** Clients of a stream socket `file` in the languages a command may use; each prints `reached` if it connects. */
const clients = (file: string): ReadonlyArray<string> => [
  `node -e 'const s = require("net").connect(process.argv[1]); ` +
  `s.on("data", (d) => process.stdout.write(String(d))); s.on("error", (e) => console.log("node:", e.code))' '${file}'`,
  `python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); ` +
  `print(s.recv(64).decode())' '${file}'`,
  // A datagram pair can still be pointed at a path; the filter refuses making one.
  `python3 -c 'import socket, sys; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); ` +
  `a.connect(sys.argv[1]); print("reached")' '${file}'`,
  `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "perl: $!\\n"; ` +
  `print <$s>' '${file}'`,
  ...(has("socat", "-V") ? [`socat - UNIX-CONNECT:'${file}' </dev/null`] : []),
  `bash -c 'exec 3<>"$0" && echo reached' '${file}'`
]

const NETWORK = { network: { allowedDomains: ["localhost"] } }

suite("Sandbox: the host's Unix sockets", () => {
  it.scopedLive("no client in any language reaches a socket server outside", () =>
    withProject((project) =>
      Effect.gen(function*() {
        const file = path.join(project.outside, "service.sock")
        const { log } = yield* socketServer(file)
        const result = yield* bashIn(project, clients(file).map((line) => `${line} 2>&1`).join("; "))
        expect(log).toEqual([])
        expect(result.text).not.toContain("reached")
        expect(result.text).toContain("node: EPERM")
        expect(result.text).toContain("Operation not permitted")
        // The result says why, and how to proceed.
        expect(result.text).toContain("Sandbox: a Unix socket was refused")
        expect(result.text).toContain("sandbox.network.allowAllUnixSockets")
      }).pipe(Effect.provide(layerFor(project)))
    ))

  for (const [name, settings] of [["", {}], [" (with an allowed domain: under the relay)", NETWORK]] as const) {
    it.scopedLive(`git, npm, node child processes with pipes, a Python subprocess, socket pairs work${name}`, () =>
      withProject((project) =>
        Effect.gen(function*() {
          const result = yield* bashIn(
            project,
            [
              "git status --short >/dev/null && echo git-ok",
              "npm --version >/dev/null && echo npm-ok",
              `node -e 'const c = require("child_process").spawn("cat", { stdio: ["pipe", "pipe", "inherit"] }); ` +
              `c.stdout.on("data", (d) => process.stdout.write(String(d))); c.stdin.end("node-pipe-ok\\n")'`,
              `node -e 'const { execFileSync } = require("child_process"); ` +
              `console.log(execFileSync("echo", ["node-exec-ok"]).toString().trim())'`,
              `python3 -c 'import subprocess; print(subprocess.run(["echo", "py-sub-ok"], capture_output=True, ` +
              `text=True).stdout.strip())'`,
              `python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"pair-ok"); print(b.recv(7).decode())'`,
              `python3 -c 'import socket; socket.socket(socket.AF_INET); print("inet-ok")'`,
              "echo piped | cat | tr a-z A-Z"
            ].map((line) => `${line} 2>&1`).join("; ")
          )
          for (const word of ["git", "npm", "node-pipe", "node-exec", "py-sub", "pair", "inet"]) {
            expect(result.text).toContain(`${word}-ok`)
          }
          expect(result.text).toContain("PIPED")
        }).pipe(Effect.provide(layerFor(project))), settings))
  }

  it.scopedLive("sandbox.network.allowAllUnixSockets lifts the filter: the same server is reached", () =>
    withProject(
      (project) =>
        Effect.gen(function*() {
          const file = path.join(project.outside, "service.sock")
          const { log } = yield* socketServer(file)
          const result = yield* bashIn(project, `${clients(file)[0]!} 2>&1`)
          expect(result.text).toContain("reached")
          expect(result.text).not.toContain("Sandbox: a Unix socket")
          expect(log).toEqual(["connection"])
        }).pipe(Effect.provide(layerFor(project))),
      { network: { allowAllUnixSockets: true } }
    ))

  // The relay inside connects to the proxy's socket: bubblewrap runs it unfiltered, and it runs the command
  // under the same filter (a Perl helper installs it); the relay still works (Sandbox.test.ts, the network).
  it.scopedLive("with an allowed domain (the relay runs inside) a host socket is out of reach too", () =>
    withProject(
      (project) =>
        Effect.gen(function*() {
          const file = path.join(project.outside, "service.sock")
          const { log } = yield* socketServer(file)
          const result = yield* bashIn(project, clients(file).map((line) => `${line} 2>&1`).join("; "))
          expect(log).toEqual([])
          expect(result.text).not.toContain("reached")
          expect(result.text).toContain("node: EPERM")
        }).pipe(Effect.provide(layerFor(project))),
      NETWORK
    ))
})
