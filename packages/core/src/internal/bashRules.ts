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
 *   A path that may go through a link another part makes (`ln`, `cp -s`,
 *   `tar x`, an undescribed program; bashLinks.ts) is unknown: at decision
 *   time the link does not exist yet (`ln -s . l && cat l/.env`); on the
 *   allow side it is not inside the working directories.
 * - `Bash` and `Bash(*)` allow every command no deny or ask rule matches;
 *   narrower allow rules never match a line with dynamic parts, nor a command
 *   with an environment prefix outside `ShellAnalysis.isHarmlessAssignment`.
 * - A suggestion is a rule that allows the part it was made for.
 *
 * What the parts run is `bashParts.ts`; what they touch, `bashPaths.ts`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as PermissionContext from "../PermissionContext.js"
import type * as PermissionRules from "../PermissionRules.js"
import * as ShellAnalysis from "../ShellAnalysis.js"
import * as BashLinks from "./bashLinks.js"
import * as BashParts from "./bashParts.js"
import type { CommandPart } from "./bashParts.js"
import * as BashPaths from "./bashPaths.js"
import type { ResolutionBases, Touched } from "./bashPaths.js"
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
export const acceptEditsCommands: ReadonlySet<string> = BashPaths.acceptEditsCommands

/**
 * Whether a Bash specifier matches a command (one simple command, compared
 * as written).
 *
 * @internal
 */
export const matchesCommand = (specifier: string, command: string): boolean =>
  CommandPatterns.compileCommandPattern(specifier)(CommandPatterns.normalizeSpaces(command))

const editTool: RuleIndex.ToolName = { name: "Edit", aliases: [] }
const readTool: RuleIndex.ToolName = { name: "Read", aliases: [] }

/** The rules a Bash call is judged by, compiled and grouped, with their matchers. */
interface BashRuleSet {
  readonly env: PermissionRules.Environment
  readonly deny: ReadonlyArray<RuleIndex.CompiledRule>
  readonly ask: ReadonlyArray<RuleIndex.CompiledRule>
  readonly allow: ReadonlyArray<RuleIndex.CompiledRule>
  /** An output redirect is an Edit of its target; path arguments are reads or edits. */
  readonly editDeny: ReadonlyArray<RuleIndex.CompiledRule>
  readonly editAsk: ReadonlyArray<RuleIndex.CompiledRule>
  readonly editAllow: ReadonlyArray<RuleIndex.CompiledRule>
  readonly readDeny: ReadonlyArray<RuleIndex.CompiledRule>
  readonly readAsk: ReadonlyArray<RuleIndex.CompiledRule>
  /** `Bash` or `Bash(*)`: allows every command no deny or ask rule matches (issue 13). */
  readonly blanketAllow: PermissionContext.PermissionRule | undefined
}

const compileRules = (
  call: PermissionRules.Call,
  ruleSets: ReadonlyArray<ReadonlyArray<PermissionContext.PermissionRule>>,
  env: PermissionRules.Environment
): BashRuleSet => {
  const allow = RuleIndex.candidates(ruleSets, "allow", call.tool)
  return {
    env,
    deny: RuleIndex.candidates(ruleSets, "deny", call.tool),
    ask: RuleIndex.candidates(ruleSets, "ask", call.tool),
    allow,
    editDeny: RuleIndex.candidates(ruleSets, "deny", editTool),
    editAsk: RuleIndex.candidates(ruleSets, "ask", editTool),
    editAllow: RuleIndex.candidates(ruleSets, "allow", editTool),
    readDeny: RuleIndex.candidates(ruleSets, "deny", readTool),
    readAsk: RuleIndex.candidates(ruleSets, "ask", readTool),
    blanketAllow: allow.find((compiled) =>
      compiled.rule.specifier === undefined || CommandPatterns.normalizeSpaces(compiled.rule.specifier) === "*"
    )?.rule
  }
}

/** The path rules an unresolvable path could match: Read and Edit deny, then ask. */
const pathRulesOf = (rules: BashRuleSet) => [...rules.readDeny, ...rules.editDeny, ...rules.readAsk, ...rules.editAsk]

/** The first deny, else ask, rule an unresolvable name or path could match: the subject of a fail-closed ask. */
const couldMatch = (rules: BashRuleSet, kinds: "command" | "path" | "both") => {
  const commandRules = [...rules.deny, ...rules.ask]
  const list = kinds === "command" ? commandRules : kinds === "path" ? pathRulesOf(rules) : [
    ...commandRules,
    ...pathRulesOf(rules)
  ]
  return list[0]?.rule
}

