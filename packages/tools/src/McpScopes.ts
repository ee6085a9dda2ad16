/**
 * Where MCP servers are configured, as in Claude Code (`claude mcp add
 * --scope`):
 *
 * - `local` — this project, only you: `projects["<project dir>"].mcpServers`
 *   in the user's config file;
 * - `project` — everyone on the project: `<project dir>/.mcp.json`;
 * - `user` — every project of yours: `mcpServers` in the user's config file;
 * - `dynamic` — `--mcp-config` files and inline JSON.
 *
 * The user's config file is `$SWITCHYARD_HOME/.switchyard.json` (Claude
 * Code's `~/.claude.json`, which lives in `$CLAUDE_CONFIG_DIR` when that is
 * set). A name configured in several scopes resolves to one server, local
 * over project over user, and `--mcp-config` over all of them;
 * `--strict-mcp-config` uses only `--mcp-config`. A project's servers take
 * part only once approved (`McpApproval`); the others are the user's own.
 *
 * Two names that sanitise to the same tool prefix (`x.y` and `x_y` both give
 * `mcp__x_y__…`) cannot both run: the one resolved first keeps the prefix and
 * the other is reported and left out.
 *
 * Writes replace the file atomically (a temp file, then a rename), keep every
 * key they do not change, and never overwrite a file that is not a JSON
 * object.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as McpConfig from "./McpConfig.js"
import * as McpServers from "./McpServers.js"

/**
 * A scope `mcp add` can write to.
 *
 * @since 0.1.0
 * @category models
 */
export type WritableScope = "local" | "project" | "user"

/**
 * @since 0.1.0
 * @category constants
 */
export const writableScopes: ReadonlyArray<WritableScope> = ["local", "project", "user"]

/**
 * Reading or writing a scope's file failed, or the change is not possible
 * (no such server, a name in several scopes); nothing was changed.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpScopeError extends Schema.TaggedError<McpScopeError>()("McpScopeError", {
  path: Schema.String,
  message: Schema.String,
  /** `invalid`: the name or entry; `missing`: no such server; `ambiguous`: in several scopes; `io`: the file. */
  reason: Schema.Literal("invalid", "missing", "ambiguous", "io")
}) {}

/**
 * The permission bits of a new state file: only the user reads it (it may
 * hold a server's headers and environment).
 *
 * @since 0.1.0
 * @category paths
 */
export const stateFileMode = 0o600

/**
 * The user's config file: `<state dir>/.switchyard.json`.
 *
 * @since 0.1.0
 * @category paths
 */
export const storePath = (stateDir: string, path: Path.Path): string => path.join(stateDir, ".switchyard.json")

/**
 * A project's shared file: `<project dir>/.mcp.json`.
 *
 * @since 0.1.0
 * @category paths
 */
export const projectFilePath = (projectDir: string, path: Path.Path): string => path.join(projectDir, ".mcp.json")

/**
 * The key of a project in the user's config file: its absolute directory.
 *
 * @since 0.1.0
 * @category paths
 */
export const projectKey = (projectDir: string, path: Path.Path): string => path.resolve(projectDir)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A JSON object file as read: its content (`{}` when the file is absent) or
 * why it cannot be used.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonFile {
  readonly path: string
  readonly exists: boolean
  readonly json: Record<string, unknown>
  /** Set when the file exists but is not a JSON object: it is then neither used nor overwritten. */
  readonly problem: string | undefined
  /** The file's text, when it exists. */
  readonly text: string | undefined
}

/**
 * Read a JSON object file.
 *
 * @since 0.1.0
 * @category reading
 */
export const readJsonFile = (file: string): Effect.Effect<JsonFile, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const read = yield* Effect.either(fs.readFileString(file))
    if (Either.isLeft(read)) {
      const absent = read.left._tag === "SystemError" && read.left.reason === "NotFound"
      return {
        path: file,
        exists: !absent,
        json: {},
        problem: absent ? undefined : `cannot read it (${read.left.message})`,
        text: undefined
      }
    }
    const text = read.right
    let json: unknown
    try {
      json = text.trim() === "" ? {} : JSON.parse(text)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return { path: file, exists: true, json: {}, problem: `not valid JSON (${message})`, text }
    }
    if (!isRecord(json)) return { path: file, exists: true, json: {}, problem: "does not hold a JSON object", text }
    return { path: file, exists: true, json, problem: undefined, text }
  })

