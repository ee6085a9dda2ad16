/**
 * The assessment of a call to any tool but Bash: its path (Read/Edit rules),
 * its host (WebFetch domain rules), its subagent type (Agent/Task rules) or
 * just its name (MCP tools and the rest).
 */
import * as Effect from "effect/Effect"
import ignore from "ignore"
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

const readOnlyTrue = Effect.succeed(true)
const readOnlyFalse = Effect.succeed(false)

/** The tool's `isReadOnly`, a throw or a defect counting as `false`; a plain boolean answer without a fiber step. */
const safeReadOnly = (call: PermissionRules.Call): Effect.Effect<boolean> => {
  let answer: boolean | Effect.Effect<boolean>
  try {
    answer = call.tool.isReadOnly(call.input, call.context)
  } catch {
    return readOnlyFalse
  }
  if (typeof answer === "boolean") return answer ? readOnlyTrue : readOnlyFalse
  return Effect.catchAllDefect(Tool.evaluate(answer), () => readOnlyFalse)
}

const safePath = (call: PermissionRules.Call): string | undefined => {
  try {
    return call.tool.getPath(call.input)
  } catch {
    return undefined
  }
}

/** Characters that make a path a pattern a shell or a glob library would expand. */
const globCharacters = /[*?[\]{}]/

/**
 * The directory a path with glob or brace characters could reach anything
 * below: its segments up to the first one with such characters.
 */
const staticPrefix = (absolute: string, env: PermissionRules.Environment): string => {
  const segments = absolute.split(env.path.sep)
  const first = segments.findIndex((segment) => globCharacters.test(segment))
  return segments.slice(0, first).join(env.path.sep) || env.path.sep
}

/**
 * Whether a path with glob or brace characters could stand for a path inside
 * a protected directory: one of its pattern segments could be `.git`,
 * `.claude`, `.switchyard` or `.mcp.json` (braces and `**` are assumed to).
 */
const couldBeProtected = (absolute: string, env: PermissionRules.Environment): boolean =>
  absolute.split(env.path.sep).some((segment) => {
    if (!globCharacters.test(segment)) return false
    if (segment.includes("{") || segment.includes("**")) return true
    const matcher = ignore().add(segment)
    return PathRules.protectedNames.some((name) => matcher.ignores(name))
  })

/** Whether one directory contains the other (or they are the same). */
const related = (a: string, b: string, sep: string): boolean => {
  const withSep = (dir: string) => (dir.endsWith(sep) ? dir : dir + sep)
  return a === b || a.startsWith(withSep(b)) || b.startsWith(withSep(a))
}

/**
 * Whether a path rule could match some path a pattern below `prefix` stands
 * for: the rule's directory and the prefix are on one line (one contains the
 * other).
 */
const couldMatch = (compiled: RuleIndex.CompiledRule, prefix: string, env: PermissionRules.Environment): boolean => {
  if (compiled.rule.specifier === undefined) return true
  const pattern = compiled.path
  if (pattern === undefined) return false
  const base = PathPatterns.baseOf(pattern, compiled.rule.root ?? env.cwd, env)
  return related(env.path.join(base, ...pattern.prefix), prefix, env.path.sep)
}

/** @internal */
export const assessTool = (
  call: PermissionRules.Call,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: PermissionRules.Environment
): Effect.Effect<PermissionRules.Assessment> => {
  const rawPath = safePath(call)
  const absolutePath = rawPath === undefined ? undefined : PathRules.absoluteToolPath(rawPath, env)
  // The path is resolved first, then the tool says whether the call only reads; the rest is plain computation.
  const judged = (resolved: PermissionRules.ResolvedPath | undefined) =>
    Effect.map(
      Effect.suspend(() => safeReadOnly(call)),
      (readOnly) => judge(call, ruleSets, env, absolutePath, resolved, readOnly)
    )
  // Rules, the boundary and the protected directories judge what the path denotes: its real path.
  return absolutePath === undefined ? judged(undefined) : Effect.flatMap(env.resolvePath(absolutePath), judged)
}

