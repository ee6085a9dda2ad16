/**
 * A turn's model call as the activity `model` (SPEC §4.14), whose result is
 * the response. Run again after a crash, a complete response is replayed as
 * its events (the model is not asked again); a response cut off while it
 * streamed is finished with the calls it had started (their markers hold
 * their blocks), ending as a stream that broke would; one that had started no
 * call is asked again (nothing came of it).
 *
 * @internal
 */
import type * as Journal from "@switchyard/core/Journal"
import * as Messages from "@switchyard/core/Messages"
import type * as Model from "@switchyard/core/Model"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Activities from "./activity.js"
import * as Live from "./live.js"
import * as Recovery from "./recovery.js"
import * as Store from "./store.js"

/** The name of the model call's activity (the `tool_use` ids name the others). */
export const MODEL = "model"

/** What the model call's activity records: the response's blocks, complete or as far as they went. */
export const RecordedResponse = Schema.Struct({
  content: Schema.Array(Messages.ContentBlock),
  stopReason: Schema.NullOr(Schema.String),
  complete: Schema.Boolean,
  error: Schema.optional(Schema.Struct({ reason: Schema.String, message: Schema.String }))
})
export type RecordedResponse = typeof RecordedResponse.Type

const responseKind = Activities.kind(RecordedResponse)
const encodeResponse = Schema.encodeSync(Schema.parseJson(RecordedResponse))
const decodeResponse = Schema.decodeUnknownOption(Schema.parseJson(RecordedResponse))

const hasToolUse = (content: ReadonlyArray<Messages.ContentBlock>): boolean =>
  content.some((b) => b.type === "tool_use")

/**
 * What an earlier run of the turn left of its response: the complete
 * response, else the calls it had started (a cut-off response), else nothing.
 */
export const leftOver = (markers: ReadonlyMap<string, Store.CallMarker>): Option.Option<RecordedResponse> => {
  const complete = Option.flatMap(Option.fromNullable(markers.get(MODEL)?.progress), decodeResponse)
  if (Option.isSome(complete)) return complete
  const started = Live.startedBlocks(markers)
  if (started.length === 0) return Option.none()
  return Option.some({ content: started, stopReason: null, complete: false })
}

/** Whether an earlier run left a response with calls to finish. */
export const hasCalls = (response: Option.Option<RecordedResponse>): boolean =>
  Option.isSome(response) && hasToolUse(response.value.content)

/** The events that replay a recorded response, as the loop reads a live one. */
export const replayEvents = (response: RecordedResponse, turn: number): ReadonlyArray<Model.ModelStreamEvent> => {
  const events: Array<Model.ModelStreamEvent> = [
    { type: "message_start", message: { id: `msg_journal_${turn}`, role: "assistant", usage: {} } }
  ]
  response.content.forEach((block, index) => {
    switch (block.type) {
      case "text":
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: block.text } })
        break
      case "tool_use":
        events.push(
          { type: "content_block_start", index, content_block: { ...block, input: {} } },
          {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) }
          }
        )
        break
      case "thinking":
        events.push(
          {
            type: "content_block_start",
            index,
            content_block: { type: "thinking", thinking: block.thinking, signature: "" }
          },
          { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } }
        )
        break
      case "redacted_thinking":
        events.push({ type: "content_block_start", index, content_block: block })
        break
      default:
        return
    }
    events.push({ type: "content_block_stop", index })
  })
  if (!response.complete) {
    const error = response.error ?? {
      reason: "process_stopped",
      message: "The process stopped while this response was streaming; " +
        "the calls it had started are finished from the journal"
    }
    events.push({ type: "error", error: { type: error.reason, message: error.message } })
    return events
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: (response.stopReason ?? "end_turn") as Model.StopReason },
      usage: { output_tokens: 0 }
    },
    { type: "message_stop" }
  )
  return events
}

interface OpenBlock {
  readonly start: Extract<Model.ModelStreamEvent, { readonly type: "content_block_start" }>["content_block"]
  text: string
  json: string
  signature: string
}

