/**
 * `switchyard mcp …`, Claude Code's `claude mcp` commands:
 *
 * - `list`: every configured server with its scope, connected or failed (and
 *   why) and its tool count; a project server that is not approved is listed
 *   as such and not started;
 * - `get NAME`: its scope, status, transport and command line or URL;
 * - `add [--scope S] [--transport T] [--env K=V] [--header "K: V"] NAME --
 *   COMMAND ARGS…` or `add … NAME URL`; `add-json NAME JSON`;
 * - `remove NAME [--scope S]`;
 * - `reset-project-choices`: forget the answers given for this project's
 *   `.mcp.json` servers.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Settings from "@switchyard/core/Settings"
import * as McpApproval from "@switchyard/tools/McpApproval"
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpScopes from "@switchyard/tools/McpScopes"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CliError from "./CliError.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly json: boolean
}

/**
 * One line of `mcp list`: a started server's status, or why a configured one
 * was not started.
 *
 * @since 0.1.0
 * @category models
 */
export interface Row {
  readonly name: string
  readonly scope: McpConfig.Scope
  readonly source: string
  readonly transport: McpConfig.Transport["_tag"]
  readonly status: McpServers.ServerStatus["state"] | "not-approved" | "rejected"
  readonly error: string | undefined
  readonly tools: number
}

/** Connect the servers the command would start and read their statuses. */
const connect = (servers: ReadonlyArray<McpConfig.ServerConfig>) =>
  Effect.scoped(
    Effect.flatMap(McpServers.McpServers, (service) => service.servers).pipe(
      Effect.provide(McpServers.layer(servers).pipe(Layer.provide(Runtime.toolPoolLayer)))
    )
  )

const rows = (prepared: Runtime.Prepared): Effect.Effect<ReadonlyArray<Row>> =>
  Effect.gen(function*() {
    const setup = prepared.mcpSetup
    const servers = prepared.mcp?.servers ?? []
    const statuses = yield* connect(servers)
    const scopeOf = new Map(servers.map((s) => [s.name, s.scope ?? "dynamic"] as const))
    const started: Array<Row> = statuses.map((s) => ({
      name: s.name,
      scope: scopeOf.get(s.name) ?? "dynamic",
      source: s.source,
      transport: s.transport,
      status: s.state,
      error: s.error,
      tools: s.tools.length
    }))
    const notStarted: Array<Row> = (setup?.resolved.project ?? [])
      .filter((server) => setup?.decision.status.get(server.name) !== "approved")
      .filter((server) => !servers.some((s) => s.name === server.name))
      .map((server) => {
        const rejected = setup?.decision.status.get(server.name) === "rejected"
        return {
          name: server.name,
          scope: "project",
          source: server.source,
          transport: server.transport._tag,
          status: rejected ? "rejected" : "not-approved",
          error: rejected
            ? `not used: ${setup?.decision.reasons.get(server.name) ?? "rejected"}`
            : "not started until you approve it (enabledMcpjsonServers in $SWITCHYARD_HOME/settings.json, " +
              "or answer when asked in a terminal)",
          tools: 0
        }
      })
    return [...started, ...notStarted]
  })

/**
 * `switchyard mcp list [--json]`.
 *
 * @since 0.1.0
 * @category running
 */
export const list = (options: Options) =>
  Effect.gen(function*() {
    // Listing never asks: a project server that is not approved is shown as such.
    const prepared = yield* Runtime.prepare({ ...options, mcpApproval: "never" })
    for (const warning of prepared.warnings) {
      // The table says the same about servers left out, with how to approve them.
      if (!warning.includes("run only once you approve them")) yield* Output.warn(warning)
    }
    const all = yield* rows(prepared)
    if (all.length === 0) {
      if (options.json) return yield* Output.line("[]")
      return yield* Output.line(
        "No MCP servers configured (.mcp.json, `switchyard mcp add`, or --mcp-config FILE)."
      )
    }
    if (options.json) {
      return yield* Output.line(JSON.stringify(
        all.map((r) => ({
          name: r.name,
          scope: r.scope,
          source: r.source,
          transport: r.transport,
          status: r.status,
          error: r.error ?? null,
          tools: r.tools
        })),
        null,
        2
      ))
    }
    for (const r of all) yield* Output.line(rowText(r))
  })

