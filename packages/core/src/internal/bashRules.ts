/**
 * Bash rules: the assessment of a `Bash` call (issue 9's precedence: deny,
 * then ask, then allow, first match wins).
 *
 * - `Bash(…)` deny and ask rules are matched on every simple command the
 *   `ShellAnalysis` port reports (substitutions included) and on what they
 *   run: scripts of `sh -c [--]`, `eval`, aliases, `env -S`, `find -exec`,
 *   `find -delete` as `rm`, `/abs/path/name` as `name`.
 * - Path rules see what every command reads and writes (the analyser's
 *   `readPaths`/`writePaths`: file arguments, input and output redirections,
 *   the tree of a recursive search) on the paths as written and their real
 *   paths. A recursive content search denies when a Read deny rule covers
 *   something inside the tree.
 * - Fail-closed asks, only when a rule exists that could match: a command
 *   name that cannot be resolved (`$CMD`, a shell reading its script from
 *   standard input) with a Bash deny or ask rule; a path that cannot be
 *   resolved (glob, expansion, `xargs` names) with a path rule below its
 *   literal directory. Such an ask suggests no rule (none could allow it).
 * - `Bash` and `Bash(*)` allow every command no deny or ask rule matches;
 *   narrower allow rules never match a line with dynamic parts, nor a command
 *   with an environment prefix outside `ShellAnalysis.isHarmlessAssignment`.
 * - A suggestion is a rule that allows the part it was made for.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as PermissionContext from "../PermissionContext.js"
import type * as PermissionRules from "../PermissionRules.js"
import * as ShellAnalysis from "../ShellAnalysis.js"
import * as CommandPatterns from "./commandPatterns.js"
import * as PathPatterns from "./pathPatterns.js"
import * as PathRules from "./pathRules.js"
import * as RuleIndex from "./ruleIndex.js"

/**
 * The filesystem commands `acceptEdits` allows when all their paths are
 * inside the working directories.
 *
 * @internal
 */
export const acceptEditsCommands: ReadonlySet<string> = new Set(["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"])


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