/**
 * Change a JSON object file: `f` gets its content (`{}` when absent) and
 * returns the new content. Atomic; the directory is made when missing; a file
 * that is not a JSON object is left alone and reported. The file keeps its
 * permission bits; a new one gets `newFileMode` (the state file: `0o600`, as
 * it may hold a server's headers and environment), else the umask's default.
 *
 * @since 0.1.0
 * @category writing
 */
export const updateJsonFile = <E>(
  file: string,
  f: (json: Record<string, unknown>) => Either.Either<Record<string, unknown>, E>,
  newFileMode?: number
): Effect.Effect<Either.Either<string, E>, McpScopeError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const fail = (message: string) => new McpScopeError({ path: file, message, reason: "io" })
    const current = yield* readJsonFile(file)
    if (current.problem !== undefined) return yield* fail(`${current.problem}; not overwriting it`)
    const next = f(current.json)
    if (Either.isLeft(next)) return Either.left(next.left)
    const dir = path.dirname(file)
    yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError((error) => fail(error.message)))
    const temp = path.join(dir, `.${path.basename(file)}.${crypto.randomUUID()}.tmp`)
    const existing = yield* Effect.option(fs.stat(file))
    const mode = Option.match(existing, { onNone: () => newFileMode, onSome: (info) => info.mode & 0o7777 })
    yield* fs.writeFileString(temp, `${JSON.stringify(next.right, null, 2)}\n`, { flag: "wx", mode: 0o600 }).pipe(
      Effect.zipRight(mode === undefined ? Effect.void : fs.chmod(temp, mode)),
      Effect.zipRight(fs.rename(temp, file)),
      Effect.mapError((error) => fail(error.message)),
      Effect.tapError(() => fs.remove(temp).pipe(Effect.ignore))
    )
    return Either.right(file)
  })

/**
 * The servers of each scope, before precedence and approval.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly user: ReadonlyArray<McpConfig.ServerConfig>
  /** `.mcp.json`'s servers; they run only once approved. */
  readonly project: ReadonlyArray<McpConfig.ServerConfig>
  readonly local: ReadonlyArray<McpConfig.ServerConfig>
  readonly dynamic: ReadonlyArray<McpConfig.ServerConfig>
  /** `.mcp.json` as read (absent with `--strict-mcp-config`). */
  readonly projectFile: { readonly path: string; readonly text: string } | undefined
  /** One line per bad file or entry. */
  readonly issues: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ResolveOptions {
  readonly cwd: string
  readonly stateDir: string
  /** `--mcp-config` values: file paths (relative to `cwd`) or inline JSON. */
  readonly files: ReadonlyArray<string>
  /** `--strict-mcp-config`: only `files`. */
  readonly strict: boolean
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

const serversOf = (
  json: unknown,
  source: string,
  field: string,
  scope: McpConfig.Scope,
  env: Readonly<Record<string, string | undefined>>
): McpConfig.Loaded => {
  if (json === undefined) return { servers: [], issues: [] }
  const loaded = McpConfig.parse(JSON.stringify({ mcpServers: json }), source, env, scope)
  return {
    servers: loaded.servers,
    issues: loaded.issues.map((issue) => issue.replace(`${source}: mcpServers`, `${source}: ${field}`))
  }
}

/**
 * Read every scope: the user's config file (user and this project's local
 * servers), `.mcp.json` and the `--mcp-config` values.
 *
 * @since 0.1.0
 * @category loading
 */
export const resolve = (options: ResolveOptions): Effect.Effect<Resolved, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const env = options.env ?? process.env
    const issues: Array<string> = []
    const dynamic = yield* McpConfig.load({ cwd: options.cwd, files: options.files, strict: true, env })
    issues.push(...dynamic.issues)
    if (options.strict) {
      return { user: [], project: [], local: [], dynamic: dynamic.servers, projectFile: undefined, issues }
    }
    const store = yield* readJsonFile(storePath(options.stateDir, path))
    if (store.problem !== undefined) issues.push(`${store.path}: ${store.problem}; its MCP servers are not used`)
    const key = projectKey(options.cwd, path)
    const projects = store.json["projects"]
    const entry = isRecord(projects) ? projects[key] : undefined
    const user = serversOf(store.json["mcpServers"], store.path, "mcpServers", "user", env)
    const local = serversOf(
      isRecord(entry) ? entry["mcpServers"] : undefined,
      store.path,
      `projects[${JSON.stringify(key)}].mcpServers`,
      "local",
      env
    )
    issues.push(...user.issues, ...local.issues)
    const projectPath = projectFilePath(options.cwd, path)
    const text = yield* fs.readFileString(projectPath).pipe(Effect.option)
    const project = text._tag === "Some"
      ? McpConfig.parse(text.value, projectPath, env, "project")
      : { servers: [], issues: [] }
    issues.push(...project.issues)
    return {
      user: user.servers,
      project: project.servers,
      local: local.servers,
      dynamic: dynamic.servers,
      projectFile: text._tag === "Some" ? { path: projectPath, text: text.value } : undefined,
      issues
    }
  })

