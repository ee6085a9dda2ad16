/**
 * @switchyard/tools — the built-in tools, each a Layer.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"
export * as BackgroundShells from "./BackgroundShells.js"
export * as Bash from "./Bash.js"
export * as Builtins from "./Builtins.js"
export * as ClaudeCodePermissions from "./ClaudeCodePermissions.js"
export * as Edit from "./Edit.js"
export * as Glob from "./Glob.js"
export * as Grep from "./Grep.js"
export * as NotebookEdit from "./NotebookEdit.js"
export * as Read from "./Read.js"
export * as Sandbox from "./Sandbox.js"
export * as ShellCommand from "./ShellCommand.js"
export * as TodoWrite from "./TodoWrite.js"
export * as WebFetch from "./WebFetch.js"
export * as Write from "./Write.js"
export * as McpConfig from "./McpConfig.js"
export * as McpServers from "./McpServers.js"