const resolutionBases = (commands: ReadonlyArray<ReadonlyArray<string>>, env: PermissionRules.Environment): ResolutionBases => {
  let dirs = [env.cwd]
  let unknown = false
  for (const argv of commands) {
    if (argv[0] !== "cd" && argv[0] !== "pushd") continue
    const target = argv.slice(1).find((word) => !word.startsWith("-"))
    if (target === undefined) dirs = Array.from(new Set([...dirs, env.home]))
    else if (/[$`]/.test(target) || target === "-" || isOtherUsersHome(target)) unknown = true
    else {
      const expanded = PathRules.expandHome(target, env.home, env.path)
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
  env: PermissionRules.Environment
): ReadonlyArray<string> | undefined => {
  if (/[$`]/.test(word) || isOtherUsersHome(word)) return undefined
  const expanded = PathRules.expandHome(word, env.home, env.path)
  // `/proc/self/cwd` is the command's own directory, not Switchyard's; another process's
  // directory, root or descriptors could be anywhere.
  const own = /^\/proc\/+(?:self|thread-self)\/+cwd(?:\/+(.*))?$/.exec(expanded)
  if (own !== null) {
    if (resolution.unknown) return undefined
    return resolution.dirs.map((dir) => env.path.resolve(dir, own[1] ?? "."))
  }
  if (/^\/proc\/+[^/]+\/+(?:task\/|cwd|root|fd|map_files)/.test(expanded) && !/^\/proc\/+(?:self|thread-self)\/+fd\/+[0-2]$/.test(expanded)) {
    return /^\/proc\/+(?:self|thread-self)\/+root(?:\/|$)/.test(expanded) ? [env.path.resolve(expanded)] : undefined
  }
  if (env.path.isAbsolute(expanded)) return [env.path.resolve(expanded)]
  if (resolution.unknown) return undefined
  return resolution.dirs.map((dir) => env.path.resolve(dir, expanded))
}

/** `~user/x`: a home we do not know. */
const isOtherUsersHome = (word: string): boolean => word.startsWith("~") && word !== "~" && !word.startsWith("~/")

const editTool: RuleIndex.ToolName = { name: "Edit", aliases: [] }
const readTool: RuleIndex.ToolName = { name: "Read", aliases: [] }

/** A path bash itself turns into a socket in a redirection. */
const bashSocket = /^\/dev\/+(?:tcp|udp)\//

const nonFileTargets = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

interface CommandPart {
  readonly text: string
  readonly forms: CommandPatterns.CommandForms
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
  /** The analyser's record, when the part came from an analysis. */
  readonly simple?: ShellAnalysis.SimpleCommand
}

/**
 * Whether a Bash specifier matches a command (one simple command, compared
 * as written).
 *
 * @internal
 */
export const matchesCommand = (specifier: string, command: string): boolean =>
  CommandPatterns.compileCommandPattern(specifier)(CommandPatterns.normalizeSpaces(command))

/** The rule's directory: everything it matches is at or below it. */
const ruleBase = (compiled: RuleIndex.CompiledRule, env: PermissionRules.Environment): string | undefined => {
  const pattern = compiled.path
  if (pattern === undefined) return undefined
  let base = pattern.anchor === "absolute"
    ? env.path.sep
    : pattern.anchor === "home"
    ? env.home
    : pattern.anchor === "root"
    ? compiled.rule.root ?? env.cwd
    : env.cwd
  for (let i = 0; i < pattern.up; i++) base = env.path.dirname(base)
  return env.path.join(base, ...pattern.prefix)
}

const within = (env: PermissionRules.Environment, dir: string, candidate: string): boolean =>
  candidate === dir || candidate.startsWith(dir.endsWith(env.path.sep) ? dir : dir + env.path.sep)

/** A path a part touches, resolved. */
interface Touched {
  readonly subject: string
  /** Every absolute form (lexical and real) of every base it may be relative to; `undefined` when unknown. */
  readonly forms: ReadonlyArray<string> | undefined
  readonly write: boolean
  /** Its whole tree's contents are read (`grep -r`, `rg`, `git grep`). */
  readonly treeContent: boolean
}

/**
 * A path word the analyser could not resolve that still cannot leave the
 * directory it is relative to: a relative glob or brace pattern without `..`
 * (`src/*.ts`, `{a,b}.txt`), not an expansion, `~` or an absolute path.
 */
const staysInside = (word: string): boolean =>
  word.length > 0 && !/^[~/<]/.test(word) && !/[$`]/.test(word) && !word.split("/").includes("..")

/**
 * The directories an unresolved path word stays below: its segments before
 * the first glob, brace or expansion character, against every base;
 * `undefined` when that could be anywhere (an expansion up front, `~user`,
 * `..` after a pattern, a list of names).
 */
const literalDirectories = (
  word: string,
  resolution: ResolutionBases,
  env: PermissionRules.Environment
): ReadonlyArray<string> | undefined => {
  if (word.startsWith("<")) return undefined
  const segments = word.split("/")
  const first = segments.findIndex((segment) => /[*?[\]{}$`]/.test(segment))
  const literal = first === -1 ? segments : segments.slice(0, first)
  if (first !== -1 && segments.slice(first).includes("..")) return undefined
  if (literal.length === 0 || (literal.length === 1 && literal[0] === "")) {
    return word.startsWith("/") ? [env.path.sep] : resolution.unknown ? undefined : resolution.dirs
  }
  return resolveArgument(literal.join("/") || "/", resolution, env)
}

