/**
 * ToolSearch and deferral (SPEC §4.3): the ENABLE_TOOL_SEARCH policies, the
 * exact `tool_reference` result shape, `select:`, and a ranking-quality test
 * over 300 generated MCP tools.
 */
import { Execution, Messages, Registry, Tool, ToolSearch, ToolUseContext } from "@switchyard/core"
import * as Deferral from "@switchyard/core/Deferral"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { MemoryAllowAll } from "./fixtures.js"

const Input = Schema.Struct({ value: Schema.Number })
type Extra = Partial<Tool.Definition<typeof Input.Type, string, never, never>>

const tool = (name: string, description: string, extra: Extra = {}) =>
  Tool.make(name, {
    description,
    input: Input,
    call: () => Effect.succeed(`${name} ran`),
    ...extra
  }) as Tool.Any

const mcp = (name: string, description: string, extra: Extra = {}) => tool(name, description, { isMcp: true, ...extra })

const builtin = tool("Read", "Read a file")
const names = (tools: ReadonlyArray<Tool.Any>) => tools.map((t) => t.name)
const deferredNames = (tools: ReadonlyArray<Tool.Any>) => tools.filter(Tool.isDeferred).map((t) => t.name)

describe("deferral per ENABLE_TOOL_SEARCH", () => {
  const tools = [
    builtin,
    mcp("mcp__db__query", "Run a SQL query"),
    tool("Slow", "A deferred builtin", { shouldDefer: true })
  ]

  it("parses the policies", () => {
    expect(Deferral.parsePolicy(undefined)).toEqual({ _tag: "Always" })
    expect(Deferral.parsePolicy("true")).toEqual({ _tag: "Always" })
    expect(Deferral.parsePolicy("false")).toEqual({ _tag: "Never" })
    expect(Deferral.parsePolicy("auto")).toEqual({ _tag: "Auto", percent: 10 })
    expect(Deferral.parsePolicy("auto:25")).toEqual({ _tag: "Auto", percent: 25 })
    expect(Deferral.parsePolicy("sometimes")).toBeUndefined()
  })

  it("true defers every MCP and shouldDefer tool and adds ToolSearch, itself loaded", () => {
    const out = Deferral.apply(tools, { policy: { _tag: "Always" } })
    expect(deferredNames(out)).toEqual(["mcp__db__query", "Slow"])
    expect(names(out)).toEqual(["Read", "mcp__db__query", "Slow", "ToolSearch"])
    expect(Tool.isDeferred(out.at(-1)!)).toBe(false)
  })

  it("false defers none and has no ToolSearch", () => {
    const out = Deferral.apply(tools, { policy: { _tag: "Never" } })
    expect(deferredNames(out)).toEqual([])
    expect(names(out)).not.toContain("ToolSearch")
  })

  it("alwaysLoad (MCP _meta anthropic/alwaysLoad) opts out; with nothing deferred there is no ToolSearch", () => {
    const out = Deferral.apply([builtin, mcp("mcp__a__b", "b", { alwaysLoad: true })], { policy: { _tag: "Always" } })
    expect(deferredNames(out)).toEqual([])
    expect(names(out)).toEqual(["Read", "mcp__a__b"])
  })

  it("auto defers once the definitions exceed N% of the context window (JSON characters / 4)", () => {
    const many = Array.from({ length: 50 }, (_, i) => mcp(`mcp__svc__tool_${i}`, "x".repeat(400)))
    const tokens = many.reduce((sum, t) => sum + Deferral.definitionTokens(t), 0)
    expect(tokens).toBeGreaterThan(5_000)
    const window = tokens * 10 // tokens are exactly 10% of it
    expect(deferredNames(Deferral.apply(many, { policy: { _tag: "Auto", percent: 10 }, contextWindowTokens: window })))
      .toEqual([])
    expect(deferredNames(Deferral.apply(many, { policy: { _tag: "Auto", percent: 9 }, contextWindowTokens: window })))
      .toHaveLength(50)
  })

  it("a blanket-denied ToolSearch means nothing is deferred", () => {
    const out = Deferral.apply(tools, { policy: { _tag: "Always" }, toolSearchAllowed: false })
    expect(deferredNames(out)).toEqual([])
    expect(names(out)).not.toContain("ToolSearch")
  })

  it("the registry applies the policy after its filters", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.ToolRegistry
      expect(names(yield* registry.getTools(() => false))).toEqual(["Read", "mcp__db__query", "Slow", "ToolSearch"])
      expect(names(yield* registry.getTools((name) => name === "ToolSearch"))).toEqual([
        "Read",
        "mcp__db__query",
        "Slow"
      ])
    }).pipe(Effect.provide(Registry.layerTools(tools, { deferral: { _tag: "Always" } })), Effect.runPromise))

  it("the system prompt lists deferred tools one line each (name: searchHint)", () => {
    const out = Deferral.apply(tools, { policy: { _tag: "Always" } })
    const system = Deferral.systemPrompt("Base prompt.", out, [])!
    expect(system.startsWith("Base prompt.\n\n")).toBe(true)
    expect(system).toContain("\nmcp__db__query: Run a SQL query\n")
    expect(system).toContain("\nSlow: A deferred builtin\n")
    expect(system).not.toContain("Read:")
    expect(Deferral.systemPrompt("Base prompt.", [builtin], [])).toBe("Base prompt.")
  })
})

