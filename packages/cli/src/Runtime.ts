/**
 * What every command shares: the working directory, the settings files and
 * the permission options, turned into the Layer the engine runs on (built-in
 * and MCP tools, registry, result store, permission chain, hooks, shell
 * analysis and the Node platform). Every command's tools come from here.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Deferral from "@switchyard/core/Deferral"
import * as Footprint from "@switchyard/core/Footprint"
import * as HookRunner from "@switchyard/core/HookRunner"
import type * as Hooks from "@switchyard/core/Hooks"
import type * as Model from "@switchyard/core/Model"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as PermissionContext from "@switchyard/core/PermissionContext"
import type * as Permissions from "@switchyard/core/Permissions"
import * as Registry from "@switchyard/core/Registry"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as Results from "@switchyard/core/Results"
import type * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Settings from "@switchyard/core/Settings"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Builtins from "@switchyard/tools/Builtins"
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as nodePath from "node:path"
import * as readline from "node:readline/promises"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
import * as McpToolCache from "./internal/mcpToolCache.js"
import * as McpSetup from "./McpSetup.js"
import * as Output from "./Output.js"

/**
 * The options every command takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions {
  readonly cwd: string
  readonly settingsFiles: ReadonlyArray<string>
  readonly permissionMode: PermissionContext.PermissionMode | undefined
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  /** `--add-dir`: more directories the tools may work in. */
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
  readonly verbose: boolean
  /** `--mcp-config` values (files or inline JSON). */
  readonly mcpConfigFiles?: ReadonlyArray<string> | undefined
  /** `--strict-mcp-config`: ignore `.mcp.json`. */
  readonly strictMcpConfig?: boolean | undefined
  /** `--scheduling`: overrides the settings' `scheduling` (default `footprints`, SPEC §4.13). */
  readonly scheduling?: Footprint.Scheduling | undefined
  /** `--sandbox`: `sandbox.enabled` for this run. */
  readonly sandbox?: boolean | undefined
  /**
   * Unapproved `.mcp.json` servers: `ask` in a terminal (the default), `never`
   * ask (they stay pending), or `offline`: resolve no MCP server at all.
   */
  readonly mcpApproval?: "ask" | "never" | "offline" | undefined
}

/**
 * Split a `--allowed-tools` value like Claude Code does: commas or spaces
 * between rules, but not inside a rule's parentheses (`Bash(git log *)`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const splitRuleList = (value: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (const char of value) {
    if (char === "(") depth++
    if (char === ")") depth = Math.max(0, depth - 1)
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current.trim() !== "") out.push(current.trim())
      current = ""
    } else {
      current += char
    }
  }
  if (current.trim() !== "") out.push(current.trim())
  return out
}

/**
 * Settings and permissions resolved for a command.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prepared {
  readonly cwd: string
  readonly settings: Settings.Settings
  readonly permissions: PermissionContext.PermissionContext
  /** One line per settings problem (the rest of the settings still loaded). */
  readonly warnings: ReadonlyArray<string>
  /** The MCP servers to start (none when absent). */
  readonly mcp?: McpConfig.Loaded | undefined
  /** Every scope's MCP servers and the approval of the project's (`mcp list`, `/mcp`). */
  readonly mcpSetup?: McpSetup.Loaded | undefined
  /** The state directory (`$SWITCHYARD_HOME`, else `~/.switchyard`). */
  readonly stateDir?: string | undefined
  /** The executor's schedule: `--scheduling`, else the settings' `scheduling`, else `footprints`. */
  readonly scheduling: Footprint.Scheduling
  /** The `sandbox` settings, `--sandbox` applied. */
  readonly sandbox?: SandboxPort.SandboxSettings | undefined
}

