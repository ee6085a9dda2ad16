/**
 * The MCP servers a command runs with: every scope resolved
 * (`McpScopes`), a project's `.mcp.json` servers only once approved
 * (`McpApproval`), asked about in a terminal ("New MCP server found in
 * .mcp.json") and otherwise left out with one warning that names them and
 * says how to approve them. A local settings file tracked by git came with
 * the repository, so it cannot approve the repository's servers.
 *
 * @since 0.1.0
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as Command from "@effect/platform/Command"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Digest from "@switchyard/core/Digest"
import * as SandboxedRoots from "@switchyard/core/SandboxedRoots"
import type * as Settings from "@switchyard/core/Settings"
import * as McpApproval from "@switchyard/tools/McpApproval"
import type * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpScopes from "@switchyard/tools/McpScopes"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as readline from "node:readline/promises"
import * as SandboxedConfirmation from "./internal/sandboxedConfirmation.js"

/**
 * What `load` found.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  /** The servers to start, in precedence order. */
  readonly servers: ReadonlyArray<McpConfig.ServerConfig>
  readonly resolved: McpScopes.Resolved
  readonly decision: McpApproval.Decision
  /** Warnings for stderr: bad entries, ignored approvals, pending servers, name collisions. */
  readonly warnings: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  readonly cwd: string
  readonly stateDir: string
  readonly settings: Settings.Settings
  readonly files: ReadonlyArray<string>
  readonly strict: boolean
  /** `ask`: in a terminal, ask about unapproved project servers; `never`: leave them pending. */
  readonly ask: "ask" | "never"
}

const terminalAvailable = () => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * Resolve the scopes and decide the project's servers.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (options: LoadOptions): Effect.Effect<Loaded, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const found = yield* McpScopes.resolve({
      cwd: options.cwd,
      stateDir: options.stateDir,
      files: options.files,
      strict: options.strict
    })
    const judgeProjectFile = SandboxedRoots.judge(
      options.stateDir,
      found.projectFile === undefined
        ? []
        : [{ path: found.projectFile.path, dir: options.cwd, digest: Digest.sha256(found.projectFile.text) }]
    )
    // A `.mcp.json` a sandboxed command may have written counts only once confirmed (SandboxedRoots).
    const file = found.projectFile
    const refused = file === undefined ? [] : (yield* (
      terminalAvailable() && options.ask === "ask"
        ? Effect.provideService(judgeProjectFile, SandboxedRoots.Confirmation, SandboxedConfirmation.terminal)
        : judgeProjectFile
    )).refused
    const resolved: McpScopes.Resolved = refused.length === 0 ? found : {
      ...found,
      project: [],
      projectFile: undefined,
      issues: [...found.issues, ...refused.map((r) => `${r.path}: ${r.reason}; its servers are not started`)]
    }
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const decide = McpApproval.decide({
      resolved,
      settings: options.settings,
      stateDir: options.stateDir,
      projectDir: options.cwd,
      isShared: (file) => Effect.provide(isTrackedByGit(file), context)
    })
    const decision = yield* (options.ask === "ask" && terminalAvailable()
      ? Effect.provide(decide, terminalPrompt)
      : decide)
    const merged = McpScopes.merge(resolved, McpApproval.isApproved(decision))
    const pending = McpApproval.pending(decision)
    const warnings = [
      ...resolved.issues,
      ...decision.issues,
      ...merged.issues,
      ...(pending.length > 0 && resolved.projectFile !== undefined
        ? [McpApproval.pendingWarning(resolved.projectFile.path, pending)]
        : [])
    ]
    return { servers: merged.servers, resolved, decision, warnings }
  })

/**
 * Whether git tracks a file (so it came with the repository). No git, or not
 * in a repository: not tracked. The repository is the one being judged: its
 * own configuration must run nothing (`core.fsmonitor` is a program git starts
 * for `ls-files`; a bare repository's `config` could be anywhere in the
 * project), so the command line turns those off, above every config file.
 *
 * @since 0.1.0
 * @category approval
 */
export const isTrackedByGit = (file: string): Effect.Effect<boolean, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const command = Command.make(
      "git",
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.hooksPath=/dev/null",
      "-c",
      "safe.bareRepository=explicit",
      "ls-files",
      "--error-unmatch",
      "--",
      path.basename(file)
    ).pipe(
      Command.workingDirectory(path.dirname(file))
    )
    return (yield* Command.exitCode(command)) === 0
  }).pipe(
    Effect.provide(NodeCommandExecutor.layer),
    Effect.catchAll(() => Effect.succeed(false)),
    Effect.catchAllDefect(() => Effect.succeed(false))
  )

/** How a server is started, for the question: its command line or its URL. */
const describeServer = (server: McpConfig.ServerConfig): string => {
  const transport = server.transport
  if (transport._tag !== "stdio") return `${transport._tag} ${transport.url}`
  const quote = (part: string) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))
  return [transport.command, ...transport.args].map(quote).join(" ")
}

/**
 * Asks in the terminal (stderr), Claude Code's three choices; anything but 1
 * or 2 is "don't use".
 *
 * @since 0.1.0
 * @category layers
 */
export const terminalPrompt: Layer.Layer<McpApproval.Prompt> = Layer.succeed(McpApproval.Prompt, {
  ask: (request) =>
    Effect.promise(async () => {
      const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
      try {
        const answer = await prompt.question(
          [
            `New MCP server found in .mcp.json: ${request.server.name}`,
            `  ${describeServer(request.server)}`,
            `  (${request.file})`,
            "MCP servers may run code and reach anything on this machine. Use it only if you trust this project.",
            "  1. Use this MCP server",
            "  2. Use this and all future MCP servers in this project",
            "  3. Continue without using this MCP server",
            "Choose 1, 2 or 3 [3]: "
          ].join("\n")
        )
        const choice = answer.trim()
        return choice === "1" ? "use" : choice === "2" ? "use-all" : "skip"
      } finally {
        prompt.close()
      }
    })
})
