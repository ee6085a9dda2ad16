/**
 * What every command shares: the working directory, the settings files and
 * the permission options, turned into the Layer the engine runs on (built-in
 * and MCP tools, registry, result store, permission chain, hooks, shell
 * analysis and the Node platform). Every command's tools come from here.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Deferral from "@switchyard/core/Deferral"
import * as EditDistance from "@switchyard/core/EditDistance"
import * as Footprint from "@switchyard/core/Footprint"
import * as HookRunner from "@switchyard/core/HookRunner"
import * as Hooks from "@switchyard/core/Hooks"
import type * as Model from "@switchyard/core/Model"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as PermissionContext from "@switchyard/core/PermissionContext"
import * as Permissions from "@switchyard/core/Permissions"
import * as Registry from "@switchyard/core/Registry"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as SandboxedRoots from "@switchyard/core/SandboxedRoots"
import * as Results from "@switchyard/core/Results"
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
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
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
import * as McpToolCache from "./internal/mcpToolCache.js"
import * as SandboxedConfirmation from "./internal/sandboxedConfirmation.js"
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
  /** `--tools` values: which built-in tools exist (`""` none, `default` all; default all). */
  readonly tools?: ReadonlyArray<string> | undefined
  /** `--setting-sources`: which of user, project and local settings to read (comma-separated). */
  readonly settingSources?: string | undefined
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
  /** `--tools`: the built-in tools that exist (absent: all of them). */
  readonly builtinTools?: ReadonlyArray<string> | undefined
  /** The `sandbox` settings, `--sandbox` applied. */
  readonly sandbox?: SandboxPort.SandboxSettings | undefined
}

/**
 * The built-in tools `--tools` keeps: `default` (or nothing given) is all,
 * `""` none, otherwise the names listed (commas or spaces between them). An
 * unknown name is bad input with the closest one.
 *
 * @since 0.1.0
 * @category parsing
 */
export const builtinToolsOption = (
  values: ReadonlyArray<string> | undefined
): Effect.Effect<ReadonlyArray<string> | undefined, CliError.CliError> =>
  Effect.gen(function*() {
    if (values === undefined) return undefined
    const names = values.flatMap(splitRuleList)
    if (names.includes("default")) return undefined
    for (const name of names) {
      if (Builtins.names.includes(name)) continue
      const guess = Builtins.names.find((known) =>
        EditDistance.levenshtein(known.toLowerCase(), name.toLowerCase()) <= 2
      )
      return yield* Effect.fail(CliError.badInput(
        `--tools: "${name}" is not a built-in tool${guess === undefined ? "" : `; did you mean ${guess}?`} ` +
          `(the built-ins: ${Builtins.names.join(", ")})`
      ))
    }
    return names
  })

const settingScopes = ["user", "project", "local"] as const

/**
 * The scopes of `--setting-sources user,project,local`; an unknown one is bad input.
 *
 * @since 0.1.0
 * @category parsing
 */
export const settingSourcesOption = (
  value: string | undefined
): Effect.Effect<ReadonlyArray<(typeof settingScopes)[number]> | undefined, CliError.CliError> =>
  Effect.gen(function*() {
    if (value === undefined) return undefined
    const scopes = value.split(",").map((part) => part.trim()).filter((part) => part !== "")
    const unknown = scopes.find((scope) => !settingScopes.some((known) => known === scope))
    if (unknown !== undefined) {
      return yield* Effect.fail(
        CliError.badInput(`--setting-sources: "${unknown}" is not a settings source (use user, project, local)`)
      )
    }
    return settingScopes.filter((scope) => scopes.includes(scope))
  })

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
    const settingSources = yield* settingSourcesOption(options.settingSources)
    const builtinTools = yield* builtinToolsOption(options.tools)
    const load = Settings.load({ cwd, extraFiles, settingSources })
    // A project file's bypassPermissions is confirmed by the user in a terminal; without one it is ignored.
    const settings = yield* (process.stdin.isTTY === true && process.stderr.isTTY === true
      ? load.pipe(
        Effect.provideService(Settings.ModeConfirmation, terminalModeConfirmation),
        Effect.provideService(SandboxedRoots.Confirmation, SandboxedConfirmation.terminal)
      )
      : load)
    const cliRules: Array<PermissionContext.PermissionRule> = []
    for (
      const [values, behavior, flag] of [
        [options.allowedTools, "allow", "--allowed-tools"],
        [options.disallowedTools, "deny", "--disallowed-tools"]
      ] as const
    ) {
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
      warnings.push(
        `settings: "scheduling" must be "greedy" or "footprints" (got ${JSON.stringify(configured)}); using footprints`
      )
    }
    const scheduling = options.scheduling ?? Option.getOrElse(fromSettings, (): Footprint.Scheduling => "footprints")
    const toolSearch = settings.env["ENABLE_TOOL_SEARCH"] ?? process.env["ENABLE_TOOL_SEARCH"]
    if (toolSearch !== undefined && toolSearch.trim() !== "" && Deferral.parsePolicy(toolSearch) === undefined) {
      warnings.push(`ENABLE_TOOL_SEARCH="${toolSearch}" is not true, false, auto or auto:N; deferring as for true`)
    }
    const sandbox = options.sandbox === true ? { ...settings.sandbox, enabled: true } : settings.sandbox
    return { cwd, settings, permissions, warnings, mcp, mcpSetup, stateDir, scheduling, builtinTools, sandbox }
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
  | LivePermissions
  | Registry.ToolRegistry
  | Tool.ToolPool
  | Results.ResultStore
  | Permissions.PermissionPolicy
  | Hooks.Hooks
  | ShellAnalysis.ShellAnalysis
  | SandboxPort.Sandbox
  | McpServers.McpServers

