/**
 * Permission rule matching (SPEC §4.5): Claude Code's `settings.json`
 * `permissions` semantics, evaluated deny → ask → allow, first match wins.
 *
 * `assess` looks at one call and says which deny or ask rule matched (if
 * any), whether allow rules and the read-only set cover it, whether the
 * `acceptEdits` mode would, why it would otherwise ask, and which narrowed
 * rules an "always allow" answer should add. The modes, hooks and prompts are
 * `PermissionChain`'s business.
 *
 * Decisions taken where Claude Code's documentation leaves room:
 * - Bash: compound commands are split by the `ShellAnalysis` port; a deny or
 *   ask rule matches when any subcommand (substitution contents included)
 *   matches, an allow only when every subcommand is matched by an allow rule or
 *   is read-only. Without an analysis (no analyser, unparseable) deny and ask
 *   rules see a naive split and no allow rule matches. A command with dynamic
 *   parts (substitutions, `$VAR` as a command) matches no allow rule and is not
 *   read-only.
 * - Wrappers stripped before matching: `timeout`, `time`, `nice`, `nohup`,
 *   `stdbuf`, `command`, `xargs` (without flags), `env` (assignments only) and
 *   `exec`; leading `VAR=value` too, except that setting a variable that changes
 *   what runs (`PATH`, `LD_*`, `NODE_OPTIONS`, …) keeps an allow rule for the
 *   bare command from matching.
 * - An output redirect `> path` is an Edit of that path (`/dev/null` and the
 *   like excepted). Path deny and ask rules also see the path arguments of
 *   commands known to take paths: Read rules those of readers (`cat`, `grep`,
 *   …), Edit and Read rules those of the filesystem commands (`rm`, `mv`,
 *   `sed`, …). Read-only commands that take paths (`cat`, `ls`, `grep`, …)
 *   are only allowed without a rule when every path argument is inside the
 *   working directories; after a `cd`, relative paths must be inside from the
 *   cwd and from every `cd` target.
 * - `Read(…)` rules cover Read, Glob, Grep, NotebookRead and LS; `Edit(…)`
 *   rules cover Edit, Write, MultiEdit and NotebookEdit; a Read deny also
 *   denies edits of the path, and an Edit allow also allows reading it. A rule
 *   naming a specific tool (`Write(src/**)`) covers that tool only.
 * - `WebFetch(domain:example.com)` matches that host exactly;
 *   `domain:*.example.com` matches its subdomains.
 * - `Agent(type)` / `Task(type)` match the `subagent_type`; a specifier on any
 *   other tool matches nothing.
 *
 * @since 0.1.0
 */
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Patterns from "./internal/permissionPatterns.js"
import * as PermissionContext from "./PermissionContext.js"
import * as ShellAnalysis from "./ShellAnalysis.js"
import * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * Tools whose calls `Read(…)` rules cover.
 *
 * @since 0.1.0
 * @category constants
 */
export const readTools: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "NotebookRead", "LS"])

/**
 * Tools whose calls `Edit(…)` rules cover; `acceptEdits` allows them inside
 * the working directories.
 *
 * @since 0.1.0
 * @category constants
 */
export const editTools: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"])

/**
 * The filesystem commands `acceptEdits` allows when all their paths are
 * inside the working directories.
 *
 * @since 0.1.0
 * @category constants
 */
export const acceptEditsCommands: ReadonlySet<string> = new Set(["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"])

/** Tools whose path is a directory they search. */
const directoryTools: ReadonlySet<string> = new Set(["Glob", "Grep", "LS"])

/** Directories whose contents configure the agent or the repository: never edited by a mode alone. */
const protectedDirectories: ReadonlySet<string> = new Set([".git", ".switchyard", ".claude"])

