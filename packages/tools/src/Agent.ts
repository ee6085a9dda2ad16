/**
 * Agent (alias `Task`): run a nested query loop for a self-contained task and
 * return its final answer (SPEC §4.11, Claude Code's Agent tool).
 *
 * The sub-agent gets the parent's working directory and permission context,
 * its own conversation, and the parent's tools minus `Agent` (no nesting by
 * default). Its events stream to the parent as progress. Interrupting the call
 * interrupts the nested loop, whose own tools then end like any interrupted
 * tool (their scope closes). Several Agent calls in one turn run concurrently
 * under the tool concurrency cap.
 *
 * The tool is enabled only where a `LanguageModel` is available.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Footprint from "@switchyard/core/Footprint"
import * as Messages from "@switchyard/core/Messages"
import * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Registry from "@switchyard/core/Registry"
import type * as Results from "@switchyard/core/Results"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * @since 0.1.0
 * @category schemas
 */
export const AgentInput = Schema.Struct({
  description: Schema.String.annotations({ description: "A short (3-5 word) description of the task" }),
  prompt: Schema.String.annotations({ description: "The task for the agent to perform" }),
  subagent_type: Schema.optional(
    Schema.String.annotations({ description: "The type of specialized agent to use for this task" })
  )
})
/**
 * @since 0.1.0
 * @category models
 */
export type AgentInput = typeof AgentInput.Type

/**
 * What the parent sees while the sub-agent works.
 *
 * @since 0.1.0
 * @category models
 */
export type AgentProgress =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_started"; readonly tool: string; readonly toolUseId: string }
  | { readonly type: "tool_finished"; readonly tool: string; readonly toolUseId: string; readonly status: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Turn limit of a sub-agent (default 50). */
  readonly maxTurns?: number
  /** Tools a sub-agent may not use (default `["Agent"]`: no nesting). */
  readonly excludeTools?: ReadonlyArray<string>
  /** System prompts per `subagent_type`; `general-purpose` is the default type. */
  readonly agents?: Readonly<Record<string, { readonly system: string }>>
}

const GENERAL_PURPOSE =
  "You are a sub-agent handling one self-contained task for another agent. Use the tools to do the task, " +
  "then reply with a concise final report: what you found or changed, with file paths. That report is all " +
  "the other agent will see."

const DESCRIPTION = `Launch a sub-agent to handle a complex, multi-step task autonomously.

The sub-agent has the same tools as you (except Agent) and works in the same directory. It returns one final message; you do not see its intermediate steps. Several Agent calls in one message run concurrently.

When to use: open-ended searches across many files, research that would fill your context, independent tasks that can run in parallel. Give the agent a complete, self-contained prompt: it does not see this conversation.`

/**
 * Whether a tool is read-only whatever its input: its predicate answers `true`
 * without looking at one (Read, Glob, Grep). An input-dependent predicate
 * (Bash), one that fails or one that needs an Effect counts as not read-only.
 */
const isAlwaysReadOnly = (tool: Tool.Any): boolean => {
  try {
    return tool.isReadOnly(undefined, ToolUseContext.make({ cwd: "/" })) === true
  } catch {
    return false
  }
}

