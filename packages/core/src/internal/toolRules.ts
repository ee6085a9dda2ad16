/**
 * The assessment of a call to any tool but Bash: its path (Read/Edit rules),
 * its host (WebFetch domain rules), its subagent type (Agent/Task rules) or
 * just its name (MCP tools and the rest).
 */
import * as Effect from "effect/Effect"
import type * as PermissionContext from "../PermissionContext.js"
import type * as PermissionRules from "../PermissionRules.js"
import * as Tool from "../Tool.js"
import * as DomainPatterns from "./domainPatterns.js"
import * as DomainRules from "./domainRules.js"
import * as PathPatterns from "./pathPatterns.js"
import * as PathRules from "./pathRules.js"
import * as RuleIndex from "./ruleIndex.js"

const stringField = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

const safeReadOnly = (call: PermissionRules.Call): Effect.Effect<boolean> =>
  Effect.suspend(() => Tool.evaluate(call.tool.isReadOnly(call.input, call.context))).pipe(
    Effect.catchAllDefect(() => Effect.succeed(false))
  )

const safePath = (call: PermissionRules.Call): string | undefined => {
  try {
    return call.tool.getPath(call.input)
  } catch {
    return undefined
  }
}

/** @internal */
export const assessTool = (
  call: PermissionRules.Call,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: PermissionRules.Environment
): Effect.Effect<PermissionRules.Assessment> =>
  Effect.gen(function*() {
    const { tool } = call
    const rawPath = safePath(call)
    const absolutePath = rawPath === undefined ? undefined : PathRules.absoluteToolPath(rawPath, env)
    const url = DomainRules.urlOf(tool.name, call.input)
    const directory = PathRules.directoryTools.has(tool.name)
    const facts: RuleIndex.ToolFacts = {
      path: absolutePath === undefined ? undefined : PathPatterns.makePathProbe(absolutePath, directory, env.path.sep),
      host: url === undefined ? undefined : DomainPatterns.hostOf(url),
      content: stringField(call.input, "subagent_type")
    }
    const subject = absolutePath ?? url ?? tool.name
    const find = (behavior: PermissionContext.RuleBehavior) =>
      RuleIndex.firstApplying(RuleIndex.candidates(ruleSets, behavior, tool), facts, env)

    const denied = find("deny")
    const asked = denied === undefined ? find("ask") : undefined
    const match: PermissionRules.RuleMatch | undefined = denied !== undefined
      ? { behavior: "deny", rule: denied, subject }
      : asked !== undefined
      ? { behavior: "ask", rule: asked, subject }
      : undefined
    const allowRule = find("allow")
    const readOnly = yield* safeReadOnly(call)
    const inside = absolutePath === undefined || PathRules.isInside(env, absolutePath)
    const allowed = allowRule !== undefined || (readOnly && inside)
    const isEdit = RuleIndex.editTools.has(tool.name)
    const allowedWithEdits = allowed ||
      (isEdit && absolutePath !== undefined && inside && !PathRules.isProtected(env, absolutePath))

    let reason: string
    if (absolutePath !== undefined && !inside) {
      reason = `${tool.name} of ${absolutePath} is outside ${PathRules.workingDirectories(env)}`
    } else if (absolutePath !== undefined) {
      reason = `${tool.name} of ${absolutePath} needs approval`
    } else if (url !== undefined) {
      reason = `${tool.name} of ${url} needs approval`
    } else {
      reason = `${tool.name} needs approval`
    }

    return {
      subject,
      match,
      allowed,
      allowRules: allowRule === undefined ? [] : [allowRule],
      readOnly,
      allowedWithEdits,
      reason,
      suggestions: [
        (absolutePath === undefined ? undefined : PathRules.suggestPathRule(tool.name, absolutePath, directory, env)) ??
          (url === undefined ? undefined : DomainRules.suggestDomainRule(tool.name, url)) ??
          tool.name
      ]
    }
  })
