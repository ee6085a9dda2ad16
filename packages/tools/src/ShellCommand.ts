/**
 * Shell command analysis with tree-sitter-bash (issue 3, SPEC §4.5): split a
 * command line into its simple commands and decide whether it is read-only.
 *
 * `layer` provides this as core's `ShellAnalysis` port, so the permission
 * rules, the Bash tool's safety predicates and speculation all use the same
 * parse.
 *
 * - `split` reports every simple command as written (without its
 *   redirections), in the order bash runs them, descending into subshells,
 *   `{ }` groups, `if`/`while`/`for`/`case` bodies and the commands of `$( )`,
 *   backticks and process substitution — so a deny rule sees `rm` in
 *   `git status $(rm x)`. Nothing is stripped (`timeout 5`, `VAR=1` stay).
 * - `isReadOnly` is true only when every simple command is on the read-only
 *   list with safe arguments (see `internal/programs/table.ts`) and
 *   the line has no output redirection to a file (`/dev/null` and descriptor
 *   duplication such as `2>&1` are fine), no command or process
 *   substitution, no expansion or glob in command position, no assignment
 *   prefix (`FOO=1 ls`), no background `&`, and nothing the parser could not
 *   classify. It fails closed: on any doubt the answer is `false`.
 *
 * The parser is loaded lazily, once, on first use.
 *
 * @since 0.1.0
 */
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ExitCodes from "./internal/programs/exitCodes.js"
import * as Analyzer from "./internal/shellAnalyzer.js"
import * as Parser from "./internal/shellParser.js"

/**
 * The full analysis of a command line: its simple commands (text, argv,
 * assignments, output redirections), whether it has dynamic parts, and the
 * read-only verdict. `None` when the command does not parse cleanly.
 *
 * @since 0.1.0
 * @category analysis
 */
export const analyze = (command: string): Effect.Effect<Option.Option<ShellAnalysis.Analysis>> =>
  Parser.withTree(command, (tree) => Option.fromNullable(Analyzer.analyze(tree, command))).pipe(
    Effect.catchAll((error) =>
      Effect.logDebug("Shell analysis failed; treating the command as unanalysable", error.message).pipe(
        Effect.as(Option.none())
      )
    )
  )

/**
 * Whether the command line cannot change anything. Fails closed.
 *
 * @since 0.1.0
 * @category analysis
 */
export const isReadOnly = (command: string): Effect.Effect<boolean> =>
  Effect.map(analyze(command), Option.match({ onNone: () => false, onSome: (analysis) => analysis.readOnly }))

/**
 * The simple commands of a compound command line, each as written without its
 * redirections. If the line does not parse cleanly, the commands the parser
 * still recognised are combined with a split on the control operators, so
 * that no part escapes a deny rule.
 *
 * @since 0.1.0
 * @category analysis
 */
export const split = (command: string): Effect.Effect<ReadonlyArray<string>> =>
  Parser.withTree(command, (tree) => Analyzer.split(tree, command, ShellAnalysis.naiveSplit)).pipe(
    Effect.catchAll((error) =>
      Effect.logDebug("Shell parsing failed; splitting on control operators", error.message).pipe(
        Effect.as(ShellAnalysis.naiveSplit(command))
      )
    )
  )

/**
 * What a non-zero exit status of `command` means when it is an answer rather
 * than a failure (issue 20, item 4): `"no matches"` for `grep`/`rg`/`ag`/`git
 * grep` exiting 1, `"files differ"` for `diff`/`cmp`, `"false"` for
 * `test`/`[`/`[[`. The program that decides is the one bash's `$?` comes
 * from: the line's last command. `None` for anything else.
 *
 * @since 0.1.0
 * @category analysis
 */
export const exitAnswer = (command: string, code: number): Effect.Effect<Option.Option<string>> =>
  Parser.withTree(command, (tree) => {
    if (tree.rootNode.hasError) return Option.none<string>()
    const program = ExitCodes.decidingProgram(tree.rootNode)
    return Option.fromNullable(program === undefined ? undefined : ExitCodes.answerFor(program, code))
  }).pipe(Effect.orElseSucceed(() => Option.none<string>()))

/**
 * The tree-sitter implementation of core's `ShellAnalysis` port.
 *
 * @since 0.1.0
 * @category constructors
 */
export const service: ShellAnalysis.Service = { split, isReadOnly, analyze }

/**
 * Provides `service` as core's `ShellAnalysis` reference.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ShellAnalysis.ShellAnalysis> = Layer.succeed(ShellAnalysis.ShellAnalysis, service)