/**
 * Load the settings files, add the command-line rules and pick the mode.
 * A missing `--settings` file or an invalid rule is bad input; a settings
 * file with invalid content is a warning naming the file and field.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepare = (
  options: CommonOptions
): Effect.Effect<Prepared, CliError.CliError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    const info = yield* Effect.either(fs.stat(cwd))
    if (info._tag === "Left" || info.right.type !== "Directory") {
      return yield* Effect.fail(CliError.badInput(`--cwd ${options.cwd}: not a directory`))
    }
    const extraFiles = options.settingsFiles.map((file) => path.resolve(cwd, file))
    for (const file of extraFiles) {
      if (!(yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* Effect.fail(CliError.badInput(`Settings file not found: ${file}`))
      }
    }
    const load = Settings.load({ cwd, extraFiles })
    // A project file's bypassPermissions is confirmed by the user in a terminal; without one it is ignored.
    const settings = yield* (process.stdin.isTTY === true && process.stderr.isTTY === true
      ? Effect.provideService(load, Settings.ModeConfirmation, terminalModeConfirmation)
      : load)
    const cliRules: Array<PermissionContext.PermissionRule> = []
    for (const [values, behavior, flag] of [
      [options.allowedTools, "allow", "--allowed-tools"],
      [options.disallowedTools, "deny", "--disallowed-tools"]
    ] as const) {
      for (const raw of values.flatMap(splitRuleList)) {
        const rule = PermissionContext.parseRule(raw, behavior, flag, cwd)
        if (rule === undefined) {
          return yield* Effect.fail(
            CliError.badInput(`${flag}: "${raw}" is not a permission rule (expected Tool or Tool(specifier))`)
          )
        }
        cliRules.push(rule)
      }
    }
    const addedDirectories: Array<string> = []
    for (const dir of options.additionalDirectories ?? []) {
      const resolved = path.resolve(cwd, dir)
      const stat = yield* Effect.either(fs.stat(resolved))
      if (stat._tag === "Left" || stat.right.type !== "Directory") {
        return yield* Effect.fail(CliError.badInput(`--add-dir ${dir}: not a directory`))
      }
      addedDirectories.push(resolved)
    }
    const permissions: PermissionContext.PermissionContext = {
      ...settings.permissions,
      mode: options.permissionMode ?? settings.permissions.mode,
      rules: [...settings.permissions.rules, ...cliRules],
      additionalDirectories: [...new Set([...settings.permissions.additionalDirectories, ...addedDirectories])]
    }
    const mcpFiles = options.mcpConfigFiles ?? []
    for (const file of mcpFiles) {
      if (file.trim().startsWith("{")) continue
      if (!(yield* fs.exists(path.resolve(cwd, file)).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* Effect.fail(CliError.badInput(`MCP config file not found: ${path.resolve(cwd, file)}`))
      }
    }
    const stateDir = yield* Settings.stateDirectory(yield* Settings.homeDirectory)
    const mcpSetup = options.mcpApproval === "offline" ? undefined : yield* McpSetup.load({
      cwd,
      stateDir,
      settings,
      files: mcpFiles,
      strict: options.strictMcpConfig ?? false,
      ask: options.mcpApproval ?? "ask"
    })
    const mcp: McpConfig.Loaded = { servers: mcpSetup?.servers ?? [], issues: mcpSetup?.warnings ?? [] }
    const warnings = [...settings.issues.map(Settings.formatIssue), ...mcp.issues]
    const configured = settings.values["scheduling"]
    const fromSettings = Schema.decodeUnknownOption(Footprint.Scheduling)(configured)
    if (configured !== undefined && Option.isNone(fromSettings)) {
      warnings.push(`settings: "scheduling" must be "greedy" or "footprints" (got ${JSON.stringify(configured)}); using footprints`)
    }
    const scheduling = options.scheduling ?? Option.getOrElse(fromSettings, (): Footprint.Scheduling => "footprints")
    const toolSearch = settings.env["ENABLE_TOOL_SEARCH"] ?? process.env["ENABLE_TOOL_SEARCH"]
    if (toolSearch !== undefined && toolSearch.trim() !== "" && Deferral.parsePolicy(toolSearch) === undefined) {
      warnings.push(`ENABLE_TOOL_SEARCH="${toolSearch}" is not true, false, auto or auto:N; deferring as for true`)
    }
    const sandbox = options.sandbox === true ? { ...settings.sandbox, enabled: true } : settings.sandbox
    return { cwd, settings, permissions, warnings, mcp, mcpSetup, stateDir, scheduling, sandbox }
  })

/** Asks on the terminal whether a project's settings may switch the permission prompts off. */
const terminalModeConfirmation: Settings.ModeConfirmation["Type"] = {
  confirm: (request) =>
    Effect.promise(async () => {
      const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
      try {
        const answer = await prompt.question(
          `${request.file} sets defaultMode "${request.mode}": every tool call in ${request.projectDir} would run ` +
            `without asking (deny and ask rules still apply). Trust this file for this project? [y/N] `
        )
        return /^y(es)?$/i.test(answer.trim())
      } finally {
        prompt.close()
      }
    })
}

