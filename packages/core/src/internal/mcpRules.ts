/**
 * MCP rule names: `mcp__server` and `mcp__server__*` name every tool of a
 * server, `mcp__server__tool` one tool (looked up by name like any other).
 */
import * as PermissionContext from "../PermissionContext.js"

/** Whether a rule names a whole MCP server rather than one tool. @internal */
export const isServerRule = (rule: PermissionContext.PermissionRule): boolean => {
  const parts = rule.toolName.split("__")
  return parts[0] === "mcp" && (parts.length === 2 || (parts.length === 3 && parts[2] === "*"))
}

/** The server rules that name an MCP tool. @internal */
export const serverRulesFor = <A extends { readonly rule: PermissionContext.PermissionRule }>(
  serverRules: ReadonlyArray<A>,
  toolName: string
): ReadonlyArray<A> =>
  toolName.startsWith("mcp__")
    ? serverRules.filter((compiled) => PermissionContext.ruleNamesTool(compiled.rule, toolName))
    : []
