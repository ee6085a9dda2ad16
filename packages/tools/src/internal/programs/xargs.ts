/**
 * `xargs`: read-only only with batching options and a command that stays
 * read-only whatever it is given.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, type Invocation, optionPaths, Paths, UNKNOWN, withGrammar, type Word } from "./invocation.js"

export const XARGS = Options.grammar(
  "0 a< d: E: e? I: i? L: l? n: P: p! r s: t x o!",
  "null arg-file< delimiter: eof? replace? max-lines? max-args: max-procs: interactive! no-run-if-empty " +
    "max-chars: show-limits verbose exit open-tty! process-slot-var! help version",
  { stopAtOperand: true }
)

/** The input words xargs appends, unknown by nature. */
export const UNKNOWN_WORD: Word = { value: "", dynamic: true }

/**
 * `xargs`, describing the command it runs with `describe` (the table's
 * `describeInvocation`, passed in so that this module does not import the
 * table).
 */
export const makeXargs = (describe: (name: string, args: ReadonlyArray<Word>) => Invocation): Describe =>
  withGrammar(XARGS, (args) => {
    const parsed = Options.parse(XARGS, args)
    if (!parsed.ok) return UNKNOWN
    const paths = new Paths()
    optionPaths(parsed, paths)
    const [command, ...rest] = parsed.operands
    // Without a command xargs runs `echo`.
    if (command === undefined) return paths.done(true)
    if (command.dynamic) return UNKNOWN
    // With `-I`/`-i` every word holding the replacement string becomes input.
    const replace = Options.has(parsed, "I", "i", "replace")
      ? (Options.valuesOf(parsed, "I", "i", "replace")[0]?.value ?? "{}")
      : undefined
    const inner = rest.map((word) => (replace !== undefined && word.value.includes(replace) ? UNKNOWN_WORD : word))
    const described = describe(command.value, [...inner, UNKNOWN_WORD])
    return {
      readOnly: described.readOnly,
      reads: [...paths.reads, ...described.reads],
      writes: described.writes,
      pathsKnown: false,
      unresolvedPaths: true,
      unresolvedWords: [
        ...paths.unresolved,
        ...described.unresolvedWords.filter((word) => word !== ""),
        "<names xargs reads>"
      ],
      onlyWritesPaths: false
    }
  })
