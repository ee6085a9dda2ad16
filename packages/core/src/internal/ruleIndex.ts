/**
 * Shared rule matching: each rule compiled once for its kind (Bash command,
 * path, domain, subagent type), indexed per behavior and tool name, and the
 * lookup of the rules that may cover a call.
 */
import type * as PermissionContext from "../PermissionContext.js"
import type * as PermissionRules from "../PermissionRules.js"
import * as CommandPatterns from "./commandPatterns.js"
import * as DomainPatterns from "./domainPatterns.js"
import * as McpRules from "./mcpRules.js"
import * as PathPatterns from "./pathPatterns.js"

/** Tools whose calls `Read(…)` rules cover. @internal */
export const readTools: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "NotebookRead", "LS"])

/** Tools whose calls `Edit(…)` rules cover. @internal */
export const editTools: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"])

/** @internal */
export interface CompiledRule {
  readonly rule: PermissionContext.PermissionRule
  readonly command: CommandPatterns.CommandMatcher | undefined
  readonly path: PathPatterns.PathPattern | undefined
  readonly domain: ((host: string) => boolean) | undefined
  readonly text: CommandPatterns.CommandMatcher | undefined
}

const isPathRuleName = (name: string) => readTools.has(name) || editTools.has(name)

const compiledRules = new WeakMap<PermissionContext.PermissionRule, CompiledRule>()

/** @internal */
export const compileRule = (rule: PermissionContext.PermissionRule): CompiledRule => {
  const cached = compiledRules.get(rule)
  if (cached !== undefined) return cached
  const spec = rule.specifier
  const compiled: CompiledRule = {
    rule,
    command: spec !== undefined && rule.toolName === "Bash" ? CommandPatterns.compileCommandPattern(spec) : undefined,
    path: spec !== undefined && isPathRuleName(rule.toolName) ? PathPatterns.compilePathPattern(spec) : undefined,
    domain: spec !== undefined && rule.toolName === "WebFetch" ? DomainPatterns.compileDomainPattern(spec) : undefined,
    text: spec !== undefined && (rule.toolName === "Agent" || rule.toolName === "Task")
      ? CommandPatterns.compileCommandPattern(spec)
      : undefined
  }
  compiledRules.set(rule, compiled)
  return compiled
}

interface Bucket {
  readonly byName: ReadonlyMap<string, ReadonlyArray<CompiledRule>>
  /** `mcp__server` and `mcp__server__*` rules, which name many tools. */
  readonly mcpServers: ReadonlyArray<CompiledRule>
}

interface RuleIndex {
  readonly deny: Bucket
  readonly ask: Bucket
  readonly allow: Bucket
  /** The rules that may cover a tool, per behavior and tool: a call only looks them up. */
  readonly byTool: Map<string, ReadonlyArray<CompiledRule>>
}

const indexes = new WeakMap<ReadonlyArray<PermissionContext.PermissionRule>, RuleIndex>()

const indexRules = (rules: ReadonlyArray<PermissionContext.PermissionRule>): RuleIndex => {
  const cached = indexes.get(rules)
  if (cached !== undefined) return cached
  const bucket = (behavior: PermissionContext.RuleBehavior): Bucket => {
    const byName = new Map<string, Array<CompiledRule>>()
    const mcpServers: Array<CompiledRule> = []
    for (const rule of rules) {
      if (rule.behavior !== behavior) continue
      const compiled = compileRule(rule)
      if (McpRules.isServerRule(rule)) {
        mcpServers.push(compiled)
        continue
      }
      const list = byName.get(rule.toolName)
      if (list === undefined) byName.set(rule.toolName, [compiled])
      else list.push(compiled)
    }
    return { byName, mcpServers }
  }
  const index: RuleIndex = {
    deny: bucket("deny"),
    ask: bucket("ask"),
    allow: bucket("allow"),
    byTool: new Map()
  }
  indexes.set(rules, index)
  return index
}

/** @internal */
export interface ToolName {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
}

/**
 * The rule names that cover a tool for a behavior: its name and aliases, its
 * family (`Read`, `Edit`), and for deny also `Read` over edits.
 *
 * @internal
 */
export const coveringNames = (tool: ToolName, behavior: PermissionContext.RuleBehavior): ReadonlyArray<string> => {
  const names = [tool.name, ...tool.aliases]
  if (readTools.has(tool.name)) {
    names.push("Read")
    if (behavior === "allow") names.push("Edit")
  }
  if (editTools.has(tool.name)) {
    names.push("Edit")
    if (behavior === "deny") names.push("Read")
  }
  return Array.from(new Set(names))
}

/** The compiled rules of a behavior that may cover a tool, over every rule set. @internal */
export const candidates = (
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  behavior: PermissionContext.RuleBehavior,
  tool: ToolName
): ReadonlyArray<CompiledRule> => {
  const key = `${behavior}\u0000${tool.name}\u0000${tool.aliases.join("\u0000")}`
  let out: ReadonlyArray<CompiledRule> = []
  for (const rules of ruleSets) {
    if (rules.length === 0) continue
    const index = indexRules(rules)
    let found = index.byTool.get(key)
    if (found === undefined) {
      found = lookup(index[behavior], coveringNames(tool, behavior), tool.name)
      index.byTool.set(key, found)
    }
    if (found.length > 0) out = out.length === 0 ? found : [...out, ...found]
  }
  return out
}

const lookup = (bucket: Bucket, names: ReadonlyArray<string>, toolName: string): ReadonlyArray<CompiledRule> => {
  const out: Array<CompiledRule> = []
  for (const name of names) {
    const list = bucket.byName.get(name)
    if (list !== undefined) { for (const compiled of list) out.push(compiled) }
  }
  for (const compiled of McpRules.serverRulesFor(bucket.mcpServers, toolName)) out.push(compiled)
  return out
}

