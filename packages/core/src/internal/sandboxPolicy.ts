/**
 * The sandbox policy as data, computed from the settings' `sandbox` keys, the
 * permission rules and the working directories: which roots are writable,
 * which paths inside them stay read-only, which paths are masked, and which
 * hosts the proxy lets through. Pure: nothing here touches the filesystem;
 * the implementation resolves real paths and expands patterns.
 */
import type * as Path from "@effect/platform/Path"
import ignore from "ignore"
import type * as PermissionContext from "../PermissionContext.js"
import type * as Sandbox from "../Sandbox.js"
import * as DomainPatterns from "./domainPatterns.js"
import * as PathPatterns from "./pathPatterns.js"
import * as PathRules from "./pathRules.js"
import * as RuleIndex from "./ruleIndex.js"

/**
 * Inside every writable root, the names where a write becomes code execution
 * or a changed policy: git's hooks and config (`core.hooksPath`, filters,
 * `core.fsmonitor` run programs), the agent's own settings directories and
 * the project's MCP server list.
 *
 * @internal
 */
export const protectedNames: ReadonlyArray<string> = [
  ".git/hooks",
  ".git/config",
  ".claude",
  ".switchyard",
  ".mcp.json"
]

const GLOB = /[*?[\]\\!]/

/**
 * A path rule's specifier as a set of paths: the literal directory (or file)
 * it lies under and, when it has wildcards, the gitignore pattern relative to
 * that base.
 *
 * @internal
 */
export const pathSet = (
  specifier: string,
  root: string,
  bases: PathPatterns.PathBases,
  source: string
): Sandbox.PathSet => {
  const compiled = PathPatterns.compilePathPattern(specifier)
  const base = PathPatterns.baseOf(compiled, root, bases)
  const anchored = compiled.gitignore.startsWith("/")
  const body = anchored ? compiled.gitignore.slice(1) : compiled.gitignore
  const directoryOnly = body.endsWith("/")
  const segments = body.replace(/\/+$/, "").split("/")
  // `*.pem`, `.env`: one segment without a slash matches at any depth below the base, as in a `.gitignore`.
  if (!anchored && segments.length === 1) return { base, pattern: body, source }
  let literal = 0
  while (literal < segments.length && segments[literal] !== "**" && !GLOB.test(segments[literal]!)) literal++
  const rest = segments.slice(literal)
  const at = bases.path.join(base, ...segments.slice(0, literal))
  if (rest.length === 0 || (rest.length === 1 && rest[0] === "**")) return { base: at, pattern: undefined, source }
  return { base: at, pattern: `/${rest.join("/")}${directoryOnly ? "/" : ""}`, source }
}

/**
 * A matcher for paths relative to a set's base (`/`-separated).
 *
 * @internal
 */
export const pathSetMatcher = (set: Sandbox.PathSet): (relative: string) => boolean => {
  if (set.pattern === undefined) return (relative) => relative === ""
  const matcher = ignore().add(set.pattern)
  return (relative) => relative !== "" && matcher.ignores(relative)
}

/** An entry of `sandbox.filesystem.*` written as a path rule specifier anchored where the entry is. */
const entrySpecifier = (entry: Sandbox.PathEntry): string => `//${entry.path.replace(/^\/+/, "")}`

const pathRules = (
  rules: ReadonlyArray<PermissionContext.PermissionRule>,
  behavior: PermissionContext.RuleBehavior,
  tools: ReadonlySet<string>
): ReadonlyArray<PermissionContext.PermissionRule> =>
  rules.filter((rule) => rule.behavior === behavior && rule.specifier !== undefined && tools.has(rule.toolName))

/** Whether the sandbox enforces a rule itself: a `Read(…)` deny rule (masked) or an edit tool's (read-only). */
export const enforcesRule = (rule: PermissionContext.PermissionRule): boolean =>
  rule.behavior === "deny" && rule.specifier !== undefined &&
  (rule.toolName === "Read" || RuleIndex.editTools.has(rule.toolName))

const domainOf = (rule: PermissionContext.PermissionRule): ReadonlyArray<string> => {
  const spec = rule.specifier?.trim()
  return spec !== undefined && spec.startsWith("domain:") ? [spec.slice("domain:".length).trim().toLowerCase()] : []
}

