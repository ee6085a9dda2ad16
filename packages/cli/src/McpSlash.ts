/**
 * MCP in the interactive session, as in Claude Code:
 *
 * - `/mcp`: every server with its status and tool count; `/mcp reconnect
 *   NAME` closes its connection and opens a new one;
 * - `/mcp__<server>__<prompt> ARGS`: the server's prompt, its arguments
 *   given in order (the last one takes the rest of the line), sent as the
 *   user's message;
 * - `@<server>:<uri>` in a message: the resource's contents are attached to
 *   the message (the mention stays in the text).
 *
 * @since 0.1.0
 */
import type * as Messages from "@switchyard/core/Messages"
import * as McpServers from "@switchyard/tools/McpServers"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * What a line of the interactive session becomes.
 *
 * @since 0.1.0
 * @category models
 */
export type Expanded =
  /** Not an MCP line: handle it as usual. */
  | { readonly _tag: "Unchanged" }
  /** Send this to the model. */
  | { readonly _tag: "Send"; readonly prompt: string | ReadonlyArray<Messages.ContentBlock> }
  /** Tell the user (a usage error, a failure); nothing is sent. */
  | { readonly _tag: "Say"; readonly text: string }

const service = Effect.serviceOption(McpServers.McpServers)

/**
 * `/mcp [reconnect NAME]`.
 *
 * @since 0.1.0
 * @category commands
 */
export const mcpCommand = (args: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const found = yield* service
    if (Option.isNone(found)) return "No MCP servers configured (.mcp.json, `switchyard mcp add`, or --mcp-config)."
    const [verb = "", name = ""] = args.split(/\s+/).filter((word) => word !== "")
    if (verb === "reconnect") {
      if (name === "") return "Usage: /mcp reconnect NAME"
      const status = yield* Effect.either(found.value.reconnect(name))
      if (status._tag === "Left") return status.left.message
      return `${describe(status.right)}`
    }
    if (verb !== "") {
      return `Unknown /mcp command "${verb}"; /mcp lists the servers, /mcp reconnect NAME reconnects one.`
    }
    const servers = yield* found.value.servers
    if (servers.length === 0) return "No MCP servers configured (.mcp.json, `switchyard mcp add`, or --mcp-config)."
    return [
      "MCP servers:",
      ...servers.map((s) => `  ${describe(s)}`),
      "Reconnect one with /mcp reconnect NAME; its prompts run as /mcp__<server>__<prompt>."
    ].join("\n")
  })

const describe = (s: McpServers.ServerStatus): string => {
  const detail = s.state === "connected"
    ? `${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}` +
      (s.prompts.length > 0 ? `, prompts: ${s.prompts.map((p) => p.name).join(", ")}` : "") +
      (s.resources ? ", resources" : "")
    : s.error ?? "unknown error"
  return `${s.name} · ${s.state} · ${s.transport} · ${detail}`
}

/**
 * Expand a line: a prompt slash command, or `@server:uri` mentions.
 *
 * @since 0.1.0
 * @category expanding
 */
export const expand = (line: string): Effect.Effect<Expanded> =>
  Effect.gen(function*() {
    const found = yield* service
    if (Option.isNone(found)) return { _tag: "Unchanged" } as const
    if (/^\/mcp__\S+/.test(line)) return yield* promptCommand(found.value, line)
    if (/(^|\s)@[A-Za-z0-9_.-]+:\S/.test(line)) return yield* mentions(found.value, line)
    return { _tag: "Unchanged" } as const
  })

const promptCommand = (mcp: McpServers.Service, line: string): Effect.Effect<Expanded> =>
  Effect.gen(function*() {
    const [word = "", ...rest] = line.slice(1).split(/\s+/)
    const servers = yield* mcp.servers
    const match = servers.flatMap((server) =>
      server.prompts
        .filter((prompt) => word === `mcp__${McpServers.sanitize(server.name)}__${McpServers.sanitize(prompt.name)}`)
        .map((prompt) => ({ server, prompt }))
    )[0]
    if (match === undefined) {
      const known = servers.flatMap((s) =>
        s.prompts.map((p) => `/mcp__${McpServers.sanitize(s.name)}__${McpServers.sanitize(p.name)}`)
      )
      const offered = known.length === 0 ? "no MCP server offers prompts" : `MCP prompts: ${known.join(", ")}`
      return { _tag: "Say", text: `Unknown command /${word}; ${offered}. Nothing was sent to the model.` }
    }
    const words = rest.filter((w) => w !== "")
    const params = match.prompt.arguments
    const args: Record<string, string> = {}
    params.forEach((param, index) => {
      const value = index === params.length - 1 ? words.slice(index).join(" ") : words[index]
      if (value !== undefined && value !== "") args[param.name] = value
    })
    const missing = params.filter((param) => param.required === true && args[param.name] === undefined)
    if (missing.length > 0) {
      const usage = params.map((p) => (p.required === true ? p.name.toUpperCase() : `[${p.name.toUpperCase()}]`))
        .join(" ")
      const names = missing.map((p) => p.name).join(", ")
      return { _tag: "Say", text: `Usage: /${word} ${usage} (missing ${names}). Nothing was sent to the model.` }
    }
    const messages = yield* Effect.either(mcp.getPrompt(match.server.name, match.prompt.name, args))
    if (messages._tag === "Left") return { _tag: "Say", text: `/${word} failed: ${messages.left.message}` }
    const blocks = messages.right.flatMap((message) => message.content) as ReadonlyArray<Messages.ContentBlock>
    if (blocks.length === 0) return { _tag: "Say", text: `/${word}: the prompt has no messages; nothing was sent.` }
    return { _tag: "Send", prompt: blocks }
  })

const mentions = (mcp: McpServers.Service, line: string): Effect.Effect<Expanded> =>
  Effect.gen(function*() {
    const servers = yield* mcp.servers
    const attached: Array<Messages.ContentBlock> = []
    const problems: Array<string> = []
    for (const match of line.matchAll(/(?:^|\s)@([A-Za-z0-9_.-]+):(\S+)/g)) {
      const [, name = "", uri = ""] = match
      const server = servers.find((s) => s.name === name || McpServers.sanitize(s.name) === name)
      // `@name:…` of no server is ordinary text (an e-mail address, a time).
      if (server === undefined || !server.resources) continue
      const content = yield* Effect.either(mcp.readResource(server.name, uri))
      if (content._tag === "Left") {
        problems.push(`@${name}:${uri}: ${content.left.message}`)
        continue
      }
      attached.push(
        { type: "text", text: `Contents of the MCP resource @${name}:${uri}:` },
        ...content.right as ReadonlyArray<Messages.ContentBlock>
      )
    }
    if (problems.length > 0) return { _tag: "Say", text: `${problems.join("\n")}\nNothing was sent to the model.` }
    if (attached.length === 0) return { _tag: "Unchanged" }
    return { _tag: "Send", prompt: [{ type: "text", text: line }, ...attached] }
  })
