/**
 * The errors the CLI reports: one readable line saying what is wrong and what
 * to do, and the exit code (1 runtime failure, 2 bad input); or a quiet exit
 * when the command has said all there is to say.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category errors
 */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  exitCode: Schema.Literal(1, 2),
  /** More detail, printed with `--verbose`. */
  detail: Schema.optional(Schema.String)
}) {}

/**
 * End the command with an exit code and print nothing more: what went wrong
 * is already on the screen (the `dispatch` report listing the failed calls,
 * a picker the user left). `reason` is for tests and logs.
 *
 * @since 0.1.0
 * @category errors
 */
export class SilentExit extends Schema.TaggedError<SilentExit>()("SilentExit", {
  exitCode: Schema.Literal(1, 2),
  reason: Schema.String
}) {}

/**
 * Bad input from the user (exit code 2).
 *
 * @since 0.1.0
 * @category constructors
 */
export const badInput = (message: string, detail?: string): CliError =>
  new CliError(detail === undefined ? { message, exitCode: 2 } : { message, exitCode: 2, detail })

/**
 * A failure while running (exit code 1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (message: string, detail?: string): CliError =>
  new CliError(detail === undefined ? { message, exitCode: 1 } : { message, exitCode: 1, detail })