/** The first rule whose command pattern matches one of the forms (a rule without specifier matches all). */
const matchCommand = (rules: ReadonlyArray<RuleIndex.CompiledRule>, forms: ReadonlyArray<string>) => {
  for (const compiled of rules) {
    if (compiled.rule.specifier === undefined) return compiled.rule
    if (compiled.command === undefined) continue
    for (const form of forms) if (compiled.command(form)) return compiled.rule
  }
  return undefined
}

/** The first rule whose path pattern matches one of the forms (`every`: all of them). */
const matchForms = (
  rules: ReadonlyArray<RuleIndex.CompiledRule>,
  forms: ReadonlyArray<string>,
  every: boolean,
  env: PermissionRules.Environment
) => {
  for (const compiled of rules) {
    const hits = forms.filter((path) => {
      const probe = PathPatterns.makePathProbe(path, false, env.path.sep)
      return RuleIndex.ruleApplies(compiled, { path: probe, host: undefined, content: undefined }, env)
    })
    if (every ? hits.length === forms.length && forms.length > 0 : hits.length > 0) return compiled.rule
  }
  return undefined
}

/** A rule match, and whether it is a fail-closed ask (no rule could allow the call, so none is suggested). */
interface Verdict {
  readonly match: PermissionRules.RuleMatch | undefined
  readonly failedClosed: boolean
}

const failClosed = (rule: PermissionContext.PermissionRule, subject: string): Verdict => ({
  match: { behavior: "ask", rule, subject },
  failedClosed: true
})

const firstCommandMatch = (
  parts: ReadonlyArray<{ readonly forms: CommandPatterns.CommandForms; readonly subject: string }>,
  rules: BashRuleSet
): PermissionRules.RuleMatch | undefined => {
  for (const part of parts) {
    const rule = matchCommand(rules.deny, part.forms.denyForms)
    if (rule !== undefined) return { behavior: "deny", rule, subject: part.subject }
  }
  for (const part of parts) {
    const rule = matchCommand(rules.ask, part.forms.denyForms)
    if (rule !== undefined) return { behavior: "ask", rule, subject: part.subject }
  }
  return undefined
}

/** Why a fail-closed subject names a line that runs what no part shows; `pathVerdict` keeps such asks closed. */
const unseen = "what it runs cannot be known ahead of time"

/** A line the analyser could not parse: deny and ask rules see a naive split; a rule that could match asks. */
const assessUnanalysed = (command: string, rules: BashRuleSet): PermissionRules.Assessment => {
  const parts = ShellAnalysis.naiveSplit(command).map((text) =>
    CommandPatterns.commandForms(text, CommandPatterns.naiveWords(text), [])
  )
  const matched = firstCommandMatch(parts.map((forms) => ({ forms, subject: forms.argv.join(" ") })), rules)
  const closing = couldMatch(rules, "both")
  const match = matched ?? (closing === undefined
    ? undefined
    : failClosed(closing, `\`${CommandPatterns.normalizeSpaces(command)}\` (it could not be analysed)`).match)
  const allowed = match === undefined && rules.blanketAllow !== undefined
  return {
    subject: command,
    match,
    allowed,
    allowRules: allowed ? [rules.blanketAllow!] : [],
    readOnly: false,
    allowedWithEdits: allowed,
    reason: "the command could not be analysed, so it needs approval",
    suggestions: []
  }
}

/**
 * Deny, then ask, on what the parts run (scripts given to `sh -c`, `eval`,
 * `find -exec`, aliases included); a name that cannot be resolved statically
 * may be any program a rule names.
 */
const commandVerdict = (
  command: string,
  analysis: ShellAnalysis.Analysis,
  everyPart: ReadonlyArray<CommandPart>,
  rules: BashRuleSet
): Effect.Effect<Verdict> =>
  Effect.gen(function*() {
    // A program named by a path is also the program its real path names (`./x` linked to `/bin/rm`).
    const resolved = yield* BashParts.resolvedNameParts(everyPart, rules.env)
    const match = firstCommandMatch(
      [...everyPart, ...resolved].map((part) => ({
        forms: part.forms,
        subject: CommandPatterns.normalizeSpaces(part.text)
      })),
      rules
    )
    if (match !== undefined) return { match, failedClosed: false }
    return hiddenVerdict(command, analysis, everyPart, rules)
  })

