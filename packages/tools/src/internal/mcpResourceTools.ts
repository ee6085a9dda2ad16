/**
 * Claude Code's MCP resource tools, in the pool while some connected server
 * offers resources:
 *
 * - `ListMcpResourcesTool` `{server?}`: every resource of that server (all
 *   servers when omitted), each `{uri, name, mimeType?, description?,
 *   server}`;
 * - `ReadMcpResourceTool` `{server, uri}`: the resource's contents, text as
 *   text and images as image blocks.
 *
 * Both are read-only and concurrency-safe, and read `mcp:<server>`.
 *
 * @internal
 */
import * as Footprint from "@switchyard/core/Footprint"
import type * as Messages from "@switchyard/core/Messages"
import * as Tool from "@switchyard/core/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpConnection from "./mcpConnection.js"

/** The tool names, as in Claude Code. */
export const LIST = "ListMcpResourcesTool"
export const READ = "ReadMcpResourceTool"

/** One listed resource. */
export interface ListedResource {
  readonly uri: string
  readonly name: string
  readonly mimeType?: string | undefined
  readonly description?: string | undefined
  readonly server: string
}

const NO_RESOURCES = "No resources found. MCP servers may still provide tools even if they have no resources."

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const findServer = (
  servers: ReadonlyArray<McpConnection.Server>,
  name: string
): Effect.Effect<McpConnection.Server, Tool.ToolError> => {
  const found = servers.find((server) => server.config.name === name)
  if (found !== undefined) return Effect.succeed(found)
  const names = servers.map((server) => server.config.name)
  return Effect.fail(
    new Tool.ToolError({
      message: `Server "${name}" not found. Available servers: ${names.length === 0 ? "(none)" : names.join(", ")}`
    })
  )
}

/** The contents of a `resources/read` result as content blocks. */
export const readContent = (server: string, result: unknown): ReadonlyArray<Messages.ToolResultContentBlock> => {
  const contents = isRecord(result) && Array.isArray(result["contents"]) ? result["contents"].filter(isRecord) : []
  if (contents.length === 0) return [{ type: "text", text: `The resource has no contents (server "${server}").` }]
  return contents.map((item): Messages.ToolResultContentBlock => {
    const uri = str(item["uri"]) ?? "(no uri)"
    const mime = str(item["mimeType"])
    const text = str(item["text"])
    if (text !== undefined) return { type: "text", text: `[${uri}${mime === undefined ? "" : ` (${mime})`}]\n${text}` }
    const blob = str(item["blob"]) ?? ""
    if (mime !== undefined && /^image\/(png|jpeg|gif|webp)$/.test(mime)) {
      return { type: "image", source: { type: "base64", media_type: mime, data: blob } }
    }
    const bytes = Math.floor((blob.length * 3) / 4)
    return {
      type: "text",
      text: `[${uri}: ${mime ?? "application/octet-stream"}, ${bytes} bytes of binary data, not shown]`
    }
  })
}

/** The two tools over the servers `servers()` returns (the connected ones that offer resources). */
export const make = (servers: () => ReadonlyArray<McpConnection.Server>): ReadonlyArray<Tool.Any> => [
  Tool.make(LIST, {
    description: "Lists the resources that the configured MCP servers offer (files, records, documents…). " +
      "Each entry has its uri, name, mimeType and a \"server\" field naming the server it comes from; read one with " +
      `${READ}. Give "server" to list only that server's resources.`,
    searchHint: "list the resources MCP servers offer",
    input: Schema.Struct({
      server: Schema.optional(Schema.String.annotations({ description: "Only this server's resources" }))
    }),
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    footprint: ({ server }) => ({
      reads: server !== undefined ? [Footprint.mcp(server)] : servers().map((s) => Footprint.mcp(s.config.name))
    }),
    getPath: () => undefined,
    call: ({ server }) =>
      Effect.gen(function*() {
        const chosen = server === undefined ? servers() : [yield* findServer(servers(), server)]
        const lists = yield* Effect.forEach(chosen, (s) =>
          Effect.map(s.listResources, (resources) =>
            resources.map((r): ListedResource => ({
              uri: r.uri,
              name: r.name,
              ...(r.mimeType === undefined ? {} : { mimeType: r.mimeType }),
              ...(r.description === undefined ? {} : { description: r.description }),
              server: s.config.name
            }))), { concurrency: "unbounded" })
        return lists.flat()
      }),
    mapResult: (resources: ReadonlyArray<ListedResource>) =>
      resources.length === 0 ? NO_RESOURCES : JSON.stringify(resources, null, 2)
  }) as Tool.Any,
  Tool.make(READ, {
    description: "Reads one resource of an MCP server by its URI (as ListMcpResourcesTool lists it).",
    searchHint: "read a resource of an MCP server by URI",
    input: Schema.Struct({
      server: Schema.String.annotations({ description: "The server's name" }),
      uri: Schema.String.annotations({ description: "The resource's URI" })
    }),
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    footprint: ({ server }) => ({ reads: [Footprint.mcp(server)] }),
    getPath: () => undefined,
    call: ({ server, uri }) =>
      Effect.gen(function*() {
        const found = yield* findServer(servers(), server)
        return readContent(server, yield* found.readResource(uri))
      }),
    mapResult: (content: ReadonlyArray<Messages.ToolResultContentBlock>) => content
  }) as Tool.Any
]
