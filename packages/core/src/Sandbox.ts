/**
 * The sandbox port (SPEC §4.5, issue 18): the permission layer predicts what
 * a command will do; the sandbox enforces it. Bash, background shells, hooks
 * that opt in and speculation ask this one service to wrap a command line so
 * that, while it runs, the whole filesystem is readable except the deny-read
 * set, only the working directories, `sandbox.filesystem.allowWrite` and a
 * private temp directory are writable (with `.git/hooks`, `.git/config`,
 * `.claude/`, `.switchyard/`, `.mcp.json` and the settings files read-only
 * inside them), the network is off unless `sandbox.network.allowedDomains`
 * lists hosts (then only a filtering proxy is reachable), and its processes
 * live in their own PID namespace.
 *
 * This module holds the settings (Claude Code's `sandbox` keys and meanings),
 * the policy as data (computed from the settings, the permission rules and
 * the working directories), the availability state, and the decision whether
 * one Bash call runs inside. The bubblewrap implementation lives in
 * `@switchyard/tools` (`Sandbox.layer`). Without one, the default service
 * reports the sandbox unavailable: nothing runs sandboxed, and speculation
 * stops at every Bash call.
 *
 * @since 0.1.0
 */
import type * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as BashRules from "./internal/bashRules.js"
import * as internal from "./internal/sandboxPolicy.js"
import type * as SandboxSettingsDecode from "./internal/sandboxSettings.js"
import type * as PermissionContext from "./PermissionContext.js"
import * as ShellAnalysis from "./ShellAnalysis.js"

/**
 * A `sandbox.filesystem.*` entry, made absolute (`//x` and `/x` absolute,
 * `~/x` in the home directory, `./x` and `x` relative to the settings file's
 * project), with the file it came from. It may hold gitignore wildcards.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathEntry {
  readonly path: string
  readonly source: string
}

/**
 * The merged `sandbox` settings, with Claude Code's defaults.
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxSettings {
  /** `sandbox.enabled` (default false): Bash runs in the sandbox. */
  readonly enabled: boolean
  /**
   * `sandbox.autoAllowBashIfSandboxed` (default true): a sandboxed command no
   * deny or ask rule matches runs without a prompt.
   */
  readonly autoAllowBashIfSandboxed: boolean
  /** `sandbox.excludedCommands`: commands that run outside the sandbox, through the normal permission flow. */
  readonly excludedCommands: ReadonlyArray<string>
  /** `sandbox.allowUnsandboxedCommands` (default true): `dangerouslyDisableSandbox` asks the user; false refuses it. */
  readonly allowUnsandboxedCommands: boolean
  /** `sandbox.failIfUnavailable` (default false): enabled but unusable is a startup error instead of a warning. */
  readonly failIfUnavailable: boolean
  readonly network: {
    /** `sandbox.network.allowedDomains`: the hosts the proxy lets through (`*.x.com` for subdomains). */
    readonly allowedDomains: ReadonlyArray<string>
    /**
     * `sandbox.network.allowLocalBinding` (default false). On Linux the
     * sandbox has a loopback interface of its own, so a program may always
     * bind and reach its own local ports; nothing outside is reachable
     * through it either way, as in Claude Code on Linux.
     */
    readonly allowLocalBinding: boolean
    /**
     * `sandbox.network.allowAllUnixSockets` (default false): sandboxed
     * commands may open Unix sockets (a daemon's, the host's: Docker, tmux,
     * ssh-agent). Off, a seccomp filter refuses them, as Claude Code's does on
     * Linux (its per-path `allowUnixSockets` is macOS only).
     */
    readonly allowAllUnixSockets: boolean
  }
  readonly filesystem: {
    /** `sandbox.filesystem.allowWrite`: more writable places. */
    readonly allowWrite: ReadonlyArray<PathEntry>
    /** `sandbox.filesystem.denyWrite`: read-only even inside a writable place (with `Edit(…)` deny rules). */
    readonly denyWrite: ReadonlyArray<PathEntry>
    /** `sandbox.filesystem.denyRead`: masked (with `Read(…)` deny rules). */
    readonly denyRead: ReadonlyArray<PathEntry>
  }
}