/** A name bash cannot be known to run: an expansion, a substitution or a glob in command position. */
const unresolvableName = (name: string | undefined): boolean =>
  name === undefined || /[$`*?]/.test(name) || (name !== "[" && name !== "[[" && /\[.*\]/.test(name)) ||
  // Brace expansion: `r{m,} x` runs `rm r x`.
  /\{[^}]*(?:,|\.\.)[^}]*\}/.test(name)

/**
 * A part after which a plain name may run another program, or whose shell runs a script from
 * elsewhere: `hash -p /bin/rm ls` (then `ls` is `rm`), `enable -f lib.so name` (a builtin
 * loaded from a file), `BASH_ENV=…`/`ENV=…` (a script every non-interactive shell sources first).
 */
const rebindsNames = (part: CommandPart): boolean => {
  const argv = part.forms.argv
  const name = argv[0]
  if (name === "hash" && argv.some((word) => /^-[a-z]*p/.test(word))) return true
  if (name === "enable" && argv.some((word) => /^-[a-z]*f/.test(word))) return true
  const assignments = [...(part.simple?.assignments ?? []), ...(part.simple?.argv ?? []).filter((word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word))]
  return assignments.some((word) => /^(?:BASH_ENV|ENV)=/.test(word))
}

/** A shell that reads its script from standard input or a file: what it runs is not on the line. */
const shellWithoutScript = (argv: ReadonlyArray<string>): boolean => {
  const name = argv[0]
  if (name === "source" || name === ".") return true
  if (name === undefined || !shells.has(name)) return false
  const query = argv.length > 1 && argv.slice(1).every((word) => word === "--version" || word === "--help")
  return scriptOf(argv) === undefined && !query
}

/** @internal */
export const assessBash = (
  call: PermissionRules.Call,
  command: string,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: PermissionRules.Environment
): Effect.Effect<PermissionRules.Assessment> =>
  Effect.gen(function*() {
    const shell = yield* ShellAnalysis.ShellAnalysis
    const analysis = yield* shell.analyze(command)
    const denyRules = RuleIndex.candidates(ruleSets, "deny", call.tool)
    const askRules = RuleIndex.candidates(ruleSets, "ask", call.tool)
    const allowRules = RuleIndex.candidates(ruleSets, "allow", call.tool)
    // An output redirect is an Edit of its target; path arguments are reads or edits.
    const editDeny = RuleIndex.candidates(ruleSets, "deny", editTool)
    const editAsk = RuleIndex.candidates(ruleSets, "ask", editTool)
    const editAllow = RuleIndex.candidates(ruleSets, "allow", editTool)
    const readDeny = RuleIndex.candidates(ruleSets, "deny", readTool)
    const readAsk = RuleIndex.candidates(ruleSets, "ask", readTool)
    // `Bash` and `Bash(*)` allow every command no deny or ask rule matches (issue 13).
    const blanketAllow = allowRules.find((compiled) =>
      compiled.rule.specifier === undefined || CommandPatterns.normalizeSpaces(compiled.rule.specifier) === "*"
    )?.rule
    /** The first deny, else ask, rule an unresolvable name or path could match: the subject of a fail-closed ask. */
    const couldMatch = (kinds: "command" | "path" | "both"): PermissionContext.PermissionRule | undefined => {
      const commandRules = [...denyRules, ...askRules]
      const pathRules = [...readDeny, ...editDeny, ...readAsk, ...editAsk]
      const list = kinds === "command" ? commandRules : kinds === "path" ? pathRules : [...commandRules, ...pathRules]
      return list[0]?.rule
    }
    const failClosed = (
      rule: PermissionContext.PermissionRule,
      subject: string
    ): PermissionRules.RuleMatch => ({ behavior: "ask", rule, subject })

    const matchCommand = (rules: ReadonlyArray<RuleIndex.CompiledRule>, forms: ReadonlyArray<string>) => {
      for (const compiled of rules) {
        if (compiled.rule.specifier === undefined) return compiled.rule
        if (compiled.command === undefined) continue
        for (const form of forms) if (compiled.command(form)) return compiled.rule
      }
      return undefined
    }
    const matchForms = (rules: ReadonlyArray<RuleIndex.CompiledRule>, forms: ReadonlyArray<string>, every: boolean) => {
      for (const compiled of rules) {
        const hits = forms.filter((path) => {
          const probe = PathPatterns.makePathProbe(path, false, env.path.sep)
          return RuleIndex.ruleApplies(compiled, { path: probe, host: undefined, content: undefined }, env)
        })
        if (every ? hits.length === forms.length && forms.length > 0 : hits.length > 0) return compiled.rule
      }
      return undefined
    }
    /** A rule that matches something inside one of these directories (a recursive read enters it). */
    const matchInside = (rules: ReadonlyArray<RuleIndex.CompiledRule>, dirs: ReadonlyArray<string>) =>
      rules.find((compiled) => {
        const base = ruleBase(compiled, env)
        return base !== undefined && dirs.some((dir) => within(env, dir, base))
      })?.rule

    if (Option.isNone(analysis)) {
      // Fail closed: deny and ask rules see a naive split; a rule that could match asks.
      const parts = ShellAnalysis.naiveSplit(command).map((text) =>
        CommandPatterns.commandForms(text, CommandPatterns.naiveWords(text), [])
      )
      const matched = firstCommandMatch(
        parts.map((forms) => ({ forms, subject: forms.argv.join(" ") })),
        matchCommand,
        denyRules,
        askRules
      )
      const closing = couldMatch("both")
      const match = matched ?? (closing === undefined
        ? undefined
        : failClosed(closing, `\`${CommandPatterns.normalizeSpaces(command)}\` (it could not be analysed)`))
      const allowed = match === undefined && blanketAllow !== undefined
      return {
        subject: command,
        match,
        allowed,
        allowRules: allowed ? [blanketAllow!] : [],
        readOnly: false,
        allowedWithEdits: allowed,
        reason: "the command could not be analysed, so it needs approval",
        suggestions: []
      }
    }

    const { commands, hasDynamicParts } = analysis.value
    const parts: ReadonlyArray<CommandPart> = commands.map((simple) => ({
      text: simple.text,
      forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
      redirects: fileRedirects(simple.redirects),
      simple
    }))
    const resolution = resolutionBases(parts.map((part) => part.forms.argv), env)

    // Deny, then ask: any subcommand (scripts given to `sh -c`, `eval`, `find -exec`, aliases included).
    const nested = yield* nestedParts(parts, shell, 3)
    const everyPart = [...parts, ...nested]
    let match = firstCommandMatch(
      everyPart.map((part) => ({ forms: part.forms, subject: CommandPatterns.normalizeSpaces(part.text) })),
      matchCommand,
      denyRules,
      askRules
    )
    // A name that cannot be resolved statically may be any program a rule names.
    if (match === undefined) {
      const hidden = everyPart.find((part) =>
        unresolvableName(part.forms.argv[0] ?? part.simple?.argv[0]) && (part.forms.argv.length > 0) ||
        shellWithoutScript(part.forms.argv) || rebindsNames(part)
      )
      const rule = hidden === undefined ? undefined : couldMatch("command")
      if (hidden !== undefined && rule !== undefined) {
        match = failClosed(rule, `\`${CommandPatterns.normalizeSpaces(hidden.text)}\` (what it runs cannot be known ahead of time)`)
      }
    }

    // Paths: what every part reads and writes, on the paths as written and their real paths.
    const absoluteForms = (word: string) =>
      Effect.gen(function*() {
        const bases = resolveArgument(word, resolution, env)
        if (bases === undefined) return undefined
        const forms: Array<string> = []
        for (const absolute of bases) {
          const resolved = yield* env.resolvePath(absolute)
          forms.push(resolved.lexical, ...resolved.real)
        }
        return Array.from(new Set(forms))
      })
    const touchedBy = (part: CommandPart) =>
      Effect.gen(function*() {
        const out: Array<Touched> = []
        const name = part.forms.argv[0] ?? ""
        const simple = part.simple
        const uses = simple === undefined || (!simple.pathsKnown && simple.readPaths.length === 0 &&
            simple.writePaths.length === 0)
          ? (pathArguments(part.forms.argv) ?? []).map((path) => ({
            path,
            write: acceptEditsCommands.has(name),
            subtree: false,
            content: true
          }))
          : [
            ...simple.readPaths.map((use) => ({ ...use, write: false })),
            ...simple.writePaths.map((use) => ({ ...use, write: true }))
          ]
        for (const use of uses) {
          out.push({
            subject: `${use.write ? "write" : "read"} of ${use.path} by \`${CommandPatterns.normalizeSpaces(part.text)}\``,
            forms: yield* absoluteForms(use.path),
            write: use.write,
            treeContent: !use.write && use.subtree && use.content
          })
        }
        // Redirect targets of parts the analyser did not describe (nested scripts).
        if (simple === undefined) {
          for (const redirect of part.redirects) {
            out.push({ subject: `> ${redirect.target}`, forms: yield* absoluteForms(redirect.target), write: true, treeContent: false })
          }
        }
        return out
      })
    const touchedByPart = new Map<CommandPart, ReadonlyArray<Touched>>()
    for (const part of everyPart) touchedByPart.set(part, yield* touchedBy(part))
    const allTouched = everyPart.flatMap((part) => touchedByPart.get(part) ?? [])

    if (match?.behavior !== "deny") {
      for (const touched of allTouched) {
        if (touched.forms === undefined) continue
        const denyList = touched.write ? editDeny : readDeny
        const denied = matchForms(denyList, touched.forms, false) ??
          (touched.treeContent ? matchInside(readDeny, touched.forms) : undefined)
        if (denied !== undefined) {
          match = { behavior: "deny", rule: denied, subject: touched.subject }
          break
        }
        if (match === undefined) {
          const askList = touched.write ? editAsk : readAsk
          const asked = matchForms(askList, touched.forms, false) ??
            (touched.treeContent ? matchInside(readAsk, touched.forms) : undefined)
          if (asked !== undefined) match = { behavior: "ask", rule: asked, subject: touched.subject }
        }
      }
    }
    // A path that cannot be resolved statically counts as every path a rule names below its literal
    // directory (`sec*/key` could be `secrets/key`; `src/*.ts` cannot be under `secrets/`).
    let unresolvable = false
    if (match === undefined) {
      const pathRules = [...readDeny, ...editDeny, ...readAsk, ...editAsk]
      const ruleCouldMatch = (words: ReadonlyArray<string>) =>
        pathRules.find((compiled) => {
          const base = ruleBase(compiled, env)
          return words.some((word) => {
            const dirs = literalDirectories(word, resolution, env)
            return base === undefined || dirs === undefined ||
              dirs.some((dir) => within(env, dir, base) || within(env, base, dir))
          })
        })?.rule
      for (const part of everyPart) {
        const words = [
          ...(part.simple?.unresolvedWords ?? []),
          ...(touchedByPart.get(part) ?? []).filter((touched) => touched.forms === undefined).map(() => "$")
        ]
        const rule = words.length === 0 ? undefined : ruleCouldMatch(words)
        if (rule !== undefined) {
          unresolvable = true
          match = failClosed(rule, `\`${CommandPatterns.normalizeSpaces(part.text)}\` (a path in it cannot be resolved ahead of time)`)
          break
        }
      }
    }
    if (match?.behavior === "ask" && match.subject.endsWith("ahead of time)")) unresolvable = true

    // Allow: the blanket rule, or every part by an allow rule or as read-only inside the working directories.
    if (blanketAllow !== undefined && match === undefined) {
      return {
        subject: command,
        match,
        allowed: true,
        allowRules: [blanketAllow],
        readOnly: analysis.value.readOnly && !hasDynamicParts,
        allowedWithEdits: true,
        reason: `\`${CommandPatterns.normalizeSpaces(command)}\` is allowed by ${blanketAllow.toolName}`,
        suggestions: []
      }
    }
    const used: Array<PermissionContext.PermissionRule> = []
    const suggestions: Array<string> = []
    let allowed = !hasDynamicParts
    let allowedWithEdits = !hasDynamicParts
    const redirectTouched = parts.flatMap((part) =>
      (touchedByPart.get(part) ?? []).filter((touched) => touched.write && part.simple !== undefined &&
        part.redirects.some((redirect) => touched.subject.startsWith(`write of ${redirect.target} `)))
    )
    // The analyser judged the whole line (redirects and substitutions included).
    const readOnly = analysis.value.readOnly && !hasDynamicParts && parts.every((part) => part.redirects.length === 0)
    let reason: string | undefined = hasDynamicParts
      ? "the command contains a substitution or expansion that cannot be checked ahead of time"
      : undefined
    const insideAll = (list: ReadonlyArray<Touched>, unprotected: boolean) =>
      list.every((touched) =>
        touched.forms !== undefined &&
        touched.forms.every((path) => PathRules.isInside(env, path) && (!unprotected || !PathRules.isProtected(env, path)))
      )

    for (const part of parts) {
      const argv = part.forms.argv
      const simple = part.simple!
      const allowRule = hasDynamicParts ? undefined : matchCommand(allowRules, part.forms.allowForms)
      const partReadOnly = !hasDynamicParts && (analysis.value.readOnly || simple.readOnly)
      const touched = touchedByPart.get(part) ?? []
      const ownTouched = touched.filter((entry) => !redirectTouched.includes(entry))
      const redirectWords = new Set(part.redirects.map((redirect) => redirect.target))
      const pathsInside = insideAll(ownTouched, false) &&
        simple.unresolvedWords.every((word) => staysInside(word) || redirectWords.has(word))
      // Bash's `/dev/tcp/host/port` redirections are network clients (`printf 'GET /x' < /dev/tcp/h/80 1>&0`
      // sends a request): no narrower rule than the blanket one, and no read-only set, covers them.
      const socket = [...simple.readPaths, ...simple.writePaths].some((use) => bashSocket.test(use.path)) ||
        part.redirects.some((redirect) => bashSocket.test(redirect.target))
      const partAllowed = !socket && (allowRule !== undefined || (partReadOnly && pathsInside))
      const fsCommand = argv[0] !== undefined && acceptEditsCommands.has(argv[0]) && simple.onlyWritesPaths &&
        simple.pathsKnown && !simple.unresolvedPaths && insideAll(ownTouched, true)
      if (allowRule !== undefined) used.push(allowRule)
      if (!partAllowed) {
        allowed = false
        if (!hasDynamicParts) suggestions.push(suggestionFor(part))
        reason ??= socket
          ? `\`${CommandPatterns.normalizeSpaces(part.text)}\` opens a network connection through /dev/tcp or /dev/udp`
          : partReadOnly
          ? `\`${CommandPatterns.normalizeSpaces(part.text)}\` reads outside ${PathRules.workingDirectories(env)}`
          : `\`${CommandPatterns.normalizeSpaces(part.text)}\` needs approval`
      }
      if (!partAllowed && !(fsCommand && !hasDynamicParts)) allowedWithEdits = false
    }

    // Only the blanket rule allows a write to a target that cannot be resolved.
    let onlyBlanket = hasDynamicParts
    for (const part of parts) {
      for (const redirect of part.redirects) {
        const paths = resolveArgument(redirect.target, resolution, env)
        const touched = redirectTouched.find((entry) => entry.subject.startsWith(`write of ${redirect.target} `))
        const forms = touched?.forms ?? (paths === undefined ? undefined : paths)
        const allowRule = forms === undefined ? undefined : matchForms(editAllow, forms, true)
        const inside = forms !== undefined &&
          forms.every((path) => PathRules.isInside(env, path) && !PathRules.isProtected(env, path))
        if (allowRule !== undefined) {
          used.push(allowRule)
          continue
        }
        allowed = false
        if (!inside) allowedWithEdits = false
        if (paths === undefined) onlyBlanket = true
        if (paths !== undefined && paths.length === 1) {
          suggestions.push(`Edit(/${PathPatterns.escapePathPattern(paths[0]!)})`)
        }
        reason ??= inside
          ? `the output redirect to ${redirect.target} is an edit that needs approval`
          : `the output redirect to ${redirect.target} writes outside ${PathRules.workingDirectories(env)}`
      }
    }

    return {
      subject: command,
      match,
      allowed,
      allowRules: allowed ? Array.from(new Set(used)) : [],
      readOnly,
      allowedWithEdits: allowed || allowedWithEdits,
      reason: reason ?? `\`${CommandPatterns.normalizeSpaces(command)}\` needs approval`,
      // A fail-closed ask has no rule that could allow the call; a dynamic line only the blanket rule.
      suggestions: unresolvable ? [] : onlyBlanket ? ["Bash"] : Array.from(new Set(suggestions))
    }
  })

