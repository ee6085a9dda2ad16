/**
 * Run the query loop once and show it in the chosen output format: a live
 * transcript, the final text only (`run -p`), JSON lines, or one JSON result.
 * Shared by `run -p`, `replay` and `demo`.
 *
 * @since 0.1.0
 */
import type * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as Output from "./Output.js"
import * as Render from "./Render.js"

/**
 * `transcript`: live text and tool lines; `final`: only the final answer
 * (Claude Code's `-p` text output).
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "transcript" | "final" | "json" | "stream-json"

/**
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly events: ReadonlyArray<QueryLoop.LoopEvent>
  readonly finalText: string
  readonly stopped: Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> | undefined
  readonly printer: Render.TranscriptPrinter
}

/**
 * @since 0.1.0
 * @category running
 */
export const runOnce = (
  prompt: string,
  context: ToolUseContext.ToolUseContext,
  format: Format,
  loopOptions: QueryLoop.Options = {}
): Effect.Effect<Outcome, never, QueryLoop.Requirements> =>
  Effect.gen(function*() {
    const t0 = yield* Clock.currentTimeMillis
    const printer = new Render.TranscriptPrinter((text) => void process.stdout.write(text))
    const events: Array<QueryLoop.LoopEvent> = []
    yield* QueryLoop.run(prompt, context, loopOptions).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          events.push(event)
          if (format === "transcript") printer.handle(event)
          else if (format === "stream-json") process.stdout.write(`${JSON.stringify(Render.loopEventJson(event, t0))}\n`)
        })
      )
    )
    const finalText = QueryLoop.finalText(events)
    const stopped = events.findLast((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
    const durationMs = (yield* Clock.currentTimeMillis) - t0
    if (format === "final") yield* Output.line(finalText)
    if (format === "json" || format === "stream-json") {
      const result = Render.resultJson(events, { sessionId: context.sessionId, durationMs, finalText })
      yield* Output.line(format === "json" ? JSON.stringify(result, null, 2) : JSON.stringify(result))
    }
    return { events, finalText, stopped, printer }
  })

/**
 * Exit code 1 when the run did not end normally, with the reason.
 *
 * @since 0.1.0
 * @category running
 */
export const failUnlessEnded = (outcome: Outcome, quiet: boolean): Effect.Effect<void, CliError.CliError> => {
  const stopped = outcome.stopped
  if (stopped !== undefined && stopped.reason === "end_turn") return Effect.void
  const error = [...outcome.events].reverse().find((e) => e._tag === "Error")
  const why = error?._tag === "Error"
    ? error.message
    : stopped === undefined
    ? "the run ended without a result"
    : `stopped: ${stopped.reason}${stopped.detail === undefined ? "" : ` (${stopped.detail})`}`
  return Effect.fail(
    quiet ? new CliError.CliError({ message: why, exitCode: 1, detail: "quiet" }) : CliError.failure(why)
  )
}

/**
 * The model-side failure a run can have before it starts (e.g. no API key).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelLayerError = Model.ModelError | CliError.CliError
