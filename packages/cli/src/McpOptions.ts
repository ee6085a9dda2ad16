/**
 * The MCP options every engine command shares (`run`, `dispatch`, `tools`,
 * `replay`, `speculate`): `--mcp-config FILE` (repeatable; a file or inline
 * JSON) and `--strict-mcp-config` (only those files, not `.mcp.json`).
 *
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"

/**
 * @since 0.1.0
 * @category options
 */
export const mcpConfig = Options.text("mcp-config").pipe(
  Options.withDescription("An MCP server config file (Claude Code's .mcp.json format) or inline JSON; repeatable"),
  Options.repeated
)

/**
 * @since 0.1.0
 * @category options
 */
export const strictMcpConfig = Options.boolean("strict-mcp-config").pipe(
  Options.withDescription("Use only the --mcp-config servers, not the working directory's .mcp.json")
)

/**
 * Both, to spread into a command's options.
 *
 * @since 0.1.0
 * @category options
 */
export const options = { mcpConfig, strictMcpConfig }
