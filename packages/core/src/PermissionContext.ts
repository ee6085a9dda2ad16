/**
 * The permission context a dispatch runs under: the mode and the
 * `allow` / `ask` / `deny` rules in Claude Code's `settings.json` syntax
 * (SPEC §4.5). Matching a rule against a call lives in `PermissionRules`;
 * this module holds the data and the rule parser.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const PermissionMode = Schema.Literal("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
/**
 * @since 0.1.0
 * @category models
 */
export type PermissionMode = Schema.Schema.Type<typeof PermissionMode>

/**
 * @since 0.1.0
 * @category models
 */
export type RuleBehavior = "allow" | "ask" | "deny"

/**
 * One parsed rule: `Tool` or `Tool(specifier)`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionRule {
  readonly behavior: RuleBehavior
  readonly toolName: string
  /** The text between the parentheses; absent for a blanket rule. */
  readonly specifier: string | undefined
  /** Where the rule came from: a settings file path, `cli`, `session`. */
  readonly source: string
  /** Directory that `/x` path specifiers are relative to (the settings file's project root). */
  readonly root: string | undefined
  /** The rule as written. */
  readonly raw: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PermissionContext {
  readonly mode: PermissionMode
  readonly rules: ReadonlyArray<PermissionRule>
  readonly additionalDirectories: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const empty: PermissionContext = { mode: "default", rules: [], additionalDirectories: [] }

/**
 * Parse `Tool` or `Tool(specifier)`. Returns `undefined` for text that is not
 * a rule (an empty string, unbalanced parentheses).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRule = (
  raw: string,
  behavior: RuleBehavior,
  source: string,
  root?: string
): PermissionRule | undefined => {
  const text = raw.trim()
  const open = text.indexOf("(")
  if (open === -1) {
    return /^[A-Za-z0-9_*.-]+$/.test(text)
      ? { behavior, toolName: text, specifier: undefined, source, root, raw }
      : undefined
  }
  if (!text.endsWith(")") || open === 0) return undefined
  const toolName = text.slice(0, open).trim()
  const specifier = text.slice(open + 1, -1)
  if (!/^[A-Za-z0-9_*.-]+$/.test(toolName)) return undefined
  // `Bash()` and `Bash(*)` mean the whole tool, as in Claude Code.
  const blanket = specifier.trim() === "" || specifier.trim() === "*"
  return { behavior, toolName, specifier: blanket ? undefined : specifier, source, root, raw }
}

/**
 * Whether a tool name is covered by a rule's tool part, including the MCP
 * server forms `mcp__server` and `mcp__server__*`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const ruleNamesTool = (rule: PermissionRule, toolName: string): boolean => {
  if (rule.toolName === toolName) return true
  if (rule.toolName.startsWith("mcp__") && toolName.startsWith("mcp__")) {
    const ruleParts = rule.toolName.split("__")
    if (ruleParts.length === 2) return toolName.startsWith(`${rule.toolName}__`)
    if (ruleParts.length === 3 && ruleParts[2] === "*") return toolName.startsWith(`mcp__${ruleParts[1]}__`)
  }
  return false
}

/**
 * What a tool's own `checkPermissions` says about a call: `allow` means the
 * tool has no objection (the mode and rules still apply), `ask` asks the user
 * with a message, `deny` refuses with a message to the model.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolPermissionCheck =
  | { readonly behavior: "allow"; readonly updatedInput?: unknown }
  | { readonly behavior: "ask"; readonly message: string }
  | { readonly behavior: "deny"; readonly message: string }