describe("ToolSearch", () => {
  const deferred = [
    mcp("mcp__github__create_issue", "Create a new issue in a GitHub repository"),
    mcp("mcp__github__list_pull_requests", "List pull requests of a repository"),
    mcp("mcp__slack__postMessage", "Post a message to a Slack channel"),
    mcp("mcp__db__run-query", "Run a SQL query against the database")
  ]
  const env = Layer.mergeAll(
    Registry.layerTools([builtin, ...deferred], { deferral: { _tag: "Always" } }),
    MemoryAllowAll
  )

  const run = (input: unknown, messages: ReadonlyArray<Messages.Message> = []) =>
    Effect.gen(function*() {
      const environment = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd: "/", sessionId: "ts", messages }))
      const events = yield* Stream.runCollect(
        Execution.runToolUse(Messages.toolUse("ts1", "ToolSearch", input), environment)
      )
      return Chunk.toReadonlyArray(events).find((e) => e._tag === "Result")!
    }).pipe(Effect.provide(env))

  it.effect("its tool_result is an array of tool_reference blocks, best first", () =>
    Effect.gen(function*() {
      const result = yield* run({ query: "slack message" })
      expect(result._tag === "Result" && result.block).toEqual({
        type: "tool_result",
        tool_use_id: "ts1",
        content: [
          { type: "tool_reference", tool_name: "mcp__slack__postMessage" }
        ]
      })
    }))

  it.effect("select: picks exact names, in the order given", () =>
    Effect.gen(function*() {
      const result = yield* run({ query: "select:mcp__db__run-query,mcp__github__create_issue,NoSuchTool" })
      expect(result._tag === "Result" && result.block.content).toEqual([
        { type: "tool_reference", tool_name: "mcp__db__run-query" },
        { type: "tool_reference", tool_name: "mcp__github__create_issue" }
      ])
    }))

  it.effect("nothing matched is a short text; max_results bounds the list", () =>
    Effect.gen(function*() {
      const none = yield* run({ query: "kubernetes" })
      expect(none._tag === "Result" && none.block.content).toBe(ToolSearch.NO_MATCH)
      const one = yield* run({ query: "github repository", max_results: 1 })
      expect(one._tag === "Result" && one.block.content).toHaveLength(1)
    }))

  it("names split on _, - and camelCase; words are lightly stemmed", () => {
    expect(names(ToolSearch.search(deferred, "post messages"))).toEqual(["mcp__slack__postMessage"])
    expect(names(ToolSearch.search(deferred, "running queries"))[0]).toBe("mcp__db__run-query")
    expect(names(ToolSearch.search(deferred, "issues"))[0]).toBe("mcp__github__create_issue")
  })

  it.effect("a deferred tool called with invalid input gets the hint to select it; once referenced, no hint", () =>
    Effect.gen(function*() {
      const call = (messages: ReadonlyArray<Messages.Message>) =>
        Effect.gen(function*() {
          const environment = yield* Execution.makeEnvironment(
            ToolUseContext.make({ cwd: "/", sessionId: "h", messages })
          )
          const events = yield* Stream.runCollect(
            Execution.runToolUse(Messages.toolUse("c1", "mcp__db__run-query", { value: "x" }), environment)
          )
          return Messages.contentText(
            Chunk.toReadonlyArray(events).flatMap((e) => (e._tag === "Result" ? [e.block.content] : []))[0]!
          )
        })
      const fresh = yield* call([])
      expect(fresh).toContain("InputValidationError")
      expect(fresh).toContain("Call ToolSearch with query \"select:mcp__db__run-query\"")
      const referenced: ReadonlyArray<Messages.Message> = [{
        role: "user",
        content: [Messages.toolResult("t0", [{ type: "tool_reference", tool_name: "mcp__db__run-query" }])]
      }]
      const loaded = yield* call(referenced)
      expect(loaded).toContain("InputValidationError")
      expect(loaded).not.toContain("select:")
      // Valid input just runs, loaded or not.
      const environment = yield* Execution.makeEnvironment(ToolUseContext.make({ cwd: "/", sessionId: "h" }))
      const ok = yield* Stream.runCollect(
        Execution.runToolUse(Messages.toolUse("c2", "mcp__db__run-query", { value: 1 }), environment)
      )
      expect(Chunk.toReadonlyArray(ok).find((e) => e._tag === "Result")).toMatchObject({ status: "success" })
    }).pipe(Effect.provide(env)))
})

