/**
 * One MCP tool as a Switchyard tool: its name, schema, safety from its
 * annotations, its footprint (SPEC §4.13), its result limit, and its call.
 *
 * Footprints: a server's own state is one resource, `mcp:<server>`, which its
 * read-only tools read and its other tools write. A server that acts on the
 * working tree (`"footprint": "workspace"`, and by default a known
 * filesystem server) takes path footprints instead: every path-like argument
 * (a string under a key such as `path`, `paths`, `source` or
 * `destination`, and any absolute path) resolved and checked against the
 * server's allowed roots (for a filesystem server its directory arguments,
 * else the working directory), a relative one against the server process's
 * directory. When every path is inside a root, the call reads (read-only
 * tool) or reads and writes those paths; a read-only call without a path
 * reads the roots; anything else — a path outside the roots, a writing call
 * that names no path — writes `*`, a barrier. Over-declaring is safe (an
 * absolute-looking text is taken as a path); a relative path under a key not
 * in the list is the risk this heuristic takes, so a server whose tools name
 * files otherwise should keep `"footprint": "server"` and run with
 * `--scheduling greedy`.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Footprint from "@switchyard/core/Footprint"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import type * as McpConfig from "../McpConfig.js"
import type * as McpClient from "./mcpClient.js"
import * as Footprints from "./footprints.js"
import * as McpSchema from "./mcpSchema.js"

/** `mcp__<server>__<tool>`, with characters outside `[A-Za-z0-9_-]` as `_`. */
export const toolName = (server: string, tool: string): string => `mcp__${sanitize(server)}__${sanitize(tool)}`

/** A name as it appears in a tool name. */
export const sanitize = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_")

/** Calls a tool on its server. */
export type CallTool = (
  toolNameOnServer: string,
  qualified: string,
  input: unknown,
  context: Tool.CallContext<unknown>,
  /** Whether repeating the call is harmless (read-only or idempotent), so a lost connection may retry it. */
  repeatable: boolean,
  /** Whether the tool declares itself idempotent: the call then carries the journal's idempotency key. */
  idempotent: boolean
) => Effect.Effect<ReadonlyArray<Messages.ToolResultContentBlock>, Tool.ToolError>

const MAX_DESCRIPTION = 2_048

/**
 * The `_meta` key of a `tools/call` that carries the journal's idempotency key (SPEC §4.14): the same on every run
 * of the call, so a server can drop a repeat of a call it already did.
 */
export const IDEMPOTENCY_KEY_META = "io.switchyard/idempotency-key"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON Schema sent to the API: the server's, as a plain object schema. */
export const inputJsonSchema = (schema: unknown): Tool.JsonObjectSchema => {
  const record = isRecord(schema) ? schema : {}
  const { $schema: _schema, ...rest } = record
  return { ...rest, type: "object" } as Tool.JsonObjectSchema
}

/** `_meta["anthropic/maxResultSizeChars"]`: a positive whole number of characters, or nothing. */
const metaLimit = (meta: Record<string, unknown>): number | undefined => {
  const value = meta["anthropic/maxResultSizeChars"]
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined
}

/** Keys whose string values (or arrays of strings) are paths. */
const PATH_KEY = new RegExp(
  "^(path|paths|file|files|filename|filepath|file_path|dir|dirs|directory|directories|root|source|destination" +
    "|src|dest|target|from|to|old_path|new_path)$",
  "i"
)

/** Every path-like string of an input: under a path key, or absolute anywhere. */
export const pathArguments = (input: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  const visit = (value: unknown, underPathKey: boolean, depth: number) => {
    if (depth > 8) return
    if (typeof value === "string") {
      if (underPathKey || value.startsWith("/") || value.startsWith("~/")) out.push(value)
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, underPathKey, depth + 1)
      return
    }
    if (isRecord(value)) {
      for (const [key, child] of Object.entries(value)) {
        visit(child, PATH_KEY.test(key), depth + 1)
      }
    }
  }
  visit(input, false, 0)
  return out
}

/** The directories a workspace server may act in: a filesystem server's existing directory arguments, else `cwd`. */
const rootsOf = (
  config: McpConfig.ServerConfig,
  cwd: string
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const transport = config.transport
    const base = transport._tag === "stdio" && transport.cwd !== undefined
      ? path.resolve(process.cwd(), transport.cwd)
      : process.cwd()
    const candidates = transport._tag === "stdio"
      ? transport.args.filter((arg) => !arg.startsWith("-") && (arg.startsWith("/") || arg.startsWith(".")))
      : []
    const fs = yield* FileSystem.FileSystem
    const roots: Array<string> = []
    for (const candidate of candidates) {
      const absolute = yield* Footprints.canonical(path.resolve(base, candidate))
      // Its directory arguments (the script it runs is an argument too).
      const info = yield* Effect.option(fs.stat(absolute))
      if (info._tag === "Some" && info.value.type === "Directory") roots.push(absolute)
    }
    return roots.length > 0 ? roots : [yield* Footprints.canonical(cwd)]
  })