/**
 * The settings when no file sets any `sandbox` key.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSettings: SandboxSettings = {
  enabled: false,
  autoAllowBashIfSandboxed: true,
  excludedCommands: [],
  allowUnsandboxedCommands: true,
  failIfUnavailable: false,
  network: { allowedDomains: [], allowLocalBinding: false, allowAllUnixSockets: false },
  filesystem: { allowWrite: [], denyWrite: [], denyRead: [] }
}

/**
 * The `sandbox` key of a settings file, for reference and for embedders that
 * validate a whole file; `Settings.load` decodes the same keys one by one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxSettingsJson = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  autoAllowBashIfSandboxed: Schema.optional(Schema.Boolean),
  excludedCommands: Schema.optional(Schema.Array(Schema.String)),
  allowUnsandboxedCommands: Schema.optional(Schema.Boolean),
  failIfUnavailable: Schema.optional(Schema.Boolean),
  network: Schema.optional(Schema.Struct({
    allowedDomains: Schema.optional(Schema.Array(Schema.String)),
    allowLocalBinding: Schema.optional(Schema.Boolean),
    allowAllUnixSockets: Schema.optional(Schema.Boolean)
  }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  filesystem: Schema.optional(Schema.Struct({
    allowWrite: Schema.optional(Schema.Array(Schema.String)),
    denyWrite: Schema.optional(Schema.Array(Schema.String)),
    denyRead: Schema.optional(Schema.Array(Schema.String))
  }, Schema.Record({ key: Schema.String, value: Schema.Unknown })))
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * What one settings file's `sandbox` key says (its valid parts, paths as
 * written).
 *
 * @since 0.1.0
 * @category models
 */
export type FileSettings = SandboxSettingsDecode.FileSandbox

/**
 * A set of paths: a literal base (a file or directory) and, when the rule had
 * wildcards, a gitignore pattern relative to it. `pattern` undefined: the
 * base itself, with everything below it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathSet {
  readonly base: string
  readonly pattern: string | undefined
  /** The rule or setting it came from, for messages. */
  readonly source: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface NetworkPolicy {
  /** Whether anything is reachable (through the proxy): `allowedDomains` is not empty. */
  readonly enabled: boolean
  /** `allowedDomains` and the domains of `WebFetch(domain:…)` allow rules. */
  readonly allowedHosts: ReadonlyArray<string>
  /** The domains of `WebFetch(domain:…)` deny rules: never let through. */
  readonly deniedHosts: ReadonlyArray<string>
  readonly allowLocalBinding: boolean
  /** `allowAllUnixSockets`: no filter refuses Unix sockets. */
  readonly allowAllUnixSockets: boolean
}

/**
 * What one command may touch.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** Writable roots (absolute; links not yet followed): empty when the tree is read-only. */
  readonly writable: ReadonlyArray<string>
  /** The working directories and `allowWrite` entries, writable or not: for messages. */
  readonly roots: ReadonlyArray<string>
  /** Read-only even inside a writable root: the protected names, settings files, Edit deny rules, `denyWrite`. */
  readonly readOnly: ReadonlyArray<PathSet>
  /** Masked: `Read(…)` deny rules and `denyRead`. */
  readonly denyRead: ReadonlyArray<PathSet>
  readonly network: NetworkPolicy
}

/**
 * Compute the policy for one command.
 *
 * @since 0.1.0
 * @category policy
 */
export const policy: (input: {
  readonly settings: SandboxSettings
  readonly cwd: string
  readonly permissions: PermissionContext.PermissionContext
  readonly home: string
  readonly path: Path.Path
  readonly readOnly: boolean
  readonly protectedFiles: ReadonlyArray<string>
}) => Policy = internal.make

/**
 * A matcher for paths relative to a set's base (`/`-separated; `""` is the
 * base itself).
 *
 * @since 0.1.0
 * @category policy
 */
export const pathSetMatcher: (set: PathSet) => (relative: string) => boolean = internal.pathSetMatcher