const stateText = (status: Row["status"]): string =>
  status === "connected"
    ? Output.paint("green", "connected")
    : status === "not-approved" || status === "pending"
    ? Output.paint("yellow", status === "pending" ? "pending" : "not approved")
    : status === "needs-auth"
    ? Output.paint("yellow", "needs auth")
    : Output.paint("red", status)

const rowText = (r: Row): string => {
  const detail = r.status === "connected" ? `${r.tools} tool${r.tools === 1 ? "" : "s"}` : r.error ?? "unknown error"
  return `${Output.paint("bold", r.name)} ${stateText(r.status)} · ${r.transport} · ${r.scope} · ${detail}`
}

const shadowed = (found: ReadonlyArray<McpConfig.ServerConfig>, chosen: McpConfig.ServerConfig) =>
  found.filter((s) => s !== chosen).map((s) => s.scope ?? "dynamic").join(", ")

const scopeTitle: Record<McpConfig.Scope, string> = {
  local: "Local config (private to you in this project)",
  project: "Project config (shared via .mcp.json)",
  user: "User config (available in all your projects)",
  dynamic: "Command line (--mcp-config)"
}

/**
 * `switchyard mcp get NAME`: the server as it resolves here (the
 * highest-precedence scope), its status (started to check, unless it is a
 * project server that is not approved) and how it is run.
 *
 * @since 0.1.0
 * @category running
 */