/**
 * The servers that run: user, approved project, local and dynamic servers,
 * each name once with the highest-precedence scope's entry (dynamic > local >
 * project > user), then names that would collide once sanitised left out
 * (the higher-precedence one stays) with an issue each.
 *
 * @since 0.1.0
 * @category resolving
 */
export const merge = (
  resolved: Resolved,
  isApproved: (server: McpConfig.ServerConfig) => boolean
): { readonly servers: ReadonlyArray<McpConfig.ServerConfig>; readonly issues: ReadonlyArray<string> } => {
  const byName = new Map<string, McpConfig.ServerConfig>()
  const ordered = [
    ...resolved.user,
    ...resolved.project.filter(isApproved),
    ...resolved.local,
    ...resolved.dynamic
  ]
  // First appearance fixes the order; a later scope's entry replaces it.
  for (const server of ordered) byName.set(server.name, server)
  const winners = [...byName.values()]
  const rank = (server: McpConfig.ServerConfig) =>
    ["dynamic", "local", "project", "user"].indexOf(server.scope ?? "dynamic")
  const byPrefix = new Map<string, McpConfig.ServerConfig>()
  const issues: Array<string> = []
  for (const server of [...winners].sort((a, b) => rank(a) - rank(b))) {
    const prefix = McpServers.sanitize(server.name)
    const kept = byPrefix.get(prefix)
    if (kept === undefined) {
      byPrefix.set(prefix, server)
      continue
    }
    issues.push(
      `MCP servers "${kept.name}" (${describeScope(kept)}) and "${server.name}" (${describeScope(server)}) both ` +
        `name their tools mcp__${prefix}__…; "${server.name}" is not started (rename one of them)`
    )
  }
  const kept = new Set(byPrefix.values())
  return { servers: winners.filter((server) => kept.has(server)), issues }
}

/**
 * `local (/home/me/.switchyard/.switchyard.json)`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeScope = (server: McpConfig.ServerConfig): string =>
  `${server.scope ?? "dynamic"}: ${server.source}`

/**
 * Every configured server named `name`, one per scope (highest precedence
 * first), approved or not.
 *
 * @since 0.1.0
 * @category resolving
 */
export const find = (resolved: Resolved, name: string): ReadonlyArray<McpConfig.ServerConfig> =>
  [...resolved.dynamic, ...resolved.local, ...resolved.project, ...resolved.user].filter((s) => s.name === name)

/**
 * Names `mcp add` accepts: letters, digits, `-` and `_` (so a tool prefix is
 * the name itself).
 *
 * @since 0.1.0
 * @category validation
 */