/**
 * The rule an "always allow" adds for one part: the narrowed prefix rule when
 * it matches the part as an allow rule would see it, else the exact command.
 */
const suggestionFor = (part: CommandPart): string => {
  const narrowed = suggestCommandRule(part.forms.argv)
  const specifier = narrowed.slice("Bash(".length, -1)
  if (narrowed !== "Bash" && part.forms.allowForms.some(CommandPatterns.compileCommandPattern(specifier))) {
    return narrowed
  }
  const exact = CommandPatterns.normalizeSpaces(part.text)
  return part.forms.allowForms.some(CommandPatterns.compileCommandPattern(exact)) ? `Bash(${exact})` : "Bash"
}

const shells: ReadonlySet<string> = new Set(["sh", "bash", "zsh", "dash", "ksh"])

/** The script a command hands to a shell: `bash -c 'script'`, `bash -c -- 'script'`, `eval script`. */
const scriptOf = (argv: ReadonlyArray<string>): string | undefined => {
  const name = argv[0]
  if (name === "eval") return argv.length > 1 ? argv.slice(1).join(" ") : undefined
  // `trap 'cmd' SIGNAL…` runs `cmd` later in this shell, like eval.
  if (name === "trap") {
    const action = argv.slice(1).find((word) => word !== "--" && !/^-[lp]$/.test(word))
    return action !== undefined && action !== "-" && argv.length > 2 ? action : undefined
  }
  // `script -c CMD` runs CMD in a shell.
  if (name === "script") {
    const flag = argv.findIndex((word, index) => index > 0 && (word === "-c" || word === "--command" || /^-[a-z]*c$/.test(word)))
    if (flag !== -1) return argv[flag + 1]
    const long = argv.find((word) => word.startsWith("--command="))
    return long === undefined ? undefined : long.slice("--command=".length)
  }
  if (name === undefined || !shells.has(name)) return undefined
  const flag = argv.findIndex((word, index) => index > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(word))
  if (flag === -1) return undefined
  // Options may follow `-c` before the script (`bash -c -e 'x'`, `bash -c -- 'x'`).
  let i = flag + 1
  while (i < argv.length && argv[i]!.startsWith("-") && argv[i] !== "-") i++
  return argv[i]
}