const judge = (
  call: PermissionRules.Call,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: PermissionRules.Environment,
  absolutePath: string | undefined,
  resolved: PermissionRules.ResolvedPath | undefined,
  readOnly: boolean
): PermissionRules.Assessment => {
  const { tool } = call
  const realPaths = resolved?.real ?? []
  const url = DomainRules.urlOf(tool.name, call.input)
  const directory = PathRules.directoryTools.has(tool.name)
  const base: RuleIndex.ToolFacts = {
    path: undefined,
    host: url === undefined ? undefined : DomainPatterns.hostOf(url),
    content: stringField(call.input, "subagent_type")
  }
  // One probe a path (the lexical form is usually the real one too): its relative forms are worked out once.
  const probes: Array<RuleIndex.ToolFacts> = []
  const factsOf = (paths: ReadonlyArray<string>): ReadonlyArray<RuleIndex.ToolFacts> =>
    paths.length === 0 ? [base] : paths.map((path) => {
      const known = probes.find((facts) => facts.path!.absolute === path)
      if (known !== undefined) return known
      const facts = { ...base, path: PathPatterns.makePathProbe(path, directory, env.path.sep) }
      probes.push(facts)
      return facts
    })
  // Deny and ask rules see the path as written and every form of its target; allow rules only the target.
  const guarded = factsOf(
    resolved === undefined || realPaths.includes(resolved.lexical) ? realPaths : [resolved.lexical, ...realPaths]
  )
  const targets = factsOf(realPaths)
  const pattern = resolved !== undefined && !directory && isPathTool(tool.name) && globCharacters.test(resolved.lexical)
    ? staticPrefix(resolved.lexical, env)
    : undefined
  const subject = absolutePath ?? url ?? tool.name
  // The first rule (in the settings' order) that covers some variant of the call.
  const find = (behavior: PermissionContext.RuleBehavior, variants: ReadonlyArray<RuleIndex.ToolFacts>) => {
    const rules = RuleIndex.candidates(ruleSets, behavior, tool)
    let best = -1
    for (const facts of variants) {
      const i = RuleIndex.firstApplyingIndex(rules, facts, env)
      if (i !== -1 && (best === -1 || i < best)) best = i
    }
    // A path with glob or brace characters cannot be resolved statically: it counts as matching
    // every deny or ask rule it could match.
    if (pattern !== undefined && behavior !== "allow") {
      const end = best === -1 ? rules.length : best
      for (let i = 0; i < end; i++) {
        if (couldMatch(rules[i]!, pattern, env)) {
          best = i
          break
        }
      }
    }
    return best === -1 ? undefined : rules[best]!.rule
  }

  const denied = find("deny", guarded)
  const asked = denied === undefined ? find("ask", guarded) : undefined
  const match: PermissionRules.RuleMatch | undefined = denied !== undefined
    ? { behavior: "deny", rule: denied, subject }
    : asked !== undefined
    ? { behavior: "ask", rule: asked, subject }
    : undefined
  const allowRule = find("allow", targets)
  const inside = resolved === undefined || realPaths.some((path) => PathRules.isInside(env, path))
  // A fetch sends data out: only an allow rule for its host lets it run without asking.
  const allowed = allowRule !== undefined || (readOnly && inside && url === undefined)
  const isEdit = RuleIndex.editTools.has(tool.name)
  const isProtected = resolved !== undefined &&
    [resolved.lexical, ...realPaths].some((path) => PathRules.isProtected(env, path))
  const allowedWithEdits = allowed ||
    (isEdit && resolved !== undefined && inside && !isProtected &&
      !(pattern !== undefined && couldBeProtected(resolved.lexical, env)))

  const target = resolved === undefined || realPaths.includes(resolved.lexical)
    ? absolutePath
    : `${absolutePath} (a link to ${realPaths[0]})`
  let reason: string
  if (absolutePath !== undefined && !inside) {
    reason = `${tool.name} of ${target} is outside ${PathRules.workingDirectories(env)}`
  } else if (absolutePath !== undefined) {
    reason = `${tool.name} of ${target} needs approval`
  } else if (url !== undefined) {
    reason = allowRule === undefined && readOnly
      ? `${tool.name} of ${url} sends a request to a host no allow rule names`
      : `${tool.name} of ${url} needs approval`
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
      // The target, since allow rules match nothing else.
      (absolutePath === undefined
        ? undefined
        : PathRules.suggestPathRule(tool.name, realPaths[0] ?? absolutePath, directory, env)) ??
        (url === undefined ? undefined : DomainRules.suggestDomainRule(tool.name, url)) ??
        tool.name
    ]
  }
}

const isPathTool = (name: string) => RuleIndex.readTools.has(name) || RuleIndex.editTools.has(name)
