/**
 * An MCP `tools/call` result as `tool_result` content: text → text, image →
 * image block, embedded resources and resource links → text,
 * `structuredContent` → JSON text when there is no text part.
 */
import type * as Messages from "@switchyard/core/Messages"

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const approxBytes = (base64: string) => Math.floor((base64.length * 3) / 4)

const block = (item: Json): Messages.ToolResultContentBlock => {
  switch (item["type"]) {
    case "text":
      return { type: "text", text: str(item["text"]) ?? "" }
    case "image": {
      const data = str(item["data"])
      const mediaType = str(item["mimeType"]) ?? "image/png"
      return data === undefined
        ? { type: "text", text: "[image without data]" }
        : { type: "image", source: { type: "base64", media_type: mediaType, data } }
    }
    case "audio":
      return {
        type: "text",
        text: `[audio ${str(item["mimeType"]) ?? ""}, ${approxBytes(str(item["data"]) ?? "")} bytes, not shown]`
      }
    case "resource": {
      const resource = isObject(item["resource"]) ? item["resource"] : {}
      const uri = str(resource["uri"]) ?? "(no uri)"
      const text = str(resource["text"])
      if (text !== undefined) return { type: "text", text: `[Resource ${uri}]\n${text}` }
      const blob = str(resource["blob"])
      const mime = str(resource["mimeType"]) ?? "application/octet-stream"
      if (blob !== undefined && mime.startsWith("image/")) {
        return { type: "image", source: { type: "base64", media_type: mime, data: blob } }
      }
      return { type: "text", text: `[Resource ${uri}: ${mime}, ${approxBytes(blob ?? "")} bytes of binary data]` }
    }
    case "resource_link": {
      const name = str(item["name"]) ?? str(item["title"]) ?? "resource"
      const uri = str(item["uri"]) ?? "(no uri)"
      const description = str(item["description"])
      const mime = str(item["mimeType"])
      return {
        type: "text",
        text: `[Resource link: ${name}] ${uri}${mime !== undefined ? ` (${mime})` : ""}${
          description !== undefined ? ` — ${description}` : ""
        }`
      }
    }
    default:
      return { type: "text", text: JSON.stringify(item) }
  }
}

/** The content blocks of a result. */
export const toContent = (result: unknown): ReadonlyArray<Messages.ToolResultContentBlock> => {
  const record = isObject(result) ? result : {}
  const items = Array.isArray(record["content"]) ? record["content"].filter(isObject) : []
  const blocks = items.map(block)
  const hasText = items.some((item) => item["type"] === "text")
  if (!hasText && record["structuredContent"] !== undefined) {
    blocks.unshift({ type: "text", text: JSON.stringify(record["structuredContent"], null, 2) })
  }
  // A legacy result (protocol 2024-10-07) carries `toolResult` instead of content.
  if (blocks.length === 0 && record["toolResult"] !== undefined) {
    blocks.push({ type: "text", text: JSON.stringify(record["toolResult"], null, 2) })
  }
  return blocks
}

/** Whether the server flagged the result as an error. */
export const isError = (result: unknown): boolean => isObject(result) && result["isError"] === true

/** The text of content blocks, for an error message. */
export const text = (blocks: ReadonlyArray<Messages.ToolResultContentBlock>): string =>
  blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n")

/** The characters of content blocks (an image counts its base64 data). */
export const size = (blocks: ReadonlyArray<Messages.ToolResultContentBlock>): number =>
  blocks.reduce((sum, b) => sum + blockSize(b), 0)

const blockSize = (b: Messages.ToolResultContentBlock): number =>
  b.type === "text" ? b.text.length : b.type === "image" && b.source.type === "base64" ? b.source.data.length : 0