const inside = (path: Path.Path, root: string, target: string): boolean => {
  const relative = path.relative(root, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/** The footprint of a call to a workspace server (see the module's doc). */
export const workspaceFootprint = (
  config: McpConfig.ServerConfig,
  readOnly: boolean,
  input: unknown,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<Footprint.Footprint, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const roots = yield* rootsOf(config, context.cwd)
    const transport = config.transport
    // A relative path is the server's: its process runs in its `cwd`, else in ours.
    const base = transport._tag === "stdio" && transport.cwd !== undefined
      ? path.resolve(process.cwd(), transport.cwd)
      : process.cwd()
    const home = process.env["HOME"] ?? "/"
    const paths: Array<string> = []
    for (const raw of pathArguments(input)) {
      const expanded = raw === "~" ? home : raw.startsWith("~/") ? path.join(home, raw.slice(2)) : raw
      const resolved = yield* Footprints.canonical(path.resolve(base, expanded))
      if (!roots.some((root) => inside(path, root, resolved))) return Footprint.writesEverything
      paths.push(resolved)
    }
    // The tree is the server's state: calls on different files need not wait for each other.
    if (readOnly) return { reads: paths.length > 0 ? paths : roots.map(Footprint.subtree) }
    if (paths.length === 0) return Footprint.writesEverything
    return { reads: paths, writes: paths }
  })

/** The Switchyard tool for one tool of a server. */
export const make = (
  config: McpConfig.ServerConfig,
  definition: McpClient.McpTool,
  limits: { readonly maxResultChars: number },
  call: CallTool,
  /** Where the platform is available; without it a workspace server's calls write `*`. */
  provide: ProvidePlatform | undefined
): Tool.Any => {
  const name = toolName(config.name, definition.name)
  const annotations = definition.annotations ?? {}
  const meta = isRecord(definition._meta) ? definition._meta : {}
  const readOnly = annotations.readOnlyHint === true
  const repeatable = readOnly || annotations.idempotentHint === true
  const resource = Footprint.mcp(config.name)
  const destructive = annotations.destructiveHint === true
  const description = (definition.description ?? "").slice(0, MAX_DESCRIPTION)
  const hint = typeof meta["anthropic/searchHint"] === "string"
    ? meta["anthropic/searchHint"]
    : (description.split("\n", 1)[0] ?? "") || definition.title || definition.name
  return Tool.make(name, {
    description: description.length > 0 ? description : `${definition.name} (MCP server ${config.name})`,
    searchHint: hint.length > 120 ? `${hint.slice(0, 117)}...` : hint,
    input: McpSchema.fromJsonSchema(definition.inputSchema),
    inputJsonSchema: inputJsonSchema(definition.inputSchema),
    isMcp: true,
    alwaysLoad: config.alwaysLoad === true || meta["anthropic/alwaysLoad"] === true,
    // Claude Code runs MCP calls one by one; a read-only tool may run in parallel.
    isConcurrencySafe: () => readOnly,
    isReadOnly: () => readOnly,
    isDestructive: () => destructive,
    // A durable session (SPEC §4.14) runs an idempotent call again after a crash, with the same key.
    isIdempotent: () => annotations.idempotentHint === true,
    footprint: config.footprint === "workspace"
      ? (input, context) =>
        provide === undefined
          ? Footprint.writesEverything
          : provide(workspaceFootprint(config, readOnly, input, context))
      : () => (readOnly ? { reads: [resource] } : { writes: [resource] }),
    maxResultSizeChars: metaLimit(meta) ?? limits.maxResultChars,
    userFacingName: () => `${config.name} - ${definition.title ?? definition.name} (MCP)`,
    // MCP tools are judged by their own rules (mcp__server…), not as file paths.
    getPath: () => undefined,
    call: (input, context) =>
      call(definition.name, name, input, context, repeatable, annotations.idempotentHint === true),
    mapResult: (content: ReadonlyArray<Messages.ToolResultContentBlock>) => content
  }) as Tool.Any
}

/** Provides the platform (FileSystem, Path) a workspace footprint needs. */
export type ProvidePlatform = <A, E>(
  effect: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>
) => Effect.Effect<A, E>
