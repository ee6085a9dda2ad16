/**
 * `jq`: its filter, data files, `--arg` pairs and modules.
 *
 * @internal
 */
import * as Options from "./options.js"
import { type Describe, mergePaths, Paths, reader, UNKNOWN, withGrammar, type Word } from "./invocation.js"

// Only the options every jq since 1.6 (Debian's) knows: 1.6 takes an option it does not know, such as 1.7's
// `-0`, for the filter, and the words after it for files (`jq -0 src list.txt` reads src).
export const JQ = Options.grammar(
  "c n r j a s e S C M t h R L: f# V",
  "compact-output null-input raw-output join-output ascii-output slurp exit-status sort-keys " +
    "color-output monochrome-output tab indent: unbuffered stream stream-errors seq raw-input from-file# help " +
    "version",
  // Everything but the `--arg`-style pairs, which are read before the grammar; no option writes.
  { complete: true }
)

/** jq's options that take two words (`--arg name value`). */
export const JQ_PAIRS: Readonly<Record<string, boolean>> = {
  "--arg": false,
  "--argjson": false,
  "--slurpfile": true,
  "--rawfile": true
}

/** jq loads modules and data files (`import "x" as $d`) from its library path: which files cannot be known statically. */
export const JQ_MODULES = /\b(?:import|include|modulemeta)\b/

export const jq: Describe = withGrammar(JQ, (args) => {
  const rest: Array<Word> = []
  const paths = new Paths()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (
      !arg.dynamic &&
      (JQ_MODULES.test(arg.value) || /^-(?!-)[A-Za-z]*[fL]|^--library-path|^--from-file/.test(arg.value))
    ) paths.names({ value: "jq modules", dynamic: false })
    if (arg.dynamic) {
      rest.push(arg)
      continue
    }
    const pair = JQ_PAIRS[arg.value]
    if (pair !== undefined) {
      if (args[i + 2] === undefined) return UNKNOWN
      if (pair) paths.read(args[i + 2], false, true)
      i += 2
      continue
    }
    // Everything after `--args`/`--jsonargs` is a positional value, not a file.
    if (arg.value === "--args" || arg.value === "--jsonargs") {
      const described = reader(JQ, { operands: "patternThenFiles", maxFiles: 0, proven: true })(rest)
      return described.readOnly ? mergePaths(described, paths) : UNKNOWN
    }
    rest.push(arg)
  }
  const described = reader(JQ, { operands: "patternThenFiles", proven: true })(rest)
  return described.readOnly ? mergePaths(described, paths) : UNKNOWN
})
