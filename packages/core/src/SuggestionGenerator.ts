/**
 * The suggestion port of speculation (SPEC §4.12): given the conversation so
 * far, the next prompt the user is likely to send, or none. The interactive
 * session and `switchyard speculate` ask it; print mode and `dispatch` never
 * do.
 *
 * Implementations: a fixed list handed out in order (a replay transcript's
 * `suggestions`), and one that asks a model for a short next prompt
 * (`fromModel`; the Anthropic entry point wires it to a small, fast model).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Messages from "./Messages.js"
import * as Model from "./Model.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The next prompt to suggest after these messages; `None` when there is nothing to suggest. */
  readonly next: (messages: ReadonlyArray<Messages.Message>) => Effect.Effect<Option.Option<string>>
}

/**
 * @since 0.1.0
 * @category services
 */
export class SuggestionGenerator extends Context.Tag("@switchyard/core/SuggestionGenerator/SuggestionGenerator")<
  SuggestionGenerator,
  Service
>() {}

/**
 * Hand out the given suggestions in order, then none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromList = (suggestions: ReadonlyArray<string>): Effect.Effect<Service> =>
  Effect.map(Ref.make(0), (index) => ({
    next: () => Ref.modify(index, (i) => [Option.fromNullable(suggestions[i]), Math.min(i + 1, suggestions.length)])
  }))

/**
 * @since 0.1.0
 * @category layers
 */
export const layerList = (suggestions: ReadonlyArray<string>): Layer.Layer<SuggestionGenerator> =>
  Layer.effect(SuggestionGenerator, fromList(suggestions))

/**
 * The instruction `fromModel` sends after the conversation.
 *
 * @since 0.1.0
 * @category constants
 */
export const SUGGESTION_INSTRUCTION =
  "Suggest the user's most likely next message to this coding agent, in their voice, as one short imperative " +
  "sentence (at most 15 words). Reply with the sentence only. If there is no natural next step, reply with NONE."

/**
 * The longest conversation tail `fromModel` sends, in messages.
 *
 * @since 0.1.0
 * @category constants
 */
export const CONTEXT_MESSAGES = 12

/**
 * Text-only copies of the last messages (tool calls and results summarised),
 * so the request is small and needs no tool definitions.
 */
const summarise = (messages: ReadonlyArray<Messages.Message>): Array<Messages.Message> => {
  const out: Array<Messages.Message> = []
  for (const message of messages.slice(-CONTEXT_MESSAGES)) {
    const text = Messages.blocks(message).flatMap((block) => {
      switch (block.type) {
        case "text":
          return [block.text]
        case "tool_use":
          return [`[called ${block.name}]`]
        case "tool_result":
          return [
            `[${block.is_error === true ? "error" : "result"}: ${Messages.contentText(block.content).slice(0, 200)}]`
          ]
        default:
          return []
      }
    }).join("\n")
    if (text.trim() === "") continue
    const last = out[out.length - 1]
    // The API wants alternating roles: merge neighbours of the same role.
    if (last !== undefined && last.role === message.role) {
      out[out.length - 1] = {
        role: last.role,
        content: `${Messages.blocks(last).map((b) => (b.type === "text" ? b.text : "")).join("")}\n${text}`
      }
    } else out.push({ role: message.role, content: [Messages.text(text)] })
  }
  return out
}

/**
 * Ask the `LanguageModel` in context for a short next prompt. Failures and
 * `NONE` are no suggestion: a suggestion never breaks a session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromModel = (
  options: { readonly model?: string | undefined; readonly maxTokens?: number } = {}
): Effect.Effect<Service, never, Model.LanguageModel> =>
  Effect.map(Model.LanguageModel, (model) => ({
    next: (messages) => {
      const history = summarise(messages)
      const request: Model.ModelRequest = {
        messages: [
          ...history,
          ...(history[history.length - 1]?.role === "user"
            ? [{ role: "assistant" as const, content: [Messages.text("(waiting for the user)")] }]
            : []),
          { role: "user", content: [Messages.text(SUGGESTION_INSTRUCTION)] }
        ],
        tools: [],
        maxTokens: options.maxTokens ?? 64,
        model: options.model
      }
      return model.stream(request).pipe(
        Stream.runFold("", (text, event) =>
          event.type === "content_block_delta" && event.delta.type === "text_delta"
            ? text + event.delta.text
            : event.type === "content_block_start" && event.content_block.type === "text"
            ? text + event.content_block.text
            : text),
        Effect.map((text) => {
          const line = text.trim().split("\n", 1)[0]?.trim().replace(/^["']|["']$/g, "") ?? ""
          return line === "" || line.toUpperCase() === "NONE" ? Option.none<string>() : Option.some(line)
        }),
        Effect.orElseSucceed(() => Option.none<string>())
      )
    }
  }))
