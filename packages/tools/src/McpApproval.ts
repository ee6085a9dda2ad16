/**
 * Approval of a project's `.mcp.json` servers before they start (Claude
 * Code's "New MCP server found in .mcp.json"). A repository can name any
 * command as a server, so a project's servers run only once the user approved
 * them; the user's own servers (user and local scope, `--mcp-config`) need no
 * approval.
 *
 * A project server is decided, first match wins:
 * 1. `disabledMcpjsonServers` names it in any settings file → rejected (a
 *    list that cannot be read rejects every project server: fail closed);
 * 2. `enabledMcpjsonServers` names it, or `enableAllProjectMcpServers` is
 *    true, in a file the user controls — the user settings
 *    (`$SWITCHYARD_HOME/settings.json`), a local settings file, or a
 *    `--settings` file → approved. A project's shared settings
 *    (`.claude/settings.json`, `.switchyard/settings.json`) cannot approve the
 *    project's own servers: that is ignored, with a warning. Nor can a local
 *    file the repository ships (`isShared`, e.g. tracked by git);
 * 3. an answer remembered for this project and this `.mcp.json` content
 *    ("use" or "don't use"), or "use all" remembered for the project →
 *    that answer;
 * 4. the `Prompt` service, when there is one (a terminal) → the answer,
 *    remembered; without one → pending: not started.
 *
 * Names compare as their tool prefixes do (sanitised). Answers are kept in
 * the user's config file (`McpScopes.storePath`) under the project, keyed by
 * the SHA-256 of `.mcp.json`, so a changed file asks again;
 * `reset` forgets them.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Digest from "@switchyard/core/Digest"
import type * as Settings from "@switchyard/core/Settings"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as McpConfig from "./McpConfig.js"
import * as McpScopes from "./McpScopes.js"
import * as McpServers from "./McpServers.js"

/**
 * What the user answered for one server: use it, use it and every server of
 * this project from now on, or continue without it.
 *
 * @since 0.1.0
 * @category models
 */
export type Choice = "use" | "use-all" | "skip"

/**
 * @since 0.1.0
 * @category models
 */
export interface PromptRequest {
  readonly projectDir: string
  /** The `.mcp.json` path. */
  readonly file: string
  readonly server: McpConfig.ServerConfig
}

/**
 * Asks the user about a project server (the CLI asks in a terminal). Without
 * this service nobody can answer, and unapproved servers stay pending.
 *
 * @since 0.1.0
 * @category services
 */
export class Prompt extends Context.Tag("@switchyard/tools/McpApproval/Prompt")<
  Prompt,
  { readonly ask: (request: PromptRequest) => Effect.Effect<Choice> }
>() {}

/**
 * @since 0.1.0
 * @category models
 */
export type Status = "approved" | "rejected" | "pending"

/**
 * @since 0.1.0
 * @category models
 */
export interface Decision {
  readonly status: ReadonlyMap<string, Status>
  /** Why each one stands as it does (`enabledMcpjsonServers in /home/me/.switchyard/settings.json`). */
  readonly reasons: ReadonlyMap<string, string>
  /** One line per ignored setting or failure to remember an answer. */
  readonly issues: ReadonlyArray<string>
}

/**
 * The servers of a decision that are not approved.
 *
 * @since 0.1.0
 * @category getters
 */
export const pending = (decision: Decision): ReadonlyArray<string> =>
  [...decision.status].filter(([, status]) => status === "pending").map(([name]) => name)

/**
 * @since 0.1.0
 * @category getters
 */
export const isApproved = (decision: Decision) => (server: McpConfig.ServerConfig): boolean =>
  decision.status.get(server.name) === "approved"

/**
 * The warning for servers left pending without a terminal: it names them and
 * says how to approve them.
 *
 * @since 0.1.0
 * @category formatting
 */
