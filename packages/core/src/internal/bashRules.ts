/**
 * Bash rules: the assessment of a `Bash` call. Compound commands are split by
 * the `ShellAnalysis` port; `Bash(…)` rules are matched on every subcommand
 * (scripts given to `sh -c` and `eval` included), path rules on redirect
 * targets and on the path arguments of commands known to take paths.
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
  if (env.path.isAbsolute(expanded)) return [env.path.resolve(expanded)]
  if (resolution.unknown) return undefined
  return resolution.dirs.map((dir) => env.path.resolve(dir, expanded))
}

/** `~user/x`: a home we do not know. */
const isOtherUsersHome = (word: string): boolean => word.startsWith("~") && word !== "~" && !word.startsWith("~/")

const editTool: RuleIndex.ToolName = { name: "Edit", aliases: [] }
const readTool: RuleIndex.ToolName = { name: "Read", aliases: [] }

const nonFileTargets = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

interface CommandPart {
  readonly text: string
  readonly forms: CommandPatterns.CommandForms
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
}

/**
 * Whether a Bash specifier matches a command (one simple command, compared
 * as written).
 *
 * @internal
 */
export const matchesCommand = (specifier: string, command: string): boolean =>
  CommandPatterns.compileCommandPattern(specifier)(CommandPatterns.normalizeSpaces(command))

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

    const matchCommand = (rules: ReadonlyArray<RuleIndex.CompiledRule>, forms: ReadonlyArray<string>) => {
      for (const compiled of rules) {
        if (compiled.rule.specifier === undefined) return compiled.rule
        if (compiled.command === undefined) continue
        for (const form of forms) if (compiled.command(form)) return compiled.rule
      }
      return undefined
    }
    const matchPaths = (rules: ReadonlyArray<RuleIndex.CompiledRule>, paths: ReadonlyArray<string>, every: boolean) => {
      for (const compiled of rules) {
        const hits = paths.filter((path) => {
          const probe = PathPatterns.makePathProbe(path, false, env.path.sep)
          return RuleIndex.ruleApplies(compiled, { path: probe, host: undefined, content: undefined }, env)
        })
        if (every ? hits.length === paths.length && paths.length > 0 : hits.length > 0) return compiled.rule
      }
      return undefined
    }

    if (Option.isNone(analysis)) {
      // Fail closed: deny and ask rules see a naive split; nothing is allowed by a rule or as read-only.
      const parts = ShellAnalysis.naiveSplit(command).map((text) =>
        CommandPatterns.commandForms(text, CommandPatterns.naiveWords(text), [])
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
      forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
      redirects: fileRedirects(simple.redirects)
    }))
    const resolution = resolutionBases(parts.map((part) => part.forms.argv), env)

    // Deny, then ask: any subcommand (scripts given to `sh -c` and `eval` included) or redirect target.
    const nested = yield* nestedParts(parts, shell, 3)
    const everyPart = [...parts, ...nested]
    let match = firstCommandMatch(
      everyPart.map((part) => ({ forms: part.forms, subject: CommandPatterns.normalizeSpaces(part.text) })),
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
      const pathsInside = resolved.every((paths) => paths !== undefined && paths.every((path) => PathRules.isInside(env, path)))
      const pathsUnprotected = resolved.every((paths) =>
        paths !== undefined && !paths.some((path) => PathRules.isProtected(env, path))
      )
      const partAllowed = allowRule !== undefined || (partReadOnly && pathsInside)
      const fsCommand = argv[0] !== undefined && acceptEditsCommands.has(argv[0]) && pathArgs !== undefined &&
        pathsInside && pathsUnprotected
      if (allowRule !== undefined) used.push(allowRule)
      if (!partAllowed) {
        allowed = false
        suggestions.push(suggestCommandRule(argv))
        reason ??= partReadOnly
          ? `\`${CommandPatterns.normalizeSpaces(part.text)}\` reads outside ${PathRules.workingDirectories(env)}`
          : `\`${CommandPatterns.normalizeSpaces(part.text)}\` needs approval`
      }
      if (!partAllowed && !(fsCommand && !hasDynamicParts)) allowedWithEdits = false
    }

    for (const { paths, target } of redirectTargets) {
      const allowRule = paths === undefined ? undefined : matchPaths(editAllow, paths, true)
      const inside = paths !== undefined && paths.every((path) => PathRules.isInside(env, path) && !PathRules.isProtected(env, path))
      if (allowRule !== undefined) {
        used.push(allowRule)
        continue
      }
      allowed = false
      if (!inside) allowedWithEdits = false
      if (paths !== undefined && paths.length === 1) suggestions.push(`Edit(/${PathPatterns.escapePathPattern(paths[0]!)})`)
      reason ??= inside
        ? `the output redirect to ${target} is an edit that needs approval`
        : `the output redirect to ${target} writes outside ${PathRules.workingDirectories(env)}`
    }

    return {
      subject: command,
      match,
      allowed,
      allowRules: allowed ? Array.from(new Set(used)) : [],
      readOnly,
      allowedWithEdits: allowed || allowedWithEdits,
      reason: reason ?? `\`${CommandPatterns.normalizeSpaces(command)}\` needs approval`,
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
          forms: CommandPatterns.commandForms(simple.text, simple.argv, simple.assignments),
          redirects: fileRedirects(simple.redirects)
        }))
        : ShellAnalysis.naiveSplit(script).map((text) => ({
          text,
          forms: CommandPatterns.commandForms(text, CommandPatterns.naiveWords(text), []),
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
