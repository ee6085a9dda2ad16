/**
 * Which tools are deferred (SPEC §4.3): sent with `defer_loading: true` and
 * listed in the system prompt one line each, until ToolSearch loads them.
 *
 * `ENABLE_TOOL_SEARCH`: unset or `true` defers every MCP tool and every
 * `shouldDefer` tool; `false` defers none; `auto` defers them once their
 * definitions (JSON characters / 4 tokens) exceed 10% of the model's context
 * window; `auto:N` at N%. A tool opts out with `alwaysLoad`. `ToolSearch` is
 * in the tool set exactly when something is deferred (and it is itself
 * always loaded, so a request never has only deferred tools); when a blanket
 * deny rule removes ToolSearch, nothing is deferred.
 *
 * Where Claude Code turns tool search off (`resolvePolicy`): a model without
 * tool search support (Haiku, Claude 3) never defers; an
 * `ANTHROPIC_BASE_URL` that is not Anthropic's own host defers only when
 * `ENABLE_TOOL_SEARCH` says so (most proxies drop `tool_reference` blocks).
 * `auto` measures against the model's context window (`contextWindow`).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as Messages from "./Messages.js"
import * as Model from "./Model.js"
import * as Tool from "./Tool.js"
import * as ToolSearch from "./ToolSearch.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Policy =
  | { readonly _tag: "Always" }
  | { readonly _tag: "Never" }
  | { readonly _tag: "Auto"; readonly percent: number }

/**
 * The context window `auto` measures against when none is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000

/**
 * Read an `ENABLE_TOOL_SEARCH` value; `undefined` for one it does not know.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parsePolicy = (raw: string | undefined): Policy | undefined => {
  const value = raw?.trim().toLowerCase() ?? ""
  if (value === "" || value === "true" || value === "1") return { _tag: "Always" }
  if (value === "false" || value === "0") return { _tag: "Never" }
  if (value === "auto") return { _tag: "Auto", percent: 10 }
  const match = /^auto:(\d+(?:\.\d+)?)$/.exec(value)
  if (match !== null) {
    const percent = Number(match[1])
    if (percent >= 0 && percent <= 100) return { _tag: "Auto", percent }
  }
  return undefined
}

/**
 * `ENABLE_TOOL_SEARCH` from the environment; an unknown value is the
 * default (`true`) with a warning logged.
 *
 * @since 0.1.0
 * @category config
 */
export const policyConfig: Effect.Effect<Policy> = Config.string("ENABLE_TOOL_SEARCH").pipe(
  Config.option,
  Effect.orElseSucceed(() => undefined),
  Effect.flatMap((option) => {
    const raw = option === undefined || option._tag === "None" ? undefined : option.value
    const policy = parsePolicy(raw)
    return policy !== undefined
      ? Effect.succeed(policy)
      : Effect.as(
        Effect.logWarning(`ENABLE_TOOL_SEARCH="${raw}" is not true, false, auto or auto:N; deferring as for true`),
        { _tag: "Always" } as const
      )
  })
)

/**
 * Whether a model supports tool search (`tool_reference` blocks): Claude
 * Sonnet 4 or later and Opus 4 or later; not Haiku, not Claude 3. A name that
 * is not a Claude model's is taken to support it.
 *
 * @since 0.1.0
 * @category policy
 */
export const supportsToolSearch = (model: string): boolean => !/haiku|claude-3|claude-2|claude-instant/i.test(model)

/**
 * Whether an `ANTHROPIC_BASE_URL` is Anthropic's own API (unset counts as
 * yes).
 *
 * @since 0.1.0
 * @category policy
 */
export const isFirstPartyBaseUrl = (baseUrl: string | undefined): boolean => {
  if (baseUrl === undefined || baseUrl.trim() === "") return true
  try {
    const host = new URL(baseUrl).hostname.toLowerCase()
    return host === "api.anthropic.com" || host.endsWith(".anthropic.com")
  } catch {
    return false
  }
}

/**
 * A model's context window in tokens: 1 000 000 for a `[1m]` model name,
 * else {@link DEFAULT_CONTEXT_WINDOW_TOKENS}.
 *
 * @since 0.1.0
 * @category policy
 */
export const contextWindow = (model: string | undefined): number =>
  model !== undefined && /\[1m\]$/i.test(model.trim()) ? 1_000_000 : DEFAULT_CONTEXT_WINDOW_TOKENS

/**
 * The deferral policy as Claude Code decides it: a model without tool
 * search support never defers; an explicit `ENABLE_TOOL_SEARCH` (`raw`)
 * decides next (an unknown value is `true`); otherwise tool search is on,
 * except behind a base URL that is not Anthropic's.
 *
 * @since 0.1.0
 * @category policy
 */