export const pendingWarning = (file: string, names: ReadonlyArray<string>): string =>
  `${names.length === 1 ? "The MCP server" : "The MCP servers"} ${names.map((n) => `"${n}"`).join(", ")} in ${file} ` +
  `${names.length === 1 ? "was" : "were"} not started: a project's servers run only once you approve them. ` +
  `To approve, add "enabledMcpjsonServers": ${JSON.stringify(names)} (or "enableAllProjectMcpServers": true) to ` +
  `$SWITCHYARD_HOME/settings.json (~/.switchyard/settings.json), or run switchyard in a terminal once to be asked`

/**
 * @since 0.1.0
 * @category models
 */
export interface DecideOptions {
  readonly resolved: McpScopes.Resolved
  readonly settings: Settings.Settings
  readonly stateDir: string
  readonly projectDir: string
  /** Whether a local settings file came with the repository (then it is the project's, not the user's). */
  readonly isShared?: ((file: string) => Effect.Effect<boolean>) | undefined
}

const Remembered = Schema.Struct({
  enableAll: Schema.optional(Schema.Boolean),
  files: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      enabled: Schema.optional(Schema.Array(Schema.String)),
      disabled: Schema.optional(Schema.Array(Schema.String))
    })
  }))
})
type Remembered = typeof Remembered.Type

const decodeRemembered = Schema.decodeUnknownOption(Remembered)

/** The key under `projects[<dir>]` where answers are kept. */
const CHOICES_KEY = "mcpjsonChoices"

const digestOf = (text: string): string => Digest.sha256(text)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const projectEntry = (json: Record<string, unknown>, key: string): Record<string, unknown> => {
  const projects = json["projects"]
  const entry = isRecord(projects) ? projects[key] : undefined
  return isRecord(entry) ? entry : {}
}

const withProjectEntry = (
  json: Record<string, unknown>,
  key: string,
  entry: Record<string, unknown>
): Record<string, unknown> => {
  const projects = isRecord(json["projects"]) ? json["projects"] : {}
  return { ...json, projects: { ...projects, [key]: entry } }
}

/**
 * Decide every project server of `resolved`, asking through `Prompt` when it
 * is provided.
 *
 * @since 0.1.0
 * @category deciding
 */