/** Scripts a command runs that are not shell scripts on their own: aliases, `env -S`, `find -exec`. */
const embeddedScripts = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const name = argv[0]
  if (name === "alias") {
    // `alias x='rm -rf'`: the commands an alias may later run.
    return argv.slice(1).flatMap((word) => {
      const eq = word.indexOf("=")
      return eq > 0 ? [word.slice(eq + 1)] : []
    })
  }
  if (name === "env") {
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i]!
      if (word === "-S" || word === "--split-string") return [argv.slice(i + 1).join(" ")]
      if (word.startsWith("-S")) return [[word.slice(2), ...argv.slice(i + 1)].join(" ")]
      if (word.startsWith("--split-string=")) return [[word.slice(15), ...argv.slice(i + 1)].join(" ")]
    }
    return []
  }
  if (name === "find") {
    const out: Array<string> = []
    const roots = argv.slice(1).filter((word, index, words) =>
      !word.startsWith("-") && !["(", "!", ")"].includes(word) && words.slice(0, index).every((w) => !w.startsWith("-"))
    )
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i]!
      if (["-exec", "-execdir", "-ok", "-okdir"].includes(word)) {
        let j = i + 1
        while (j < argv.length && argv[j] !== ";" && argv[j] !== "+") j++
        out.push(argv.slice(i + 1, j).join(" "))
        i = j
      } else if (word === "-delete") {
        // The same effect as `rm`: a `Bash(rm …)` deny rule sees it.
        out.push(["rm", "-r", ...(roots.length > 0 ? roots : ["."])].join(" "))
      }
    }
    return out
  }
  if (name === "unlink") return [["rm", ...argv.slice(1)].join(" ")]
  return []
}