/**
 * Build the Agent tool over captured services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  services: Context.Context<Registry.ToolRegistry | Results.ResultStore>,
  model: Option.Option<Model.Service>,
  options: Options = {}
) =>
  Tool.make<AgentInput, string, AgentProgress>("Agent", {
    description: DESCRIPTION,
    aliases: ["Task"],
    input: AgentInput,
    searchHint: "delegate a self-contained task to a sub-agent",
    isEnabled: () => Option.isSome(model),
    // The agent itself only starts a loop; each of its tool calls goes through the permission chain.
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    // What the sub-agent's calls touch is not known ahead: it writes `*` (a barrier, so its writes cannot race
    // with its siblings or another Agent), unless every tool it can use is read-only whatever its input.
    footprint: () =>
      Effect.map(
        Effect.provide(Effect.flatMap(Registry.ToolRegistry, (registry) => registry.modelPool), services),
        (pool): Footprint.Footprint => {
          const excluded = options.excludeTools ?? ["Agent"]
          const usable = pool.filter((tool) => !excluded.includes(tool.name))
          return usable.every(isAlwaysReadOnly) ? Footprint.readsEverything : Footprint.writesEverything
        }
      ),
    userFacingName: (input) => (input === undefined ? "Agent" : `Agent(${input.description})`),
    validateInput: (input) =>
      input.subagent_type === undefined || input.subagent_type === "general-purpose" ||
        options.agents?.[input.subagent_type] !== undefined
        ? Effect.void
        : Effect.fail(
          new Tool.ToolError({
            message: `Unknown subagent_type "${input.subagent_type}". Available: ${
              ["general-purpose", ...Object.keys(options.agents ?? {})].join(", ")
            }`
          })
        ),
    call: (input, ctx) =>
      Effect.gen(function*() {
        if (Option.isNone(model)) {
          return yield* Effect.fail(
            new Tool.ToolError({ message: "Agent needs a language model; none is configured." })
          )
        }
        const parent = ctx.context
        const system = input.subagent_type !== undefined && input.subagent_type !== "general-purpose"
          ? options.agents![input.subagent_type]!.system
          : GENERAL_PURPOSE
        const session = yield* QueryLoop.makeSession(
          ToolUseContext.make({
            cwd: parent.cwd,
            sessionId: `${parent.sessionId}/agent-${ctx.toolUseId}`,
            permissions: parent.permissions,
            agentDepth: parent.agentDepth + 1
          }),
          { system, maxTurns: options.maxTurns ?? 50, excludeTools: options.excludeTools ?? ["Agent"] }
        ).pipe(Effect.provide(Context.add(services, Model.LanguageModel, model.value)))
        let stopped: QueryLoop.LoopEvent | undefined
        const finalText: Array<string> = []
        yield* session.run(input.prompt).pipe(
          Stream.runForEach((event): Effect.Effect<void> => {
            switch (event._tag) {
              case "AssistantMessage": {
                const text = Messages.blocks(event.message).flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
                if (text.length > 0) finalText.push(text)
                return text.length > 0 ? ctx.progress({ type: "text", text }) : Effect.void
              }
              case "Tool": {
                const dispatched = event.event
                if (DispatchEvent.isStarted(dispatched)) {
                  return ctx.progress({ type: "tool_started", tool: dispatched.name, toolUseId: dispatched.toolUseId })
                }
                if (DispatchEvent.isResult(dispatched)) {
                  return ctx.progress({
                    type: "tool_finished",
                    tool: dispatched.name,
                    toolUseId: dispatched.toolUseId,
                    status: dispatched.status
                  })
                }
                return Effect.void
              }
              case "Stopped":
                stopped = event
                return Effect.void
              default:
                return Effect.void
            }
          })
        )
        const answer = finalText.at(-1) ?? ""
        if (stopped?._tag === "Stopped" && stopped.reason !== "end_turn") {
          const why = stopped.detail === undefined ? stopped.reason : `${stopped.reason}: ${stopped.detail}`
          return yield* Effect.fail(
            new Tool.ToolError({
              message: `The agent stopped early (${why}).${answer.length > 0 ? `\nIts last message:\n${answer}` : ""}`
            })
          )
        }
        return answer.length > 0 ? answer : "(the agent finished without a final message)"
      })
  })

/**
 * The Agent tool's layer. It is enabled only when a `LanguageModel` is in the
 * layer's context; its sub-agents use the registry and result store provided
 * here.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, Tool.ToolPool | Registry.ToolRegistry | Results.ResultStore> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const services = yield* Effect.context<Registry.ToolRegistry | Results.ResultStore>()
      const model = yield* Effect.serviceOption(Model.LanguageModel)
      return Tool.layer(make(services, model, options))
    })
  )
