/**
 * What a Bash command line touches, for the path rules (issue 9): the
 * directories its relative paths may be relative to (the cwd and every `cd`
 * target), every absolute form of each path it reads or writes (as written
 * and as resolved), and the literal directories an unresolved path word stays
 * below. Each touched path carries its origin — an argument with its use, or
 * a redirection target — so that messages are rendered from data.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as PermissionRules from "../PermissionRules.js"
import type { CommandPart } from "./bashParts.js"
import * as CommandPatterns from "./commandPatterns.js"
import * as PathRules from "./pathRules.js"
import type * as RuleIndex from "./ruleIndex.js"

/**
 * The filesystem commands `acceptEdits` allows when all their paths are
 * inside the working directories.
 */
export const acceptEditsCommands: ReadonlySet<string> = new Set(["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"])

/**
 * How a command takes path arguments: every positional, all but the first (a pattern or script), only the first
 * (`source FILE ARGS…`: bash reads and runs FILE), or `find`'s roots.
 */
type PathShape = "all" | "afterFirst" | "first" | "find"

const pathShapes: Record<string, PathShape> = {}
for (
  const name of [
    "cd",
    "pushd",
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "stat",
    "file",
    "du",
    "tree",
    "diff",
    "cmp",
    "nl",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "readlink",
    "realpath",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "sort",
    "uniq",
    "cut",
    "tac",
    "rev",
    "column",
    "mkdir",
    "touch",
    "rm",
    "rmdir",
    "mv",
    "cp",
    "ln",
    "chmod",
    "chown"
  ]
) pathShapes[name] = "all"
for (const name of ["grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "jq"]) pathShapes[name] = "afterFirst"
pathShapes["find"] = "find"
pathShapes["source"] = "first"
pathShapes["."] = "first"

/** The path arguments of a command, or `undefined` when it is not known to take paths. */
export const pathArguments = (argv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
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
    if (shape === "first" && positional > 1) break
    out.push(word)
  }
  return out
}

/**
 * `word` relative to `dir`, joined as the kernel will walk it: not normalised,
 * because `LINK/..` is the parent of the link's target, not the directory the
 * link is in (issue 19, class 7). The permission environment's `resolvePath`
 * resolves it component by component.
 */
export const joinUnnormalised = (env: PermissionRules.Environment, dir: string, word: string): string =>
  env.path.isAbsolute(word) ? word : dir.endsWith(env.path.sep) ? dir + word : dir + env.path.sep + word

/** Whether a path has a `..` component (after a link it may lead anywhere). */
const climbs = (path: string): boolean => path.split("/").includes("..")

export interface ResolutionBases {
  /** Directories relative paths may be relative to: the cwd and every `cd` target. */
  readonly dirs: ReadonlyArray<string>
  /** A `cd` to somewhere we cannot know (`cd -`, `cd $X`). */
  readonly unknown: boolean
}

export const resolutionBases = (
  commands: ReadonlyArray<ReadonlyArray<string>>,
  env: PermissionRules.Environment
): ResolutionBases => {
  let dirs = [env.cwd]
  let unknown = false
  for (const argv of commands) {
    if (argv[0] !== "cd" && argv[0] !== "pushd") continue
    const target = argv.slice(1).find((word) => !word.startsWith("-"))
    if (target === undefined) dirs = Array.from(new Set([...dirs, env.home]))
    else if (/[$`]/.test(target) || target === "-" || isOtherUsersHome(target)) unknown = true
    else {
      const expanded = PathRules.expandHome(target, env.home, env.path)
      dirs = Array.from(new Set([...dirs, ...dirs.map((dir) => joinUnnormalised(env, dir, expanded))]))
    }
    if (dirs.length > 16) unknown = true
  }
  if (argvHas(commands, "popd")) unknown = true
  return { dirs, unknown }
}

const argvHas = (commands: ReadonlyArray<ReadonlyArray<string>>, name: string) =>
  commands.some((argv) => argv[0] === name)

/** Every absolute path an argument may denote, or `undefined` when it cannot be known. */
export const resolveArgument = (
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
    return resolution.dirs.map((dir) => joinUnnormalised(env, dir, own[1] ?? "."))
  }
  const standardStream = /^\/proc\/+(?:self|thread-self)\/+fd\/+[0-2]$/.test(expanded)
  if (/^\/proc\/+[^/]+\/+(?:task\/|cwd|root|fd|map_files)/.test(expanded) && !standardStream) {
    return /^\/proc\/+(?:self|thread-self)\/+root(?:\/|$)/.test(expanded) ? [expanded] : undefined
  }
  if (env.path.isAbsolute(expanded)) return [expanded]
  if (resolution.unknown) return undefined
  return resolution.dirs.map((dir) => joinUnnormalised(env, dir, expanded))
}

/** `~user/x`: a home we do not know. */
const isOtherUsersHome = (word: string): boolean => word.startsWith("~") && word !== "~" && !word.startsWith("~/")

/** A path bash itself turns into a socket in a redirection. */
export const bashSocket = /^\/dev\/+(?:tcp|udp)\//

/** The rule's directory: everything it matches is at or below it. */
export const ruleBase = (compiled: RuleIndex.CompiledRule, env: PermissionRules.Environment): string | undefined => {
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

export const within = (env: PermissionRules.Environment, dir: string, candidate: string): boolean =>
  candidate === dir || candidate.startsWith(dir.endsWith(env.path.sep) ? dir : dir + env.path.sep)

/**
 * A path word the analyser could not resolve that still cannot leave the
 * directory it is relative to: a relative glob or brace pattern without `..`
 * (`src/*.ts`, `{a,b}.txt`), not an expansion, `~` or an absolute path.
 */
export const staysInside = (word: string): boolean =>
  word.length > 0 && !/^[~/<]/.test(word) && !/[$`]/.test(word) && !word.split("/").includes("..")

/**
 * The directories an unresolved path word stays below: its segments before
 * the first glob, brace or expansion character, against every base;
 * `undefined` when that could be anywhere (an expansion up front, `~user`,
 * `..` after a pattern, a list of names).
 */
export const literalDirectories = (
  word: string,
  resolution: ResolutionBases,
  env: PermissionRules.Environment
): ReadonlyArray<string> | undefined => {
  if (word.startsWith("<")) return undefined
  const segments = word.split("/")
  const first = segments.findIndex((segment) => /[*?[\]{}$`]/.test(segment))
  const literal = first === -1 ? segments : segments.slice(0, first)
  if (first !== -1 && segments.slice(first).includes("..")) return undefined
  const dirs = literal.length === 0 || (literal.length === 1 && literal[0] === "")
    ? word.startsWith("/") ? [env.path.sep] : resolution.unknown ? undefined : resolution.dirs
    : resolveArgument(literal.join("/") || "/", resolution, env)
  // `LINK/../x*`: after a link, `..` may lead anywhere (issue 19, class 7).
  return dirs === undefined || dirs.some(climbs) ? undefined : dirs
}

/** Where a touched path comes from: an argument of a part, or the target of one of its redirections. */
export interface Origin {
  readonly kind: "argument" | "redirect"
  /** The part as written, spaces normalised. */
  readonly part: string
}

/** A path a part touches, resolved. */
export interface Touched {
  readonly origin: Origin
  /** The path as written. */
  readonly path: string
  /** Every absolute form (lexical and real) of every base it may be relative to; `undefined` when unknown. */
  readonly forms: ReadonlyArray<string> | undefined
  readonly write: boolean
  /** Its whole tree's contents are read (`grep -r`, `rg`, `git grep`). */
  readonly treeContent: boolean
  /**
   * A word of an invocation the analyser does not describe, which may or may not be a path (`tar cf - .env`),
   * or a root of `find … -exec … {}`: a Read or Edit rule that matches it makes the call ask, never deny.
   */
  readonly guess?: boolean
  /**
   * It may go through a link another part of the line makes (`ln -s . l && cat l/.env`): when the line runs, the
   * link exists, so its forms are only what it is now — it is as unknown as a glob (bashLinks.ts).
   */
  readonly throughLinks?: boolean
}

/** What a rule match names as its subject: `read of .env by `cat .env``. */
export const subjectOf = (touched: Touched): string =>
  `${touched.write ? "write" : "read"} of ${touched.path} by \`${touched.origin.part}\``

/** Every absolute form (as written and resolved) of a path word, or `undefined` when it cannot be known. */
export const absoluteForms = (
  word: string,
  resolution: ResolutionBases,
  env: PermissionRules.Environment
): Effect.Effect<ReadonlyArray<string> | undefined> =>
  Effect.gen(function*() {
    const bases = resolveArgument(word, resolution, env)
    if (bases === undefined) return undefined
    const forms: Array<string> = []
    for (const absolute of bases) {
      // A link on the way into `/proc/self` leads, for the command, into its own process (`l -> /proc/self/cwd`,
      // `l/.env`); resolved here it would lead into this one's.
      if (env.reachesProcess !== undefined && (yield* env.reachesProcess(absolute))) return undefined
      const resolved = yield* resolveAsTheKernel(absolute, env)
      forms.push(resolved.lexical, ...resolved.real)
    }
    // `/proc/self` (and a process's own directory) is the command's process, not this one: its `cwd`, `fd/N`,
    // `root` are unknown here, so such a path is as unknown as a glob (the footprint oracle's find).
    if (forms.some((form) => processDirectory.test(form))) return undefined
    return Array.from(new Set(forms))
  })

const processDirectory = /^\/proc\/(?:self|thread-self|\d+)(?:\/|$)/

/**
 * Resolve an unnormalised absolute path as the kernel walks it (issue 19,
 * class 7): each `..` climbs from the real path of what precedes it, so
 * `LINK/../x` is beside the link's target. The environment's `resolvePath`
 * resolves each piece without `..`; its `lexical` form is the path as
 * written, normalised.
 */
export const resolveAsTheKernel = (
  absolute: string,
  env: PermissionRules.Environment
): Effect.Effect<PermissionRules.ResolvedPath> =>
  Effect.gen(function*() {
    const segments = absolute.split(env.path.sep)
    const climb = segments.lastIndexOf("..")
    if (climb === -1) return yield* env.resolvePath(absolute)
    let real = env.path.sep
    let start = 1
    for (let i = 1; i <= climb; i++) {
      if (segments[i] !== "..") continue
      const before = segments.slice(start, i).filter((segment) => segment.length > 0 && segment !== ".")
      if (before.length > 0) real = (yield* env.resolvePath(env.path.join(real, ...before))).real[0] ?? real
      real = env.path.dirname(real)
      start = i + 1
    }
    const rest = segments.slice(climb + 1).filter((segment) => segment.length > 0)
    const resolved = yield* env.resolvePath(rest.length === 0 ? real : env.path.join(real, ...rest))
    return { lexical: env.path.resolve(absolute), real: resolved.real }
  })

/**
 * The paths a part touches: the analyser's reads and writes (a write to one
 * of the part's redirection targets is that redirection), or, for a part the
 * analyser did not describe (a nested script), the path arguments of the
 * commands known to take paths and its redirection targets; the files bash
 * reads for `$(<FILE)`; and, when asked, the `guess` entries.
 */
export const touchedBy = (
  part: CommandPart,
  resolution: ResolutionBases,
  env: PermissionRules.Environment,
  options: TouchOptions
): Effect.Effect<ReadonlyArray<Touched>> =>
  Effect.gen(function*() {
    const out: Array<Touched> = []
    const name = part.forms.argv[0] ?? ""
    const text = CommandPatterns.normalizeSpaces(part.text)
    const simple = part.simple
    const targets = new Set(part.redirects.map((redirect) => redirect.target))
    const undescribed = simple === undefined ||
      (!simple.pathsKnown && simple.readPaths.length === 0 && simple.writePaths.length === 0)
    const uses = undescribed
      ? (pathArguments(part.forms.argv) ?? []).map((path) => ({
        path,
        write: acceptEditsCommands.has(name),
        subtree: false,
        content: true,
        redirect: false
      }))
      : [
        // Paths anchored at the repository are for footprints; the rules judge the paths as written.
        ...simple.readPaths.filter((use) => use.anchor === undefined).map((use) => ({
          ...use,
          write: false,
          redirect: false
        })),
        ...simple.writePaths.filter((use) => use.anchor === undefined).map((use) => ({
          ...use,
          write: true,
          redirect: targets.has(use.path)
        }))
      ]
    const substituted = substitutionReads(part).map((path) => ({
      path,
      write: false,
      subtree: false,
      content: true,
      redirect: false
    }))
    const throughLinks = (path: string, forms: ReadonlyArray<string> | undefined, tree: boolean) =>
      options.throughLinks?.({ path, forms, program: name, tree }) === true ? { throughLinks: true } : {}
    for (const use of [...uses, ...substituted]) {
      const forms = yield* absoluteForms(use.path, resolution, env)
      out.push({
        origin: { kind: use.redirect ? "redirect" : "argument", part: text },
        path: use.path,
        forms,
        write: use.write,
        treeContent: !use.write && use.subtree && use.content,
        ...throughLinks(use.path, forms, !use.write && use.subtree && use.content)
      })
    }
    if (options.guesses) {
      const known = new Set(uses.map((use) => use.path))
      const roots = findExecRoots(part.forms.argv)
      // The command after find's `-exec` is a part of its own (and gets its own guesses).
      const action = part.forms.argv.findIndex((word) => findActions.has(word))
      const argv = roots.length > 0 && action !== -1 ? part.forms.argv.slice(0, action) : part.forms.argv
      const words = undescribed ? guessedWords(argv).filter((word) => !known.has(word) && !roots.includes(word)) : []
      const guessed = [...words.map((word) => ({ word, tree: false })), ...roots.map((word) => ({ word, tree: true }))]
      for (const { tree, word } of guessed) {
        const forms = yield* absoluteForms(word, resolution, env)
        if (forms === undefined) continue
        out.push({
          origin: { kind: "argument", part: text },
          path: word,
          forms,
          write: false,
          treeContent: tree,
          guess: true,
          ...throughLinks(word, forms, tree)
        })
      }
    }
    // Redirect targets of parts the analyser did not describe (nested scripts).
    if (simple === undefined) {
      for (const redirect of part.redirects) {
        const forms = yield* absoluteForms(redirect.target, resolution, env)
        out.push({
          origin: { kind: "redirect", part: text },
          path: redirect.target,
          forms,
          write: true,
          treeContent: false,
          ...throughLinks(redirect.target, forms, false)
        })
      }
    }
    return out
  })

/** What `touchedBy` adds beyond the paths the analyser reports. */
export interface TouchOptions {
  /**
   * Whether a path may go through a link another part of the line makes (bashLinks.ts `goesThrough`): such a
   * path is marked `throughLinks`.
   */
  readonly throughLinks?: (use: LinkQuery) => boolean
  /** Add the `guess` entries (only worth their lookups when a Read or Edit rule could match them). */
  readonly guesses: boolean
}

/** A path a part touches, as `TouchOptions.throughLinks` is asked about it. */
export interface LinkQuery {
  readonly path: string
  readonly forms: ReadonlyArray<string> | undefined
  /** The part's program (`rm l` removes the link itself). */
  readonly program: string
  /** Its tree is read (a link below it counts too). */
  readonly tree: boolean
}

/** `$(<FILE)` and `` `<FILE` `` in a word: bash reads FILE with no program. */
const readSubstitution = /\$\(\s*<\s*([^)]*?)\s*\)|`\s*<\s*([^`]*?)\s*`/g

/**
 * The files bash itself reads for a part: `$(<FILE)` in one of its words or assignments, or the part `< FILE`
 * the analyser reports for the inside of `$(< FILE)`. A FILE that is not one plain word is unknown (`$`).
 */
const substitutionReads = (part: CommandPart): ReadonlyArray<string> => {
  const argv = part.forms.argv
  const out: Array<string> = []
  if (argv[0] === "<" && argv[1] !== undefined) out.push(argv[1])
  for (const word of [...(part.simple?.argv ?? argv), ...(part.simple?.assignments ?? [])]) {
    for (const found of word.matchAll(readSubstitution)) {
      const file = (found[1] ?? found[2] ?? "").replace(/["']/g, "")
      out.push(file.length === 0 || /[\s*?[\]{}\\]/.test(file) ? "$" : file)
    }
  }
  return out
}

/** The literal words of an undescribed invocation that may be paths: its arguments, option values after `=`. */
const guessedWords = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  argv.slice(1).flatMap((word) => {
    const value = word.startsWith("-") ? (word.includes("=") ? word.slice(word.indexOf("=") + 1) : "") : word
    return value.length === 0 || /[$`*?[\]{}]/.test(value) ? [] : [value]
  })

