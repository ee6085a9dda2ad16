/**
 * Tool registry and lookup (SPEC §4.2, chapter 5.2).
 *
 * `getTools` is the chapter's filter pipeline, in its exact order: simple mode
 * (returns early), minus the special tools, blanket-deny pre-filter, REPL
 * hiding, `isEnabled`. Lookup checks names, then aliases; a call to a name
 * that is not visible may still resolve through an alias in the full pool
 * (a deprecated name such as `KillShell` → `TaskStop`), but never a special
 * tool.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Deferral from "./Deferral.js"
import * as EditDistance from "./EditDistance.js"
import * as Tool from "./Tool.js"

/**
 * Tools that stay when `SWITCHYARD_SIMPLE` is on.
 *
 * @since 0.1.0
 * @category constants
 */
export const SIMPLE_MODE_TOOLS: ReadonlyArray<string> = ["Bash", "Read", "Edit"]

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Tools that exist for the runtime, never for the model. */
  readonly specialTools?: Iterable<string> | undefined
  /** Overrides `SWITCHYARD_SIMPLE` / `CLAUDE_CODE_SIMPLE`. */
  readonly simpleMode?: boolean | undefined
  /** Overrides `SWITCHYARD_REPL_MODE` / `CLAUDE_CODE_REPL`. */
  readonly replMode?: boolean | undefined
  /** Overrides `ENABLE_TOOL_SEARCH` (SPEC §4.3). */
  readonly deferral?: Deferral.Policy | undefined
  /** The model's context window, for `ENABLE_TOOL_SEARCH=auto`. */
  readonly contextWindowTokens?: number | undefined
}

/**
 * A flag read from the Switchyard variable, else its Claude Code spelling.
 *
 * @since 0.1.0
 * @category config
 */
export const flag = (name: string, claudeCodeName: string): Config.Config<boolean> =>
  Config.boolean(name).pipe(
    Config.orElse(() => Config.boolean(claudeCodeName)),
    Config.withDefault(false)
  )

/**
 * @since 0.1.0
 * @category config
 */
export const simpleModeConfig = flag("SWITCHYARD_SIMPLE", "CLAUDE_CODE_SIMPLE")

/**
 * @since 0.1.0
 * @category config
 */
export const replModeConfig = flag("SWITCHYARD_REPL_MODE", "CLAUDE_CODE_REPL")

/**
 * The filter pipeline of SPEC §4.2 over a given pool, as a pure function.
 *
 * @since 0.1.0
 * @category filtering
 */
export const filterTools = (
  pool: ReadonlyArray<Tool.Any>,
  options: {
    readonly simpleMode: boolean
    readonly replMode: boolean
    readonly specialTools: ReadonlySet<string>
    readonly isBlanketDenied: (toolName: string) => boolean
  }
): ReadonlyArray<Tool.Any> => {
  const notDenied = (tool: Tool.Any) => !options.isBlanketDenied(tool.name)
  // 1. Simple mode: Bash, Read and Edit, filtered by deny rules, and nothing else happens.
  if (options.simpleMode) {
    return SIMPLE_MODE_TOOLS.flatMap((name) => pool.filter((tool) => tool.name === name)).filter(notDenied)
  }
  // 2. The pool minus the special tools.
  let tools = pool.filter((tool) => !options.specialTools.has(tool.name))
  // 3. Blanket-deny pre-filter: the model never sees a tool it may not use at all.
  tools = tools.filter(notDenied)
  // 4. REPL mode, and only if a REPL tool survived step 3: hide the tools it wraps.
  if (options.replMode) {
    const wrapped = new Set(tools.flatMap((tool) => tool.wraps))
    if (wrapped.size > 0) tools = tools.filter((tool) => !wrapped.has(tool.name))
  }
  // 5. isEnabled.
  return tools.filter((tool) => tool.isEnabled())
}

/**
 * Find a tool by name, then by alias.
 *
 * @since 0.1.0
 * @category lookup
 */
export const findToolByName = (tools: ReadonlyArray<Tool.Any>, name: string): Tool.Any | undefined =>
  tools.find((tool) => tool.name === name) ?? tools.find((tool) => tool.aliases.includes(name))

/**
 * The lookup `runToolUse` does: visible tools first; then the full pool, but
 * only when the name is one of the hit's aliases.
 *
 * @since 0.1.0
 * @category lookup
 */