export const decide = (options: DecideOptions): Effect.Effect<Decision, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const servers = options.resolved.project
    const projectFile = options.resolved.projectFile
    const status = new Map<string, Status>()
    const reasons = new Map<string, string>()
    const issues: Array<string> = []
    if (servers.length === 0 || projectFile === undefined) return { status, reasons, issues }
    const path = yield* Path.Path
    const key = (name: string) => McpServers.sanitize(name)

    // 1 and 2: the settings files.
    const disabledBy = new Map<string, string>()
    let disabledAll: string | undefined
    const enabledBy = new Map<string, string>()
    let enabledAll: string | undefined
    for (const file of options.settings.files) {
      const approval = file.mcpApproval
      if (approval === undefined) continue
      const where = file.source.path
      if (approval.disabled === "all") disabledAll ??= `${where} (disabledMcpjsonServers could not be read)`
      else for (const name of approval.disabled ?? []) disabledBy.set(key(name), `disabledMcpjsonServers in ${where}`)
      const approves = approval.enableAll === true || (approval.enabled ?? []).length > 0
      if (!approves) continue
      const shared = file.source.scope === "project" ||
        (file.source.scope === "local" && options.isShared !== undefined && (yield* options.isShared(where)))
      if (shared) {
        issues.push(
          `${where}: ${approval.enableAll === true ? "enableAllProjectMcpServers" : "enabledMcpjsonServers"}: ` +
            "a project's own settings cannot approve its MCP servers, so this is ignored; approve them in " +
            "$SWITCHYARD_HOME/settings.json or a local settings file of yours, or when asked in a terminal"
        )
        continue
      }
      if (approval.enableAll === true) enabledAll ??= `enableAllProjectMcpServers in ${where}`
      for (const name of approval.enabled ?? []) enabledBy.set(key(name), `enabledMcpjsonServers in ${where}`)
    }

    // 3: remembered answers.
    const storePath = McpScopes.storePath(options.stateDir, path)
    const store = yield* McpScopes.readJsonFile(storePath)
    const projectKey = McpScopes.projectKey(options.projectDir, path)
    const remembered: Remembered = Option.getOrElse(
      decodeRemembered(projectEntry(store.json, projectKey)[CHOICES_KEY]),
      (): Remembered => ({})
    )
    const digest = digestOf(projectFile.text)
    const forFile = remembered.files?.[digest] ?? {}
    const rememberedEnabled = new Set((forFile.enabled ?? []).map(key))
    const rememberedDisabled = new Set((forFile.disabled ?? []).map(key))

    const undecided: Array<McpConfig.ServerConfig> = []
    for (const server of servers) {
      const k = key(server.name)
      const decided: readonly [Status, string] | undefined = disabledAll !== undefined
        ? ["rejected", disabledAll]
        : disabledBy.has(k)
        ? ["rejected", disabledBy.get(k)!]
        : enabledBy.has(k)
        ? ["approved", enabledBy.get(k)!]
        : enabledAll !== undefined
        ? ["approved", enabledAll]
        : rememberedDisabled.has(k)
        ? ["rejected", "you chose not to use it"]
        : rememberedEnabled.has(k)
        ? ["approved", "you approved it"]
        : remembered.enableAll === true
        ? ["approved", "you approved every server of this project"]
        : undefined
      if (decided === undefined) {
        undecided.push(server)
        continue
      }
      status.set(server.name, decided[0])
      reasons.set(server.name, decided[1])
    }

    // 4: ask.
    const prompt = yield* Effect.serviceOption(Prompt)
    if (undecided.length === 0 || Option.isNone(prompt)) {
      for (const server of undecided) {
        status.set(server.name, "pending")
        reasons.set(server.name, "not approved yet")
      }
      return { status, reasons, issues }
    }
    const enabled = new Set(forFile.enabled ?? [])
    const disabled = new Set(forFile.disabled ?? [])
    let all = false
    for (const server of undecided) {
      const choice: Choice = all
        ? "use-all"
        : yield* prompt.value.ask({ projectDir: options.projectDir, file: projectFile.path, server })
      if (choice === "use-all") all = true
      if (choice === "skip") disabled.add(server.name)
      else enabled.add(server.name)
      status.set(server.name, choice === "skip" ? "rejected" : "approved")
      reasons.set(server.name, choice === "skip" ? "you chose not to use it" : "you approved it")
    }
    const next: Remembered = {
      ...remembered,
      ...(all ? { enableAll: true } : {}),
      files: { ...remembered.files, [digest]: { enabled: [...enabled], disabled: [...disabled] } }
    }
    const written = yield* Effect.either(
      McpScopes.updateJsonFile(
        storePath,
        (json) =>
          Either.right(withProjectEntry(json, projectKey, { ...projectEntry(json, projectKey), [CHOICES_KEY]: next })),
        McpScopes.stateFileMode
      )
    )
    if (Either.isLeft(written)) {
      issues.push(
        `${written.left.path}: cannot remember your MCP choices: ${written.left.message}; you will be asked again`
      )
    }
    return { status, reasons, issues }
  })

/**
 * Forget the answers given for a project's servers (`switchyard mcp
 * reset-project-choices`). Returns whether there were any.
 *
 * @since 0.1.0
 * @category writing
 */
export const reset = (options: {
  readonly stateDir: string
  readonly projectDir: string
}): Effect.Effect<boolean, McpScopes.McpScopeError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const storePath = McpScopes.storePath(options.stateDir, path)
    const key = McpScopes.projectKey(options.projectDir, path)
    const current = yield* McpScopes.readJsonFile(storePath)
    if (!Object.hasOwn(projectEntry(current.json, key), CHOICES_KEY)) return false
    yield* McpScopes.updateJsonFile(storePath, (json) => {
      const { [CHOICES_KEY]: _forgotten, ...rest } = projectEntry(json, key)
      return Either.right(withProjectEntry(json, key, rest))
    })
    return true
  })
