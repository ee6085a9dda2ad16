/**
 * Programs that write (for the footprint and acceptEdits): `mkdir touch rm
 * rmdir mv cp ln tee truncate dd chmod chown chgrp`.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, optionPaths, Paths, UNKNOWN, withGrammar } from "./invocation.js"

/**
 * A program whose effect is writing its operands. An unprovable word is read
 * as an operand (an unresolved path), but it may also be an option (`-r` in
 * `rm *`), so the paths are then not proven; `unprovenWith` lists the options
 * that touch more than the operands say (`rmdir -p`, `cp -s`).
 */
export const writer = (
  g: Options.Grammar,
  shape: (parsed: Options.ParsedArguments, paths: Paths) => void,
  spec: {
    readonly onlyWrites?: boolean
    readonly proven?: boolean
    readonly unprovenWith?: ReadonlyArray<string>
  } = {}
): Describe =>
  withGrammar(g, (args) => {
    const parsed = Options.parse(g, args, { dynamicOperands: true })
    if (!parsed.ok) return UNKNOWN
    const paths = new Paths()
    optionPaths(parsed, paths)
    shape(parsed, paths)
    const uncertain = args.some((arg) => arg.dynamic && Options.mayBeOption(arg))
    return paths.done(false, {
      onlyWritesPaths: spec.onlyWrites ?? true,
      proven: (spec.proven ?? true) && !uncertain && !Options.has(parsed, ...(spec.unprovenWith ?? []))
    })
  })

export const writeOperands =
  (subtree: (parsed: Options.ParsedArguments) => boolean) => (parsed: Options.ParsedArguments, paths: Paths) => {
    const recursive = subtree(parsed)
    for (const operand of parsed.operands) paths.write(operand, recursive)
  }

export const mkdir = writer(
  Options.grammar("m: p v Z", "mode: parents verbose context? help version"),
  writeOperands(() => false)
)
export const touch = writer(
  Options.grammar("a c d: f h m r< t:", "time: date: no-create no-dereference reference< help version"),
  writeOperands(() => false)
)
export const rm = writer(
  Options.grammar(
    "f i I r R d v",
    "force interactive? one-file-system no-preserve-root preserve-root? recursive dir verbose help version"
  ),
  writeOperands((parsed) => Options.has(parsed, "r", "R", "recursive"))
)
// `-p` removes the parents too.
export const rmdir = writer(
  Options.grammar("p v", "ignore-fail-on-non-empty parents verbose help version"),
  writeOperands(() => false),
  { unprovenWith: ["p", "parents"] }
)
export const COPY = "b f i n S: t: T u v"
export const COPY_LONG =
  "backup? force interactive no-clobber suffix: target-directory: no-target-directory update? verbose " +
  "strip-trailing-slashes exchange debug help version"
/** `cp`/`mv`/`ln`: sources then a destination (or `-t DIR`). */
export const transfer =
  (sources: "read" | "write" | "none", recursive: (parsed: Options.ParsedArguments) => boolean) =>
  (parsed: Options.ParsedArguments, paths: Paths) => {
    const target = Options.valuesOf(parsed, "t", "target-directory")
    const operands = parsed.operands
    const sourceWords = target.length > 0 ? operands : operands.slice(0, -1)
    const destination = target.length > 0 ? target[0] : operands[operands.length - 1]
    const subtree = recursive(parsed)
    for (const source of sourceWords) {
      if (sources === "read") paths.read(source, subtree, true)
      if (sources === "write") paths.move(source)
    }
    paths.write(destination, true)
  }
/**
 * `-b`/`--backup`/`-S` rename a destination that exists to a backup (`c.ts~`, or `c.ts.~N~` after listing the
 * directory for the numbers in use): paths the command line does not name.
 */
const BACKUP = ["b", "backup", "S", "suffix"]
// A source that is a symbolic link is a link moved (issue 20: a footprint barrier); see `PathUse.moves`.
export const mv = writer(Options.grammar(COPY + " Z", COPY_LONG + " context"), transfer("write", () => true), {
  unprovenWith: BACKUP
})
export const cp = writer(
  Options.grammar(
    `${COPY} a d H l L P p r R s x Z`,
    `${COPY_LONG} archive attributes-only copy-contents dereference ` +
      "link no-dereference preserve? no-preserve: parents recursive reflink? remove-destination sparse: " +
      "symbolic-link one-file-system context? keep-directory-symlink"
  ),
  transfer("read", (parsed) => Options.has(parsed, "a", "r", "R", "recursive", "archive")),
  // `-s` and `-l` make links (issue 20: creating links is a barrier); `-L` follows the links it meets inside
  // the trees it copies, wherever they lead (`cp -rL . d` reads `link-up/target.txt` outside: the oracle).
  { unprovenWith: ["s", "symbolic-link", "l", "link", "L", "dereference", ...BACKUP] }
)
export const ln = writer(
  Options.grammar(
    "b d F f i L n P r s S: t: T v",
    "backup? directory force interactive logical no-dereference " +
      "physical relative symbolic suffix: target-directory: no-target-directory verbose help version"
  ),
  // A hard link is a second name for the source's contents, which no rule on the source's path
  // sees later: its sources count as read. A symbolic link is judged by its target when used.
  (parsed, paths) => transfer(Options.has(parsed, "s", "symbolic") ? "none" : "read", () => false)(parsed, paths),
  // Making a link changes what other paths mean (issue 20): never proven, a footprint barrier.
  { proven: false }
)
export const tee = writer(
  Options.grammar("a i p", "append ignore-interrupts output-error? help version"),
  writeOperands(() => false)
)
export const truncate = writer(
  Options.grammar("c o r< s:", "no-create io-blocks reference< size: help version"),
  writeOperands(() => false)
)
export const dd: Describe = (args) => {
  const paths = new Paths()
  for (const arg of args) {
    if (arg.dynamic) return UNKNOWN
    if (arg.value.startsWith("if=")) paths.read({ value: arg.value.slice(3), dynamic: false }, false, true)
    else if (arg.value.startsWith("of=")) paths.write({ value: arg.value.slice(3), dynamic: false }, false)
    else if (!/^(bs|ibs|obs|cbs|count|skip|seek|iseek|oseek|conv|iflag|oflag|status)=/.test(arg.value)) return UNKNOWN
  }
  return paths.done(false, { onlyWritesPaths: true, proven: true })
}
export const chmodLike = writer(
  Options.grammar(
    "c f v R",
    "changes silent quiet verbose recursive reference< dereference no-dereference " +
      "preserve-root no-preserve-root from: help version"
  ),
  (parsed, paths) => {
    const recursive = Options.has(parsed, "R", "recursive")
    // The first operand is the mode or owner, unless `--reference` gave it.
    const operands = Options.has(parsed, "reference") ? parsed.operands : parsed.operands.slice(1)
    for (const operand of operands) paths.write(operand, recursive)
  },
  { onlyWrites: false }
)