export const get = (options: Options & { readonly name: string }) =>
  Effect.gen(function*() {
    const prepared = yield* Runtime.prepare({ ...options, mcpApproval: "never" })
    const setup = prepared.mcpSetup
    const found = setup === undefined ? [] : McpScopes.find(setup.resolved, options.name)
    const chosen = prepared.mcp?.servers.find((s) => s.name === options.name) ?? found[0]
    if (chosen === undefined) {
      return yield* Effect.fail(
        CliError.badInput(`No MCP server named "${options.name}" is configured here (see \`switchyard mcp list\`)`)
      )
    }
    const started = prepared.mcp?.servers.some((s) => s === chosen) ?? false
    const status = started
      ? (yield* connect([chosen]))[0]
      : undefined
    const scope = chosen.scope ?? "dynamic"
    const statusText = status === undefined
      ? setup?.decision.status.get(chosen.name) === "rejected"
        ? `not used (${setup.decision.reasons.get(chosen.name) ?? "rejected"})`
        : "not approved: not started (enabledMcpjsonServers in $SWITCHYARD_HOME/settings.json, or answer when asked)"
      : status.state === "connected"
      ? `connected (${status.tools.length} tools)`
      : `${status.state}: ${status.error ?? "unknown error"}`
    if (options.json) {
      return yield* Output.line(JSON.stringify(
        {
          name: chosen.name,
          scope,
          source: chosen.source,
          status: status?.state ??
            (setup?.decision.status.get(chosen.name) === "rejected" ? "rejected" : "not-approved"),
          error: status?.error ?? null,
          transport: chosen.transport._tag,
          ...(chosen.transport._tag === "stdio"
            ? { command: chosen.transport.command, args: chosen.transport.args, env: chosen.transport.env }
            : { url: chosen.transport.url, headers: chosen.transport.headers })
        },
        null,
        2
      ))
    }
    const t = chosen.transport
    const lines = [
      `${chosen.name}:`,
      `  Scope: ${scopeTitle[scope]}`,
      `  Source: ${chosen.source}`,
      `  Status: ${statusText}`,
      `  Type: ${t._tag}`,
      ...(t._tag === "stdio"
        ? [
          `  Command: ${t.command}`,
          `  Args: ${t.args.join(" ")}`,
          ...(Object.keys(t.env).length === 0
            ? []
            : ["  Environment:", ...Object.keys(t.env).map((key) => `    ${key}=…`)])
        ]
        : [
          `  URL: ${t.url}`,
          ...(Object.keys(t.headers).length === 0
            ? []
            : ["  Headers:", ...Object.keys(t.headers).map((k) => `    ${k}: …`)])
        ]),
      ...(found.length > 1
        ? [`  Also configured in: ${shadowed(found, chosen)} (shadowed)`]
        : []),
      "",
      scope === "dynamic"
        ? "It comes from --mcp-config; it is not stored anywhere."
        : `To remove this server, run: switchyard mcp remove ${JSON.stringify(chosen.name)} --scope ${scope}`
    ]
    for (const line of lines) yield* Output.line(line)
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface AddOptions {
  readonly cwd: string
  readonly name: string
  /** The command (stdio) or the URL (http, sse). */
  readonly commandOrUrl: string
  readonly args: ReadonlyArray<string>
  readonly scope: McpScopes.WritableScope
  readonly transport: "stdio" | "http" | "sse" | undefined
  readonly env: ReadonlyArray<string>
  readonly headers: ReadonlyArray<string>
}

const stateDirectory = Effect.flatMap(Settings.homeDirectory, Settings.stateDirectory)

const scopeFailure = (error: McpScopes.McpScopeError) => {
  const message = `${error.message}${error.message.includes(error.path) ? "" : ` (${error.path})`}`
  return error.reason === "io" ? CliError.failure(message) : CliError.badInput(message)
}

const parsePairs = (
  values: ReadonlyArray<string>,
  separator: "=" | ":",
  flag: string
): Effect.Effect<Record<string, string>, CliError.CliError> =>
  Effect.gen(function*() {
    const out: Record<string, string> = {}
    for (const value of values) {
      const at = value.indexOf(separator)
      const key = at <= 0 ? "" : value.slice(0, at).trim()
      if (key === "" || /\s/.test(key)) {
        return yield* Effect.fail(CliError.badInput(
          separator === "="
            ? `${flag} ${JSON.stringify(value)}: expected KEY=VALUE (e.g. ${flag} API_KEY=secret)`
            : `${flag} ${JSON.stringify(value)}: expected "Name: value" (e.g. ${flag} "Authorization: Bearer TOKEN")`
        ))
      }
      out[key] = value.slice(at + 1).trim()
    }
    return out
  })

const written = (file: string, scope: McpScopes.WritableScope, cwd: string) =>
  Output.line(`File modified: ${file}${scope === "local" ? ` [project: ${cwd}]` : ""}`)

/**
 * `switchyard mcp add`.
 *
 * @since 0.1.0
 * @category running
 */
export const add = (options: AddOptions) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    const looksLikeUrl = /^https?:\/\//i.test(options.commandOrUrl)
    const transport = options.transport ?? (looksLikeUrl && options.args.length === 0 ? "http" : "stdio")
    const env = yield* parsePairs(options.env, "=", "--env")
    const headers = yield* parsePairs(options.headers, ":", "--header")
    if (transport === "stdio" && options.headers.length > 0) {
      return yield* Effect.fail(CliError.badInput("--header is for --transport http or sse, not stdio"))
    }
    if (transport !== "stdio") {
      if (options.args.length > 0) {
        return yield* Effect.fail(
          CliError.badInput(`an ${transport} server takes a URL and no arguments (got ${options.args.join(" ")})`)
        )
      }
      if (!looksLikeUrl) {
        return yield* Effect.fail(CliError.badInput(
          `--transport ${transport} needs a URL such as https://example.com/mcp, not ${options.commandOrUrl}`
        ))
      }
      if (options.env.length > 0) {
        return yield* Effect.fail(CliError.badInput(`--env is for stdio servers, not ${transport}`))
      }
    }
    const entry: Record<string, unknown> = transport === "stdio"
      ? { type: "stdio", command: options.commandOrUrl, args: [...options.args], env }
      : { type: transport, url: options.commandOrUrl, ...(Object.keys(headers).length > 0 ? { headers } : {}) }
    const file = yield* McpScopes.add({
      stateDir: yield* stateDirectory,
      projectDir: cwd,
      scope: options.scope,
      name: options.name,
      entry
    }).pipe(Effect.mapError(scopeFailure))
    const what = transport === "stdio"
      ? `with command: ${[options.commandOrUrl, ...options.args].join(" ")}`
      : `with URL: ${options.commandOrUrl}`
    yield* Output.line(`Added ${transport} MCP server ${options.name} ${what} to ${options.scope} config`)
    yield* written(file, options.scope, cwd)
  })