export const resolve = (
  name: string,
  visible: ReadonlyArray<Tool.Any>,
  pool: ReadonlyArray<Tool.Any>
): Either.Either<Tool.Any, string> => {
  const direct = findToolByName(visible, name)
  if (direct !== undefined) return Either.right(direct)
  const fallback = findToolByName(pool, name)
  if (fallback !== undefined && fallback.aliases.includes(name)) return Either.right(fallback)
  return Either.left(noSuchTool(name, visible))
}

/**
 * `No such tool available: <name>`, with up to three close names on a second
 * line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const noSuchTool = (name: string, visible: ReadonlyArray<Tool.Any>): string => {
  const suggestions = suggest(name, visible.map((tool) => tool.name))
  return suggestions.length === 0
    ? `No such tool available: ${name}`
    : `No such tool available: ${name}\nDid you mean ${suggestions.join(", ")}?`
}

/**
 * Up to three names close to `name` (case-insensitive edit distance, or a
 * shared prefix/substring), closest first.
 *
 * @since 0.1.0
 * @category formatting
 */
export const suggest = (name: string, candidates: ReadonlyArray<string>, max = 3): ReadonlyArray<string> => {
  const target = name.toLowerCase()
  return candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase()
      const distance = EditDistance.levenshtein(target, lower)
      const related = lower.includes(target) || target.includes(lower)
      return { candidate, score: related ? Math.min(distance, 1) : distance }
    })
    .filter(({ candidate, score }) => score <= Math.max(2, Math.floor(candidate.length / 3)))
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map(({ candidate }) => candidate)
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The full pool: every provided tool, gated ones included when their gate is on. */
  readonly pool: Effect.Effect<ReadonlyArray<Tool.Any>>
  /**
   * The pool minus the special tools: what a model's `tool_use` may reach,
   * through an alias, when the name is not visible (special tools are never
   * for the model).
   */
  readonly modelPool: Effect.Effect<ReadonlyArray<Tool.Any>>
  /** What the model sees under this deny predicate (SPEC §4.2). */
  readonly getTools: (isBlanketDenied: (toolName: string) => boolean) => Effect.Effect<ReadonlyArray<Tool.Any>>
}

/**
 * @since 0.1.0
 * @category services
 */
export class ToolRegistry extends Context.Tag("@switchyard/core/Registry/ToolRegistry")<ToolRegistry, Service>() {}

/**
 * The registry over the `ToolPool` that tool layers register into. Provide it
 * under the tool layers: `Layer.provideMerge(toolLayers, Registry.layer())`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ToolRegistry | Tool.ToolPool> =>
  // One Layer for both services (a Layer per service, merged, costs a fiber per side on every start).
  Layer.effectContext(
    Effect.gen(function*() {
      const pool = yield* Tool.ToolPool.make
      const simpleMode = options.simpleMode ?? (yield* Effect.orDie(simpleModeConfig))
      const replMode = options.replMode ?? (yield* Effect.orDie(replModeConfig))
      const specialTools = new Set(options.specialTools ?? [])
      const policy = options.deferral ?? (yield* Deferral.policyConfig)
      const registry: Service = {
        pool: pool.tools,
        modelPool: Effect.map(pool.tools, (tools) => tools.filter((tool) => !specialTools.has(tool.name))),
        getTools: (isBlanketDenied) =>
          Effect.map(pool.tools, (tools) =>
            // After the filters: which tools are deferred, and ToolSearch when any are (SPEC §4.3).
            Deferral.apply(filterTools(tools, { simpleMode, replMode, specialTools, isBlanketDenied }), {
              policy,
              contextWindowTokens: options.contextWindowTokens,
              toolSearchAllowed: !isBlanketDenied("ToolSearch")
            }))
      }
      return Context.make(Tool.ToolPool, pool).pipe(Context.add(ToolRegistry, registry))
    })
  )

/**
 * A registry with exactly these tools (no layers needed).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTools = (
  tools: ReadonlyArray<Tool.Any>,
  options: Options = {}
): Layer.Layer<ToolRegistry | Tool.ToolPool> =>
  Layer.tap(
    layer(options),
    (context) => Effect.forEach(tools, (tool) => Context.get(context, Tool.ToolPool).register(tool), { discard: true })
  )