/**
 * Whether the sandbox enforces a permission rule at run time: a `Read(…)`
 * deny rule (its paths masked) or an `Edit(…)`/`Write(…)` one (read-only).
 * A Bash call that runs sandboxed needs no prompt for such a rule when its
 * paths cannot be resolved ahead of time: the kernel judges the real ones.
 *
 * @since 0.1.0
 * @category policy
 */
export const enforcesRule: (rule: PermissionContext.PermissionRule) => boolean = internal.enforcesRule

/**
 * Whether the proxy lets a connection to a host (on a port) through; an
 * `allowedDomains` entry `host:port` allows that port only.
 *
 * @since 0.1.0
 * @category policy
 */
export const hostAllowed: (network: NetworkPolicy, host: string, port?: number) => boolean = internal.hostAllowed

/**
 * Whether the sandbox is on and whether it works here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  /** `sandbox.enabled` (or `--sandbox`). */
  readonly enabled: boolean
  /** The implementation works on this machine (bubblewrap runs). */
  readonly available: boolean
  /** Why it is not available. */
  readonly reason?: string | undefined
}

/**
 * One command to wrap.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly command: string
  readonly cwd: string
  readonly permissions: PermissionContext.PermissionContext
  /** The working tree read-only too (speculation): only the private temp directory is writable. */
  readonly readOnly?: boolean | undefined
  /** The shell that runs the command line with `-c` (default `bash`). */
  readonly shell?: string | undefined
}

/**
 * A command line wrapped in the sandbox: the program to start with its
 * arguments and the environment to add.
 *
 * @since 0.1.0
 * @category models
 */
export interface Wrapped {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /**
   * After the command ran: one line naming what the sandbox blocked (a write,
   * a connection) and how to proceed, when its output or the proxy's log
   * shows a refusal.
   */
  readonly explain: (output: string) => Effect.Effect<string | undefined>
}

/**
 * The sandbox could not wrap a command (a directory it needs could not be
 * made, the proxy did not start).
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxError extends Schema.TaggedError<SandboxError>()("SandboxError", {
  message: Schema.String
}) {}

/**
 * `sandbox.enabled` and `sandbox.failIfUnavailable` are set, and the sandbox
 * does not work here: a startup error.
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxUnavailable extends Schema.TaggedError<SandboxUnavailable>()("SandboxUnavailable", {
  reason: Schema.String
}) {
  override get message() {
    return `The sandbox is enabled and sandbox.failIfUnavailable is set, but it cannot run here: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Whether it is on and works here (probed once, when first asked, unless it is on). */
  readonly status: Effect.Effect<Status>
  readonly settings: SandboxSettings
  /**
   * Wrap a command. The scope owns what the sandbox made for it (its temp
   * directory, the proxy): close it after the process is gone.
   */
  readonly wrap: (request: Request) => Effect.Effect<Wrapped, SandboxError, Scope.Scope>
}

/**
 * A service that wraps nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unavailable = (reason: string, settings: SandboxSettings = defaultSettings): Service => ({
  status: Effect.succeed({ enabled: settings.enabled, available: false, reason }),
  settings,
  wrap: () => Effect.fail(new SandboxError({ message: `The sandbox is not available: ${reason}` }))
})

/**
 * The sandbox service; by default none is provided (unavailable).
 *
 * @since 0.1.0
 * @category services
 */
export class Sandbox extends Context.Reference<Sandbox>()("@switchyard/core/Sandbox/Sandbox", {
  defaultValue: (): Service =>
    unavailable("no sandbox is provided (the bubblewrap sandbox is Sandbox.layer in @switchyard/tools)")
}) {}

