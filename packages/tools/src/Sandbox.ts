/**
 * The bubblewrap sandbox (issue 18): the implementation of core's `Sandbox`
 * port on Linux, driving `bwrap` directly.
 *
 * For one command it builds, from the policy (core `Sandbox.policy`):
 * - the whole filesystem read-only (`--ro-bind / /`), a fresh `/dev` and
 *   `/proc`;
 * - the writable roots bound read-write (their real paths), each root's
 *   `.git` a mount point of its own (so it cannot be renamed away), and
 *   read-only again inside them `.git/hooks`, `.git/config`, `.claude/`,
 *   `.switchyard/`, `.mcp.json`, the settings files, `Edit(…)` deny rules and
 *   `sandbox.filesystem.denyWrite`; a missing `.claude/`, `.switchyard/` or
 *   `.mcp.json` is filled with an empty read-only directory while the
 *   command runs, so it cannot be made (a directory: git lists none that is
 *   empty, so `git add -A` inside does not stage it);
 * - the deny-read set (`Read(…)` deny rules, `sandbox.filesystem.denyRead`)
 *   masked by real path — an empty file bound over a file, an empty read-only
 *   tmpfs over a directory — with patterns expanded by walking their base;
 * - a private temp directory (`TMPDIR`, `TMP`, `TEMP`), a fresh one per
 *   command, removed afterwards (it never hides a working directory under
 *   `/tmp`: `/tmp` itself stays as it is, read-only);
 * - its own PID, IPC, UTS and network namespaces, `--die-with-parent`,
 *   `--new-session`, no capabilities;
 * - a seccomp filter that refuses Unix sockets (`internal/sandbox/seccomp.ts`):
 *   the network namespace does not cover socket files, which the read-only
 *   filesystem still shows (a user's tmux, D-Bus, ssh-agent, Docker socket);
 *   bubblewrap reads it from descriptor 9, opened by `/bin/sh` right before
 *   it `exec`s bubblewrap (the spawn keeps bubblewrap's pid and group); with
 *   network access the relay (which connects to the proxy's socket) runs
 *   unfiltered and the command under the filter, installed by a small Perl
 *   helper (`Seccomp.APPLY_SCRIPT`);
 * - with `sandbox.network.allowedDomains`, a filtering proxy on a Unix socket
 *   bound into the sandbox and a relay inside (see `internal/sandbox/proxy.ts`).
 *
 * The layer probes once whether bubblewrap works here; the service reports
 * it in its `status`. With `sandbox.enabled` and `sandbox.failIfUnavailable`
 * and no working bubblewrap (or not Linux: macOS is not supported yet),
 * building the layer fails with `SandboxUnavailable`.
 *
 * @since 0.1.0
 */
import * as Path from "@effect/platform/Path"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as Settings from "@switchyard/core/Settings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import * as Mounts from "./internal/sandbox/mounts.js"
import * as Proxy from "./internal/sandbox/proxy.js"
import * as Seccomp from "./internal/sandbox/seccomp.js"
import * as Violations from "./internal/sandbox/violations.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The merged `sandbox` settings (default: Claude Code's defaults, sandbox off). */
  readonly settings?: SandboxPort.SandboxSettings | undefined
  /** Turn the sandbox on whatever the settings say (`--sandbox`). */
  readonly enabled?: boolean | undefined
  /** The bubblewrap program (default `bwrap`, found on `PATH`). */
  readonly bwrap?: string | undefined
  /** Settings files that stay read-only when they lie inside a writable root. */
  readonly protectedFiles?: ReadonlyArray<string> | undefined
  /** Rules every request's own are added to (for a policy loaded once, e.g. `ClaudeCodePermissions`). */
  readonly permissions?: PermissionContext.PermissionContext | undefined
  /** The home directory for `~/` rules (default `$HOME`). */
  readonly home?: string | undefined
  /**
   * Told each writable root once per process, before the first command that may write there runs (the CLI
   * records them: core's `SandboxedRoots`, so that settings a command may have written deeper down are
   * confirmed before they count). When it fails, the command does not run (fail closed).
   */
  readonly onWritableRoots?:
    | ((roots: ReadonlyArray<string>) => Effect.Effect<void, SandboxPort.SandboxError>)
    | undefined
}

/** The namespaces and process flags every sandboxed command gets. */
const ISOLATION: ReadonlyArray<string> = [
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-net",
  "--unshare-cgroup-try",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL"
]

const BASE: ReadonlyArray<string> = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]

/** The descriptor bubblewrap reads the filter from. */
const FILTER_FD = "9"

/**
 * `bwrap ARGS` with the filter on `FILTER_FD`: `/bin/sh` opens the file and
 * `exec`s bubblewrap, which reads and closes it before the command starts.
 */