describe("ToolSearch quality: 300 tools across 30 services, 30 queries as a model writes them", () => {
  // key in the tool name, the service's full name, and its two objects.
  const services: ReadonlyArray<readonly [string, string, string, string]> = [
    ["gh", "GitHub", "issue", "pull_request"],
    ["gl", "GitLab", "merge_request", "pipeline"],
    ["k8s", "Kubernetes", "pod", "deployment"],
    ["pg", "PostgreSQL", "table", "index"],
    ["slack", "Slack", "channel", "message"],
    ["jira", "Jira", "ticket", "sprint"],
    ["gdrive", "Google Drive", "file", "folder"],
    ["gcal", "Google Calendar", "event", "calendar"],
    ["s3", "Amazon S3", "bucket", "object"],
    ["ec2", "Amazon EC2", "instance", "volume"],
    ["stripe", "Stripe", "payment", "customer"],
    ["notion", "Notion", "page", "database"],
    ["linear", "Linear", "project", "cycle"],
    ["sentry", "Sentry", "alert", "release"],
    ["dd", "Datadog", "monitor", "dashboard"],
    ["pd", "PagerDuty", "incident", "schedule"],
    ["zd", "Zendesk", "support_ticket", "agent"],
    ["hs", "HubSpot", "contact", "deal"],
    ["sf", "Salesforce", "account", "opportunity"],
    ["tw", "Twilio", "sms", "call"],
    ["sg", "SendGrid", "email", "template"],
    ["cf", "Cloudflare", "dns_record", "zone"],
    ["vercel", "Vercel", "domain", "environment_variable"],
    ["docker", "Docker", "container", "image"],
    ["redis", "Redis", "key", "stream"],
    ["mongo", "MongoDB", "collection", "document"],
    ["es", "Elasticsearch", "search_index", "mapping"],
    ["figma", "Figma", "frame", "component"],
    ["trello", "Trello", "card", "board"],
    ["asana", "Asana", "task", "workspace"]
  ]
  const verbs = ["create", "list", "get", "update", "delete"] as const
  const verbText: Record<(typeof verbs)[number], string> = {
    create: "Create a new",
    list: "List all",
    get: "Get the details of a",
    update: "Update an existing",
    delete: "Delete a"
  }
  const human = (object: string) => object.replace(/_/g, " ")
  const tools = services.flatMap(([key, full, ...objects]) =>
    objects.flatMap((object) =>
      verbs.map((verb) =>
        mcp(
          `mcp__${key}__${verb}_${object}`,
          `${verbText[verb]} ${human(object)}${verb === "list" ? "s" : ""} in ${full}. Requires a ${full} API token.`
        )
      )
    )
  )
  const queries: ReadonlyArray<readonly [string, string]> = [
    ["github create issue", "mcp__gh__create_issue"],
    ["gitlab merge requests list", "mcp__gl__list_merge_request"],
    ["kubernetes delete pod", "mcp__k8s__delete_pod"],
    ["postgres table details", "mcp__pg__get_table"],
    ["send slack message", "mcp__slack__create_message"],
    ["jira update ticket", "mcp__jira__update_ticket"],
    ["google drive list folders", "mcp__gdrive__list_folder"],
    ["calendar create event", "mcp__gcal__create_event"],
    ["s3 delete bucket", "mcp__s3__delete_bucket"],
    ["ec2 instances", "mcp__ec2__list_instance"],
    ["stripe customer details", "mcp__stripe__get_customer"],
    ["notion create page", "mcp__notion__create_page"],
    ["linear projects list", "mcp__linear__list_project"],
    ["sentry release update", "mcp__sentry__update_release"],
    ["datadog dashboard create", "mcp__dd__create_dashboard"],
    ["pagerduty incidents", "mcp__pd__list_incident"],
    ["zendesk delete support ticket", "mcp__zd__delete_support_ticket"],
    ["hubspot deal update", "mcp__hs__update_deal"],
    ["salesforce opportunity get", "mcp__sf__get_opportunity"],
    ["twilio send sms", "mcp__tw__create_sms"],
    ["sendgrid email templates", "mcp__sg__list_template"],
    ["cloudflare dns record create", "mcp__cf__create_dns_record"],
    ["vercel environment variable delete", "mcp__vercel__delete_environment_variable"],
    ["docker containers list", "mcp__docker__list_container"],
    ["redis key get", "mcp__redis__get_key"],
    ["mongodb create collection", "mcp__mongo__create_collection"],
    ["elasticsearch update mapping", "mcp__es__update_mapping"],
    ["figma component details", "mcp__figma__get_component"],
    ["trello card delete", "mcp__trello__delete_card"],
    ["asana create task", "mcp__asana__create_task"]
  ]

  it("300 tools, and the right one is in the top 5 for at least 27 of 30 queries", () => {
    expect(tools).toHaveLength(300)
    const misses = queries.filter(([query, expected]) => !names(ToolSearch.search(tools, query, 5)).includes(expected))
    expect(misses.length, `missed: ${misses.map(([q]) => q).join("; ")}`).toBeLessThanOrEqual(3)
  })
})