/**
 * Where a call runs: the cwd, the home directory (`~/` rules) and the
 * working directories (cwd + `additionalDirectories`, absolute).
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly cwd: string
  readonly home: string
  readonly workingDirectories: ReadonlyArray<string>
  readonly path: Path.Path
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeEnvironment = (options: {
  readonly cwd: string
  readonly home: string
  readonly additionalDirectories: ReadonlyArray<string>
  readonly path: Path.Path
}): Environment => {
  const { path } = options
  const cwd = path.resolve(options.cwd)
  const extra = options.additionalDirectories.map((dir) => path.resolve(cwd, expandHome(dir, options.home, path)))
  return { cwd, home: options.home, workingDirectories: Array.from(new Set([cwd, ...extra])), path }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RuleMatch {
  readonly behavior: PermissionContext.RuleBehavior
  readonly rule: PermissionContext.PermissionRule
  /** What matched: the subcommand or the path. */
  readonly subject: string
}

/**
 * What the rules and the read-only set say about one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Assessment {
  /** The command, path, URL or tool name the call is about. */
  readonly subject: string
  /** The deny rule, else the ask rule, that matched some part of the call. */
  readonly match: RuleMatch | undefined
  /**
   * Allowed without asking in the default mode: every part by an allow rule,
   * or read-only inside the working directories.
   */
  readonly allowed: boolean
  /** The allow rules that covered it (empty when the read-only set alone did). */
  readonly allowRules: ReadonlyArray<PermissionContext.PermissionRule>
  /** The call only reads. */
  readonly readOnly: boolean
  /** Allowed in `acceptEdits` mode (edits and filesystem commands inside the working directories). */
  readonly allowedWithEdits: boolean
  /** Why the call would need approval. */
  readonly reason: string
  /** The narrowed rules an "always allow" answer adds. */
  readonly suggestions: ReadonlyArray<string>
}

/**
 * The subject of a request: the tool, its (observable) input and its context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly tool: Tool.Any
  readonly input: unknown
  readonly context: ToolUseContext.ToolUseContext
}

// ---------------------------------------------------------------------------
// Compiled rules
// ---------------------------------------------------------------------------

interface CompiledRule {
  readonly rule: PermissionContext.PermissionRule
  readonly command: Patterns.CommandMatcher | undefined
  readonly path: Patterns.PathPattern | undefined
  readonly domain: ((host: string) => boolean) | undefined
  readonly text: Patterns.CommandMatcher | undefined
}

const isPathRuleName = (name: string) => readTools.has(name) || editTools.has(name)

const compiledRules = new WeakMap<PermissionContext.PermissionRule, CompiledRule>()

const compileRule = (rule: PermissionContext.PermissionRule): CompiledRule => {
  const cached = compiledRules.get(rule)
  if (cached !== undefined) return cached
  const spec = rule.specifier
  const compiled: CompiledRule = {
    rule,
    command: spec !== undefined && rule.toolName === "Bash" ? Patterns.compileCommandPattern(spec) : undefined,
    path: spec !== undefined && isPathRuleName(rule.toolName) ? Patterns.compilePathPattern(spec) : undefined,
    domain: spec !== undefined && rule.toolName === "WebFetch" ? Patterns.compileDomainPattern(spec) : undefined,
    text: spec !== undefined && (rule.toolName === "Agent" || rule.toolName === "Task")
      ? Patterns.compileCommandPattern(spec)
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
      const parts = rule.toolName.split("__")
      if (parts[0] === "mcp" && (parts.length === 2 || (parts.length === 3 && parts[2] === "*"))) {
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

interface ToolName {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
}

/**
 * The rule names that cover a tool for a behavior: its name and aliases, its
 * family (`Read`, `Edit`), and for deny also `Read` over edits.
 */
