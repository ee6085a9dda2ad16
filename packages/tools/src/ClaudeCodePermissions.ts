/**
 * Claude Code's whole permission chain in one Layer, for embedders (issue
 * 18): the settings files of a project read the way `switchyard` reads them
 * (`~/.switchyard/settings.json`, `.claude/settings*.json`,
 * `.switchyard/settings*.json`, extra files), and from them the permission
 * rules and mode (`PermissionChain`), the command hooks (`HookRunner`), the
 * tree-sitter shell analysis the Bash rules need (`ShellCommand`) and the
 * bubblewrap sandbox when `sandbox.enabled` is set (`Sandbox`; it is always
 * there for speculation, which runs Bash in it whenever bubblewrap works).
 *
 * ```ts
 * const Engine = Layer.mergeAll(Builtins.layer(), ClaudeCodePermissions.layer({ cwd })).pipe(…)
 * ```
 *
 * The rules of the settings apply to every call, added to those of the
 * call's own context; the settings' `defaultMode` applies unless the context
 * sets another mode. Whom to ask is yours to provide: a
 * `PermissionChain.PermissionPrompt` service (without one, or in a process
 * without a terminal, an ask is a denial that says how to allow the call) and,
 * for mode `auto`, a `PermissionChain.PermissionClassifier`. Problems in the
 * settings files are logged as warnings; a broken deny rule still fails
 * closed.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as HookRunner from "@switchyard/core/HookRunner"
import type * as Hooks from "@switchyard/core/Hooks"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import * as Permissions from "@switchyard/core/Permissions"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as Settings from "@switchyard/core/Settings"
import type * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Sandbox from "./Sandbox.js"
import * as ShellCommand from "./ShellCommand.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The project directory: its settings files are read, and "always" answers are saved there. */
  readonly cwd: string
  /** More settings files, read last (like `--settings`). */
  readonly settingsFiles?: ReadonlyArray<string> | undefined
  /** Turn the sandbox on whatever the settings say. */
  readonly sandbox?: boolean | undefined
  /** The bubblewrap program (default `bwrap` on `PATH`). */
  readonly bwrap?: string | undefined
  /** The home directory for `~` (default `$HOME`). */
  readonly home?: string | undefined
  /** Where the user settings live (default `$SWITCHYARD_HOME`, else `~/.switchyard`). */
  readonly stateDir?: string | undefined
}

/**
 * What the layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Permissions.PermissionPolicy | Hooks.Hooks | ShellAnalysis.ShellAnalysis | SandboxPort.Sandbox

/**
 * The settings' permissions under a call's own: rules and directories add
 * up; the call's mode wins unless it is the default one.
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergePermissions = (
  settings: PermissionContext.PermissionContext,
  own: PermissionContext.PermissionContext
): PermissionContext.PermissionContext => ({
  mode: own.mode === "default" ? settings.mode : own.mode,
  rules: [...settings.rules, ...own.rules],
  additionalDirectories: Array.from(new Set([...settings.additionalDirectories, ...own.additionalDirectories]))
})

/**
 * Claude Code's chain — rules, modes, hooks, the shell analysis, the sandbox
 * when enabled — from the project's settings. Fails with
 * `SandboxUnavailable` when the sandbox is enabled with
 * `sandbox.failIfUnavailable` and cannot run here.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  Services,
  SandboxPort.SandboxUnavailable,
  FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const path = yield* Path.Path
      const cwd = path.resolve(options.cwd)
      const home = options.home ?? (yield* Settings.homeDirectory)
      const stateDir = options.stateDir ?? (yield* Settings.stateDirectory(home))
      const settings = yield* Settings.load({ cwd, home, stateDir, extraFiles: options.settingsFiles ?? [] })
      for (const issue of settings.issues) yield* Effect.logWarning(Settings.formatIssue(issue))
      const chain = yield* PermissionChain.make({ projectDir: cwd, home })
      const policy: Permissions.Service = {
        decide: (request) =>
          chain.decide({
            ...request,
            context: {
              ...request.context,
              permissions: mergePermissions(settings.permissions, request.context.permissions)
            }
          })
      }
      const sandbox = yield* Sandbox.make({
        settings: settings.sandbox,
        enabled: options.sandbox,
        bwrap: options.bwrap,
        home,
        permissions: settings.permissions,
        protectedFiles: [
          ...settings.sources.map((source) => source.path),
          Settings.localSettingsPath(cwd, path),
          stateDir
        ]
      })
      return Layer.mergeAll(
        Layer.succeed(Permissions.PermissionPolicy, policy),
        Layer.succeed(SandboxPort.Sandbox, sandbox),
        HookRunner.layer({ hooks: settings.hooks, projectDir: cwd }),
        ShellCommand.layer
      )
    })
  )
