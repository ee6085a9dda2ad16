/**
 * MCP server configuration in Claude Code's format: `.mcp.json` in the
 * working directory and every `--mcp-config FILE` (`strict`: only those),
 * each `{"mcpServers": {"<name>": {"type"?: "stdio", "command", "args"?,
 * "env"?, "cwd"?, "timeout"?} | {"type": "http" | "sse", "url", "headers"?}}}`.
 * `${VAR}` and `${VAR:-default}` expand in command, args, env, url and
 * headers. A bad file or entry is one issue naming the file and field; the
 * other servers still load. A later file's server replaces an earlier one of
 * the same name.
 *
 * Two keys of Switchyard's own: `"alwaysLoad": true` keeps every tool of the
 * server loaded (never deferred, SPEC §4.3), and `"footprint": "workspace"`
 * says the server acts on the working tree (its calls then take path
 * footprints, SPEC §4.13); a known filesystem server
 * (`@modelcontextprotocol/server-filesystem`) is a workspace server unless
 * `"footprint": "server"` says otherwise.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const StdioEntry = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.NonEmptyString,
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  cwd: Schema.optional(Schema.String),
  /** Wall-clock limit of one tool call, in milliseconds. */
  timeout: Schema.optional(Schema.Number.pipe(Schema.positive()))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const HttpEntry = Schema.Struct({
  type: Schema.Literal("http", "sse"),
  url: Schema.NonEmptyString,
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  timeout: Schema.optional(Schema.Number.pipe(Schema.positive()))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Entry = Schema.Union(StdioEntry, HttpEntry)

/**
 * The keys every entry may have besides its transport's.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommonKeys = Schema.Struct({
  alwaysLoad: Schema.optional(Schema.Boolean),
  footprint: Schema.optional(Schema.Literal("workspace", "server"))
})

/**
 * Where a server is configured (Claude Code's scopes): `local` (this project,
 * only you), `project` (`.mcp.json`), `user` (every project), `dynamic`
 * (`--mcp-config`).
 *
 * @since 0.1.0
 * @category models
 */
export type Scope = "local" | "project" | "user" | "dynamic"

/**
 * How a server's calls are scheduled (SPEC §4.13): `server` — the server's own
 * state, `mcp:<name>`; `workspace` — it acts on the working tree.
 *
 * @since 0.1.0
 * @category models
 */
export type FootprintKind = "workspace" | "server"

/**
 * @since 0.1.0
 * @category schemas
 */
export const File = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * @since 0.1.0
 * @category models
 */
export type Transport =
  | {
    readonly _tag: "stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>>
    readonly cwd: string | undefined
  }
  | {
    readonly _tag: "http" | "sse"
    readonly url: string
    readonly headers: Readonly<Record<string, string>>
  }

/**
 * One configured server.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerConfig {
  readonly name: string
  /** The file it came from (or `--mcp-config` for inline JSON). */
  readonly source: string
  readonly transport: Transport
  /** Wall-clock limit of one tool call (ms), overriding `MCP_TOOL_TIMEOUT`. */
  readonly timeoutMs: number | undefined
  /** Where it is configured; `dynamic` when absent. */
  readonly scope?: Scope | undefined
  /** Every tool of the server is loaded, never deferred. */
  readonly alwaysLoad?: boolean | undefined
  /** How its calls are scheduled; `server` when absent. */
  readonly footprint?: FootprintKind | undefined
  /** The entry as written (before `${VAR}` expansion). */
  readonly entry?: unknown
}

/**
 * The package of the reference filesystem server, whose calls act on the
 * working tree.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILESYSTEM_SERVERS: ReadonlyArray<string> = [
  "@modelcontextprotocol/server-filesystem",
  "mcp-server-filesystem"
]

/**
 * Whether a stdio command line runs a known filesystem server.
 *
 * @since 0.1.0
 * @category footprints
 */
export const isFilesystemServer = (transport: Transport): boolean =>
  transport._tag === "stdio" &&
  [transport.command, ...transport.args].some((part) =>
    FILESYSTEM_SERVERS.some((name) => part === name || part.startsWith(`${name}@`) || part.includes(`/${name}/`))
  )

/**
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly servers: ReadonlyArray<ServerConfig>
  /** One line per bad file or entry, naming the file and the field. */
  readonly issues: ReadonlyArray<string>
}

/**
 * Expand `${VAR}` and `${VAR:-default}`; an unset variable without a default
 * is an error naming it.
 *
 * @since 0.1.0
 * @category parsing
 */
export const expand = (
  text: string,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<string, string> => {
  const missing: Array<string> = []
  const out = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
    const value = env[name]
    if (value !== undefined && value !== "") return value
    if (fallback !== undefined) return fallback
    missing.push(name)
    return ""
  })
  return missing.length === 0 ? Either.right(out) : Either.left(`\${${missing[0]}} is not set and has no default`)
}

