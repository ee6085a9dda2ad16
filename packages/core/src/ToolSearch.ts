/**
 * `ToolSearch` (SPEC §4.3, chapter 5.2.4): how the model finds and
 * loads deferred tools. A query is keywords, ranked with BM25 over each
 * tool's name (split on `_`, `-` and camelCase), search hint and description
 * with light stemming, or `select:Name1,Name2` for exact picks. As in Claude
 * Code, `+term` requires the term in the tool's name (`+slack send`), and a
 * word `mcp__<server>` puts that server's tools first. The
 * `tool_result` is an array of `{"type":"tool_reference","tool_name":…}`
 * blocks, best first; the API expands each into the tool's full definition,
 * so the tool counts as loaded from then on.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Bm25 from "./internal/bm25.js"
import type * as Messages from "./Messages.js"
import * as Tool from "./Tool.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const NAME = "ToolSearch"

/**
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_RESULTS = 5

/**
 * The text result when nothing matched.
 *
 * @since 0.1.0
 * @category constants
 */
export const NO_MATCH = "No matching deferred tools found."

/**
 * @since 0.1.0
 * @category schemas
 */
export const Input = Schema.Struct({
  query: Schema.String.annotations({
    description: "Keywords to search for, or \"select:Name1,Name2\" to load tools by exact name"
  }),
  max_results: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({
      description: `How many tools to return (default ${DEFAULT_MAX_RESULTS})`
    })
  )
})

// Name words weigh most: a model's keywords are usually the service and the object.
const WEIGHTS = [3, 2, 1]

const documents = new WeakMap<Tool.Any, Bm25.Document>()

const documentOf = (tool: Tool.Any): Bm25.Document => {
  let doc = documents.get(tool)
  if (doc === undefined) {
    doc = {
      fields: [
        Bm25.field([tool.name, ...tool.aliases].join(" ")),
        Bm25.field(tool.searchHint),
        Bm25.field(tool.description)
      ]
    }
    documents.set(tool, doc)
  }
  return doc
}

const SELECT = /^\s*select:/i

/** A query word naming an MCP server's tools: `mcp__github` (or `mcp__github__`). */
const MCP_PREFIX = /^mcp__[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*_*$/

/**
 * The tools a query picks, best first: exact names for `select:`, else the
 * BM25 ranking (an exact full-name query ranks its tool first).
 *
 * @since 0.1.0
 * @category searching
 */
export const search = (
  tools: ReadonlyArray<Tool.Any>,
  query: string,
  maxResults: number = DEFAULT_MAX_RESULTS
): ReadonlyArray<Tool.Any> => makeSearcher(tools)(query, maxResults)

/**
 * A search over a fixed set of tools, its index built on the first keyword
 * query and reused after (ToolSearch builds one per turn).
 *
 * @since 0.1.0
 * @category searching
 */
export const makeSearcher = (
  tools: ReadonlyArray<Tool.Any>
): (query: string, maxResults?: number) => ReadonlyArray<Tool.Any> => {
  let built: Bm25.Index | undefined
  return (query, maxResults = DEFAULT_MAX_RESULTS) => {
    if (SELECT.test(query)) {
      const names = query.replace(SELECT, "").split(",").map((name) => name.trim()).filter((name) => name.length > 0)
      const picked: Array<Tool.Any> = []
      for (const name of names) {
        const tool = tools.find((t) => Tool.hasName(t, name)) ??
          tools.find((t) => t.name.toLowerCase() === name.toLowerCase())
        if (tool !== undefined && !picked.includes(tool)) picked.push(tool)
      }
      return picked
    }
    const trimmed = query.trim()
    built ??= Bm25.index(tools.map(documentOf), WEIGHTS.length)
    const exact = tools.find((t) => Tool.hasName(t, trimmed))
    const words = trimmed.split(/\s+/).filter((word) => word.length > 0)
    // `+term`: the tool's name must hold the term; the other words rank.
    const required = words.filter((word) => word.startsWith("+") && word.length > 1)
      .map((word) => word.slice(1).toLowerCase())
    // `mcp__server`: that server's tools come first.
    const prefixes = words.filter((word) => MCP_PREFIX.test(word)).map((word) => word.replace(/_+$/, "").toLowerCase())
    // A server prefix ranks by the server's name (every tool's name starts with "mcp").
    const terms = Bm25.tokenize(
      words.map((word) => (word.startsWith("+") ? word.slice(1) : MCP_PREFIX.test(word) ? word.slice(5) : word))
        .join(" ")
    )
    const ranked = Bm25.rank(built, terms, WEIGHTS).map(({ index }) => tools[index]!)
    const ofServer = (tool: Tool.Any) => prefixes.some((prefix) => tool.name.toLowerCase().startsWith(`${prefix}__`))
    const candidates = prefixes.length === 0 ? ranked : [
      ...ranked.filter(ofServer),
      ...tools.filter((tool) => ofServer(tool) && !ranked.includes(tool)),
      ...ranked.filter((tool) => !ofServer(tool))
    ]
    const kept = required.length === 0
      ? candidates
      : candidates.filter((tool) => required.every((term) => tool.name.toLowerCase().includes(term)))
    const ordered = exact === undefined ? kept : [exact, ...kept.filter((t) => t !== exact)]
    return ordered.slice(0, Math.max(0, maxResults))
  }
}

/**
 * The `tool_result` content for the picked tools.
 *
 * @since 0.1.0
 * @category mapping
 */
export const toContent = (names: ReadonlyArray<string>): Messages.ToolResultContent =>
  names.length === 0 ? NO_MATCH : names.map((name) => ({ type: "tool_reference" as const, tool_name: name }))

/**
 * The ToolSearch tool over the given deferred tools.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (deferred: ReadonlyArray<Tool.Any>): Tool.Tool<typeof Input.Type, ReadonlyArray<string>> => {
  const searcher = makeSearcher(deferred)
  return Tool.make<typeof Input.Type, ReadonlyArray<string>>(NAME, {
    description: [
      "Fetches full schema definitions for deferred tools so they can be called.",
      "Deferred tools appear by name (with a one-line summary) in the system prompt; until fetched, only the name is known.",
      "Query forms: \"select:Name1,Name2\" for exact names, or keywords (e.g. \"github issues\") to search by name,",
      "summary and description; \"+slack send\" requires \"slack\" in the name and ranks by the rest; \"mcp__github\"",
      "lists that MCP server's tools first. The result lists the matching tools, best first; their definitions are",
      "then available."
    ].join(" "),
    searchHint: "search and load deferred tools by keyword or exact name",
    input: Input,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    alwaysLoad: true,
    call: ({ max_results, query }) =>
      Effect.sync(() => searcher(query, max_results ?? DEFAULT_MAX_RESULTS).map((tool) => tool.name)),
    mapResult: toContent
  })
}
