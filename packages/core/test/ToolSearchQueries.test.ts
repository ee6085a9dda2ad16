/**
 * Claude Code's ToolSearch query forms (issue 21, item 5): `+term` requires
 * the term in the tool's name, `mcp__<server>` ranks that server's tools
 * first; and where tool search is off: models without it, base URLs that are
 * not Anthropic's, `auto` against the model's context window.
 */
import * as Deferral from "@switchyard/core/Deferral"
import { Tool, ToolSearch } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"

const mcp = (name: string, description: string) =>
  Tool.make(name, {
    description,
    input: Schema.Struct({ q: Schema.String }),
    isMcp: true,
    call: () => Effect.succeed("ok")
  }) as Tool.Any

const names = (tools: ReadonlyArray<Tool.Any>) => tools.map((t) => t.name)

const catalog = [
  mcp("mcp__slack__send_message", "Send a message to a channel"),
  mcp("mcp__slack__list_channels", "List channels"),
  mcp("mcp__email__send_message", "Send an email message"),
  mcp("mcp__github__create_issue", "Create an issue"),
  mcp("mcp__github__list_prs", "List pull requests"),
  mcp("mcp__jira__create_issue", "Create a Jira issue")
]

describe("ToolSearch query forms", () => {
  it("+term keeps only tools whose name holds the term, ranked by the other words", () => {
    expect(names(ToolSearch.search(catalog, "+slack send"))).toEqual([
      "mcp__slack__send_message",
      "mcp__slack__list_channels"
    ])
    expect(names(ToolSearch.search(catalog, "send message"))).toContain("mcp__email__send_message")
    expect(names(ToolSearch.search(catalog, "+nothing send"))).toEqual([])
  })

  it("mcp__server ranks that server's tools first, all of them", () => {
    const found = names(ToolSearch.search(catalog, "mcp__github create"))
    expect(found.slice(0, 2)).toEqual(["mcp__github__create_issue", "mcp__github__list_prs"])
    expect(found).toContain("mcp__jira__create_issue")
    expect(names(ToolSearch.search(catalog, "mcp__slack"))).toEqual([
      "mcp__slack__send_message",
      "mcp__slack__list_channels"
    ])
  })

  const word = FastCheck.stringMatching(/^[a-z]{2,6}$/)
  const generated = FastCheck.uniqueArray(
    FastCheck.tuple(word, word, FastCheck.array(word, { minLength: 1, maxLength: 4 })),
    { minLength: 1, maxLength: 30, selector: ([server, tool]) => `${server}/${tool}` }
  ).map((specs) => specs.map(([server, tool, words]) => mcp(`mcp__${server}__${tool}`, words.join(" "))))

  it.prop(
    "every result of a +term query has the term in its name",
    [generated, word, word],
    ([tools, term, other]) => ToolSearch.search(tools, `+${term} ${other}`, 50).every((t) => t.name.includes(term))
  )

  it.prop(
    "a server prefix puts every tool of that server (up to the limit) before any other",
    [generated],
    ([tools]) => {
      const server = tools[0]!.name.split("__")[1]!
      const found = ToolSearch.search(tools, `mcp__${server}`, 100)
      const ofServer = found.map((t) => t.name.startsWith(`mcp__${server}__`))
      const firstOther = ofServer.indexOf(false)
      const all = tools.filter((t) => t.name.startsWith(`mcp__${server}__`)).length
      return ofServer.filter(Boolean).length === all &&
        (firstOther === -1 || ofServer.slice(firstOther).every((b) => !b))
    }
  )
})

describe("where tool search is off (Claude Code's rules)", () => {
  it("a model without tool search never defers, whatever ENABLE_TOOL_SEARCH says", () => {
    expect(Deferral.resolvePolicy({ raw: undefined, model: "claude-haiku-4-5" })).toEqual({ _tag: "Never" })
    expect(Deferral.resolvePolicy({ raw: "true", model: "claude-3-5-sonnet-latest" })).toEqual({ _tag: "Never" })
    expect(Deferral.resolvePolicy({ raw: undefined, model: "claude-sonnet-4-5" })).toEqual({ _tag: "Always" })
  })

  it("behind a base URL that is not Anthropic's it is off unless ENABLE_TOOL_SEARCH says so", () => {
    const proxy = "http://127.0.0.1:8080"
    expect(Deferral.resolvePolicy({ raw: undefined, model: "claude-opus-4-5", baseUrl: proxy })).toEqual({
      _tag: "Never"
    })
    expect(Deferral.resolvePolicy({ raw: "true", model: "claude-opus-4-5", baseUrl: proxy })).toEqual({
      _tag: "Always"
    })
    expect(Deferral.resolvePolicy({ raw: "auto:5", baseUrl: proxy })).toEqual({ _tag: "Auto", percent: 5 })
    expect(Deferral.resolvePolicy({ raw: undefined, baseUrl: "https://api.anthropic.com" })).toEqual({ _tag: "Always" })
    expect(Deferral.resolvePolicy({ raw: "false" })).toEqual({ _tag: "Never" })
  })

  it("auto measures against the model's context window: a [1m] model defers later", () => {
    const tools = Array.from({ length: 40 }, (_, i) => mcp(`mcp__big__t${i}`, "x".repeat(2_000)))
    const tokens = tools.reduce((sum, t) => sum + Deferral.definitionTokens(t), 0)
    expect(tokens).toBeGreaterThan(20_000)
    expect(tokens).toBeLessThan(100_000)
    const deferred = (model: string) =>
      Deferral.apply(tools, {
        policy: { _tag: "Auto", percent: 10 },
        contextWindowTokens: Deferral.contextWindow(model)
      })
        .filter(Tool.isDeferred).length
    expect(Deferral.contextWindow("claude-sonnet-4-5")).toBe(200_000)
    expect(Deferral.contextWindow("claude-sonnet-4-5[1m]")).toBe(1_000_000)
    expect(deferred("claude-sonnet-4-5")).toBe(40)
    expect(deferred("claude-sonnet-4-5[1m]")).toBe(0)
  })
})
