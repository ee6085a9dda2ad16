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
import * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Sandbox from "@switchyard/tools/Sandbox"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as nodePath from "node:path"
import * as readline from "node:readline/promises"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CliError from "./CliError.js"
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
  /** The configured MCP servers (none when absent). */
  readonly mcp?: McpConfig.Loaded | undefined
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
    const mcp = yield* McpConfig.load({ cwd, files: mcpFiles, strict: options.strictMcpConfig ?? false })
    const warnings = [...settings.issues.map(Settings.formatIssue), ...mcp.issues]
    const configured = settings.values["scheduling"]
    const fromSettings = Schema.decodeUnknownOption(Footprint.Scheduling)(configured)
    if (configured !== undefined && Option.isNone(fromSettings)) {
      warnings.push(`settings: "scheduling" must be "greedy" or "footprints" (got ${JSON.stringify(configured)}); using footprints`)
    }
    const scheduling = options.scheduling ?? Option.getOrElse(fromSettings, (): Footprint.Scheduling => "footprints")
    const sandbox = options.sandbox === true ? { ...settings.sandbox, enabled: true } : settings.sandbox
    return { cwd, settings, permissions, warnings, mcp, scheduling, sandbox }
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
  }
): Layer.Layer<Services | Model.LanguageModel, ME | CliError.CliError, Exclude<MR, NodeContext.NodeContext>> => {
  const model = (options.model ?? Layer.empty) as Layer.Layer<Model.LanguageModel, ME, MR>
  const tools = toolsLayer(prepared).pipe(
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
 * The tools of every command: the built-ins plus the configured MCP
 * servers' tools, and the registry that sees them.
 *
 * @since 0.1.0
 * @category layers
 */
export const toolsLayer = (prepared: Prepared) =>
  Layer.merge(Builtins.layer(), mcpLayer(prepared)).pipe(
    Layer.provideMerge(Registry.layer()),
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
): Layer.Layer<McpServers.McpServers, never, Tool.ToolPool> =>
  McpServers.layer(prepared.mcp?.servers ?? [], {
    onFailure: options.reportFailures === false
      ? undefined
      : (status) => Output.warn(`MCP server "${status.name}" failed to connect: ${status.error ?? "unknown error"}`)
  })

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