const findActions: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])

/** `find ROOTS… -exec CMD {} …`: CMD gets every path under the roots (`.` when none is given). */
const findExecRoots = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (argv[0] !== "find") return []
  const action = argv.findIndex((word) => findActions.has(word))
  if (action === -1 || !argv.slice(action + 1).some((word) => word.includes("{}"))) return []
  const roots: Array<string> = []
  for (const word of argv.slice(1)) {
    if (word.startsWith("-") || word === "(" || word === "!") break
    roots.push(word)
  }
  return roots.length > 0 ? roots : ["."]
}

/** The directories a recursive read of these forms enters a rule's base in (`ruleBase` inside one of them). */
export const ruleInside = (
  rules: ReadonlyArray<RuleIndex.CompiledRule>,
  dirs: ReadonlyArray<string>,
  env: PermissionRules.Environment
) =>
  rules.find((compiled) => {
    const base = ruleBase(compiled, env)
    return base !== undefined && dirs.some((dir) => within(env, dir, base))
  })?.rule

/** Whether every form of every touched path is inside the working directories (and, if asked, not protected). */
export const insideAll = (
  list: ReadonlyArray<Touched>,
  env: PermissionRules.Environment,
  unprotected: boolean
): boolean =>
  list.every((touched) =>
    touched.forms !== undefined && touched.throughLinks !== true &&
    touched.forms.every((path) => PathRules.isInside(env, path) && (!unprotected || !PathRules.isProtected(env, path)))
  )