/**
 * The permission rules the session has added so far ("yes, and don't ask
 * again" answers), for `/permissions`.
 *
 * @since 0.1.0
 * @category services
 */
export class LivePermissions extends Context.Tag("@switchyard/cli/Runtime/LivePermissions")<
  LivePermissions,
  { readonly sessionRules: Effect.Effect<ReadonlyArray<PermissionContext.PermissionRule>> }
>() {}

/**
 * The engine on Node: built-in tools (and `tools`, tools of the command's
 * own), registry, result store, permission chain (asking through `prompt`,
 * which may use the tools: a permission prompt tool), hooks from the
 * settings, tree-sitter shell analysis. Pass a model layer (the language
 * model, and the `Cost.Meter` counting it when it has one) to enable the
 * query loop and the Agent tool.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <MO = never, ME = never, MR = never>(
  prepared: Prepared,
  options: {
    readonly model?: Layer.Layer<MO, ME, MR> | undefined
    readonly prompt: Layer.Layer<PermissionChain.PermissionPrompt, never, Tool.ToolPool | Registry.ToolRegistry>
    /** The model's name, for where tool search is off and for `auto`'s context window (default: the environment's). */
    readonly modelName?: string | undefined
    readonly tools?: ReadonlyArray<Tool.Any> | undefined
  }
): Layer.Layer<Services | MO, ME | CliError.CliError, MR | NodeContext.NodeContext> => {
  const model = (options.model ?? Layer.empty) as Layer.Layer<MO, ME, MR>
  return Layer.scopedContext(build(prepared, { ...options, model }))
}

/**
 * `layer`'s services, built in one Layer: each sub-Layer built in turn into this Layer's scope, with its memo
 * map, in the context the graph of merged Layers this replaces gave it (so what a tool captures when it is
 * registered, the permission chain and the hooks see what they saw): the sandbox first, over the program's
 * context; the model, the result store, the registry (and the HTTP client) and then the built-in, the command's
 * own and the MCP servers' tools, in that order, over that and each other; the permission chain, the hooks and the shell
 * analysis over the program's context and the sandbox; the prompt over all of them. A Layer costs on every
 * start (a memo entry, a scope, fiber-ref diffs, and a fiber for each side of a merge): built as a graph, the
 * same services cost several times more (bench/REPORT.md, startup). What they acquire (MCP connections,
 * background shells) is released with the scope, in reverse order. The Node platform comes from the program
 * (main.ts provides it once): provided here again, it would be built again on every start.
 */