export const isValidName = (name: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(name)

/**
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  readonly stateDir: string
  readonly projectDir: string
  readonly scope: WritableScope
}

const scopeFile = (options: WriteOptions, path: Path.Path) =>
  options.scope === "project" ? projectFilePath(options.projectDir, path) : storePath(options.stateDir, path)

/** The `mcpServers` object of a scope inside its file's JSON, and how to put a new one back. */
const serversIn = (json: Record<string, unknown>, options: WriteOptions, path: Path.Path) => {
  if (options.scope !== "local") {
    const servers = isRecord(json["mcpServers"]) ? json["mcpServers"] : {}
    return { servers, put: (next: Record<string, unknown>) => ({ ...json, mcpServers: next }) }
  }
  const key = projectKey(options.projectDir, path)
  const projects = isRecord(json["projects"]) ? json["projects"] : {}
  const project = isRecord(projects[key]) ? projects[key] : {}
  const servers = isRecord(project["mcpServers"]) ? project["mcpServers"] : {}
  return {
    servers,
    put: (next: Record<string, unknown>) => ({
      ...json,
      projects: { ...projects, [key]: { ...project, mcpServers: next } }
    })
  }
}

/**
 * Add (or replace) a server in a scope. `entry` is the JSON written, as in
 * `.mcp.json`; it is checked with `McpConfig.parse` first. Returns the file
 * written.
 *
 * @since 0.1.0
 * @category writing
 */
export const add = (
  options: WriteOptions & { readonly name: string; readonly entry: Record<string, unknown> }
): Effect.Effect<string, McpScopeError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const file = scopeFile(options, path)
    if (!isValidName(options.name)) {
      return yield* new McpScopeError({
        path: file,
        message: `"${options.name}" is not a valid server name: use letters, digits, "-" and "_" (at most 64)`,
        reason: "invalid"
      })
    }
    // Check the entry as it would be read (variables left unexpanded: they are expanded when it is used).
    const checked = McpConfig.parse(JSON.stringify({ mcpServers: { [options.name]: options.entry } }), file, {}, "user")
    const problem = checked.issues.find((issue) => !issue.includes("is not set and has no default"))
    if (problem !== undefined) return yield* new McpScopeError({ path: file, message: problem, reason: "invalid" })
    const written = yield* updateJsonFile(file, (json) => {
      const { put, servers } = serversIn(json, options, path)
      return Either.right(put({ ...servers, [options.name]: options.entry }))
    }, options.scope === "project" ? undefined : stateFileMode)
    return Either.getOrThrow(written)
  })

/**
 * Remove a server. Without a scope, the one scope that has it; a name in
 * several scopes needs the scope. Returns the scope and file changed.
 *
 * @since 0.1.0
 * @category writing
 */
export const remove = (options: {
  readonly stateDir: string
  readonly projectDir: string
  readonly name: string
  readonly scope: WritableScope | undefined
}): Effect.Effect<
  { readonly scope: WritableScope; readonly file: string },
  McpScopeError,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const holding: Array<WritableScope> = []
    for (const scope of options.scope === undefined ? writableScopes : [options.scope]) {
      const scoped = { ...options, scope }
      const file = yield* readJsonFile(scopeFile(scoped, path))
      if (Object.hasOwn(serversIn(file.json, scoped, path).servers, options.name)) holding.push(scope)
    }
    const where = scopeFile({ ...options, scope: options.scope ?? "local" }, path)
    if (holding.length === 0) {
      return yield* new McpScopeError({
        path: where,
        message: `No MCP server named "${options.name}" in ${
          options.scope === undefined ? "the local, project or user scope" : `the ${options.scope} scope`
        }`,
        reason: "missing"
      })
    }
    if (holding.length > 1) {
      return yield* new McpScopeError({
        path: where,
        message: `MCP server "${options.name}" is in several scopes (${holding.join(", ")}); ` +
          `say which with --scope ${holding.join("|")}`,
        reason: "ambiguous"
      })
    }
    const scope = holding[0]!
    const scoped = { ...options, scope }
    const written = yield* updateJsonFile(scopeFile(scoped, path), (json) => {
      const { put, servers } = serversIn(json, scoped, path)
      const { [options.name]: _removed, ...rest } = servers
      return Either.right(put(rest))
    })
    return { scope, file: Either.getOrThrow(written) }
  })
