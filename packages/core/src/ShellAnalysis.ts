/**
 * The shell-analysis port (SPEC §4.5): split a command line into its simple
 * commands and classify it as read-only. `@switchyard/tools` provides the
 * tree-sitter implementation as a Layer; without it the engine fails closed —
 * every Bash command is unsafe and not read-only, and a compound command
 * matches no allow rule.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * An output redirection of a simple command (`> file`, `>> file`, `&> file`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Redirect {
  readonly operator: string
  readonly target: string
}

/**
 * One simple command of a command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface SimpleCommand {
  /** The command as written, without its redirections. */
  readonly text: string
  /** The words after expansion-free parsing (quotes removed). */
  readonly argv: ReadonlyArray<string>
  /** Leading `VAR=value` assignments. */
  readonly assignments: ReadonlyArray<string>
  /** Output redirections to files (`/dev/null` included). */
  readonly redirects: ReadonlyArray<Redirect>
}

/**
 * What the analyser found in a whole command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Analysis {
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Command or process substitution, `$VAR` in command position, or similar: nothing can be proven about it. */
  readonly hasDynamicParts: boolean
  readonly readOnly: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Split into simple commands (text of each, in order). */
  readonly split: (command: string) => Effect.Effect<ReadonlyArray<string>>
  readonly isReadOnly: (command: string) => Effect.Effect<boolean>
  /** Full analysis, or none when the command cannot be analysed. */
  readonly analyze: (command: string) => Effect.Effect<Option.Option<Analysis>>
}

/**
 * The fail-closed analyser used when no implementation is provided: nothing is
 * read-only and nothing can be analysed. `split` splits naively on control
 * operators only so that deny rules still see every part.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failClosed: Service = {
  split: (command) => Effect.succeed(naiveSplit(command)),
  isReadOnly: () => Effect.succeed(false),
  analyze: () => Effect.succeed(Option.none())
}

/**
 * Split on `&& || ; | |& &` and newlines, ignoring quoting. Only used where
 * erring towards more parts is the safe direction (deny matching).
 *
 * @since 0.1.0
 * @category utils
 */
export const naiveSplit = (command: string): ReadonlyArray<string> =>
  command
    .split(/\|&|&&|\|\||[;|&\n]/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)

/**
 * @since 0.1.0
 * @category services
 */
export class ShellAnalysis extends Context.Reference<ShellAnalysis>()("@switchyard/core/ShellAnalysis", {
  defaultValue: (): Service => failClosed
}) {}