/**
 * A line whose programs cannot all be named ahead of time counts as matching
 * every deny and ask rule that could match it (SPEC §4.5; issue 19, class 9).
 */
const hiddenVerdict = (
  command: string,
  analysis: ShellAnalysis.Analysis,
  everyPart: ReadonlyArray<CommandPart>,
  rules: BashRuleSet
): Verdict => {
  // Bash runs what no part shows (an evaluated value, a rebound name): any program, reading any path.
  if (analysis.runsUnseen) {
    const rule = couldMatch(rules, "both")
    const line = CommandPatterns.normalizeSpaces(command)
    if (rule !== undefined) return failClosed(rule, `\`${line}\` (bash evaluates part of it at run time: ${unseen})`)
  }
  const hidden = everyPart.find((part, index) =>
    BashParts.unresolvableName(part.forms.argv[0] ?? part.simple?.argv[0]) && (part.forms.argv.length > 0) ||
    BashParts.shellWithoutScript(part.forms.argv) || BashParts.rebindsNames(part) ||
    BashParts.runsWhatItMade(everyPart, index)
  )
  const rule = hidden === undefined ? undefined : couldMatch(rules, "command")
  return hidden !== undefined && rule !== undefined
    ? failClosed(
      rule,
      `\`${CommandPatterns.normalizeSpaces(hidden.text)}\` (what it runs cannot be known ahead of time)`
    )
    : { match: undefined, failedClosed: false }
}

/**
 * Path rules over what every part touches, on the paths as written and their
 * real paths; a recursive content read meets a rule below its directory. A
 * path that cannot be resolved statically counts as every path a rule names
 * below its literal directory (`sec*\/key` could be `secrets/key`; `src/*.ts`
 * cannot be under `secrets/`).
 */
const pathVerdict = (
  previous: Verdict,
  everyPart: ReadonlyArray<CommandPart>,
  touchedByPart: ReadonlyMap<CommandPart, ReadonlyArray<Touched>>,
  resolution: ResolutionBases,
  rules: BashRuleSet
): Verdict => {
  const env = rules.env
  let match = previous.match
  if (match?.behavior !== "deny") {
    const all = everyPart.flatMap((part) => touchedByPart.get(part) ?? [])
    for (const touched of all) {
      if (touched.forms === undefined || touched.guess === true) continue
      const denyList = touched.write ? rules.editDeny : rules.readDeny
      const denied = matchForms(denyList, touched.forms, false, env) ??
        (touched.treeContent ? BashPaths.ruleInside(rules.readDeny, touched.forms, env) : undefined)
      if (denied !== undefined) {
        return { match: { behavior: "deny", rule: denied, subject: BashPaths.subjectOf(touched) }, failedClosed: false }
      }
      if (match === undefined) {
        const askList = touched.write ? rules.editAsk : rules.readAsk
        const asked = matchForms(askList, touched.forms, false, env) ??
          (touched.treeContent ? BashPaths.ruleInside(rules.readAsk, touched.forms, env) : undefined)
        if (asked !== undefined) match = { behavior: "ask", rule: asked, subject: BashPaths.subjectOf(touched) }
      }
    }
  }
  if (match !== undefined) return { match, failedClosed: previous.failedClosed && match === previous.match }
  const pathRules = pathRulesOf(rules)
  const ruleCouldMatch = (words: ReadonlyArray<string>) =>
    pathRules.find((compiled) => {
      const base = BashPaths.ruleBase(compiled, env)
      return words.some((word) => {
        const dirs = BashPaths.literalDirectories(word, resolution, env)
        return base === undefined || dirs === undefined ||
          dirs.some((dir) => BashPaths.within(env, dir, base) || BashPaths.within(env, base, dir))
      })
    })?.rule
  for (const part of everyPart) {
    const touchedList = touchedByPart.get(part) ?? []
    const words = [
      ...(part.simple?.unresolvedWords ?? []),
      ...touchedList.filter((touched) => touched.forms === undefined && touched.throughLinks !== true).map(() => "$"),
      // Through a link the line makes, a path may lead anywhere: every path rule could match it.
      ...touchedList.filter((touched) => touched.throughLinks === true && touched.guess !== true).map(() => "<link>")
    ]
    const rule = words.length === 0 ? undefined : ruleCouldMatch(words)
    const named = rule === undefined ? guessedRule(touchedList, rules) : undefined
    if (rule !== undefined || named !== undefined) {
      const why = rule !== undefined
        ? "a path in it cannot be resolved ahead of time"
        : "it names a path a rule covers, and what it does with it cannot be known ahead of time"
      return failClosed(rule ?? named!, `\`${CommandPatterns.normalizeSpaces(part.text)}\` (${why})`)
    }
  }
  return { match: undefined, failedClosed: false }
}

