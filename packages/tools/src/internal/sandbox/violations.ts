/**
 * The one line a sandboxed command's result gets when the sandbox refused
 * something: what was blocked (a write and where, a connection and to which
 * host, a Unix socket) and how to proceed — ask the user to widen the sandbox
 * (`allowWrite`, `allowedDomains`), or retry with `dangerouslyDisableSandbox`
 * so the user decides. Read from the command's own error text (the kernel
 * says `Read-only file system`; a mount point is `busy`; a missing protected
 * name is an empty directory while the command runs) and from the
 * proxy's log of refused hosts.
 *
 * @internal
 */
import * as path from "node:path"

/** What the explanation is made from. */
export interface Context {
  readonly cwd: string
  readonly roots: ReadonlyArray<string>
  readonly readOnlyTree: boolean
  readonly protectedPaths: ReadonlyArray<string>
  readonly masked: ReadonlyArray<string>
  readonly networkEnabled: boolean
  /** The seccomp filter refuses Unix sockets (`sandbox.network.allowAllUnixSockets` is off). */
  readonly unixSocketsRefused: boolean
  readonly blockedHosts: ReadonlyArray<string>
  readonly allowUnsandboxed: boolean
}

const READ_ONLY = /read-only file system|\bEROFS\b/i
const BUSY = /device or resource busy|\bEBUSY\b/i
/** A write to a missing protected name meets the empty directory that holds its place. */
const IS_DIRECTORY = /is a directory|\bEISDIR\b/i
const NO_NETWORK = new RegExp(
  [
    "could not resolve (host|proxy)",
    "temporary failure in name resolution",
    "name or service not known",
    "getaddrinfo (EAI_AGAIN|ENOTFOUND)",
    "network is unreachable",
    "\\bENETUNREACH\\b",
    "no address associated with hostname"
  ].join("|"),
  "i"
)

/**
 * A refused Unix socket, as programs report it: the filter's EPERM in output about a socket, an agent or a
 * connection (`error connecting to /tmp/tmux-0/default (Operation not permitted)`, psql's `connection to server on
 * socket "…" failed`, node's `connect EPERM`, a Python traceback through `socket.py`). Other EPERMs in the sandbox
 * (`chown`, `mount` without capabilities) name no socket.
 */
const REFUSED = /operation not permitted|\bEPERM\b/i
const SOCKET_WORDS = /socket|\.sock\b|connect|agent|\bunix\b/i

/** The paths a line of error text names: quoted, or `prog: /path: message`. */
const pathsIn = (line: string): ReadonlyArray<string> => {
  // Curly quotes as escapes: one non-ASCII character would make the whole bundle a two-byte string in memory.
  const quoted = Array.from(
    line.matchAll(/['"\u2018\u2019`]([^'"\u2018\u2019`\n]+)['"\u2018\u2019`]/g),
    (match) => match[1]!
  ).filter((word) => word.includes("/") || word.startsWith("."))
  if (quoted.length > 0) return quoted
  const colon = /(?:^|:\s)((?:\/|\.{1,2}\/|~\/)[^:\n]*):\s/.exec(line)
  return colon === null ? [] : [colon[1]!]
}

const isInside = (dir: string, candidate: string) =>
  candidate === dir || candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep)

const retry = (context: Context) =>
  context.allowUnsandboxed
    ? "retry with dangerouslyDisableSandbox: true so the user decides"
    : "ask the user (commands cannot leave the sandbox here: sandbox.allowUnsandboxedCommands is false)"

const list = (items: ReadonlyArray<string>) =>
  items.length <= 3 ? items.join(", ") : `${items.slice(0, 3).join(", ")} and ${items.length - 3} more`

/** The explanation, or `undefined` when nothing in the output shows a refusal. */
export const explain = (output: string, context: Context): string | undefined => {
  if (context.blockedHosts.length > 0) {
    return `Sandbox: connections to ${list(context.blockedHosts)} were blocked (not in ` +
      `sandbox.network.allowedDomains). To proceed, ask the user to add the host to ` +
      `sandbox.network.allowedDomains, or ${retry(context)}.`
  }
  const lines = output.split("\n")
  const isProtected = (p: string) => context.protectedPaths.includes(path.resolve(context.cwd, p))
  const refused = lines.filter((line) =>
    READ_ONLY.test(line) || BUSY.test(line) || (IS_DIRECTORY.test(line) && pathsIn(line).some(isProtected))
  )
  if (refused.length > 0) {
    const written = Array.from(new Set(refused.flatMap(pathsIn).map((p) => path.resolve(context.cwd, p))))
    const inside = written.filter((p) => context.roots.some((root) => isInside(root, p)))
    const where = written.length === 0 ? "a write" : `a write to ${list(written)}`
    if (context.readOnlyTree) {
      return `Sandbox: ${where} was blocked: this command runs with the working tree read-only (a speculation ` +
        `only reads); it runs for real when the user accepts.`
    }
    if (written.length > 0 && inside.length === written.length) {
      return `Sandbox: ${where} was blocked: it is protected inside the working directories (git hooks and ` +
        `config, the files that point git elsewhere (commondir, a .git file), .claude/, .switchyard/, .mcp.json, ` +
        `settings files, Edit deny rules and sandbox.filesystem.denyWrite stay read-only; the directories above ` +
        `them and above masked paths cannot be moved). To proceed, ${retry(context)}.`
    }
    return `Sandbox: ${where} was blocked: only ${list(context.roots)} and the sandbox's temp directory ` +
      `($TMPDIR) are writable. To proceed, ask the user to add the path to sandbox.filesystem.allowWrite, ` +
      `or ${retry(context)}.`
  }
  // A traceback names the socket on one line and the error on another: the words may be anywhere in the output.
  if (context.unixSocketsRefused && REFUSED.test(output) && SOCKET_WORDS.test(output)) {
    return `Sandbox: a Unix socket was refused: sandboxed commands cannot open Unix sockets (a daemon's socket — ` +
      `Docker, tmux, ssh-agent, a database — is a way out of the sandbox). To proceed, ask the user to set ` +
      `sandbox.network.allowAllUnixSockets, or ${retry(context)}.`
  }
  if (!context.networkEnabled && NO_NETWORK.test(output)) {
    return `Sandbox: this command has no network access (sandbox.network.allowedDomains is empty). To proceed, ` +
      `ask the user to add the host to sandbox.network.allowedDomains, or ${retry(context)}.`
  }
  return undefined
}
