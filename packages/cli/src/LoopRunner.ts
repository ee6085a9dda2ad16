/**
 * Run the query loop for a prompt and show it in the chosen output format: a
 * live transcript, the final text only (`run -p`), Claude Code's stream-json
 * lines, or one JSON result. Shared by `run -p`, `replay` and `demo`.
 *
 * stream-json (the shapes are `StreamJson`'s): the `system`/`init` line
 * first; per model response its `assistant` line (the API message) as soon
 * as the response ends, then the `user` line with the tool results; a
 * sub-agent's messages as `assistant`/`user` lines with the Agent call's id
 * in `parent_tool_use_id`, after the line of the message that called it;
 * `--include-partial-messages` adds `stream_event` lines as the API's events
 * arrive, `--include-dispatch-events` Switchyard's dispatch events (after
 * the assistant line they refer to); the result object last.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Execution from "@switchyard/core/Execution"
import type * as Messages from "@switchyard/core/Messages"
import type * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as Registry from "@switchyard/core/Registry"
import * as SandboxPort from "@switchyard/core/Sandbox"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as Cost from "./Cost.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Output from "./Output.js"
import * as Render from "./Render.js"
import type * as Sessions from "./Sessions.js"
import * as SlashCommands from "./SlashCommands.js"
import * as StreamJson from "./StreamJson.js"
import * as StructuredOutput from "./StructuredOutput.js"
import * as Version from "./Version.js"

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
  /** stream-json: add Switchyard's dispatch events. */
  readonly includeDispatchEvents?: boolean | undefined
  /** stream-json: add the API's stream events (the loop must run with `modelEvents`). */
  readonly includePartialMessages?: boolean | undefined
  /** The model name, for the cost and the API message of a model that names none. */
  readonly model: string
  readonly recorder?: Sessions.Recorder | undefined
  /** `--json-schema`: remind the model until it answers through the tool. */
  readonly structured?: StructuredOutput.StructuredOutput | undefined
  /** The request's max_tokens, for `modelUsage`. */
  readonly maxOutputTokens?: number | undefined
}

const uuid = () => crypto.randomUUID()

/**
 * The facts of the `init` line for a session: its tools, the MCP servers
 * and their states, the model and mode, the slash commands, where the
 * credential comes from and the version.
 *
 * @since 0.1.0
 * @category formatting
 */
export const initFacts = (
  context: Ref.Ref<ToolUseContext.ToolUseContext>,
  model: string
): Effect.Effect<StreamJson.Init, never, Registry.ToolRegistry | SandboxPort.Sandbox> =>
  Effect.gen(function*() {
    const env = yield* Execution.makeEnvironment(context)
    const sandbox = yield* (yield* SandboxPort.Sandbox).status
    const ctx = yield* Ref.get(context)
    const mcp = yield* Effect.serviceOption(McpServers.McpServers)
    const servers = Option.isNone(mcp) ? [] : yield* mcp.value.servers
    const tools = env.tools.map((tool) => tool.name)
    return {
      cwd: ctx.cwd,
      sessionId: ctx.sessionId,
      tools,
      mcpServers: servers.map((server) => ({ name: server.name, status: server.state })),
      model,
      permissionMode: ctx.permissions.mode,
      slashCommands: SlashCommands.names(),
      apiKeySource: model === "replay" ? "none" : ModelLayer.apiKeySource(),
      version: Version.version,
      outputStyle: "default",
      agents: tools.includes("Agent") ? ["general-purpose"] : [],
      extra: { sandbox: { enabled: sandbox.enabled, available: sandbox.available } }
    }
  })

/**
 * The `system`/`init` line of stream-json.
 *
 * @since 0.1.0
 * @category formatting
 */
export const initLine = (
  context: Ref.Ref<ToolUseContext.ToolUseContext>,
  model: string
): Effect.Effect<Record<string, unknown>, never, Registry.ToolRegistry | SandboxPort.Sandbox> =>
  Effect.map(initFacts(context, model), (facts) => StreamJson.initLine(facts, uuid()))

const warnedModels = new Set<string>()