/** The blocks of a live response, as they close. */
const tracker = () => {
  const closed = new Map<number, Messages.ContentBlock>()
  const open = new Map<number, OpenBlock>()
  let stopReason: string | null = null
  return {
    track: (event: Model.ModelStreamEvent): void => {
      switch (event.type) {
        case "content_block_start":
          open.set(event.index, { start: event.content_block, text: "", json: "", signature: "" })
          return
        case "content_block_delta": {
          const block = open.get(event.index)
          if (block === undefined) return
          const delta = event.delta
          if (delta.type === "text_delta") block.text += delta.text
          else if (delta.type === "thinking_delta") block.text += delta.thinking
          else if (delta.type === "signature_delta") block.signature += delta.signature
          else if (delta.type === "input_json_delta") block.json += delta.partial_json
          return
        }
        case "content_block_stop": {
          const block = open.get(event.index)
          if (block === undefined) return
          open.delete(event.index)
          const start = block.start
          if (start.type === "text") closed.set(event.index, Messages.text(start.text + block.text))
          else if (start.type === "thinking") {
            closed.set(event.index, {
              type: "thinking",
              thinking: start.thinking + block.text,
              signature: start.signature + block.signature
            })
          } else if (start.type === "redacted_thinking") closed.set(event.index, start)
          else {
            let input: unknown = {}
            try {
              input = block.json.trim() === "" ? {} : JSON.parse(block.json)
            } catch {
              // The loop answers a malformed input itself.
            }
            closed.set(event.index, Messages.toolUse(start.id, start.name, input))
          }
          return
        }
        case "message_delta":
          if (event.delta.stop_reason != null) stopReason = event.delta.stop_reason
          return
        default:
          return
      }
    },
    response: (complete: boolean, error?: { readonly reason: string; readonly message: string }): RecordedResponse => ({
      content: [...closed.entries()].sort(([a], [b]) => a - b).map(([, b]) => b),
      stopReason,
      complete,
      ...(error === undefined ? {} : { error })
    })
  }
}

const describeError = (error: unknown): { readonly reason: string; readonly message: string } => ({
  reason: typeof error === "object" && error !== null && "reason" in error ? String(error.reason) : "error",
  message: typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
})

/** The `model` step of the journal. */
export const make = (steps: Live.Steps): Journal.Journal["model"] =>
<E, R>(
  step: Journal.ModelStep,
  stream: Stream.Stream<Model.ModelStreamEvent, E, R>
) =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const current = yield* Effect.serviceOption(Live.CurrentTurn)
    if (Option.isNone(current)) return stream
    const live = current.value
    const out = yield* Mailbox.make<Model.ModelStreamEvent, E | Model.ModelError>({ capacity: 64, strategy: "suspend" })
    let ranHere = false
    const record = (response: RecordedResponse) =>
      steps.onStore("record a response", Store.progress(live.executionId, MODEL, encodeResponse(response))).pipe(
        Effect.catchAll((error) => Live.failed(live, error))
      )
    const runLive = Effect.gen(function*() {
      ranHere = true
      const now = yield* Clock.currentTimeMillis
      yield* steps.onStore(
        "record the start of a response",
        Store.mark({
          executionId: live.executionId,
          name: MODEL,
          state: "running",
          ordinal: 0,
          startedAt: now,
          progress: null
        })
      ).pipe(Effect.catchAll((error) => Live.failed(live, error)))
      const blocks = tracker()
      const streamed = yield* stream.pipe(
        Stream.runForEach((event) => {
          blocks.track(event)
          return out.offer(event)
        }),
        Effect.either
      )
      if (streamed._tag === "Left") {
        // The loop gets the error as it came; the record keeps what had arrived.
        const response = blocks.response(false, describeError(streamed.left))
        yield* record(response)
        yield* out.fail(streamed.left)
        return response
      }
      const response = blocks.response(true)
      yield* record(response)
      return response
    })
    const body = Effect.suspend(() => {
      // Run before and cut off after it had started calls: finished as it was.
      const earlier = live.markers.has(MODEL) ? leftOver(live.markers) : Option.none()
      return Option.isSome(earlier) && (earlier.value.complete || hasCalls(earlier))
        ? Effect.succeed(earlier.value)
        : runLive
    })
    const activity = Activities.make(responseKind, live.activity(MODEL), body)
    yield* Effect.exit(Live.inTurn(steps, live, Activities.execute<RecordedResponse>(activity)))
      .pipe(
        Effect.flatMap((exit) => {
          if (Exit.isSuccess(exit)) {
            if (ranHere) return out.end
            return Effect.zipRight(out.offerAll(replayEvents(exit.value, step.turn)), out.end)
          }
          if (Exit.isInterrupted(exit)) return out.failCause(exit.cause as Cause.Cause<never>)
          // Not recorded: the response ends here, and the turn ends with why.
          return Effect.zipRight(
            Live.failed(live, Recovery.journalError("record a response", steps.location)(Cause.squash(exit.cause))),
            out.end
          )
        }),
        Effect.forkScoped
      )
    return Mailbox.toStream(out)
  }))
