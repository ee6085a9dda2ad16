/**
 * Links a Bash line makes while it runs: at decision time they do not exist,
 * so a path through one resolves to what is there now, not to what the
 * command will reach (`ln -s /etc l && cat l/passwd` reads /etc/passwd,
 * though `l/passwd` is inside the project today). This module says where a
 * part may make links — a place (the link `ln` makes, the destination of
 * `mv` or a linking `cp`, and everything below it) or anywhere (archive
 * extractors, `rsync`, git subcommands that write, programs the analyser does
 * not describe) — and whether a path may go through one.
 *
 * Two separate calls are judged with the link on disk (the second call's real
 * path is the link's target); one line must be judged no more leniently, on
 * the deny side (a rule may match the target) and on the allow side (a
 * read-only part is "inside" only if its paths cannot leave).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as PermissionRules from "../PermissionRules.js"
import type { CommandPart } from "./bashParts.js"
import * as BashPaths from "./bashPaths.js"
import type { ResolutionBases } from "./bashPaths.js"

/** Where a line's parts may make links: nowhere, below some places (absolute forms), or anywhere. */
export type LinkPlaces =
  | { readonly _tag: "Nowhere" }
  | { readonly _tag: "Below"; readonly places: ReadonlyArray<ReadonlyArray<string>> }
  | { readonly _tag: "Anywhere" }

/** No part makes links. */
export const nowhere: LinkPlaces = { _tag: "Nowhere" }
const anywhere: LinkPlaces = { _tag: "Anywhere" }

/** Programs that make a link at the place their operands name (GNU coreutils' `ln`, `link`, `mv`, `cp`). */
const placedMakers: ReadonlySet<string> = new Set(["ln", "link", "mv", "cp"])

/** Programs that may make links anywhere (archive members and synced trees hold links at any path). */
const anywhereMakers: ReadonlySet<string> = new Set([
  "tar",
  "bsdtar",
  "unzip",
  "cpio",
  "pax",
  "rsync",
  "7z",
  "7za"
])

/** `cp` options that make links or copy them as links: `-s -l -r -R -a -d -P`, alone or in a cluster. */
const linkingCopy =
  /^(?:-[A-Za-z]*[slrRadP][A-Za-z]*|--(?:link|symbolic-link|recursive|archive|no-dereference|preserve(?:=.*)?))$/

/** Writers the analyser describes that make no links. */
const plainWriters: ReadonlySet<string> = new Set([
  "mkdir",
  "touch",
  "rm",
  "rmdir",
  "sed",
  "truncate",
  "tee",
  "chmod",
  "chown"
])

/**
 * Whether a part may make a link when the line runs: `ln`, `link`, `cp -s/-l/-r/-a/…`, `mv`, archive
 * extractors, `rsync`, a git subcommand that is not read-only, a program the analyser does not describe. A part
 * that hands its commands to a shell (`sh -c`, `find -exec`) makes none itself: those commands are parts too.
 */
export const makesLinks = (part: CommandPart, runsScripts: boolean): boolean => {
  const argv = part.forms.argv
  const name = argv[0]
  if (name === undefined) return false
  if (placedMakers.has(name) && name !== "cp") return true
  if (anywhereMakers.has(name)) return true
  if (name === "cp") return argv.slice(1).some((word) => linkingCopy.test(word))
  if (runsScripts) return false
  return part.simple === undefined || (!part.simple.readOnly && !plainWriters.has(name))
}

/** Long options of `ln`, `mv` and `cp` that take the next word as their value when written without `=`. */
const valueOptions: Record<string, ReadonlyArray<string>> = {
  ln: ["--suffix", "--target-directory"],
  link: [],
  mv: ["--suffix", "--target-directory"],
  cp: ["--suffix", "--target-directory", "--sparse", "--no-preserve"]
}

/**
 * The operand a GNU `ln`/`link`/`mv`/`cp` makes its link at, as getopt_long reads the words (options anywhere
 * before `--`, clusters, `-tDIR`, unique long-option prefixes), or `undefined` when the place is not one word
 * (`ln -s TARGET` links into the working directory under the target's name).
 */