/** A sub-agent's message reported as the Agent call's progress. */
type AgentMessage =
  | {
    readonly type: "assistant"
    readonly message: Messages.Message
    readonly id?: string
    readonly model?: string
    readonly stopReason?: string
    readonly stopSequence?: string
    readonly usage?: Model.Usage
  }
  | { readonly type: "user"; readonly message: Messages.Message }

const agentMessage = (data: unknown): AgentMessage | undefined => {
  if (typeof data !== "object" || data === null) return undefined
  const record = data as { readonly type?: unknown; readonly message?: unknown }
  return (record.type === "assistant" || record.type === "user") && typeof record.message === "object" &&
      record.message !== null
    ? (data as AgentMessage)
    : undefined
}

/**
 * The stream-json lines of a run, in order: a turn's assistant line first,
 * then what refers to it (dispatch events, sub-agent messages), then its
 * results.
 */
const streamPrinter = (settings: Settings, sessionId: string, t0: number) => {
  const main: StreamJson.Envelope = { sessionId, parentToolUseId: null }
  const shown = new Set<number>()
  const waiting = new Map<number, Array<object>>()
  const print = (line: object) => Output.write(`${JSON.stringify(line)}\n`)
  const after = (turn: number, line: object) => {
    if (shown.has(turn)) return print(line)
    waiting.set(turn, [...(waiting.get(turn) ?? []), line])
    return Effect.void
  }
  const flush = (turn: number) =>
    Effect.suspend(() => {
      shown.add(turn)
      const lines = waiting.get(turn) ?? []
      waiting.delete(turn)
      return Effect.forEach(lines, print, { discard: true })
    })
  const handle = (event: QueryLoop.LoopEvent): Effect.Effect<void> => {
    switch (event._tag) {
      case "ModelEvent":
        return settings.includePartialMessages
          ? print(StreamJson.streamEventLine(event.event, main, uuid()))
          : Effect.void
      case "ResponseEnded": {
        if (event.message === undefined) return flush(event.turn)
        const message = StreamJson.apiMessage({ ...event, message: event.message }, {
          id: `msg_${uuid().replace(/-/g, "")}`,
          model: settings.model
        })
        return Effect.zipRight(print(StreamJson.assistantLine(message, main, uuid())), flush(event.turn))
      }
      case "ToolResults":
        return print(StreamJson.userLine(event.message, main, uuid()))
      case "Tool": {
        const inner = event.event
        const sub = DispatchEvent.isProgress(inner) ? agentMessage(inner.data) : undefined
        if (sub !== undefined) {
          const envelope: StreamJson.Envelope = { sessionId, parentToolUseId: inner.toolUseId }
          const line = sub.type === "user"
            ? StreamJson.userLine(sub.message, envelope, uuid())
            : StreamJson.assistantLine(
              StreamJson.apiMessage(sub, { id: `msg_${uuid().replace(/-/g, "")}`, model: settings.model }),
              envelope,
              uuid()
            )
          return after(event.turn, line)
        }
        if (!settings.includeDispatchEvents || DispatchEvent.isResult(inner)) return Effect.void
        return after(event.turn, StreamJson.runDispatchLine(inner, t0, event.turn, main, uuid()))
      }
      default:
        return Effect.void
    }
  }
  const finish = Effect.suspend(() => Effect.forEach([...waiting.keys()], flush, { discard: true }))
  return { handle, finish }
}