const firstIssue = (error: ParseResult.ParseError): { readonly path: string; readonly message: string } => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  // A union reports every member; the deepest path is the field that is wrong.
  const issue = issues.slice().sort((a, b) => b.path.length - a.path.length)[0]
  return { path: issue?.path.map(String).join(".") ?? "", message: issue?.message ?? String(error) }
}

const decodeStdio = Schema.decodeUnknownEither(StdioEntry, { onExcessProperty: "ignore" })
const decodeHttp = Schema.decodeUnknownEither(HttpEntry, { onExcessProperty: "ignore" })
const decodeCommon = Schema.decodeUnknownEither(CommonKeys, { onExcessProperty: "ignore" })
const decodeFile = Schema.decodeUnknownEither(File)

/**
 * Decode one file's text into servers and issues.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  text: string,
  source: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  scope: Scope = "dynamic"
): Loaded => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return {
      servers: [],
      issues: [`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`]
    }
  }
  const file = decodeFile(json)
  if (Either.isLeft(file)) {
    const issue = firstIssue(file.left)
    return {
      servers: [],
      issues: [
        `${source}: ${issue.path || "mcpServers"}: expected an object of servers ("mcpServers": {"name": {...}})`
      ]
    }
  }
  const servers: Array<ServerConfig> = []
  const issues: Array<string> = []
  for (const [name, raw] of Object.entries(file.right.mcpServers)) {
    const field = (path: string) => `${source}: mcpServers.${name}${path === "" ? "" : `.${path}`}`
    const typed = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)["type"] : undefined
    if (typed !== undefined && typed !== "stdio" && typed !== "http" && typed !== "sse") {
      issues.push(`${field("type")}: expected "stdio", "http" or "sse", got ${JSON.stringify(typed)}`)
      continue
    }
    // Decode against the declared type, so an issue names that type's field.
    const decoded: Either.Either<typeof Entry.Type, ParseResult.ParseError> = typed === "http" || typed === "sse"
      ? decodeHttp(raw)
      : decodeStdio(raw)
    const common = decodeCommon(raw)
    const failed = Either.isLeft(decoded) ? decoded.left : Either.isLeft(common) ? common.left : undefined
    if (failed !== undefined) {
      const issue = firstIssue(failed)
      issues.push(`${field(issue.path)}: ${issue.message}`)
      continue
    }
    const entry = Either.getOrThrow(decoded)
    const keys = Either.getOrThrow(common)
    const problems: Array<string> = []
    const expandAt = (path: string, value: string): string =>
      Either.match(expand(value, env), {
        onLeft: (message) => {
          problems.push(`${field(path)}: ${message}`)
          return ""
        },
        onRight: (expanded) => expanded
      })
    const expandRecord = (path: string, record: Readonly<Record<string, string>> | undefined) =>
      Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, expandAt(`${path}.${key}`, value)]))
    const transport: Transport = "url" in entry
      ? { _tag: entry.type, url: expandAt("url", entry.url), headers: expandRecord("headers", entry.headers) }
      : {
        _tag: "stdio",
        command: expandAt("command", entry.command),
        args: (entry.args ?? []).map((arg, i) => expandAt(`args.${i}`, arg)),
        env: expandRecord("env", entry.env),
        cwd: entry.cwd
      }
    if (problems.length > 0) {
      issues.push(problems[0]!)
      continue
    }
    servers.push({
      name,
      source,
      transport,
      timeoutMs: entry.timeout,
      scope,
      alwaysLoad: keys.alwaysLoad,
      footprint: keys.footprint ?? (isFilesystemServer(transport) ? "workspace" : "server"),
      entry: raw
    })
  }
  return { servers, issues }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  readonly cwd: string
  /** `--mcp-config` values: file paths (relative to `cwd`) or inline JSON. */
  readonly files: ReadonlyArray<string>
  /** `--strict-mcp-config`: ignore `.mcp.json`. */
  readonly strict: boolean
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * Read `.mcp.json` (unless strict) and the given files, in that order.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (options: LoadOptions): Effect.Effect<Loaded, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const env = options.env ?? process.env
    const byName = new Map<string, ServerConfig>()
    const issues: Array<string> = []
    const take = (loaded: Loaded) => {
      for (const server of loaded.servers) {
        byName.delete(server.name)
        byName.set(server.name, server)
      }
      issues.push(...loaded.issues)
    }
    if (!options.strict) {
      const project = path.join(options.cwd, ".mcp.json")
      const text = yield* fs.readFileString(project).pipe(Effect.option)
      if (text._tag === "Some") take(parse(text.value, project, env, "project"))
    }
    for (const file of options.files) {
      if (file.trim().startsWith("{")) {
        take(parse(file, "--mcp-config", env))
        continue
      }
      const absolute = path.resolve(options.cwd, file)
      const text = yield* fs.readFileString(absolute).pipe(Effect.either)
      if (Either.isLeft(text)) {
        issues.push(`${absolute}: cannot read the MCP config file (${text.left.message})`)
        continue
      }
      take(parse(text.right, absolute, env))
    }
    return { servers: [...byName.values()], issues }
  })