/** @internal */
export interface PolicyInput {
  readonly settings: Sandbox.SandboxSettings
  readonly cwd: string
  readonly permissions: PermissionContext.PermissionContext
  readonly home: string
  readonly path: Path.Path
  /** Every writable root read-only too (speculation): only the private temp directory is writable. */
  readonly readOnly: boolean
  /** Settings files that must not change (they may lie inside a writable root). */
  readonly protectedFiles: ReadonlyArray<string>
}

/**
 * The policy for one command.
 *
 * @internal
 */
export const make = (input: PolicyInput): Sandbox.Policy => {
  const { path, settings } = input
  const cwd = path.resolve(input.cwd)
  const bases: PathPatterns.PathBases = { cwd, home: input.home, path }
  const additional = input.permissions.additionalDirectories.map((dir) =>
    path.resolve(cwd, PathRules.expandHome(dir, input.home, path))
  )
  const roots = Array.from(new Set([cwd, ...additional, ...settings.filesystem.allowWrite.map((entry) => entry.path)]))
  const writable = input.readOnly ? [] : roots
  const rules = input.permissions.rules
  const ruleSet = (rule: PermissionContext.PermissionRule) =>
    pathSet(rule.specifier!, rule.root ?? cwd, bases, `${rule.raw.trim()} (${rule.source})`)
  const entrySet = (key: string) => (entry: Sandbox.PathEntry) =>
    pathSet(entrySpecifier(entry), cwd, bases, `sandbox.filesystem.${key} ${entry.path} (${entry.source})`)
  const protectedSets = writable.flatMap((root) =>
    protectedNames.map((name): Sandbox.PathSet => ({
      base: path.join(root, ...name.split("/")),
      pattern: undefined,
      source: "protected inside a writable directory"
    }))
  )
  const readOnly: Array<Sandbox.PathSet> = [
    ...protectedSets,
    ...input.protectedFiles.map((file): Sandbox.PathSet => ({
      base: file,
      pattern: undefined,
      source: "settings file"
    })),
    ...pathRules(rules, "deny", RuleIndex.editTools).map(ruleSet),
    ...settings.filesystem.denyWrite.map(entrySet("denyWrite"))
  ]
  const denyRead = [
    ...pathRules(rules, "deny", new Set(["Read"])).map(ruleSet),
    ...settings.filesystem.denyRead.map(entrySet("denyRead"))
  ]
  const webFetch = new Set(["WebFetch"])
  return {
    writable,
    roots,
    readOnly,
    denyRead,
    network: {
      enabled: settings.network.allowedDomains.length > 0,
      allowedHosts: Array.from(
        new Set([
          ...settings.network.allowedDomains.map((domain) => domain.trim().toLowerCase()),
          ...rules.filter((rule) => rule.behavior === "allow" && webFetch.has(rule.toolName)).flatMap(domainOf)
        ])
      ),
      deniedHosts: rules.filter((rule) => rule.behavior === "deny" && webFetch.has(rule.toolName)).flatMap(domainOf),
      allowLocalBinding: settings.network.allowLocalBinding,
      allowAllUnixSockets: settings.network.allowAllUnixSockets
    }
  }
}

/**
 * Whether the proxy lets a connection to a host (and port) through: a deny
 * rule never, else an allowed domain or a `WebFetch(domain:…)` allow rule
 * (`*.x.com` matches the subdomains of `x.com`). As in Claude Code, an
 * `allowedDomains` entry with a `:port` suffix (`github.com:443`,
 * `[::1]:8080`) allows that port only; one without allows every port.
 *
 * @internal
 */
export const hostAllowed = (network: Sandbox.NetworkPolicy, rawHost: string, port?: number): boolean => {
  const bracketed = rawHost.includes(":") && !rawHost.startsWith("[") ? `[${rawHost}]` : rawHost
  const host = DomainPatterns.hostOf(`http://${bracketed}/`)
  if (host === undefined) return false
  const matches = (domain: string) => DomainPatterns.compileDomainPattern(`domain:${domain}`)(host)
  if (network.deniedHosts.some(matches)) return false
  return network.allowedHosts.some((entry) => {
    const { name, only } = withPort(entry)
    return matches(name) && (only === undefined || only === port)
  })
}

/** An entry's host and the one port it names, if any (`host:443`, `[v6]:443`; a bare IPv6 address names none). */
const withPort = (entry: string): { readonly name: string; readonly only: number | undefined } => {
  const found = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry)
  if (found !== null) return { name: found[1]!, only: Number(found[2]) }
  // The host as a URL names it: an IPv6 address in brackets.
  return { name: entry.includes(":") && !entry.startsWith("[") ? `[${entry}]` : entry, only: undefined }
}