/**
 * Run one prompt in a session, printing as the format says. With
 * `structured`, a run that ends without the answer is followed by reminders.
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
    const meter = yield* Effect.serviceOption(Cost.Meter)
    const spentBefore = Option.isSome(meter) ? meter.value.responses().length : 0
    const printer = new Render.TranscriptPrinter((text) => void process.stdout.write(text))
    const events: Array<QueryLoop.LoopEvent> = []
    const format = settings.format
    const recorder = settings.recorder
    const lines = streamPrinter(settings, sessionId, t0)
    const runOnce = (input: string | ReadonlyArray<Messages.ContentBlock>) =>
      session.run(input).pipe(
        Stream.runForEach((event) =>
          Effect.gen(function*() {
            events.push(event)
            if (format === "transcript") printer.handle(event)
            if (recorder !== undefined) yield* recorder.record(event)
            if (format === "stream-json") yield* lines.handle(event)
          })
        ),
        Effect.ensuring(recorder?.sync ?? Effect.void)
      )
    yield* runOnce(prompt)
    const structured = settings.structured
    for (let reminded = 0; structured !== undefined && reminded < StructuredOutput.maxReminders; reminded++) {
      const last = events.findLast((e) => e._tag === "Stopped")
      if (Option.isSome(structured.answer()) || last?._tag !== "Stopped" || last.reason !== "end_turn") break
      yield* runOnce(StructuredOutput.reminder)
    }
    yield* lines.finish
    const finalText = QueryLoop.finalText(events)
    const stopped = events.findLast((e): e is Extract<QueryLoop.LoopEvent, { _tag: "Stopped" }> => e._tag === "Stopped")
    const durationMs = (yield* Clock.currentTimeMillis) - t0
    // What this prompt's responses used: the meter's (sub-agents included), else the loop's usage events.
    const responses = Option.isSome(meter)
      ? meter.value.responses().slice(spentBefore)
      : [{ model: settings.model, usage: Cost.fromEvents(events) }]
    const usage = Cost.total(responses)
    const unpriced = [...new Set(responses.map((r) => r.model))].filter((m) => Cost.priceOf(m) === undefined)
    // A replayed model has no price to know; only a real model's missing price is worth a warning.
    for (const model of unpriced) {
      if (model === "replay" || settings.model === "replay" || warnedModels.has(model)) continue
      if (format !== "json" && format !== "stream-json") continue
      warnedModels.add(model)
      yield* Output.warn(Cost.unknownPriceWarning(model))
    }
    const result = StreamJson.resultJson(events, {
      sessionId,
      durationMs,
      finalText,
      usage,
      costUsd: Cost.totalCostUsd(responses),
      modelUsage: Cost.modelUsage(responses, { maxOutputTokens: settings.maxOutputTokens }),
      uuid: uuid(),
      structured: structured === undefined
        ? undefined
        : Option.match(structured.answer(), {
          onNone: () => ({ _tag: "Missing" as const }),
          onSome: (value) => ({ _tag: "Output" as const, value })
        })
    })
    if (format === "final") yield* Output.line(finalText)
    if (format === "json" || format === "stream-json") yield* Output.line(JSON.stringify(result))
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
): Effect.Effect<Outcome, never, QueryLoop.Requirements | SandboxPort.Sandbox> =>
  Effect.gen(function*() {
    const ref = yield* Ref.make(context)
    const session = yield* QueryLoop.makeSession(ref, loopOptions)
    if (format === "stream-json") yield* Output.line(JSON.stringify(yield* initLine(ref, model)))
    return yield* runPrompt(session, prompt, { format, model })
  })

/**
 * Whether a run ended normally: a finished turn or a hook's stop (and, with
 * `--json-schema`, an answer). Denied calls do not count against it (the
 * model was told and carried on).
 *
 * @since 0.1.0
 * @category running
 */
export const endedNormally = (outcome: Outcome): boolean => outcome.result.subtype === "success"

/**
 * Exit code 1 when the run did not end normally, with the reason (on stderr
 * in every format: stdout holds the result for programs).
 *
 * @since 0.1.0
 * @category running
 */
export const failUnlessEnded = (outcome: Outcome): Effect.Effect<void, CliError.CliError> => {
  if (endedNormally(outcome)) return Effect.void
  const stopped = outcome.stopped
  const error = [...outcome.events].reverse().find((e) => e._tag === "Error")
  const why = error?._tag === "Error"
    ? error.message
    : outcome.result.subtype === "error_max_structured_output_retries"
    ? outcome.result.errors?.[0] ?? "no structured output"
    : stopped === undefined
    ? "the run ended without a result"
    : `stopped: ${stopped.reason}${stopped.detail === undefined ? "" : ` (${stopped.detail})`}`
  return Effect.fail(CliError.failure(why))
}