/**
 * How one Bash call runs. `Refused`: it asked to leave the sandbox and
 * `allowUnsandboxedCommands` is false.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode =
  | { readonly _tag: "Sandboxed" }
  | { readonly _tag: "Unsandboxed"; readonly reason: "disabled" | "unavailable" | "excluded" | "requested" }
  | { readonly _tag: "Refused"; readonly message: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface BashCall {
  readonly command: string
  readonly dangerouslyDisableSandbox?: boolean | undefined
}

const matchesExcluded = (entry: string, command: string): boolean => {
  const spec = entry.trim()
  if (spec === "") return false
  // `docker` excludes `docker` and `docker ps`, as Claude Code's examples mean it.
  return BashRules.matchesCommand(spec, command) ||
    (!/[*]|:\*$/.test(spec) && BashRules.matchesCommand(`${spec} *`, command))
}

/**
 * Whether every simple command of a line is an excluded command. Every, not
 * any: `docker ps; cat ~/.ssh/id_rsa` stays inside, so an excluded name
 * cannot carry the rest of a line out. A line with substitutions or `eval`
 * stays inside. `undefined` when the line cannot be analysed at all (no
 * shell analyser): then it runs inside, but is not auto-allowed either, in
 * case the tool's own analyser finds it excluded.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isExcluded = (settings: SandboxSettings, command: string): Effect.Effect<boolean | undefined> =>
  Effect.gen(function*() {
    if (settings.excludedCommands.length === 0) return false
    const analysis = yield* (yield* ShellAnalysis.ShellAnalysis).analyze(command)
    if (Option.isNone(analysis)) return undefined
    if (analysis.value.hasDynamicParts || analysis.value.commands.length === 0) return false
    return analysis.value.commands.every((simple) =>
      settings.excludedCommands.some((entry) => matchesExcluded(entry, simple.text))
    )
  })

/**
 * The line a refused `dangerouslyDisableSandbox` gets.
 *
 * @since 0.1.0
 * @category constants
 */
export const UNSANDBOXED_REFUSED = "This command asked to run outside the sandbox (dangerouslyDisableSandbox), and " +
  "sandbox.allowUnsandboxedCommands is false: every command runs sandboxed here. Run it without " +
  "dangerouslyDisableSandbox, or ask the user to widen the sandbox (sandbox.filesystem.allowWrite, " +
  "sandbox.network.allowedDomains)."

/**
 * How a Bash call runs under a sandbox service: off (`disabled`), asked out
 * (`requested`, or `Refused`), not working here (`unavailable`), an excluded
 * command (`excluded`), else `Sandboxed`. For `"run"` (the tool starting it)
 * a line that cannot be analysed runs inside; for `"permission"` (whether it
 * may be auto-allowed) it counts as excluded, so a policy with a weaker
 * analyser than the tool's never auto-allows what then runs outside.
 *
 * @since 0.1.0
 * @category predicates
 */
export const modeOf = (service: Service, call: BashCall, purpose: "run" | "permission" = "run"): Effect.Effect<Mode> =>
  Effect.gen(function*() {
    const { settings } = service
    if (!settings.enabled) return { _tag: "Unsandboxed", reason: "disabled" } as const
    if (call.dangerouslyDisableSandbox === true) {
      return settings.allowUnsandboxedCommands
        ? { _tag: "Unsandboxed", reason: "requested" } as const
        : { _tag: "Refused", message: UNSANDBOXED_REFUSED } as const
    }
    if (!(yield* service.status).available) return { _tag: "Unsandboxed", reason: "unavailable" } as const
    const excluded = yield* isExcluded(settings, call.command)
    if (excluded === true || (excluded === undefined && purpose === "permission")) {
      return { _tag: "Unsandboxed", reason: "excluded" } as const
    }
    return { _tag: "Sandboxed" } as const
  })

/**
 * The Bash fields of a tool input, when it has a command.
 *
 * @since 0.1.0
 * @category predicates
 */
export const bashCallOf = (input: unknown): BashCall | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  const command = record["command"]
  if (typeof command !== "string") return undefined
  return { command, dangerouslyDisableSandbox: record["dangerouslyDisableSandbox"] === true }
}

/**
 * One line for `/status` and `--verbose`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeStatus = (status: Status): string =>
  !status.enabled
    ? status.available
      ? "sandbox: off (bubblewrap available)"
      : `sandbox: off (unavailable: ${status.reason ?? "unknown"})`
    : status.available
    ? "sandbox: on (bubblewrap)"
    : `sandbox: enabled but unavailable (${status.reason ?? "unknown"}); Bash runs unsandboxed, with permission prompts`