const coveringNames = (tool: ToolName, behavior: PermissionContext.RuleBehavior): ReadonlyArray<string> => {
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

const candidates = (
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
    if (list !== undefined) for (const compiled of list) out.push(compiled)
  }
  if (toolName.startsWith("mcp__")) {
    for (const compiled of bucket.mcpServers) {
      if (PermissionContext.ruleNamesTool(compiled.rule, toolName)) out.push(compiled)
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Single-rule predicates
// ---------------------------------------------------------------------------

/**
 * Whether a Bash specifier matches a command (one simple command, compared
 * as written): wildcards, the word boundary rule and the legacy `:*` suffix.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesCommand = (specifier: string, command: string): boolean =>
  Patterns.compileCommandPattern(specifier)(Patterns.normalizeSpaces(command))

/**
 * Whether a Read/Edit path rule matches an absolute path.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesPath = (
  rule: PermissionContext.PermissionRule,
  absolutePath: string,
  env: Environment,
  options?: { readonly directory?: boolean }
): boolean => {
  if (rule.specifier === undefined) return true
  return Patterns.matchPathPattern(
    compileRule(rule).path ?? Patterns.compilePathPattern(rule.specifier),
    Patterns.makePathProbe(absolutePath, options?.directory ?? false, env.path.sep),
    rule.root ?? env.cwd,
    env
  )
}

/**
 * Whether a `WebFetch(domain:…)` specifier matches a URL.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesDomain = (specifier: string, url: string): boolean => {
  const host = Patterns.hostOf(url)
  return host !== undefined && Patterns.compileDomainPattern(specifier)(host)
}

/**
 * Whether a tool is removed from what the model sees: a deny rule without a
 * specifier names it, its MCP server, or its family (`Read` denies Glob and
 * Grep too, `Edit` denies Write).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isBlanketDenied = (context: PermissionContext.PermissionContext, toolName: string): boolean => {
  const names = coveringNames({ name: toolName, aliases: [] }, "deny")
  return context.rules.some((rule) =>
    rule.behavior === "deny" && rule.specifier === undefined &&
    (names.includes(rule.toolName) || PermissionContext.ruleNamesTool(rule, toolName))
  )
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

const expandHome = (value: string, home: string, path: Path.Path): string =>
  value === "~" ? home : value.startsWith("~/") ? path.join(home, value.slice(2)) : value

const isInside = (env: Environment, absolutePath: string): boolean =>
  env.workingDirectories.some((dir) =>
    absolutePath === dir || absolutePath.startsWith(dir.endsWith(env.path.sep) ? dir : dir + env.path.sep)
  )

/** Whether the path is inside a `.git`, `.switchyard` or `.claude` directory of the working directories. */
const workingDirectories = (env: Environment): string =>
  `the working directories (${env.workingDirectories.join(", ")})`

const isProtected = (env: Environment, absolutePath: string): boolean =>
  env.workingDirectories.some((dir) => {
    const prefix = dir.endsWith(env.path.sep) ? dir : dir + env.path.sep
    return absolutePath.startsWith(prefix) &&
      absolutePath.slice(prefix.length).split(env.path.sep).some((segment) => protectedDirectories.has(segment))
  })

// ---------------------------------------------------------------------------
// Assessment
// ---------------------------------------------------------------------------

/**
 * Assess a call against rule sets (the context's rules, session rules, …).
 *
 * @since 0.1.0
 * @category evaluation
 */
export const assess = (
  call: Call,
  options: {
    readonly ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>
    readonly env: Environment
  }
): Effect.Effect<Assessment> => {
  const command = call.tool.name === "Bash" ? commandOf(call.input) : undefined
  return command !== undefined
    ? assessBash(call, command, options.ruleSets, options.env)
    : assessTool(call, options.ruleSets, options.env)
}

const commandOf = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const command = (input as Record<string, unknown>)["command"]
  return typeof command === "string" ? command : undefined
}

const stringField = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

const safeReadOnly = (call: Call): Effect.Effect<boolean> =>
  Effect.suspend(() => Tool.evaluate(call.tool.isReadOnly(call.input, call.context))).pipe(
    Effect.catchAllDefect(() => Effect.succeed(false))
  )

const safePath = (call: Call): string | undefined => {
  try {
    return call.tool.getPath(call.input)
  } catch {
    return undefined
  }
}

interface ToolFacts {
  readonly path: Patterns.PathProbe | undefined
  readonly host: string | undefined
  readonly content: string | undefined
}

const ruleApplies = (compiled: CompiledRule, facts: ToolFacts, env: Environment): boolean => {
  const rule = compiled.rule
  if (rule.specifier === undefined) return true
  if (compiled.path !== undefined) {
    return facts.path !== undefined && Patterns.matchPathPattern(compiled.path, facts.path, rule.root ?? env.cwd, env)
  }
  if (compiled.domain !== undefined) return facts.host !== undefined && compiled.domain(facts.host)
  if (compiled.text !== undefined) return facts.content !== undefined && compiled.text(facts.content)
  return false
}

const firstApplying = (
  rules: ReadonlyArray<CompiledRule>,
  facts: ToolFacts,
  env: Environment
): PermissionContext.PermissionRule | undefined => {
  for (const compiled of rules) if (ruleApplies(compiled, facts, env)) return compiled.rule
  return undefined
}

const assessTool = (
  call: Call,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: Environment
): Effect.Effect<Assessment> =>
  Effect.gen(function*() {
    const { tool } = call
    const rawPath = safePath(call)
    const absolutePath = rawPath === undefined
      ? undefined
      : env.path.resolve(env.cwd, expandHome(rawPath, env.home, env.path))
    const url = tool.name === "WebFetch" ? stringField(call.input, "url") : undefined
    const directory = directoryTools.has(tool.name)
    const facts: ToolFacts = {
      path: absolutePath === undefined ? undefined : Patterns.makePathProbe(absolutePath, directory, env.path.sep),
      host: url === undefined ? undefined : Patterns.hostOf(url),
      content: stringField(call.input, "subagent_type")
    }
    const subject = absolutePath ?? url ?? tool.name
    const find = (behavior: PermissionContext.RuleBehavior) =>
      firstApplying(candidates(ruleSets, behavior, tool), facts, env)

    const denied = find("deny")
    const asked = denied === undefined ? find("ask") : undefined
    const match: RuleMatch | undefined = denied !== undefined
      ? { behavior: "deny", rule: denied, subject }
      : asked !== undefined
      ? { behavior: "ask", rule: asked, subject }
      : undefined
    const allowRule = find("allow")
    const readOnly = yield* safeReadOnly(call)
    const inside = absolutePath === undefined || isInside(env, absolutePath)
    const allowed = allowRule !== undefined || (readOnly && inside)
    const isEdit = editTools.has(tool.name)
    const allowedWithEdits = allowed ||
      (isEdit && absolutePath !== undefined && inside && !isProtected(env, absolutePath))

    let reason: string
    if (absolutePath !== undefined && !inside) {
      reason = `${tool.name} of ${absolutePath} is outside ${workingDirectories(env)}`
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
      suggestions: [suggestToolRule(tool.name, absolutePath, directory, url, env)]
    }
  })

const suggestToolRule = (
  toolName: string,
  absolutePath: string | undefined,
  directory: boolean,
  url: string | undefined,
  env: Environment
): string => {
  if (absolutePath !== undefined && editTools.has(toolName)) {
    return `Edit(/${Patterns.escapePathPattern(absolutePath)})`
  }
  if (absolutePath !== undefined && readTools.has(toolName)) {
    const dir = directory ? absolutePath : env.path.dirname(absolutePath)
    return `Read(/${Patterns.escapePathPattern(dir)}${dir.endsWith("/") ? "" : "/"}**)`
  }
  if (url !== undefined) {
    const host = Patterns.hostOf(url)
    if (host !== undefined) return `${toolName}(domain:${host})`
  }
  return toolName
}

// ---------------------------------------------------------------------------
// Bash
// ---------------------------------------------------------------------------

/** How a command takes path arguments: every positional, all but the first (a pattern or script), or `find`'s roots. */
type PathShape = "all" | "afterFirst" | "find"

const pathShapes: Record<string, PathShape> = {}
for (
  const name of [
    "cd", "pushd", "ls", "cat", "head", "tail", "less", "more", "wc", "stat", "file", "du", "tree", "diff", "cmp",
    "nl", "od", "hexdump", "xxd", "strings", "readlink", "realpath", "md5sum", "sha1sum", "sha256sum", "sha512sum",
    "sort", "uniq", "cut", "tac", "rev", "column", "mkdir", "touch", "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown"
  ]
) pathShapes[name] = "all"
for (const name of ["grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "jq"]) pathShapes[name] = "afterFirst"
pathShapes["find"] = "find"

/** The path arguments of a command, or `undefined` when it is not known to take paths. */
const pathArguments = (argv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const name = argv[0]
  if (name === undefined) return undefined
  const shape = pathShapes[name]
  if (shape === undefined) return undefined
  const out: Array<string> = []
  let positional = 0
  // A pattern given by option (`grep -e x`, `sed -e s/a/b/`) leaves every positional a path.
  const scriptByOption = argv.some((word) => /^(-[ef]|--(regexp|file|expression)(=.*)?)$/.test(word))
  let findRoots = true
  for (const word of argv.slice(1)) {
    if (word === "--") continue
    if (word.startsWith("-")) {
      findRoots = false
      const eq = word.indexOf("=")
      if (word.startsWith("--") && eq > 0) out.push(word.slice(eq + 1))
      continue
    }
    if (shape === "find") {
      if (findRoots && word !== "(" && word !== "!") out.push(word)
      continue
    }
    positional += 1
    if (shape === "afterFirst" && positional === 1 && !scriptByOption) continue
    out.push(word)
  }
  return out
}

interface ResolutionBases {
  /** Directories relative paths may be relative to: the cwd and every `cd` target. */
  readonly dirs: ReadonlyArray<string>
  /** A `cd` to somewhere we cannot know (`cd -`, `cd $X`). */
  readonly unknown: boolean
}

const resolutionBases = (commands: ReadonlyArray<ReadonlyArray<string>>, env: Environment): ResolutionBases => {
  let dirs = [env.cwd]
  let unknown = false
  for (const argv of commands) {
    if (argv[0] !== "cd" && argv[0] !== "pushd") continue
    const target = argv.slice(1).find((word) => !word.startsWith("-"))
    if (target === undefined) dirs = Array.from(new Set([...dirs, env.home]))
    else if (/[$`]/.test(target) || target === "-" || isOtherUsersHome(target)) unknown = true
    else {
      const expanded = expandHome(target, env.home, env.path)
      dirs = Array.from(new Set([...dirs, ...dirs.map((dir) => env.path.resolve(dir, expanded))]))
    }
    if (dirs.length > 16) unknown = true
  }
  if (argvHas(commands, "popd")) unknown = true
  return { dirs, unknown }
}

const argvHas = (commands: ReadonlyArray<ReadonlyArray<string>>, name: string) =>
  commands.some((argv) => argv[0] === name)

/** Every absolute path an argument may denote, or `undefined` when it cannot be known. */
const resolveArgument = (
  word: string,
  resolution: ResolutionBases,
  env: Environment
): ReadonlyArray<string> | undefined => {
  if (/[$`]/.test(word) || isOtherUsersHome(word)) return undefined
  const expanded = expandHome(word, env.home, env.path)
  if (env.path.isAbsolute(expanded)) return [env.path.resolve(expanded)]
  if (resolution.unknown) return undefined
  return resolution.dirs.map((dir) => env.path.resolve(dir, expanded))
}

/** `~user/x`: a home we do not know. */
const isOtherUsersHome = (word: string): boolean => word.startsWith("~") && word !== "~" && !word.startsWith("~/")

const editTool: ToolName = { name: "Edit", aliases: [] }
const readTool: ToolName = { name: "Read", aliases: [] }

const nonFileTargets = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

interface CommandPart {
  readonly text: string
  readonly forms: Patterns.CommandForms
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
}

const assessBash = (
  call: Call,
  command: string,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: Environment
): Effect.Effect<Assessment> =>
  Effect.gen(function*() {
    const shell = yield* ShellAnalysis.ShellAnalysis
    const analysis = yield* shell.analyze(command)
    const denyRules = candidates(ruleSets, "deny", call.tool)
    const askRules = candidates(ruleSets, "ask", call.tool)
    const allowRules = candidates(ruleSets, "allow", call.tool)
    // An output redirect is an Edit of its target; path arguments are reads or edits.
    const editDeny = candidates(ruleSets, "deny", editTool)
    const editAsk = candidates(ruleSets, "ask", editTool)
    const editAllow = candidates(ruleSets, "allow", editTool)
    const readDeny = candidates(ruleSets, "deny", readTool)
    const readAsk = candidates(ruleSets, "ask", readTool)

    const matchCommand = (rules: ReadonlyArray<CompiledRule>, forms: ReadonlyArray<string>) => {
      for (const compiled of rules) {
        if (compiled.rule.specifier === undefined) return compiled.rule
        if (compiled.command === undefined) continue
        for (const form of forms) if (compiled.command(form)) return compiled.rule
      }
      return undefined
    }
    const matchPaths = (rules: ReadonlyArray<CompiledRule>, paths: ReadonlyArray<string>, every: boolean) => {
      for (const compiled of rules) {
        const hits = paths.filter((path) => {
          const probe = Patterns.makePathProbe(path, false, env.path.sep)
          return ruleApplies(compiled, { path: probe, host: undefined, content: undefined }, env)
        })
        if (every ? hits.length === paths.length && paths.length > 0 : hits.length > 0) return compiled.rule
      }
      return undefined
    }

    if (Option.isNone(analysis)) {
      // Fail closed: deny and ask rules see a naive split; nothing is allowed by a rule or as read-only.
      const parts = ShellAnalysis.naiveSplit(command).map((text) =>
        Patterns.commandForms(text, Patterns.naiveWords(text), [])
      )
      const match = firstCommandMatch(
        parts.map((forms) => ({ forms, subject: forms.argv.join(" ") })),
        matchCommand,
        denyRules,
        askRules
      )
      return {
        subject: command,
        match,
        allowed: false,
        allowRules: [],
        readOnly: false,
        allowedWithEdits: false,
        reason: "the command could not be analysed, so it needs approval",
        suggestions: []
      }
    }

    const { commands, hasDynamicParts } = analysis.value
    const parts: ReadonlyArray<CommandPart> = commands.map((simple) => ({
      text: simple.text,
      forms: Patterns.commandForms(simple.text, simple.argv, simple.assignments),
      redirects: fileRedirects(simple.redirects)
    }))
    const resolution = resolutionBases(parts.map((part) => part.forms.argv), env)

    // Deny, then ask: any subcommand (scripts given to `sh -c` and `eval` included) or redirect target.
    const nested = yield* nestedParts(parts, shell, 3)
    const everyPart = [...parts, ...nested]
    let match = firstCommandMatch(
      everyPart.map((part) => ({ forms: part.forms, subject: Patterns.normalizeSpaces(part.text) })),
      matchCommand,
      denyRules,
      askRules
    )
    const targetsOf = (list: ReadonlyArray<CommandPart>) =>
      list.flatMap((part) =>
        part.redirects.map((redirect) => ({
          target: redirect.target,
          paths: resolveArgument(redirect.target, resolution, env)
        }))
      )
    const redirectTargets = targetsOf(parts)
    // Path rules also see what commands touch: redirect targets and the path arguments of
    // commands known to take paths (an edit for the filesystem commands, a read otherwise).
    const pathTargets = [
      ...[...redirectTargets, ...targetsOf(nested)].map(({ paths, target }) => ({
        subject: `> ${target}`,
        paths,
        edit: true
      })),
      ...everyPart.flatMap((part) => {
        const edit = part.forms.argv[0] !== undefined && acceptEditsCommands.has(part.forms.argv[0])
        return (pathArguments(part.forms.argv) ?? []).map((word) => ({
          subject: `${part.forms.argv[0]} ${word}`,
          paths: resolveArgument(word, resolution, env),
          edit
        }))
      })
    ]
    if (match?.behavior !== "deny") {
      for (const { edit, paths, subject } of pathTargets) {
        if (paths === undefined) continue
        const denied = matchPaths(edit ? editDeny : readDeny, paths, false)
        if (denied !== undefined) {
          match = { behavior: "deny", rule: denied, subject }
          break
        }
        if (match === undefined) {
          const asked = matchPaths(edit ? editAsk : readAsk, paths, false)
          if (asked !== undefined) match = { behavior: "ask", rule: asked, subject }
        }
      }
    }

    // Allow: every part by an allow rule or as read-only inside the working directories.
    const used: Array<PermissionContext.PermissionRule> = []
    const suggestions: Array<string> = []
    let allowed = !hasDynamicParts
    let allowedWithEdits = !hasDynamicParts
    // The analyser judged the whole line (redirects and substitutions included).
    const readOnly = analysis.value.readOnly && !hasDynamicParts && redirectTargets.length === 0
    let reason: string | undefined = hasDynamicParts
      ? "the command contains a substitution or expansion that cannot be checked ahead of time"
      : undefined

    for (const part of parts) {
      const argv = part.forms.argv
      const allowRule = hasDynamicParts ? undefined : matchCommand(allowRules, part.forms.allowForms)
      // Only a part no allow rule covers needs its own read-only verdict (one more parse).
      const partReadOnly = !hasDynamicParts &&
        (analysis.value.readOnly || (allowRule === undefined && (yield* shell.isReadOnly(part.text))))
      const pathArgs = pathArguments(argv)
      const resolved = (pathArgs ?? []).map((word) => resolveArgument(word, resolution, env))
      const pathsInside = resolved.every((paths) => paths !== undefined && paths.every((path) => isInside(env, path)))
      const pathsUnprotected = resolved.every((paths) =>
        paths !== undefined && !paths.some((path) => isProtected(env, path))
      )
      const partAllowed = allowRule !== undefined || (partReadOnly && pathsInside)
      const fsCommand = argv[0] !== undefined && acceptEditsCommands.has(argv[0]) && pathArgs !== undefined &&
        pathsInside && pathsUnprotected
      if (allowRule !== undefined) used.push(allowRule)
      if (!partAllowed) {
        allowed = false
        suggestions.push(suggestCommandRule(argv))
        reason ??= partReadOnly
          ? `\`${Patterns.normalizeSpaces(part.text)}\` reads outside ${workingDirectories(env)}`
          : `\`${Patterns.normalizeSpaces(part.text)}\` needs approval`
      }
      if (!partAllowed && !(fsCommand && !hasDynamicParts)) allowedWithEdits = false
    }

    for (const { paths, target } of redirectTargets) {
      const allowRule = paths === undefined ? undefined : matchPaths(editAllow, paths, true)
      const inside = paths !== undefined && paths.every((path) => isInside(env, path) && !isProtected(env, path))
      if (allowRule !== undefined) {
        used.push(allowRule)
        continue
      }
      allowed = false
      if (!inside) allowedWithEdits = false
      if (paths !== undefined && paths.length === 1) suggestions.push(`Edit(/${Patterns.escapePathPattern(paths[0]!)})`)
      reason ??= inside
        ? `the output redirect to ${target} is an edit that needs approval`
        : `the output redirect to ${target} writes outside ${workingDirectories(env)}`
    }

    return {
      subject: command,
      match,
      allowed,
      allowRules: allowed ? Array.from(new Set(used)) : [],
      readOnly,
      allowedWithEdits: allowed || allowedWithEdits,
      reason: reason ?? `\`${Patterns.normalizeSpaces(command)}\` needs approval`,
      suggestions: Array.from(new Set(suggestions))
    }
  })

const shells: ReadonlySet<string> = new Set(["sh", "bash", "zsh", "dash", "ksh"])

/** The script a command hands to a shell: `bash -c 'script'`, `eval script`. */
const scriptOf = (argv: ReadonlyArray<string>): string | undefined => {
  const name = argv[0]
  if (name === "eval") return argv.length > 1 ? argv.slice(1).join(" ") : undefined
  if (name === undefined || !shells.has(name)) return undefined
  const flag = argv.findIndex((word, index) => index > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(word))
  return flag === -1 ? undefined : argv[flag + 1]
}

/** The commands of scripts run through `sh -c` or `eval`, for deny and ask rules only. */
const nestedParts = (
  parts: ReadonlyArray<CommandPart>,
  shell: ShellAnalysis.Service,
  depth: number
): Effect.Effect<ReadonlyArray<CommandPart>> =>
  Effect.gen(function*() {
    if (depth === 0) return []
    const out: Array<CommandPart> = []
    for (const part of parts) {
      const script = scriptOf(part.forms.argv)
      if (script === undefined) continue
      const analysis = yield* shell.analyze(script)
      const inner: ReadonlyArray<CommandPart> = Option.isSome(analysis)
        ? analysis.value.commands.map((simple) => ({
          text: simple.text,
          forms: Patterns.commandForms(simple.text, simple.argv, simple.assignments),
          redirects: fileRedirects(simple.redirects)
        }))
        : ShellAnalysis.naiveSplit(script).map((text) => ({
          text,
          forms: Patterns.commandForms(text, Patterns.naiveWords(text), []),
          redirects: []
        }))
      out.push(...inner, ...(yield* nestedParts(inner, shell, depth - 1)))
    }
    return out
  })

const isDescriptor = (redirect: ShellAnalysis.Redirect): boolean =>
  redirect.operator.includes("&") && /^(\d+|-)$/.test(redirect.target)

/** Redirects that write a file (not `/dev/null`, not `2>&1`). */
const fileRedirects = (redirects: ReadonlyArray<ShellAnalysis.Redirect>): ReadonlyArray<ShellAnalysis.Redirect> =>
  redirects.filter((redirect) => !nonFileTargets.test(redirect.target) && !isDescriptor(redirect))

const firstCommandMatch = (
  parts: ReadonlyArray<{ readonly forms: Patterns.CommandForms; readonly subject: string }>,
  matchCommand: (
    rules: ReadonlyArray<CompiledRule>,
    forms: ReadonlyArray<string>
  ) => PermissionContext.PermissionRule | undefined,
  denyRules: ReadonlyArray<CompiledRule>,
  askRules: ReadonlyArray<CompiledRule>
): RuleMatch | undefined => {
  for (const part of parts) {
    const rule = matchCommand(denyRules, part.forms.denyForms)
    if (rule !== undefined) return { behavior: "deny", rule, subject: part.subject }
  }
  for (const part of parts) {
    const rule = matchCommand(askRules, part.forms.denyForms)
    if (rule !== undefined) return { behavior: "ask", rule, subject: part.subject }
  }
  return undefined
}

/**
 * The narrowed rule an "always allow" adds for one subcommand: its command
 * and up to two subcommand words (`Bash(npm run test *)`, `Bash(git status *)`),
 * or the exact command when no subcommand word follows the program
 * (`Bash(rm -rf build)`).
 *
 * @since 0.1.0
 * @category suggestions
 */
export const suggestCommandRule = (argv: ReadonlyArray<string>): string => {
  const first = argv[0]
  if (first === undefined) return "Bash"
  const exact = `Bash(${argv.join(" ")})`
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/.test(first)) return exact
  const prefix = [first]
  for (const word of argv.slice(1, 3)) {
    if (!/^[A-Za-z][A-Za-z0-9_:-]*$/.test(word)) break
    prefix.push(word)
  }
  if (prefix.length === 1) return exact
  return `Bash(${prefix.join(" ")} *)`
}
