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
 * Each rule kind has its module under `internal/` (`bashRules`, `pathRules`,
 * `domainRules`, `mcpRules`, with `toolRules` assessing every tool but Bash
 * and `ruleIndex` the shared compiling and lookup).
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
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as BashRules from "./internal/bashRules.js"
import * as DomainPatterns from "./internal/domainPatterns.js"
import * as PathPatterns from "./internal/pathPatterns.js"
import * as PathRules from "./internal/pathRules.js"
import * as RealPaths from "./internal/realPaths.js"
import * as RuleIndex from "./internal/ruleIndex.js"
import * as ToolRules from "./internal/toolRules.js"
import * as PermissionContext from "./PermissionContext.js"
import type * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * Tools whose calls `Read(…)` rules cover.
 *
 * @since 0.1.0
 * @category constants
 */
export const readTools: ReadonlySet<string> = RuleIndex.readTools

/**
 * Tools whose calls `Edit(…)` rules cover; `acceptEdits` allows them inside
 * the working directories.
 *
 * @since 0.1.0
 * @category constants
 */
export const editTools: ReadonlySet<string> = RuleIndex.editTools

/**
 * The filesystem commands `acceptEdits` allows when all their paths are
 * inside the working directories.
 *
 * @since 0.1.0
 * @category constants
 */
export const acceptEditsCommands: ReadonlySet<string> = BashRules.acceptEditsCommands

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
  /**
   * What an absolute path denotes once symbolic links are followed, as the
   * kernel resolves it: component by component, `LINK/..` climbing from
   * LINK's target (without a filesystem: the path itself, lexically).
   */
  readonly resolvePath: (absolute: string) => Effect.Effect<ResolvedPath>
  /**
   * Whether a path reaches `/proc/self`, `/proc/<pid>` — as written or
   * through a link on the way — so that it means something else in the
   * process of a command that opens it (`RealPath.reachesProcess`). Absent:
   * judged as written.
   */
  readonly reachesProcess?: ((absolute: string) => Effect.Effect<boolean>) | undefined
}

/**
 * A path as written and what it denotes: rules, the working-directory
 * boundary and the protected directories are checked on both.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedPath {
  /** The absolute path as written (`..` and `.` removed lexically, links not followed). */
  readonly lexical: string
  /**
   * Its real path (for a path that does not exist yet, its deepest existing
   * ancestor's real path plus the rest), also spelled through each working
   * directory or home directory that is itself reached through a link.
   */
  readonly real: ReadonlyArray<string>
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
  /** Follow symbolic links through it; without one, paths are judged as written. */
  readonly fileSystem?: FileSystem.FileSystem | undefined
  /**
   * How links are followed: `"kernel"`, the disk's own `realpath(3)` (one
   * system call a path; the paths the tools will open on the disk), or
   * `"fileSystem"` (default), through `fileSystem` (an overlay's view).
   */
  readonly realPaths?: "kernel" | "fileSystem" | undefined
  /**
   * The real paths of the working directories and the home directory, kept
   * by the caller across decisions (they are where the session runs and are
   * resolved once, as Claude Code does at start); filled as they are found.
   */
  readonly directoryRealPaths?: Map<string, string> | undefined
}): Environment => {
  const { fileSystem, path } = options
  const { cwd, through, workingDirectories } = layoutOf(options.cwd, options.home, options.additionalDirectories, path)
  if (fileSystem === undefined) {
    return {
      cwd,
      home: options.home,
      workingDirectories,
      path,
      resolvePath: (absolute) => Effect.succeed(RealPaths.lexicalOnly(absolute, path))
    }
  }
  // One environment serves one decision or call: every path it resolves is looked up once.
  const lookup = RealPaths.cached(
    options.realPaths === "kernel" ? RealPaths.kernel : RealPaths.fromFileSystem(fileSystem)
  )
  return {
    cwd,
    home: options.home,
    workingDirectories,
    path,
    resolvePath: (absolute) => RealPaths.resolvePath(lookup, path, absolute, through, options.directoryRealPaths),
    reachesProcess: (absolute) => RealPaths.reachesProcess(lookup, path, absolute)
  }
}

interface Layout {
  readonly cwd: string
  readonly workingDirectories: ReadonlyArray<string>
  /** The working directories and home: those a real path is also spelled through. */
  readonly through: ReadonlyArray<string>
}

/**
 * The layouts made, per `additionalDirectories` array (a context's, immutable, so one a session) and
 * cwd, home and `Path`: a layout is a function of those alone (lexical, no filesystem), so it is made once.
 */
const layouts = new WeakMap<
  ReadonlyArray<string>,
  Array<{ readonly cwd: string; readonly home: string; readonly path: Path.Path; readonly layout: Layout }>