export const resolvePolicy = (inputs: {
  readonly raw: string | undefined
  readonly model?: string | undefined
  readonly baseUrl?: string | undefined
}): Policy => {
  if (inputs.model !== undefined && !supportsToolSearch(inputs.model)) return { _tag: "Never" }
  if (inputs.raw !== undefined && inputs.raw.trim() !== "") return parsePolicy(inputs.raw) ?? { _tag: "Always" }
  return isFirstPartyBaseUrl(inputs.baseUrl) ? { _tag: "Always" } : { _tag: "Never" }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly policy: Policy
  /** For `auto`; default {@link DEFAULT_CONTEXT_WINDOW_TOKENS}. */
  readonly contextWindowTokens?: number | undefined
  /** False when ToolSearch may not be offered (a blanket deny rule): then nothing is deferred. */
  readonly toolSearchAllowed?: boolean | undefined
}

/**
 * The tokens of a tool's definition, as `auto` counts them: its JSON's
 * characters / 4.
 *
 * @since 0.1.0
 * @category sizing
 */
export const definitionTokens = (tool: Tool.Any): number =>
  Math.ceil(JSON.stringify(Model.toolDefinition(tool)).length / 4)

const loadedCopies = new WeakMap<Tool.Any, Tool.Any>()

/** The tool with its deferral turned off (cached, so decoders and indexes keyed on the tool stay warm). */
const loaded = (tool: Tool.Any): Tool.Any => {
  let copy = loadedCopies.get(tool)
  if (copy === undefined) {
    copy = { ...tool, alwaysLoad: true }
    loadedCopies.set(tool, copy)
  }
  return copy
}

/**
 * Decide deferral for the tools the model would see: the result has the
 * tools the policy loads marked `alwaysLoad` (so `Tool.isDeferred` answers
 * for them), and `ToolSearch` over the deferred ones appended when there
 * are any.
 *
 * @since 0.1.0
 * @category deferral
 */
export const apply = (tools: ReadonlyArray<Tool.Any>, options: Options): ReadonlyArray<Tool.Any> => {
  const withoutSearch = tools.filter((tool) => tool.name !== ToolSearch.NAME)
  const eligible = withoutSearch.filter(Tool.isDeferred)
  if (eligible.length === 0) return withoutSearch
  const defer = options.toolSearchAllowed !== false && decide(eligible, options)
  if (!defer) return withoutSearch.map((tool) => (Tool.isDeferred(tool) ? loaded(tool) : tool))
  return [...withoutSearch, ToolSearch.make(eligible) as Tool.Any]
}

const decide = (eligible: ReadonlyArray<Tool.Any>, options: Options): boolean => {
  switch (options.policy._tag) {
    case "Always":
      return true
    case "Never":
      return false
    case "Auto": {
      const window = options.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS
      let tokens = 0
      for (const tool of eligible) tokens += definitionTokens(tool)
      return tokens > (window * options.policy.percent) / 100
    }
  }
}

/**
 * The deferred tools of a tool set.
 *
 * @since 0.1.0
 * @category deferral
 */
export const deferredTools = (tools: ReadonlyArray<Tool.Any>): ReadonlyArray<Tool.Any> => tools.filter(Tool.isDeferred)

/**
 * The names of the tools a `tool_reference` in the conversation has loaded.
 *
 * @since 0.1.0
 * @category deferral
 */
export const loadedNames = (messages: ReadonlyArray<Messages.Message>): ReadonlySet<string> => {
  const names = new Set<string>()
  for (const message of messages) {
    if (typeof message.content === "string") continue
    for (const block of message.content) {
      if (block.type !== "tool_result" || typeof block.content === "string") continue
      for (const item of block.content) if (item.type === "tool_reference") names.add(item.tool_name)
    }
  }
  return names
}

/**
 * The system prompt with the deferred-tool lines (`name: searchHint`, one
 * each) appended; unchanged when nothing is deferred. Tools already loaded
 * by a `tool_reference` say so, since their full definitions are known.
 *
 * @since 0.1.0
 * @category deferral
 */
export const systemPrompt = (
  system: string | undefined,
  tools: ReadonlyArray<Tool.Any>,
  messages: ReadonlyArray<Messages.Message>
): string | undefined => {
  const deferred = deferredTools(tools)
  if (deferred.length === 0) return system
  const loadedSet = loadedNames(messages)
  const lines = deferred.map((tool) =>
    `${tool.name}: ${oneLine(tool.searchHint)}${loadedSet.has(tool.name) ? " (loaded)" : ""}`
  )
  const section = [
    "<available-deferred-tools>",
    `These tools exist but their definitions are not loaded. Call ${ToolSearch.NAME} with keywords or "select:<name>" to load them before use.`,
    ...lines,
    "</available-deferred-tools>"
  ].join("\n")
  return system === undefined || system.length === 0 ? section : `${system}\n\n${section}`
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()