const withFilter = (bwrap: string, args: ReadonlyArray<string>, filterFile: string) => ({
  command: "/bin/sh",
  args: ["-c", `exec "$@" ${FILTER_FD}<"$0"`, filterFile, bwrap, "--seccomp", FILTER_FD, ...args]
})

/**
 * Whether bubblewrap can make the sandbox here; the reason when not.
 *
 * @since 0.1.0
 * @category probing
 */
export const probe = (bwrap = "bwrap"): Effect.Effect<{ readonly available: boolean; readonly reason?: string }> =>
  Effect.async((resume) => {
    if (process.platform !== "linux") {
      resume(Effect.succeed({
        available: false,
        reason: `the sandbox needs Linux with bubblewrap; ` +
          `${process.platform === "darwin" ? "macOS" : process.platform} is not supported yet`
      }))
      return
    }
    // With the filter when there is one (on stdin here): a kernel without seccomp cannot make the sandbox.
    const filter = Seccomp.program()
    const seccomp = filter === undefined ? [] : ["--seccomp", "0"]
    const child = childProcess.execFile(
      bwrap,
      [...seccomp, ...BASE, ...ISOLATION, "--tmpfs", "/run", "--", "true"],
      { timeout: 20_000 },
      (error, _stdout, stderr) => {
        if (error === null) return resume(Effect.succeed({ available: true }))
        const code = (error as NodeJS.ErrnoException).code
        resume(Effect.succeed({
          available: false,
          reason: code === "ENOENT"
            ? `bubblewrap (${bwrap}) is not installed (Debian/Ubuntu: apt-get install bubblewrap)`
            : `bubblewrap (${bwrap}) cannot make a sandbox here: ${String(stderr).trim() || error.message}`
        }))
      }
    )
    child.stdin?.on("error", () => {})
    child.stdin?.end(filter === undefined ? undefined : Buffer.from(filter))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** The bubblewrap arguments for resolved mounts. */
const mountArgs = (resolved: Mounts.Resolved, emptyFile: string, tmp: string): ReadonlyArray<string> => {
  const mounts: Array<Mounts.Mount> = [...resolved.mounts, { kind: "writable", path: tmp }]
  const depth = (p: string) => p.split("/").length
  mounts.sort((a, b) => depth(a.path) - depth(b.path))
  const args: Array<string> = []
  for (const mount of mounts) {
    switch (mount.kind) {
      case "writable":
        args.push("--bind", mount.path, mount.path)
        break
      case "readOnly":
        args.push("--ro-bind", mount.path, mount.path)
        break
      case "maskFile":
        args.push("--ro-bind", emptyFile, mount.path)
        break
      case "maskDirectory":
        args.push("--tmpfs", mount.path)
        break
    }
  }
  // Read-only once everything below them is in place (a writable root inside a masked directory).
  for (const mount of mounts) if (mount.kind === "maskDirectory") args.push("--remount-ro", mount.path)
  return args
}

const mergePermissions = (
  base: PermissionContext.PermissionContext | undefined,
  own: PermissionContext.PermissionContext
): PermissionContext.PermissionContext =>
  base === undefined ? own : {
    mode: own.mode,
    rules: Array.from(new Set([...base.rules, ...own.rules])),
    additionalDirectories: Array.from(new Set([...base.additionalDirectories, ...own.additionalDirectories]))
  }

/**
 * The service. Its scope owns the directory it keeps what sandboxed
 * commands are given (removed when it closes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<SandboxPort.Service, SandboxPort.SandboxUnavailable, Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const bwrap = options.bwrap ?? "bwrap"
    const base = options.settings ?? SandboxPort.defaultSettings
    const settings = options.enabled === true ? { ...base, enabled: true } : base
    const home = options.home ?? (yield* Settings.homeDirectory)
    // Probed once: now when the sandbox is on (a startup error may be due), else when first asked (speculation).
    const probed = yield* Effect.cached(probe(bwrap))
    if (settings.enabled) {
      const now = yield* probed
      if (!now.available && settings.failIfUnavailable) {
        return yield* Effect.fail(new SandboxPort.SandboxUnavailable({ reason: now.reason ?? "unknown" }))
      }
    }
    const status = Effect.map(probed, (result): SandboxPort.Status => ({
      enabled: settings.enabled,
      available: result.available,
      reason: result.reason
    }))
    const cache = new Mounts.ListingCache()
    // The seccomp filter for this machine (none off x86_64 and aarch64); made here, not when the module loads.
    const filter = Seccomp.program()
    const prctl = Seccomp.prctlNumber()
    const placeholders = new Mounts.Placeholders()
    // One directory for the service's life (made on first use): the empty file masks are bound from, the
    // relay script, and a directory per command (its temp directory and the proxy's socket).
    let counter = 0
    /** Writable roots already passed to `onWritableRoots`. */
    const announced = new Set<string>()
    const serviceScope = yield* Effect.scope
    const workspace = yield* Effect.cached(
      Effect.acquireRelease(
        Effect.try({
          try: () => {
            const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "switchyard-sandbox-"))
            fs.writeFileSync(nodePath.join(dir, "empty"), "", { mode: 0o444 })
            fs.writeFileSync(nodePath.join(dir, "relay.mjs"), Proxy.RELAY_SCRIPT, { mode: 0o444 })
            if (filter !== undefined) fs.writeFileSync(nodePath.join(dir, "seccomp.bpf"), filter, { mode: 0o444 })
            fs.writeFileSync(nodePath.join(dir, "apply-seccomp.pl"), Seccomp.APPLY_SCRIPT, { mode: 0o444 })
            return dir
          },
          catch: (error) => new SandboxPort.SandboxError({ message: `cannot make the sandbox's directory: ${error}` })
        }),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      ).pipe(Scope.extend(serviceScope))
    )

    const wrap: SandboxPort.Service["wrap"] = (request) =>
      Effect.gen(function*() {
        const { available, reason } = yield* probed
        if (!available) {
          return yield* Effect.fail(
            new SandboxPort.SandboxError({ message: `The sandbox is not available: ${reason}` })
          )
        }
        const policy = SandboxPort.policy({
          settings,
          cwd: request.cwd,
          permissions: mergePermissions(options.permissions, request.permissions),
          home,
          path,
          readOnly: request.readOnly === true,
          protectedFiles: options.protectedFiles ?? []
        })
        const fresh = policy.writable.filter((root) => !announced.has(root))
        if (fresh.length > 0 && options.onWritableRoots !== undefined) {
          yield* options.onWritableRoots(fresh)
          for (const root of fresh) announced.add(root)
        }
        const shared = yield* workspace
        const dir = yield* Effect.acquireRelease(
          Effect.try({
            try: () => {
              const dir = nodePath.join(shared, `call-${++counter}`)
              fs.mkdirSync(nodePath.join(dir, "tmp"), { recursive: true, mode: 0o700 })
              return dir
            },
            catch: (error) => new SandboxPort.SandboxError({ message: `cannot make the sandbox's directory: ${error}` })
          }),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const tmp = nodePath.join(dir, "tmp")
        const emptyFile = nodePath.join(shared, "empty")
        const resolved = yield* Effect.acquireRelease(
          Effect.sync(() => Mounts.resolve(policy, cache, placeholders)),
          (resolved) => Effect.sync(() => Mounts.release(resolved, placeholders))
        )
        const shellLine = [request.shell ?? "bash", "-c", request.command]
        // `sandbox.network.allowAllUnixSockets` lifts the filter (it refuses nothing else).
        const unixFilter = policy.network.allowAllUnixSockets ? undefined : filter
        let command: ReadonlyArray<string> = shellLine
        let blocked = (): ReadonlyArray<string> => []
        if (policy.network.enabled) {
          const proxy = yield* Proxy.start(nodePath.join(dir, "proxy.sock"), policy.network)
          // The relay reaches the proxy's socket, so only the command under it is filtered (see seccomp.ts).
          const filtered = unixFilter === undefined || prctl === undefined ? shellLine : [
            "perl",
            nodePath.join(shared, "apply-seccomp.pl"),
            String(prctl),
            nodePath.join(shared, "seccomp.bpf"),
            ...shellLine
          ]
          command = [process.execPath, nodePath.join(shared, "relay.mjs"), proxy.socketPath, ...filtered]
          blocked = proxy.blocked
        }
        const args = [
          ...BASE,
          ...ISOLATION,
          ...mountArgs(resolved, emptyFile, tmp),
          "--chdir",
          path.resolve(request.cwd),
          "--",
          ...command
        ]
        const context = (): Violations.Context => ({
          cwd: path.resolve(request.cwd),
          roots: policy.roots,
          readOnlyTree: request.readOnly === true,
          protectedPaths: resolved.protectedPaths,
          masked: resolved.masked,
          networkEnabled: policy.network.enabled,
          unixSocketsRefused: unixFilter !== undefined,
          blockedHosts: blocked(),
          allowUnsandboxed: settings.allowUnsandboxedCommands
        })
        // With network access the relay inside applies the filter to the command only (above).
        const spawn = unixFilter === undefined || policy.network.enabled
          ? { command: bwrap, args }
          : withFilter(bwrap, args, nodePath.join(shared, "seccomp.bpf"))
        return {
          ...spawn,
          env: { TMPDIR: tmp, TMP: tmp, TEMP: tmp },
          explain: (output) => Effect.sync(() => Violations.explain(output, context()))
        }
      })

    return { status, settings, wrap }
  })

/**
 * The bubblewrap sandbox as core's `Sandbox` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<SandboxPort.Sandbox, SandboxPort.SandboxUnavailable> =>
  Layer.scoped(SandboxPort.Sandbox, make(options)).pipe(Layer.provide(Path.layer))