>()

const layoutOf = (
  rawCwd: string,
  home: string,
  additionalDirectories: ReadonlyArray<string>,
  path: Path.Path
): Layout => {
  // A relative cwd is resolved against the process's, which can change: not kept.
  if (!path.isAbsolute(rawCwd)) return makeLayout(rawCwd, home, additionalDirectories, path)
  let made = layouts.get(additionalDirectories)
  if (made === undefined) layouts.set(additionalDirectories, made = [])
  const known = made.find((entry) => entry.cwd === rawCwd && entry.home === home && entry.path === path)
  if (known !== undefined) return known.layout
  const layout = makeLayout(rawCwd, home, additionalDirectories, path)
  // A few entries at most (one cwd a session, rarely more); the oldest go first past a handful.
  if (made.length >= 8) made.shift()
  made.push({ cwd: rawCwd, home, path, layout })
  return layout
}

const makeLayout = (
  rawCwd: string,
  home: string,
  additionalDirectories: ReadonlyArray<string>,
  path: Path.Path
): Layout => {
  const cwd = path.resolve(rawCwd)
  const extra = additionalDirectories.map((dir) => path.resolve(cwd, PathRules.expandHome(dir, home, path)))
  const workingDirectories = Array.from(new Set([cwd, ...extra]))
  return { cwd, workingDirectories, through: [...workingDirectories, home] }
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
// Single-rule predicates
// ---------------------------------------------------------------------------

/**
 * Whether a Bash specifier matches a command (one simple command, compared
 * as written): wildcards, the word boundary rule and the legacy `:*` suffix.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesCommand: (specifier: string, command: string) => boolean = BashRules.matchesCommand

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
  return PathPatterns.matchPathPattern(
    RuleIndex.compileRule(rule).path ?? PathPatterns.compilePathPattern(rule.specifier),
    PathPatterns.makePathProbe(absolutePath, options?.directory ?? false, env.path.sep),
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
  const host = DomainPatterns.hostOf(url)
  return host !== undefined && DomainPatterns.compileDomainPattern(specifier)(host)
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
  const names = RuleIndex.coveringNames({ name: toolName, aliases: [] }, "deny")
  return context.rules.some((rule) =>
    rule.behavior === "deny" && rule.specifier === undefined &&
    (names.includes(rule.toolName) || PermissionContext.ruleNamesTool(rule, toolName))
  )
}

/**
 * Whether the deny rules of a reading tool (`Read(…)` and the tool's own)
 * cover a path, as written or through its links: the search tools leave such
 * paths out of what they return. `undefined` when no such rule exists.
 *
 * @since 0.1.0
 * @category predicates
 */
export const readDenied = (
  context: PermissionContext.PermissionContext,
  toolName: string,
  env: Environment
): ((absolutePath: string) => Effect.Effect<boolean>) | undefined => {
  const rules = RuleIndex.candidates([context.rules], "deny", { name: toolName, aliases: [] })
  if (rules.length === 0) return undefined
  return (absolutePath) =>
    Effect.map(env.resolvePath(absolutePath), (resolved) =>
      [resolved.lexical, ...resolved.real].some((form) => {
        const facts = {
          path: PathPatterns.makePathProbe(form, false, env.path.sep),
          host: undefined,
          content: undefined
        }
        return rules.some((compiled) => RuleIndex.ruleApplies(compiled, facts, env))
      }))
}

/**
 * The deny rules of a reading tool written as gitignore patterns relative to
 * a directory, for a search engine's exclusions (ripgrep's `--glob !…`).
 * Rules that cannot be written relative to it are left out: the results are
 * filtered with `readDenied` as well.
 *
 * @since 0.1.0
 * @category predicates
 */
export const readDeniedPatterns = (
  context: PermissionContext.PermissionContext,
  toolName: string,
  env: Environment,
  directory: string
): ReadonlyArray<string> =>
  RuleIndex.candidates([context.rules], "deny", { name: toolName, aliases: [] }).flatMap((compiled) => {
    const pattern = compiled.path
    if (pattern === undefined) return []
    const base = PathPatterns.baseOf(pattern, compiled.rule.root ?? env.cwd, env)
    const relative = PathPatterns.relativeTo(pattern, base, directory, env)
    return relative === undefined ? [] : [relative]
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
    ? BashRules.assessBash(call, command, options.ruleSets, options.env)
    : ToolRules.assessTool(call, options.ruleSets, options.env)
}

const commandOf = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const command = (input as Record<string, unknown>)["command"]
  return typeof command === "string" ? command : undefined
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
export const suggestCommandRule: (argv: ReadonlyArray<string>) => string = BashRules.suggestCommandRule