const placeWord = (argv: ReadonlyArray<string>): string | undefined => {
  const name = argv[0]!
  const longValues = valueOptions[name] ?? []
  const operands: Array<string> = []
  let target: string | undefined
  let options = true
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!
    if (options && word === "--") {
      options = false
    } else if (options && word.startsWith("--")) {
      const eq = word.indexOf("=")
      const option = eq === -1 ? word : word.slice(0, eq)
      // getopt_long accepts any unambiguous prefix of a long option (`--target=DIR`).
      const takes = option.length > 2 ? longValues.filter((long) => long.startsWith(option)) : []
      if (takes.length === 0) continue
      const value = eq === -1 ? argv[++i] : word.slice(eq + 1)
      if (value === undefined) return undefined
      if (takes.length > 1 && takes.includes("--target-directory")) return undefined
      if (takes[0] === "--target-directory") target = value
    } else if (options && word.startsWith("-") && word.length > 1 && name !== "link") {
      for (let j = 1; j < word.length; j++) {
        const flag = word[j]
        if (flag !== "t" && flag !== "S") continue
        const value = j + 1 < word.length ? word.slice(j + 1) : argv[++i]
        if (value === undefined) return undefined
        if (flag === "t") target = value
        break
      }
    } else {
      operands.push(word)
    }
  }
  if (target !== undefined) return target
  return operands.length >= 2 ? operands[operands.length - 1] : undefined
}

/** Where one maker part makes links. */
export const placesOf = (
  part: CommandPart,
  resolution: ResolutionBases,
  env: PermissionRules.Environment
): Effect.Effect<LinkPlaces> =>
  Effect.gen(function*() {
    const argv = part.forms.argv
    if (!placedMakers.has(argv[0] ?? "")) return anywhere
    const word = placeWord(argv)
    if (word === undefined || word.split("/").includes("..")) return anywhere
    const forms = yield* BashPaths.absoluteForms(word, resolution, env)
    return forms === undefined ? anywhere : { _tag: "Below", places: [forms] }
  })

/**
 * The places of several makers together. A place below (or at) another maker's place may itself be reached
 * through that maker's link (`ln -s . a && ln -s /etc a/l` makes `./l`): then links may be anywhere.
 */
export const combine = (list: ReadonlyArray<LinkPlaces>, env: PermissionRules.Environment): LinkPlaces => {
  if (list.some((places) => places._tag === "Anywhere")) return anywhere
  const places = list.flatMap((entry) => entry._tag === "Below" ? entry.places : [])
  if (places.length === 0) return nowhere
  for (let i = 0; i < places.length; i++) {
    for (let j = 0; j < places.length; j++) {
      if (i === j) continue
      if (places[i]!.some((inner) => places[j]!.some((outer) => BashPaths.within(env, outer, inner)))) {
        return anywhere
      }
    }
  }
  return { _tag: "Below", places }
}

/** Programs that act on a link itself, never on what it points to, when it is the last component. */
const linkRemovers: ReadonlySet<string> = new Set(["rm", "unlink", "rmdir"])

/**
 * Whether a path a part touches may go through a link the line makes: it is at or below a place (`.`, the
 * directory the command starts in, cannot be one: the process holds it, whatever is renamed or linked; a tree
 * read below it can), it
 * climbs with `..` (after a link, `..` leads beside the link's target), or, for a tree it reads, a place is
 * inside it. `rm l` removes the link `l` itself.
 */
export const goesThrough = (
  links: LinkPlaces,
  use: BashPaths.LinkQuery,
  resolution: ResolutionBases,
  env: PermissionRules.Environment
): boolean => {
  if (links._tag === "Nowhere") return false
  if (!use.tree && /^\.\/?$/.test(use.path) && resolution.dirs.length === 1 && !resolution.unknown) return false
  if (links._tag === "Anywhere") return true
  const joined = BashPaths.resolveArgument(use.path, resolution, env)
  if (use.forms === undefined || joined === undefined) return true
  if (joined.some((path) => path.split(env.path.sep).includes(".."))) return true
  const candidates = [...use.forms, ...joined.map((path) => env.path.resolve(path))]
  const removesLast = linkRemovers.has(use.program) && !/\/\.?$/.test(use.path)
  return links.places.some((forms) =>
    forms.some((place) =>
      candidates.some((candidate) =>
        (BashPaths.within(env, place, candidate) && !(removesLast && candidate === place)) ||
        (use.tree && BashPaths.within(env, candidate, place))
      )
    )
  )
}