const build = <MO, ME, MR>(
  prepared: Prepared,
  options: {
    readonly model: Layer.Layer<MO, ME, MR>
    readonly prompt: Layer.Layer<PermissionChain.PermissionPrompt, never, Tool.ToolPool | Registry.ToolRegistry>
    readonly modelName?: string | undefined
    readonly tools?: ReadonlyArray<Tool.Any> | undefined
  }
): Effect.Effect<Context.Context<Services | MO>, ME | CliError.CliError, MR | NodeContext.NodeContext | Scope.Scope> =>
  Effect.gen(function*() {
    // The memo map this Layer is built with: a sub-Layer the command builds elsewhere too is built once.
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    const buildIn = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>, context: Context.Context<RIn>) =>
      Effect.provide(Layer.buildWithMemoMap(layer, memoMap, scope), context)
    const program = yield* Effect.context<MR | NodeContext.NodeContext>()
    const sandbox = Context.merge(program, yield* buildIn(sandboxLayer(prepared), program))
    const model = yield* buildIn(options.model, sandbox)
    const results = yield* buildIn(Results.layer, Context.merge(sandbox, model))
    const beforeRegistry = Context.merge(Context.merge(sandbox, model), results)
    const http = yield* buildIn(FetchHttpClient.layer, beforeRegistry)
    const registry = yield* buildIn(Registry.layer(registryOptions(prepared, options.modelName)), beforeRegistry)
    const forTools = Context.merge(Context.merge(beforeRegistry, registry), http)
    yield* buildIn(Builtins.layer(), forTools)
    // The command's own tools before the MCP servers' (in the merge, these registered while servers connected).
    for (const tool of options.tools ?? []) yield* buildIn(Tool.layer(tool), forTools)
    const mcp = yield* buildIn(mcpLayer(prepared), forTools)
    const chain = yield* Effect.provide(
      PermissionChain.make({ projectDir: prepared.cwd, howToAllow: cliHowToAllow }),
      sandbox
    )
    const hooks = yield* Effect.provide(
      HookRunner.make({ hooks: prepared.settings.hooks, projectDir: prepared.cwd }),
      sandbox
    )
    const engine = Context.merge(Context.merge(model, results), registry).pipe(
      Context.merge(mcp),
      Context.add(Permissions.PermissionPolicy, chain),
      Context.add(LivePermissions, chain),
      Context.add(Hooks.Hooks, hooks),
      Context.add(ShellAnalysis.ShellAnalysis, ShellCommand.service),
      Context.add(SandboxPort.Sandbox, Context.get(sandbox, SandboxPort.Sandbox))
    )
    const prompt = yield* buildIn(options.prompt, Context.merge(sandbox, engine))
    return Context.merge(engine, prompt)
  })

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
      const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
      const service = yield* Sandbox.make({
        settings,
        protectedFiles,
        permissions: prepared.permissions,
        // Where commands may write from now on, for the settings judged at the next start (SandboxedRoots).
        onWritableRoots: prepared.stateDir === undefined ?
          undefined :
          (roots) =>
            SandboxedRoots.record(prepared.stateDir!, roots).pipe(
              // Unrecorded, what the command writes below the root would count at the next start: it does not run.
              Effect.mapError((message) =>
                new SandboxPort.SandboxError({ message: `${message}; the command did not run in the sandbox` })
              ),
              Effect.provide(platform)
            )
      })
      if (settings.enabled) {
        const status = yield* service.status
        if (!status.available) yield* Output.warn(SandboxPort.describeStatus(status))
      }
      return service
    }).pipe(
      Effect.provide(Layer.merge(NodeFileSystem.layer, Path.layer)),
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
 * With `--tools`, the built-ins left out are never offered.
 *
 * @since 0.1.0
 * @category config
 */
export const registryOptions = (prepared: Prepared, modelName: string | undefined): Registry.Options => {
  const model = modelName ??
    [process.env["SWITCHYARD_MODEL"], process.env["ANTHROPIC_MODEL"]].find((m) => m !== undefined && m !== "")
  const raw = mcpVariable(prepared, "ENABLE_TOOL_SEARCH")
  const policy = Deferral.resolvePolicy({ raw, model, baseUrl: process.env["ANTHROPIC_BASE_URL"] })
  // `--tools`: the built-ins left out exist for nobody (the registry's special tools are never offered).
  const specialTools = prepared.builtinTools === undefined
    ? {}
    : { specialTools: Builtins.names.filter((name) => !prepared.builtinTools!.includes(name)) }
  return { deferral: policy, contextWindowTokens: Deferral.contextWindow(model), ...specialTools }
}

/**
 * The tools of every command: the built-ins plus the configured MCP
 * servers' tools, and the registry that sees them (its deferral per
 * `registryOptions`, for `modelName` when given).
 *
 * @since 0.1.0
 * @category layers
 */
export const toolsLayer = (
  prepared: Prepared,
  modelName?: string | undefined,
  own: ReadonlyArray<Tool.Any> = []
) =>
  Layer.mergeAll(Builtins.layer(), mcpLayer(prepared), ...own.map((tool) => Tool.layer(tool))).pipe(
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
  return Layer.tap(
    layer,
    (context) =>
      Effect.flatMap(Context.get(context, McpServers.McpServers).servers, (statuses) =>
        McpToolCache.write(
          stateDir,
          prepared.cwd,
          Object.fromEntries(statuses.filter((s) => s.state === "connected").map((s) => [s.name, s.tools]))
        ))
  )
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
