/**
 * Run the query loop for a prompt and show it in the chosen output format: a
 * live transcript, the final text only (`run -p`), Claude Code's stream-json
 * lines, or one JSON result. Shared by `run -p`, `replay` and `demo`.
 *
 * stream-json: `{"type":"system","subtype":"init",…}` first, then one
 * `{"type":"assistant","message",…}` per assistant message and one
 * `{"type":"user","message",…}` per tool-result message, the result object
 * last; `--verbose` adds the dispatch events (`started`, `progress`,
 * `permission_requested`, `permission_decided`, `hook`) in `dispatch`'s shapes.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import type * as Messages from "@switchyard/core/Messages"
import type * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as Cost from "./Cost.js"
import * as Output from "./Output.js"
import * as Render from "./Render.js"
import type * as Sessions from "./Sessions.js"
import * as StreamJson from "./StreamJson.js"

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
  readonly result: StreamJson.ResultJson
}

/**
 * How a prompt is run and shown.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly format: Format
  /** stream-json: add the dispatch events. */
  readonly verbose?: boolean | undefined
  /** The model name, for the cost. */
  readonly model: string
  readonly recorder?: Sessions.Recorder | undefined
}

const warnedModels = new Set<string>()

/**
 * Run one prompt in a session, printing as the format says.
 *
 * @since 0.1.0
 * @category running
 */
export const runPrompt = (
  session: QueryLoop.Session,
  prompt: string | ReadonlyArray<Messages.ContentBlock>,
  settings: Settings
): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const t0 = yield* Clock.currentTimeMillis
    const sessionId = (yield* Ref.get(session.context)).sessionId
    const printer = new Render.TranscriptPrinter((text) => void process.stdout.write(text))
    const events: Array<QueryLoop.LoopEvent> = []
    const format = settings.format
    const recorder = settings.recorder
    const sync = recorder?.sync ?? Effect.void
    const jsonLine = (value: object) => Effect.sync(() => void process.stdout.write(`${JSON.stringify(value)}\n`))
    yield* session.run(prompt).pipe(
      Stream.runForEach((event) =>
        Effect.gen(function*() {
          events.push(event)
          if (format === "transcript") printer.handle(event)
          if (recorder !== undefined) yield* recorder.record(event)
          if (format !== "stream-json") return
          if (event._tag === "AssistantMessage") {
            yield* jsonLine({ type: "assistant", message: event.message, session_id: sessionId })
          } else if (event._tag === "ToolResults") {
            yield* jsonLine({ type: "user", message: event.message, session_id: sessionId })
          } else if (settings.verbose && event._tag === "Tool" && !DispatchEvent.isResult(event.event)) {
            yield* jsonLine({ ...StreamJson.dispatchEventLine(event.event, t0), session_id: sessionId })
          }
        })
      ),
      Effect.ensuring(sync)
    )
    const finalText = QueryLoop.finalText(events)
    const stopped = events.findLast((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
    const durationMs = (yield* Clock.currentTimeMillis) - t0
    const usage = Cost.fromEvents(events)
    const cost = Cost.costUsd(settings.model, usage)
    // A replayed model has no price to know; only a real model's missing price is worth a warning.
    const priced = settings.model !== "replay"
    if (priced && cost === undefined && (format === "json" || format === "stream-json") && !warnedModels.has(settings.model)) {
      warnedModels.add(settings.model)
      yield* Output.warn(Cost.unknownPriceWarning(settings.model))
    }
    const result = StreamJson.resultJson(events, { sessionId, durationMs, finalText, usage, costUsd: cost ?? 0 })
    if (format === "final") yield* Output.line(finalText)
    if (format === "json" || format === "stream-json") yield* jsonLine(result)
    return { events, finalText, stopped, printer, result }
  })

/**
 * Run the query loop once for a prompt in a fresh conversation.
 *
 * @since 0.1.0
 * @category running
 */
export const runOnce = (
  prompt: string,
  context: ToolUseContext.ToolUseContext,
  format: Format,
  loopOptions: QueryLoop.Options = {},
  model = "replay"
): Effect.Effect<Outcome, never, QueryLoop.Requirements> =>
  Effect.gen(function*() {
    const ref = yield* Ref.make(context)
    const session = yield* QueryLoop.makeSession(ref, loopOptions)
    if (format === "stream-json") yield* Output.line(JSON.stringify(yield* StreamJson.initLine(ref, model)))
    return yield* runPrompt(session, prompt, { format, model })
  })

/**
 * Whether a run ended normally: a finished turn or a hook's stop. Denied
 * calls do not count against it (the model was told and carried on).
 *
 * @since 0.1.0
 * @category running
 */
export const endedNormally = (outcome: Outcome): boolean =>
  outcome.stopped !== undefined && (outcome.stopped.reason === "end_turn" || outcome.stopped.reason === "hook_stop")

/**
 * Exit code 1 when the run did not end normally, with the reason (on stderr
 * in every format: stdout holds the result for programs).
 *
 * @since 0.1.0
 * @category running
 */
export const failUnlessEnded = (outcome: Outcome, _quiet?: boolean): Effect.Effect<void, CliError.CliError> => {
  if (endedNormally(outcome)) return Effect.void
  const stopped = outcome.stopped
  const error = [...outcome.events].reverse().find((e) => e._tag === "Error")
  const why = error?._tag === "Error"
    ? error.message
    : stopped === undefined
    ? "the run ended without a result"
    : `stopped: ${stopped.reason}${stopped.detail === undefined ? "" : ` (${stopped.detail})`}`
  return Effect.fail(CliError.failure(why))
}

/**
 * The model-side failure a run can have before it starts (e.g. no API key).
 *
 * @since 0.1.0
 * @category models
 */
export type ModelLayerError = Model.ModelError | CliError.CliError
