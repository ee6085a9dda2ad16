/**
 * Hook matchers (SPEC §4.5), as Claude Code reads them: empty, missing or `*`
 * matches every tool; a matcher made only of name characters and `|` is a
 * list of exact names; anything else is a regular expression, anchored here to
 * the whole tool name (so `mcp__server__.*` matches every tool of `server`,
 * and `Bash` never matches `BashOutput`).
 */

/** @internal */
export type ToolMatcher = (toolName: string) => boolean

const matchAll: ToolMatcher = () => true

const NAME_LIST = /^[\w\s|-]+$/

/** @internal */
export interface CompiledMatcher {
  readonly matches: ToolMatcher
  /** Why the matcher was read as exact names although it looks like a regex (it does not compile). */
  readonly warning: string | undefined
}

/** @internal */
export const compile = (matcher: string | undefined): CompiledMatcher => {
  const trimmed = matcher?.trim() ?? ""
  if (trimmed === "" || trimmed === "*") return { matches: matchAll, warning: undefined }
  if (NAME_LIST.test(trimmed)) return { matches: exactNames(trimmed), warning: undefined }
  try {
    const regex = new RegExp(`^(?:${trimmed})$`)
    return { matches: (toolName) => regex.test(toolName), warning: undefined }
  } catch (error) {
    // Claude Code skips a matcher it cannot compile; reading it as exact names is
    // the closest safe meaning, and the layer reports it once.
    return {
      matches: exactNames(trimmed),
      warning: `Hook matcher "${trimmed}" is not a valid regular expression (${
        error instanceof Error ? error.message : String(error)
      }); it matches exact tool names only`
    }
  }
}

const exactNames = (list: string): ToolMatcher => {
  const names = new Set(list.split("|").map((name) => name.trim()).filter((name) => name.length > 0))
  return (toolName) => names.has(toolName)
}