/** What a call is about, for the rule kinds with specifiers. @internal */
export interface ToolFacts {
  readonly path: PathPatterns.PathProbe | undefined
  readonly host: string | undefined
  readonly content: string | undefined
}

/** Whether a compiled rule covers a call with these facts. @internal */
export const ruleApplies = (compiled: CompiledRule, facts: ToolFacts, env: PermissionRules.Environment): boolean => {
  const rule = compiled.rule
  if (rule.specifier === undefined) return true
  if (compiled.path !== undefined) {
    return facts.path !== undefined &&
      PathPatterns.matchPathPattern(compiled.path, facts.path, rule.root ?? env.cwd, env)
  }
  if (compiled.domain !== undefined) return facts.host !== undefined && compiled.domain(facts.host)
  if (compiled.text !== undefined) return facts.content !== undefined && compiled.text(facts.content)
  return false
}

/**
 * The path rules of a candidate list, by the directory they are relative to
 * and their literal lead: a call is checked only against the rules that can
 * match its path (those whose lead it is under, and those without a lead),
 * not against every rule in the settings.
 */
interface PathRuleIndex {
  /** The directories it was built for (`~/`, `./` patterns): another cwd or home needs another index. */
  readonly cwd: string
  readonly home: string
  /** Positions of the rules that are not path rules (checked for every call). */
  readonly others: ReadonlyArray<number>
  readonly bases: ReadonlyArray<{
    readonly base: string
    readonly unled: ReadonlyArray<number>
    readonly byLead: ReadonlyMap<string, ReadonlyArray<number>>
  }>
}

/**
 * Built once per candidate list (itself cached per rule set, and rule sets are immutable) and
 * per cwd and home, the only inputs besides the rules; the last one used is kept at hand.
 */
const pathIndexes = new WeakMap<
  ReadonlyArray<CompiledRule>,
  { last: PathRuleIndex; readonly byEnv: Map<string, PathRuleIndex> }
>()

const pathIndexOf = (rules: ReadonlyArray<CompiledRule>, env: PermissionRules.Environment): PathRuleIndex => {
  const known = pathIndexes.get(rules)
  if (known !== undefined && known.last.cwd === env.cwd && known.last.home === env.home) return known.last
  const key = `${env.cwd}\u0000${env.home}`
  const found = known?.byEnv.get(key)
  if (found !== undefined) {
    known!.last = found
    return found
  }
  const index = buildPathIndex(rules, env)
  if (known === undefined) pathIndexes.set(rules, { last: index, byEnv: new Map([[key, index]]) })
  else {
    known.byEnv.set(key, index)
    known.last = index
  }
  return index
}

const buildPathIndex = (rules: ReadonlyArray<CompiledRule>, env: PermissionRules.Environment): PathRuleIndex => {
  const others: Array<number> = []
  const byBase = new Map<string, { unled: Array<number>; byLead: Map<string, Array<number>> }>()
  rules.forEach((compiled, i) => {
    const pattern = compiled.path
    if (pattern === undefined) {
      others.push(i)
      return
    }
    const base = PathPatterns.baseOf(pattern, compiled.rule.root ?? env.cwd, env)
    let entry = byBase.get(base)
    if (entry === undefined) byBase.set(base, entry = { unled: [], byLead: new Map() })
    if (pattern.lead === "") {
      entry.unled.push(i)
      return
    }
    const list = entry.byLead.get(pattern.lead)
    if (list === undefined) entry.byLead.set(pattern.lead, [i])
    else list.push(i)
  })
  const bases = Array.from(byBase, ([base, entry]) => ({ base, ...entry }))
  return { cwd: env.cwd, home: env.home, others, bases }
}

/** The first of `positions` (ascending) before `best` whose rule applies, else `best`. */
const firstAmong = (
  rules: ReadonlyArray<CompiledRule>,
  positions: ReadonlyArray<number>,
  best: number,
  facts: ToolFacts,
  env: PermissionRules.Environment
): number => {
  for (const i of positions) {
    if (best !== -1 && i >= best) return best
    if (ruleApplies(rules[i]!, facts, env)) return i
  }
  return best
}

/**
 * The position of the first rule of `rules` that covers a call with these
 * facts, or -1. With a path, only the rules that can match it are tried.
 *
 * @internal
 */
export const firstApplyingIndex = (
  rules: ReadonlyArray<CompiledRule>,
  facts: ToolFacts,
  env: PermissionRules.Environment
): number => {
  const probe = facts.path
  if (probe === undefined || rules.length < 16) {
    for (let i = 0; i < rules.length; i++) if (ruleApplies(rules[i]!, facts, env)) return i
    return -1
  }
  const index = pathIndexOf(rules, env)
  let best = firstAmong(rules, index.others, -1, facts, env)
  for (const entry of index.bases) {
    // Every lead the path is at or under: its prefixes, segment by segment.
    const leads = probe.leadsUnder(entry.base)
    if (leads === undefined) continue
    best = firstAmong(rules, entry.unled, best, facts, env)
    if (entry.byLead.size === 0) continue
    for (const lead of leads) {
      const positions = entry.byLead.get(lead)
      if (positions !== undefined) best = firstAmong(rules, positions, best, facts, env)
    }
  }
  return best
}

/** The first rule that covers a call with these facts. @internal */
export const firstApplying = (
  rules: ReadonlyArray<CompiledRule>,
  facts: ToolFacts,
  env: PermissionRules.Environment
): PermissionContext.PermissionRule | undefined => {
  for (const compiled of rules) if (ruleApplies(compiled, facts, env)) return compiled.rule
  return undefined
}
