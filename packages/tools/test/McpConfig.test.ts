/**
 * MCP configuration (Claude Code's `.mcp.json` format) and MCP tool inputs
 * (issue 11): `${VAR}` expansion, one clear issue per bad file or entry, the
 * other servers still loading; JSON Schema → Schema so a bad input names the
 * parameter; tool naming.
 */
import { Tool, ToolUseContext } from "@switchyard/core"
import * as Validation from "@switchyard/core/Validation"
import * as McpConfig from "@switchyard/tools/McpConfig"
import * as McpServers from "@switchyard/tools/McpServers"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fromJsonSchema } from "../src/internal/mcpSchema.js"

describe("McpConfig", () => {
  const env = { HOME_DIR: "/home/me", TOKEN: "secret" }

  it("expands ${VAR} and ${VAR:-default} in command, args, env, url and headers", () => {
    const loaded = McpConfig.parse(
      JSON.stringify({
        mcpServers: {
          local: {
            command: "${HOME_DIR}/bin/server",
            args: ["--root", "${ROOT:-/srv}"],
            env: { API_TOKEN: "${TOKEN}" },
            timeout: 5000
          },
          remote: {
            type: "http",
            url: "https://${HOST:-example.test}/mcp",
            headers: { Authorization: "Bearer ${TOKEN}" }
          }
        }
      }),
      "a.json",
      env
    )
    expect(loaded.issues).toEqual([])
    expect(loaded.servers).toMatchObject([
      {
        name: "local",
        source: "a.json",
        transport: {
          _tag: "stdio",
          command: "/home/me/bin/server",
          args: ["--root", "/srv"],
          env: { API_TOKEN: "secret" },
          cwd: undefined
        },
        timeoutMs: 5000,
        scope: "dynamic",
        footprint: "server"
      },
      {
        name: "remote",
        source: "a.json",
        transport: { _tag: "http", url: "https://example.test/mcp", headers: { Authorization: "Bearer secret" } },
        timeoutMs: undefined
      }
    ])
    // The entry is kept as written, variables unexpanded (for `mcp get` and approval).
    expect(loaded.servers[1]!.entry).toEqual({
      type: "http",
      url: "https://${HOST:-example.test}/mcp",
      headers: { Authorization: "Bearer ${TOKEN}" }
    })
  })

  it("a bad entry is one issue naming the file and field; the other servers still load", () => {
    const loaded = McpConfig.parse(
      JSON.stringify({
        mcpServers: {
          good: { command: "ok" },
          noCommand: { args: [] },
          badArgs: { command: "x", args: "not-a-list" },
          badType: { type: "websocket", url: "ws://x" },
          unset: { command: "${MISSING_VAR}" },
          noUrl: { type: "http" }
        }
      }),
      "b.json",
      env
    )
    expect(loaded.servers.map((s) => s.name)).toEqual(["good"])
    expect(loaded.issues).toHaveLength(5)
    expect(loaded.issues[0]).toMatch(/^b\.json: mcpServers\.noCommand\.command: /)
    expect(loaded.issues[1]).toMatch(/^b\.json: mcpServers\.badArgs\.args: /)
    expect(loaded.issues[2]).toBe(
      "b.json: mcpServers.badType.type: expected \"stdio\", \"http\" or \"sse\", got \"websocket\""
    )
    expect(loaded.issues[3]).toBe("b.json: mcpServers.unset.command: ${MISSING_VAR} is not set and has no default")
    expect(loaded.issues[4]).toMatch(/^b\.json: mcpServers\.noUrl\.url: /)
  })

  it("a file that is not JSON, or has no mcpServers object, is one issue", () => {
    expect(McpConfig.parse("{nope", "c.json").issues[0]).toMatch(/^c\.json: not valid JSON/)
    expect(McpConfig.parse(JSON.stringify({ servers: {} }), "d.json").issues[0]).toMatch(/^d\.json: mcpServers: /)
  })

  it.effect(".mcp.json first, then --mcp-config files (a later server of the same name wins); strict reads only the given files", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-mcpconfig-"))
      Fs.writeFileSync(
        Path.join(dir, ".mcp.json"),
        JSON.stringify({ mcpServers: { a: { command: "one" }, b: { command: "b" } } })
      )
      Fs.writeFileSync(Path.join(dir, "extra.json"), JSON.stringify({ mcpServers: { a: { command: "two" } } }))
      const all = yield* McpConfig.load({
        cwd: dir,
        files: ["extra.json", "{\"mcpServers\":{\"c\":{\"command\":\"c\"}}}"],
        strict: false
      })
      expect(all.servers.map((s) => [s.name, s.transport._tag === "stdio" && s.transport.command])).toEqual([
        ["b", "b"],
        ["a", "two"],
        ["c", "c"]
      ])
      const strict = yield* McpConfig.load({ cwd: dir, files: ["extra.json"], strict: true })
      expect(strict.servers.map((s) => s.name)).toEqual(["a"])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("MCP tool input schemas", () => {
  const schema = {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1 },
      mode: { type: "string", enum: ["read", "write"] },
      depth: { type: "integer", minimum: 0 },
      ratio: { type: "number" },
      recursive: { type: "boolean" },
      tags: { type: "array", items: { type: "string" } },
      options: {
        type: "object",
        properties: { retries: { type: "integer" } },
        required: ["retries"],
        additionalProperties: false
      },
      labels: { type: "object", additionalProperties: { type: "string" } },
      nullable: { type: ["string", "null"] }
    },
    required: ["path", "mode"]
  }
  const tool = Tool.make("mcp__fs__walk", {
    description: "walk",
    input: fromJsonSchema(schema),
    isMcp: true,
    call: () => Effect.succeed("ok")
  }) as Tool.Any
  const ctx = ToolUseContext.make({ cwd: "/" })
  const check = (input: unknown) => Validation.decodeInput(tool, input, ctx, [])

  it("accepts valid input, unknown top-level keys included (JSON Schema allows them by default)", () => {
    const ok = check({
      path: "/x",
      mode: "read",
      depth: 2,
      ratio: 0.5,
      recursive: true,
      tags: ["a"],
      options: { retries: 3 },
      labels: { k: "v" },
      nullable: null,
      extra: 1
    })
    expect(Either.isRight(ok)).toBe(true)
  })

  it("a bad input is an InputValidationError naming each parameter", () => {
    const bad = check({
      mode: "delete",
      depth: 1.5,
      recursive: "yes",
      tags: [1],
      options: { retries: 1, extra: true },
      labels: { k: 2 }
    })
    expect(Either.isLeft(bad)).toBe(true)
    const message = Either.isLeft(bad) ? bad.left.message : ""
    expect(message).toContain("InputValidationError: mcp__fs__walk")
    for (
      const parameter of ["`path`", "`mode`", "`depth`", "`recursive`", "`tags[0]`", "`options.extra`", "`labels.k`"]
    ) {
      expect(message).toContain(parameter)
    }
  })

  it.prop(
    "tool names are mcp__<server>__<tool> with only [A-Za-z0-9_-]",
    [FastCheck.string(), FastCheck.string()],
    ([server, name]) => {
      const qualified = McpServers.toolName(server, name)
      return /^mcp__[A-Za-z0-9_-]*__[A-Za-z0-9_-]*$/.test(qualified) &&
        qualified.length === `mcp__${server}__${name}`.length
    }
  )
})
