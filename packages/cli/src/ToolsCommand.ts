/**
 * `switchyard tools list | search QUERY | schema NAME`: the tools the model
 * would see, with deferred tools marked, in the working directory's
 * permission context (blanket-denied tools are hidden, as from the model).
 *
 * @since 0.1.0
 */
import * as Execution from "@switchyard/core/Execution"
import * as Model from "@switchyard/core/Model"
import * as Registry from "@switchyard/core/Registry"
import * as Tool from "@switchyard/core/Tool"
import * as ToolSearch from "@switchyard/core/ToolSearch"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as McpToolCache from "./internal/mcpToolCache.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Action =
  /** `cached`: start no MCP server; their tools come from the names cached when they last connected. */
  | { readonly _tag: "list"; readonly cached?: boolean | undefined }
  | { readonly _tag: "search"; readonly query: string }
  | { readonly _tag: "schema"; readonly name: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly action: Action
  readonly json: boolean
}

// `tools` answers offline: a model that is never called stands in, so that the
// tools which need one (Agent) are listed as `run` would offer them.
const standInModel = Layer.succeed(Model.LanguageModel, {
  stream: () => Stream.fail(new Model.ModelError({ reason: "api", message: "no model in `tools`", retryable: false }))
})

/**
 * Rank tools for a keyword query: the ranking ToolSearch uses (BM25 over
 * name, search hint and description), up to 20 results.
 *
 * @since 0.1.0
 * @category searching
 */
export const search = (tools: ReadonlyArray<Tool.Any>, query: string): ReadonlyArray<Tool.Any> =>
  ToolSearch.search(tools, query, 20)

const describe = (tool: Tool.Any) => ({
  name: tool.name,
  aliases: tool.aliases,
  deferred: Tool.isDeferred(tool),
  description: tool.isMcp || Tool.isDeferred(tool) ? tool.searchHint : tool.description.split("\n")[0],
  concurrencySafeByDefault: undefined as boolean | undefined
})

const printList = (tools: ReadonlyArray<Tool.Any>, json: boolean) =>
  json
    ? Output.line(JSON.stringify(
      tools.map(({ name, aliases, searchHint }) => ({
        name,
        aliases,
        deferred: Tool.isDeferred(tools.find((t) => t.name === name)!),
        summary: searchHint
      })),
      null,
      2
    ))
    : Effect.forEach(tools, (tool) => {
      const d = describe(tool)
      const aliases = d.aliases.length > 0 ? Output.paint("gray", ` (alias: ${d.aliases.join(", ")})`) : ""
      const deferred = d.deferred ? Output.paint("yellow", "[deferred] ") : ""
      return Output.line(
        `${
          Output.paint("bold", tool.name.padEnd(Math.max(14, tool.name.length + 1)))
        }${deferred}${tool.searchHint}${aliases}`
      )
    }, { discard: true })

/** The tools without MCP servers, then the cached MCP tool names (completion scripts read the first column). */
const printCached = (tools: ReadonlyArray<Tool.Any>, names: ReadonlyArray<string>, json: boolean) =>
  json
    ? Output.line(JSON.stringify(
      [
        ...tools.map((tool) => ({
          name: tool.name,
          aliases: tool.aliases,
          deferred: Tool.isDeferred(tool),
          summary: tool.searchHint
        })),
        ...names.map((name) => ({ name, aliases: [], deferred: true, summary: "(cached)", cached: true }))
      ],
      null,
      2
    ))
    : Effect.zipRight(
      printList(tools, false),
      Effect.forEach(
        names,
        (name) => Output.line(`${Output.paint("bold", name.padEnd(Math.max(14, name.length + 1)))}(cached)`),
        { discard: true }
      )
    )

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const cached = options.action._tag === "list" && options.action.cached === true
    const prepared = yield* Runtime.prepare(cached ? { ...options, mcpApproval: "offline" } : options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    yield* Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(Runtime.toolUseContext(prepared))
      const action = options.action
      switch (action._tag) {
        case "list": {
          if (!cached || prepared.stateDir === undefined) return yield* printList(env.tools, options.json)
          const names = Object.values(yield* McpToolCache.read(prepared.stateDir, prepared.cwd)).flat()
          return yield* printCached(env.tools, names, options.json)
        }
        case "search": {
          const found = search(env.tools, action.query)
          if (found.length === 0) return yield* Effect.fail(CliError.failure(`No tool matches "${action.query}"`))
          return yield* printList(found, options.json)
        }
        case "schema": {
          const tool = Registry.findToolByName(env.tools, action.name)
          if (tool === undefined) {
            return yield* Effect.fail(
              CliError.badInput(Registry.noSuchTool(action.name, env.tools).replace("\n", ". "))
            )
          }
          const definition = Model.toolDefinition(tool, { deferred: Tool.isDeferred(tool) })
          return yield* Output.line(JSON.stringify(definition, null, 2))
        }
      }
    }).pipe(
      Effect.provide(Runtime.layer(prepared, { model: standInModel, prompt: Runtime.noPrompt("tools does not ask") }))
    )
  })
