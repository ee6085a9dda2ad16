/**
 * `/compact` in the interactive session: the model summarizes the
 * conversation, and the summary replaces the history but for the last
 * turns, which stay as they were (Claude Code's continuation message leads
 * the new history). The transcript is rewritten to the compacted
 * conversation.
 *
 * @since 0.1.0
 */
import * as Messages from "@switchyard/core/Messages"
import * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * How many of the last prompts (with everything after them) are kept.
 *
 * @since 0.1.0
 * @category constants
 */
export const keptTurns = 2

/**
 * What the model is asked for.
 *
 * @since 0.1.0
 * @category constants
 */
export const instruction =
  "Summarize the conversation so far for yourself, to continue the work from the summary alone: the user's requests " +
  "and intent, what was done (files read and changed, commands run, with paths), decisions and their reasons, errors " +
  "and how they were fixed, and what is still to do. Reply with the summary only."

/**
 * The text that leads the compacted history (Claude Code's).
 *
 * @since 0.1.0
 * @category constants
 */
export const preamble =
  "This session is being continued from a previous conversation that ran out of context. The conversation is " +
  "summarized below:"

/** A user message that is a prompt (not tool results). */
const isPrompt = (message: Messages.Message): boolean =>
  message.role === "user" && !Messages.blocks(message).some((b) => b.type === "tool_result")

/**
 * Where the kept part begins: at the `keptTurns`-th last prompt (0 when
 * there are not more prompts than that: nothing to compact).
 *
 * @since 0.1.0
 * @category compacting
 */
export const cut = (messages: ReadonlyArray<Messages.Message>, kept = keptTurns): number => {
  const prompts = messages.flatMap((m, i) => (isPrompt(m) ? [i] : []))
  return prompts.length <= kept ? 0 : prompts[prompts.length - kept]!
}

/**
 * The compacted conversation, or `undefined` when there is nothing to
 * compact; fails when the model cannot summarize.
 *
 * @since 0.1.0
 * @category compacting
 */
export const compact = (
  messages: ReadonlyArray<Messages.Message>,
  options: {
    readonly model: string
    readonly system?: string | undefined
    readonly tools: ReadonlyArray<Model.ToolDefinition>
  }
): Effect.Effect<
  { readonly messages: ReadonlyArray<Messages.Message>; readonly summary: string } | undefined,
  Model.ModelError,
  Model.LanguageModel
> =>
  Effect.gen(function*() {
    const at = cut(messages)
    if (at === 0) return undefined
    const model = yield* Model.LanguageModel
    const older = messages.slice(0, at)
    const summary = yield* model.stream({
      ...(options.system === undefined ? {} : { system: options.system }),
      messages: QueryLoop.forRequest([...older, { role: "user", content: [Messages.text(instruction)] }]),
      tools: options.tools,
      model: options.model
    }).pipe(
      Stream.runFold("", (text, event) =>
        event.type === "content_block_delta" && event.delta.type === "text_delta"
          ? text + event.delta.text
          : event.type === "content_block_start" && event.content_block.type === "text"
          ? text + event.content_block.text
          : text)
    )
    return {
      summary: summary.trim(),
      messages: [{ role: "user", content: [Messages.text(`${preamble}\n${summary.trim()}`)] }, ...messages.slice(at)]
    }
  })
