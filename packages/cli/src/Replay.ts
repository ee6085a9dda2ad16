/**
 * `switchyard replay TRANSCRIPT`: the query loop against the replay model, in
 * the working directory, with real tools.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Interruption from "@switchyard/core/Interruption"
import * as ReplayModel from "@switchyard/core/ReplayModel"
import * as Effect from "effect/Effect"
import * as CliError from "./CliError.js"
import * as UserInterrupt from "./internal/userInterrupt.js"
import * as LoopRunner from "./LoopRunner.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly transcript: string
  readonly prompt: string | undefined
  readonly outputFormat: "text" | "json" | "stream-json"
  readonly maxTurns: number | undefined
}

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(options.transcript).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* Effect.fail(CliError.badInput(`Transcript not found: ${options.transcript}`))
    }
    const transcript = yield* ReplayModel.load(options.transcript).pipe(
      Effect.mapError((error) => CliError.badInput(`Invalid transcript ${error.path}: ${error.message}`))
    )
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    // The first turn's expectation is the natural prompt; otherwise a neutral one.
    const prompt = options.prompt ?? transcript.turns[0]?.expect?.user_text_includes ?? "Replay the recorded session."
    const format: LoopRunner.Format = options.outputFormat === "text" ? "transcript" : options.outputFormat
    // Ctrl-C ends the loop as an interrupt: every call still gets its result, and the exit code is 1.
    const interruption = yield* Interruption.makeRoot
    const outcome = yield* LoopRunner.runOnce(prompt, Runtime.toolUseContext(prepared), format, {
      maxTurns: options.maxTurns,
      scheduling: prepared.scheduling,
      interruption
    }).pipe(
      UserInterrupt.abortOnSigint(interruption),
      Effect.provide(
        Runtime.layer(prepared, {
          model: ReplayModel.layer(transcript),
          prompt: Runtime.noPrompt("replay does not ask; allow calls with --allowed-tools or --permission-mode")
        })
      )
    )
    yield* LoopRunner.failUnlessEnded(outcome, options.outputFormat !== "text")
  })