/**
 * A fresh tool-use context for the prepared directory and permissions.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolUseContext = (prepared: Prepared): ToolUseContext.ToolUseContext =>
  ToolUseContext.make({ cwd: prepared.cwd, permissions: prepared.permissions })

/**
 * What the engine layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Registry.ToolRegistry
  | Tool.ToolPool
  | Results.ResultStore
  | Permissions.PermissionPolicy
  | Hooks.Hooks
  | ShellAnalysis.ShellAnalysis
  | McpServers.McpServers
  | NodeContext.NodeContext

/**
 * The engine on Node: built-in tools, registry, result store, permission
 * chain (asking through `prompt`), hooks from the settings, tree-sitter shell
 * analysis. Pass a model layer to enable the query loop and the Agent tool.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <ME = never, MR = never>(
  prepared: Prepared,
  options: {
    readonly model?: Layer.Layer<Model.LanguageModel, ME, MR> | undefined
    readonly prompt: Layer.Layer<PermissionChain.PermissionPrompt>
    /** The model's name, for where tool search is off and for `auto`'s context window (default: the environment's). */
    readonly modelName?: string | undefined
  }
): Layer.Layer<Services | Model.LanguageModel, ME | CliError.CliError, Exclude<MR, NodeContext.NodeContext>> => {
  const model = (options.model ?? Layer.empty) as Layer.Layer<Model.LanguageModel, ME, MR>
  const tools = toolsLayer(prepared, options.modelName).pipe(
    Layer.provideMerge(Results.layer),
    Layer.provideMerge(model)
  )
  const policy = PermissionChain.layer({ projectDir: prepared.cwd, howToAllow: cliHowToAllow })
  const hooks = HookRunner.layer({ hooks: prepared.settings.hooks, projectDir: prepared.cwd })
  return Layer.mergeAll(tools, policy, hooks, ShellCommand.layer, options.prompt).pipe(
    Layer.provideMerge(sandboxLayer(prepared)),
    Layer.provideMerge(NodeContext.layer)
  ) as Layer.Layer<Services | Model.LanguageModel, ME | CliError.CliError, Exclude<MR, NodeContext.NodeContext>>
}

/**
 * The bubblewrap sandbox from the settings (and `--sandbox`). The settings
 * files and the state directory stay read-only inside it. Enabled with
 * `sandbox.failIfUnavailable` and unusable here, it fails the command with
 * the reason; enabled and unusable otherwise, one warning and Bash runs
 * unsandboxed, with prompts.
 *
 * @since 0.1.0
 * @category layers
 */
export const sandboxLayer = (prepared: Prepared): Layer.Layer<SandboxPort.Sandbox, CliError.CliError> => {
  const settings = prepared.sandbox ?? prepared.settings.sandbox
  const protectedFiles = [
    ...prepared.settings.sources.map((source) => source.path),
    nodePath.join(prepared.cwd, ".switchyard", "settings.local.json"),
    process.env["SWITCHYARD_HOME"] ?? nodePath.join(process.env["HOME"] ?? "/", ".switchyard")
  ]
  return Layer.scoped(
    SandboxPort.Sandbox,
    Effect.gen(function*() {
      const service = yield* Sandbox.make({ settings, protectedFiles, permissions: prepared.permissions })
      if (settings.enabled) {
        const status = yield* service.status
        if (!status.available) yield* Output.warn(SandboxPort.describeStatus(status))
      }
      return service
    }).pipe(
      Effect.provide(Path.layer),
      Effect.mapError((error) => CliError.failure(error.message))
    )
  )
}

/**
 * How to allow a call, in the CLI's words: a settings rule, `--allowed-tools`
 * or `--permission-mode`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const cliHowToAllow = (suggestions: ReadonlyArray<string>): string => {
  const example = suggestions[0] ?? "Tool(specifier)"
  return `To allow it, add a rule such as ${JSON.stringify(example)} to permissions.allow in ` +
    `.switchyard/settings.json, pass --allowed-tools ${JSON.stringify(example)}, ` +
    `or choose another --permission-mode (acceptEdits, bypassPermissions).`
}

/**
 * A variable as the MCP layer and tool search read it: the settings' `env`
 * first (Claude Code applies it over the environment), then the process's.
 *
 * @since 0.1.0
 * @category config
 */
export const mcpVariable = (prepared: Prepared, name: string): string | undefined =>
  prepared.settings.env[name] ?? process.env[name]

/**
 * The registry's deferral (SPEC §4.3): `ENABLE_TOOL_SEARCH` from the
 * settings' `env` or the environment, off for a model without tool search
 * and behind a base URL that is not Anthropic's unless that variable says
 * otherwise; `auto` against the model's context window.
 *
 * @since 0.1.0
 * @category config
 */
