/**
 * Path rules: where a path is relative to the working directories (inside,
 * protected), how a tool's path is made absolute, and the `Read(…)`/`Edit(…)`
 * rule an "always allow" answer adds for it.
 */
import type * as Path from "@effect/platform/Path"
import type * as PermissionRules from "../PermissionRules.js"
import * as RealPath from "../RealPath.js"
import * as PathPatterns from "./pathPatterns.js"
import * as RuleIndex from "./ruleIndex.js"

/** Tools whose path is a directory they search. @internal */
export const directoryTools: ReadonlySet<string> = new Set(["Glob", "Grep", "LS"])

/**
 * Names that configure the agent or the repository, never edited by a mode alone: directories (`.git`,
 * `.switchyard`, `.claude`) and everything in them, and `.mcp.json` (its servers start at the next run once the
 * user has approved the project's servers). The sandbox keeps the same names read-only. @internal
 */
export const protectedNames: ReadonlyArray<string> = [".git", ".switchyard", ".claude", ".mcp.json"]

const protectedSegments: ReadonlySet<string> = new Set(protectedNames)

/** `~` and `~/x` against the home directory. @internal */
export const expandHome = (value: string, home: string, path: Path.Path): string =>
  value === "~" ? home : value.startsWith("~/") ? path.join(home, value.slice(2)) : value

/** Whether an absolute path is inside the working directories. @internal */
export const isInside = (env: PermissionRules.Environment, absolutePath: string): boolean =>
  env.workingDirectories.some((dir) =>
    absolutePath === dir || absolutePath.startsWith(dir.endsWith(env.path.sep) ? dir : dir + env.path.sep)
  )

/** The working directories, for messages. @internal */
export const workingDirectories = (env: PermissionRules.Environment): string =>
  `the working directories (${env.workingDirectories.join(", ")})`

/**
 * Whether the path is (inside) a `.git`, `.switchyard`, `.claude` or `.mcp.json` of the working directories.
 * @internal
 */
export const isProtected = (env: PermissionRules.Environment, absolutePath: string): boolean => {
  const sep = env.path.sep
  for (const dir of env.workingDirectories) {
    const prefix = dir.endsWith(sep) ? dir : dir + sep
    if (absolutePath.startsWith(prefix) && hasProtectedSegment(absolutePath.slice(prefix.length), sep)) return true
  }
  return false
}

/** Whether a segment of a relative path is a protected name. @internal */
export const hasProtectedSegment = (relative: string, sep: string): boolean =>
  // Only a path in which a name occurs can have it as a segment: the split is left for those few.
  protectedNames.some((name) => relative.includes(name)) &&
  relative.split(sep).some((segment) => protectedSegments.has(segment))

/** A tool's path made absolute against the cwd (`~` expanded). @internal */
export const absoluteToolPath = (rawPath: string, env: PermissionRules.Environment): string =>
  // Joined, not resolved: `..` stays for `env.resolvePath`, which follows a link before climbing from it.
  RealPath.join(env.cwd, env.home, rawPath)

/** The narrowed path rule an "always allow" adds, or `undefined` for a tool of neither family. @internal */
export const suggestPathRule = (
  toolName: string,
  absolutePath: string,
  directory: boolean,
  env: PermissionRules.Environment
): string | undefined => {
  if (RuleIndex.editTools.has(toolName)) return `Edit(/${PathPatterns.escapePathPattern(absolutePath)})`
  if (RuleIndex.readTools.has(toolName)) {
    const dir = directory ? absolutePath : env.path.dirname(absolutePath)
    return `Read(/${PathPatterns.escapePathPattern(dir)}${dir.endsWith("/") ? "" : "/"}**)`
  }
  return undefined
}