/**
 * The first Read or Edit rule a word of an undescribed invocation (or the tree of `find -exec … {}`) names:
 * whether and how the program uses the path is unknown, so the call asks.
 */
const guessedRule = (touchedList: ReadonlyArray<Touched>, rules: BashRuleSet) => {
  const pathRules = pathRulesOf(rules)
  for (const touched of touchedList) {
    if (touched.guess !== true || touched.forms === undefined) continue
    const rule = matchForms(pathRules, touched.forms, false, rules.env) ??
      (touched.treeContent ? BashPaths.ruleInside(pathRules, touched.forms, rules.env) : undefined)
    if (rule !== undefined) return rule
  }
  return undefined
}

/** What the allow side found: whether every part (and redirect) is allowed, and what to suggest. */
interface AllowVerdict {
  readonly allowed: boolean
  readonly allowedWithEdits: boolean
  readonly used: ReadonlyArray<PermissionContext.PermissionRule>
  readonly suggestions: ReadonlyArray<string>
  /** Only the blanket rule could allow the line (a write target that cannot be resolved, a dynamic part). */
  readonly onlyBlanket: boolean
  readonly reason: string | undefined
}

/**
 * Allow: every part by an allow rule or as read-only inside the working
 * directories (acceptEdits: or as a filesystem command inside them), and
 * every output redirect by an Edit allow rule.
 */