/**
 * `switchyard mcp add-json NAME JSON`.
 *
 * @since 0.1.0
 * @category running
 */
export const addJson = (options: {
  readonly cwd: string
  readonly name: string
  readonly json: string
  readonly scope: McpScopes.WritableScope
}) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    let entry: unknown
    try {
      entry = JSON.parse(options.json)
    } catch (error) {
      return yield* Effect.fail(
        CliError.badInput(`the JSON is not valid (${error instanceof Error ? error.message : String(error)})`)
      )
    }
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      return yield* Effect.fail(
        CliError.badInput(`expected a server object such as {"type":"http","url":"https://…"}`)
      )
    }
    const file = yield* McpScopes.add({
      stateDir: yield* stateDirectory,
      projectDir: cwd,
      scope: options.scope,
      name: options.name,
      entry: entry as Record<string, unknown>
    }).pipe(Effect.mapError(scopeFailure))
    const type = (entry as Record<string, unknown>)["type"] ?? "stdio"
    yield* Output.line(`Added ${String(type)} MCP server ${options.name} to ${options.scope} config`)
    yield* written(file, options.scope, cwd)
  })

/**
 * `switchyard mcp remove NAME [--scope S]`.
 *
 * @since 0.1.0
 * @category running
 */
export const remove = (options: {
  readonly cwd: string
  readonly name: string
  readonly scope: McpScopes.WritableScope | undefined
}) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    const removed = yield* McpScopes.remove({
      stateDir: yield* stateDirectory,
      projectDir: cwd,
      name: options.name,
      scope: options.scope
    }).pipe(Effect.mapError(scopeFailure))
    yield* Output.line(`Removed MCP server ${options.name} from ${removed.scope} config`)
    yield* written(removed.file, removed.scope, cwd)
  })

/**
 * `switchyard mcp reset-project-choices`: forget the answers given for this
 * project's `.mcp.json` servers, so they are asked about again. Approvals in
 * settings files stay; they are named.
 *
 * @since 0.1.0
 * @category running
 */
export const resetProjectChoices = (options: { readonly cwd: string }) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const cwd = path.resolve(options.cwd)
    const stateDir = yield* stateDirectory
    const had = yield* McpApproval.reset({ stateDir, projectDir: cwd }).pipe(Effect.mapError(scopeFailure))
    yield* Output.line(
      had
        ? "All project-scoped (.mcp.json) server approvals and rejections have been reset.\n" +
          "You will be asked about them again the next time switchyard starts in this project."
        : "No approvals or rejections were remembered for this project's .mcp.json servers."
    )
    const settings = yield* Settings.load({ cwd, stateDir })
    for (const file of settings.files) {
      const approval = file.mcpApproval
      if (approval === undefined) continue
      if (!(yield* fs.exists(file.source.path).pipe(Effect.orElseSucceed(() => false)))) continue
      const keys = [
        approval.enableAll !== undefined ? "enableAllProjectMcpServers" : undefined,
        approval.enabled !== undefined ? "enabledMcpjsonServers" : undefined,
        approval.disabled !== undefined ? "disabledMcpjsonServers" : undefined
      ].filter((key): key is string => key !== undefined)
      yield* Output.line(`Still set in ${file.source.path}: ${keys.join(", ")} (edit that file to change them)`)
    }
  })