/** The part's name with a directory stripped (`/bin/rm x` is `rm x` for deny rules). */
const basenameForm = (argv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const name = argv[0]
  if (name === undefined || !name.includes("/") || name.endsWith("/")) return undefined
  return [name.slice(name.lastIndexOf("/") + 1), ...argv.slice(1)]
}

/**
 * The commands of scripts run through `sh -c`, `eval`, aliases, `env -S` and
 * `find -exec`, and the bare-name form of `/abs/path/name`, for deny and ask
 * rules (and path rules).
 */
const nestedParts = (
  parts: ReadonlyArray<CommandPart>,
  shell: ShellAnalysis.Service,
  depth: number
): Effect.Effect<ReadonlyArray<CommandPart>> =>
  Effect.gen(function*() {
    if (depth === 0) return []
    const out: Array<CommandPart> = []
    for (const part of parts) {
      const argv = part.forms.argv
      const script = scriptOf(argv)
      const scripts = [...(script === undefined ? [] : [script]), ...embeddedScripts(argv)]
      const inner: Array<CommandPart> = []
      const bare = basenameForm(argv)
      if (bare !== undefined) {
        inner.push({
          text: bare.join(" "),
          forms: CommandPatterns.commandForms(bare.join(" "), bare, []),
          redirects: [],
          ...(part.simple === undefined ? {} : { simple: part.simple })
        })
      }
      for (const text of scripts) {
        const analysis = yield* shell.analyze(text)
        inner.push(
          ...(Option.isSome(analysis)
            ? analysis.value.commands.map((simple) => ({
              text: simple.text,
              forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
              redirects: fileRedirects(simple.redirects),
              simple
            }))
            : ShellAnalysis.naiveSplit(text).map((piece) => ({
              text: piece,
              forms: CommandPatterns.commandForms(piece, CommandPatterns.naiveWords(piece), []),
              redirects: []
            })))
        )
      }
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
  parts: ReadonlyArray<{ readonly forms: CommandPatterns.CommandForms; readonly subject: string }>,
  matchCommand: (
    rules: ReadonlyArray<RuleIndex.CompiledRule>,
    forms: ReadonlyArray<string>
  ) => PermissionContext.PermissionRule | undefined,
  denyRules: ReadonlyArray<RuleIndex.CompiledRule>,
  askRules: ReadonlyArray<RuleIndex.CompiledRule>
): PermissionRules.RuleMatch | undefined => {
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
 * @internal
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