const allowVerdict = (
  analysis: ShellAnalysis.Analysis,
  parts: ReadonlyArray<CommandPart>,
  touchedByPart: ReadonlyMap<CommandPart, ReadonlyArray<Touched>>,
  resolution: ResolutionBases,
  rules: BashRuleSet
): AllowVerdict => {
  const env = rules.env
  // A line bash evaluates at run time is judged as a whole: no part's allow rule or read-only verdict
  // allows it (issue 19, class 2).
  const dynamic = analysis.hasDynamicParts || analysis.runsUnseen
  const used: Array<PermissionContext.PermissionRule> = []
  const suggestions: Array<string> = []
  let allowed = !dynamic
  let allowedWithEdits = !dynamic
  let reason: string | undefined = analysis.runsUnseen
    ? "bash evaluates part of the command at run time (arithmetic, a subscript, a prompt string or a rebound name)"
    : dynamic
    ? "the command contains a substitution or expansion that cannot be checked ahead of time"
    : undefined
  const redirectTouched = parts.flatMap((part) =>
    (touchedByPart.get(part) ?? []).filter((touched) =>
      touched.write && part.simple !== undefined && touched.origin.kind === "redirect"
    )
  )
  for (const part of parts) {
    const argv = part.forms.argv
    const simple = part.simple!
    const text = CommandPatterns.normalizeSpaces(part.text)
    const allowRule = dynamic ? undefined : matchCommand(rules.allow, part.forms.allowForms)
    const partReadOnly = !dynamic && (analysis.readOnly || simple.readOnly)
    const ownTouched = (touchedByPart.get(part) ?? []).filter((entry) =>
      !redirectTouched.includes(entry) && entry.guess !== true
    )
    const redirectWords = new Set(part.redirects.map((redirect) => redirect.target))
    const pathsInside = BashPaths.insideAll(ownTouched, env, false) &&
      simple.unresolvedWords.every((word) => BashPaths.staysInside(word) || redirectWords.has(word))
    // Bash's `/dev/tcp/host/port` redirections are network clients (`printf 'GET /x' < /dev/tcp/h/80 1>&0`
    // sends a request): no narrower rule than the blanket one, and no read-only set, covers them.
    const socket = [...simple.readPaths, ...simple.writePaths].some((use) => BashPaths.bashSocket.test(use.path)) ||
      part.redirects.some((redirect) => BashPaths.bashSocket.test(redirect.target))
    const partAllowed = !socket && (allowRule !== undefined || (partReadOnly && pathsInside))
    const fsCommand = argv[0] !== undefined && acceptEditsCommands.has(argv[0]) && simple.onlyWritesPaths &&
      simple.pathsKnown && !simple.unresolvedPaths && BashPaths.insideAll(ownTouched, env, true)
    if (allowRule !== undefined) used.push(allowRule)
    if (!partAllowed) {
      allowed = false
      if (!dynamic) suggestions.push(suggestionFor(part))
      reason ??= socket
        ? `\`${text}\` opens a network connection through /dev/tcp or /dev/udp`
        : partReadOnly
        ? `\`${text}\` reads outside ${PathRules.workingDirectories(env)}`
        : `\`${text}\` needs approval`
    }
    if (!partAllowed && !(fsCommand && !dynamic)) allowedWithEdits = false
  }
  // Only the blanket rule allows a write to a target that cannot be resolved.
  let onlyBlanket = dynamic
  for (const part of parts) {
    for (const redirect of part.redirects) {
      const paths = BashPaths.resolveArgument(redirect.target, resolution, env)
      const touched = redirectTouched.find((entry) => entry.path === redirect.target)
      const forms = touched?.forms ?? paths
      const allowRule = forms === undefined ? undefined : matchForms(rules.editAllow, forms, true, env)
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
  return { allowed, allowedWithEdits, used, suggestions, onlyBlanket, reason }
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
    const rules = compileRules(call, ruleSets, env)
    if (Option.isNone(analysis)) return assessUnanalysed(command, rules)

    const parts = BashParts.partsOf(analysis.value.commands)
    const resolution = BashPaths.resolutionBases(parts.map((part) => part.forms.argv), env)
    const everyPart = [...parts, ...(yield* BashParts.nestedParts(parts, shell, 3))]
    const touchedByPart = new Map<CommandPart, ReadonlyArray<Touched>>()
    // A path through a link another part makes is unknown (order-insensitive: a loop may run that part first);
    // a maker's copies for deny rules (`/bin/ln` as `ln`) share its record.
    const makers = everyPart.filter((part) => BashLinks.makesLinks(part, BashParts.runsScripts(part.forms.argv)))
    const places = new Map<CommandPart, BashLinks.LinkPlaces>()
    for (const maker of makers) places.set(maker, yield* BashLinks.placesOf(maker, resolution, env))
    const guesses = pathRulesOf(rules).length > 0
    for (const part of everyPart) {
      const others = makers.filter((maker) =>
        maker !== part && (maker.simple === undefined || maker.simple !== part.simple)
      )
      const links = BashLinks.combine(others.map((maker) => places.get(maker)!), env)
      const throughLinks = (use: BashPaths.LinkQuery) => BashLinks.goesThrough(links, use, resolution, env)
      touchedByPart.set(part, yield* BashPaths.touchedBy(part, resolution, env, { guesses, throughLinks }))
    }
    const { failedClosed, match } = pathVerdict(
      yield* commandVerdict(command, analysis.value, everyPart, rules),
      everyPart,
      touchedByPart,
      resolution,
      rules
    )
    const hasDynamicParts = analysis.value.hasDynamicParts
    if (rules.blanketAllow !== undefined && match === undefined) {
      return {
        subject: command,
        match,
        allowed: true,
        allowRules: [rules.blanketAllow],
        readOnly: analysis.value.readOnly && !hasDynamicParts,
        allowedWithEdits: true,
        reason: `\`${CommandPatterns.normalizeSpaces(command)}\` is allowed by ${rules.blanketAllow.toolName}`,
        suggestions: []
      }
    }
    const verdict = allowVerdict(analysis.value, parts, touchedByPart, resolution, rules)
    return {
      subject: command,
      match,
      allowed: verdict.allowed,
      allowRules: verdict.allowed ? Array.from(new Set(verdict.used)) : [],
      // The analyser judged the whole line (redirects and substitutions included).
      readOnly: analysis.value.readOnly && !hasDynamicParts && parts.every((part) => part.redirects.length === 0),
      allowedWithEdits: verdict.allowed || verdict.allowedWithEdits,
      reason: verdict.reason ?? `\`${CommandPatterns.normalizeSpaces(command)}\` needs approval`,
      // A fail-closed ask has no rule that could allow the call; a dynamic line only the blanket rule.
      suggestions: failedClosed ? [] : verdict.onlyBlanket ? ["Bash"] : Array.from(new Set(verdict.suggestions))
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