export const registryOptions = (prepared: Prepared, modelName: string | undefined): Registry.Options => {
  const model = modelName ??
    [process.env["SWITCHYARD_MODEL"], process.env["ANTHROPIC_MODEL"]].find((m) => m !== undefined && m !== "")
  const raw = mcpVariable(prepared, "ENABLE_TOOL_SEARCH")
  const policy = Deferral.resolvePolicy({ raw, model, baseUrl: process.env["ANTHROPIC_BASE_URL"] })
  return { deferral: policy, contextWindowTokens: Deferral.contextWindow(model) }
}

/**
 * The tools of every command: the built-ins plus the configured MCP
 * servers' tools, and the registry that sees them (its deferral per
 * `registryOptions`, for `modelName` when given).
 *
 * @since 0.1.0
 * @category layers
 */
export const toolsLayer = (prepared: Prepared, modelName?: string | undefined) =>
  Layer.merge(Builtins.layer(), mcpLayer(prepared)).pipe(
    Layer.provideMerge(Registry.layer(registryOptions(prepared, modelName))),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * The built-in tools alone and a registry: what a speculation in the
 * interactive session (and the demo's) runs, built over the overlay's
 * `FileSystem` that `Speculation.start` provides.
 *
 * @since 0.1.0
 * @category layers
 */
export const builtinToolsLayer = Builtins.layer().pipe(
  Layer.provideMerge(Registry.layer()),
  Layer.provide(FetchHttpClient.layer)
)

/**
 * What `Speculation.start` needs from the program besides the tools: the
 * model, a result store, shell analysis, the sandbox (a speculation's Bash
 * runs only in it; default: bubblewrap with the sandbox settings off) and
 * the Node platform.
 *
 * @since 0.1.0
 * @category layers
 */
export const speculationEnvironment = <E, SE = never>(
  model: Layer.Layer<Model.LanguageModel, E>,
  sandbox: Layer.Layer<SandboxPort.Sandbox, SE> = Layer.orDie(Sandbox.layer()) as Layer.Layer<SandboxPort.Sandbox, SE>
) => Layer.mergeAll(model, Results.layer, ShellCommand.layer, sandbox).pipe(Layer.provideMerge(NodeContext.layer))

/**
 * The configured MCP servers as a Layer (the MCP SDK is loaded only when
 * there are some); a server that fails to connect is reported once on stderr.
 *
 * @since 0.1.0
 * @category layers
 */
export const mcpLayer = (
  prepared: Prepared,
  options: { readonly reportFailures?: boolean } = {}
): Layer.Layer<McpServers.McpServers, never, Tool.ToolPool | FileSystem.FileSystem | Path.Path> => {
  const servers = prepared.mcp?.servers ?? []
  const layer = McpServers.layer(servers, {
    env: Object.fromEntries(McpServers.VARIABLES.map((name) => [name, prepared.settings.env[name]])),
    onFailure: options.reportFailures === false
      ? undefined
      : (status) => Output.warn(`MCP server "${status.name}" failed to connect: ${status.error ?? "unknown error"}`)
  })
  const stateDir = prepared.stateDir
  if (servers.length === 0 || stateDir === undefined) return layer
  // Remember the tool names for completion scripts, which never start a server.
  return Layer.tap(layer, (context) =>
    Effect.flatMap(Context.get(context, McpServers.McpServers).servers, (statuses) =>
      McpToolCache.write(
        stateDir,
        prepared.cwd,
        Object.fromEntries(statuses.filter((s) => s.state === "connected").map((s) => [s.name, s.tools]))
      )))
}

/**
 * A tool pool on its own (for commands that only connect MCP servers).
 *
 * @since 0.1.0
 * @category layers
 */
export const toolPoolLayer: Layer.Layer<Tool.ToolPool> = Layer.effect(Tool.ToolPool, Tool.ToolPool.make)

/**
 * A prompt for where nobody can answer (no terminal): every ask is a denial
 * with a clear reason.
 *
 * @since 0.1.0
 * @category layers
 */
export const noPrompt = (reason: string): Layer.Layer<PermissionChain.PermissionPrompt> =>
  Layer.succeed(PermissionChain.PermissionPrompt, {
    ask: () => Effect.succeed({ answer: "unavailable" as const, reason })
  })

/**
 * What settings a command runs with, one line each: the files loaded (lowest
 * precedence first), the mode and the extra directories. For `--verbose` and
 * `/permissions`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const settingsSummary = (prepared: Prepared): ReadonlyArray<string> => [
  ...(prepared.settings.files.length === 0
    ? ["settings: no settings file found"]
    : prepared.settings.files.map((file) => `settings: loaded ${file.source.path} (${file.source.scope})`)),
  `permission mode: ${prepared.permissions.mode}`,
  ...prepared.permissions.additionalDirectories.map((dir) => `additional directory: ${dir}`)
]
