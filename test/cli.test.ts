/**
 * The `switchyard` CLI as a child process: every command, its output formats,
 * exit codes and bad input (SPEC §6, issue 6).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const tempProject = (files: Record<string, string> = {}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-cli-"))
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), content)
  }
  return dir
}

const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })

const noStackTrace = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/)

describe("switchyard CLI", () => {
  describe("help and version", () => {
    it("--help lists every command", async () => {
      const result = await runCli(["--help"])
      expect(result.code).toBe(0)
      for (const command of ["run", "dispatch", "tools list", "tools search", "tools schema", "replay", "demo"]) {
        expect(result.stdout).toContain(command)
      }
      expect(result.stdout).not.toContain("\x1b[")
    })

    it("--version and a command's --help", async () => {
      const version = await runCli(["--version"])
      expect(version.stdout.trim()).toBe(
        JSON.parse(fs.readFileSync(path.join(root, "packages/cli/package.json"), "utf8")).version
      )
      const help = await runCli(["dispatch", "--help"])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain("--output-format")
    })

    it("shell completions come from the command table (test/cli-completions.test.ts runs them)", async () => {
      const result = await runCli(["--completions", "bash"])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("complete -F _switchyard switchyard")
    })

    it("an unknown option is bad input (exit 2)", async () => {
      const result = await runCli(["dispatch", "--frobnicate"])
      expect(result.code).toBe(2)
    })
  })

  describe("tools", () => {
    it("list shows what the model sees, with aliases", async () => {
      const result = await runCli(["tools", "list"])
      expect(result.code).toBe(0)
      const names = result.lines.map((l) => l.split(/\s+/)[0])
      expect(names).toEqual(
        expect.arrayContaining(["Agent", "Bash", "Read", "Edit", "Write", "Glob", "Grep", "TaskStop"])
      )
      expect(result.stdout).toContain("alias: KillShell")
    })

    it("list --json, and a blanket deny rule hides a tool", async () => {
      const result = await runCli(["tools", "list", "--json", "--disallowed-tools", "WebFetch"])
      const tools = JSON.parse(result.stdout) as ReadonlyArray<{ name: string; deferred: boolean }>
      expect(tools.map((t) => t.name)).not.toContain("WebFetch")
      expect(tools.find((t) => t.name === "Read")?.deferred).toBe(false)
    })

    it("search ranks by keywords; schema prints the API definition", async () => {
      const search = await runCli(["tools", "search", "background task"])
      expect(search.lines[0]).toMatch(/^Task(Output|Stop)/)
      const schema = await runCli(["tools", "schema", "Edit"])
      const definition = JSON.parse(schema.stdout)
      expect(definition.name).toBe("Edit")
      expect(definition.input_schema.type).toBe("object")
      expect(JSON.stringify(definition)).not.toMatch(/\$ref|\$defs|\$schema/)
      // No titles from Effect's refinements (`nonNegative`, `int`): the bounds say it.
      const read = JSON.parse((await runCli(["tools", "schema", "Read"])).stdout)
      expect(JSON.stringify(read)).not.toContain("\"title\"")
      expect(read.input_schema.properties.offset.minimum).toBeTypeOf("number")
    })

    it("schema of an unknown tool: one line, exit 2, with a suggestion", async () => {
      const result = await runCli(["tools", "schema", "Reed"])
      expect(result.code).toBe(2)
      expect(result.stderr.trim().split("\n")).toHaveLength(1)
      expect(result.stderr).toContain("No such tool available: Reed")
      expect(result.stderr).toContain("Read")
    })
  })

  describe("dispatch", () => {
    it("stream-json: the fixed line format, greedy schedule and exit 0", async () => {
      const dir = tempProject({ "a.txt": "alpha\n", "b.txt": "beta\n" })
      const calls = [
        use("r1", "Read", { file_path: "a.txt" }),
        use("r2", "Read", { file_path: "b.txt" }),
        use("g", "Glob", { pattern: "*.txt" })
      ]
      // The greedy schedule starts every safe call at once; under footprints (the default) each call starts once its
      // footprint is resolved, which on a cold process can be after a small Read has already finished.
      const result = await runCli([
        "dispatch",
        "-",
        "--cwd",
        dir,
        "--output-format",
        "stream-json",
        "--scheduling",
        "greedy"
      ], {
        input: JSON.stringify(calls)
      })
      expect(result.code).toBe(0)
      const lines = jsonLines(result)
      for (const line of lines) {
        expect(typeof line["type"]).toBe("string")
        expect(typeof line["tool_use_id"]).toBe("string")
      }
      const started = lines.filter((l) => l["type"] === "started")
      expect(started.map((l) => l["tool_use_id"]).sort()).toEqual(["g", "r1", "r2"])
      for (const s of started) expect(Object.keys(s).sort()).toEqual(["at", "name", "tool_use_id", "type"])
      const results = lines.filter((l) => l["type"] === "result")
      expect(results).toHaveLength(3)
      for (const r of results) {
        expect(r).toMatchObject({ status: "success", is_error: false })
        expect(typeof r["startedAt"]).toBe("number")
        expect(r["endedAt"] as number).toBeGreaterThanOrEqual(r["startedAt"] as number)
        expect(r["startedAt"] as number).toBeLessThan(5_000)
      }
      expect(results.find((r) => r["tool_use_id"] === "r1")?.["content"]).toContain("alpha")
      // All three are safe: they started together, before any finished.
      const firstEnd = Math.min(...results.map((r) => r["endedAt"] as number))
      expect(Math.max(...started.map((s) => s["at"] as number))).toBeLessThanOrEqual(firstEnd)
    })

    it("an assistant message works as input; a failed call gives exit 1; a Bash failure cancels its running sibling", async () => {
      const dir = tempProject()
      const message = {
        role: "assistant",
        content: [
          { type: "text", text: "running two commands" },
          use("slow", "Bash", { command: "sleep 20 && echo never" }),
          use("bad", "Bash", { command: "cat missing-file.txt" })
        ]
      }
      const file = path.join(dir, "calls.json")
      fs.writeFileSync(file, JSON.stringify(message))
      // The chapter's rule: footprint scheduling would let the unrelated `sleep` run on.
      const result = await runCli([
        "dispatch",
        file,
        "--cwd",
        dir,
        "--output-format",
        "stream-json",
        "--scheduling",
        "greedy"
      ])
      expect(result.code).toBe(1)
      const results = jsonLines(result).filter((l) => l["type"] === "result")
      expect(results.map((r) => [r["tool_use_id"], r["status"]])).toEqual(
        expect.arrayContaining([["bad", "error"], ["slow", "cancelled"]])
      )
      const slow = results.find((r) => r["tool_use_id"] === "slow")!
      expect(slow["endedAt"] as number).toBeLessThan(10_000)
      expect(slow["content"]).toBe("Cancelled: a parallel Bash call failed")
    })

    it("the readable report and permissions: an Edit without a terminal is denied unless the mode allows it", async () => {
      const dir = tempProject({ "f.txt": "one\n" })
      const calls = JSON.stringify([
        use("r", "Read", { file_path: "f.txt" }),
        use("e", "Edit", { file_path: "f.txt", old_string: "one", new_string: "two" })
      ])
      const denied = await runCli(["dispatch", "-", "--cwd", dir], { input: calls })
      expect(denied.code).toBe(1)
      expect(denied.stdout).toContain("Dispatched 2 calls")
      expect(denied.stdout).toMatch(/⊘ Edit .* denied/)
      expect(denied.stdout).toContain("--allowed-tools")
      expect(fs.readFileSync(path.join(dir, "f.txt"), "utf8")).toBe("one\n")
      const allowed = await runCli(["dispatch", "-", "--cwd", dir, "--permission-mode", "acceptEdits"], {
        input: calls
      })
      expect(allowed.code).toBe(0)
      expect(fs.readFileSync(path.join(dir, "f.txt"), "utf8")).toBe("two\n")
    })

    it("an unknown tool is an error result (exit 1), not a crash", async () => {
      const result = await runCli(["dispatch", "-", "--output-format", "stream-json"], {
        input: JSON.stringify([use("x", "Frobnicate", {})])
      })
      expect(result.code).toBe(1)
      expect(jsonLines(result).find((l) => l["type"] === "result")).toMatchObject({
        status: "error",
        is_error: true,
        content: "No such tool available: Frobnicate"
      })
    })

    it(
      "the text report: sizes, denials in full, --verbose contents; json in call order; permission sources",
      async () => {
        const dir = tempProject({ "long.txt": "one\ntwo\nthree\n", "short.txt": "x\n" })
        const calls = JSON.stringify([
          use("slow", "Bash", { command: "sleep 1; echo slow" }),
          use("long", "Read", { file_path: "long.txt" }),
          use("rm", "Bash", { command: "rm short.txt" })
        ])
        const text = await runCli(["dispatch", "-", "--cwd", dir], { input: calls })
        expect(text.code).toBe(1)
        expect(text.stdout).toMatch(/✓ Read .*\n {4}.*1\tone \(\+2 lines\)/)
        const denial = /⊘ Bash +rm[^\n]*\n {4}([\s\S]*)$/.exec(text.stdout)?.[1] ?? ""
        expect(denial).toContain("--allowed-tools")
        expect(denial).not.toContain("…")
        const verbose = await runCli(["dispatch", "-", "--cwd", dir, "--verbose"], { input: calls })
        expect(verbose.stdout).toMatch(/1\tone\n {4}.*2\ttwo\n {4}.*3\tthree/)
        const json = await runCli([
          "dispatch",
          "-",
          "--cwd",
          dir,
          "--output-format",
          "json",
          "--allowed-tools",
          "Bash(sleep *)"
        ], {
          input: calls
        })
        expect((JSON.parse(json.stdout) as ReadonlyArray<{ tool_use_id: string }>).map((r) => r.tool_use_id)).toEqual([
          "slow",
          "long",
          "rm"
        ])
        const stream = await runCli([
          "dispatch",
          "-",
          "--cwd",
          dir,
          "--output-format",
          "stream-json",
          "--allowed-tools",
          "Bash(sleep *)"
        ], {
          input: calls
        })
        const decided = jsonLines(stream).filter((l) => l["type"] === "permission_decided")
        expect(decided.find((l) => l["tool_use_id"] === "long")).toMatchObject({ behavior: "allow", source: "mode" })
        expect(decided.find((l) => l["tool_use_id"] === "slow")).toMatchObject({ behavior: "allow", source: "rule" })
      },
      120_000
    )

    describe("bad input: one line, exit 2", () => {
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string | undefined, string]> = [
        ["invalid JSON", ["dispatch", "-"], "[{not json", "not valid JSON"],
        ["empty stdin", ["dispatch", "-"], "", "not valid JSON"],
        [
          "not an array of tool_use blocks",
          ["dispatch", "-"],
          JSON.stringify({ hello: 1 }),
          "expected a JSON array of tool_use blocks"
        ],
        [
          "a block missing its id",
          ["dispatch", "-"],
          JSON.stringify([{ type: "tool_use", name: "Read", input: {} }]),
          "id"
        ],
        [
          "no tool_use at all",
          ["dispatch", "-"],
          JSON.stringify({ role: "assistant", content: [{ type: "text", text: "hi" }] }),
          "no tool_use blocks"
        ],
        [
          "duplicate ids",
          ["dispatch", "-"],
          JSON.stringify([use("a", "Read", {}), use("a", "Read", {})]),
          "duplicate tool_use id a"
        ],
        ["a missing file", ["dispatch", "/nonexistent/calls.json"], undefined, "Cannot read /nonexistent/calls.json"],
        [
          "a missing settings file",
          ["dispatch", "-", "--settings", "/nonexistent/settings.json"],
          JSON.stringify([use("a", "Read", { file_path: "x" })]),
          "Settings file not found"
        ],
        [
          "an invalid --allowed-tools rule",
          ["dispatch", "-", "--allowed-tools", "Bash("],
          JSON.stringify([use("a", "Read", { file_path: "x" })]),
          "not a permission rule"
        ],
        [
          "a --cwd that is not a directory",
          ["dispatch", "-", "--cwd", "/nonexistent"],
          JSON.stringify([use("a", "Read", { file_path: "x" })]),
          "not a directory"
        ]
      ]
      for (const [label, args, input, fragment] of cases) {
        it(label, async () => {
          const result = await runCli(args, input === undefined ? {} : { input })
          expect(result.code).toBe(2)
          expect(result.stderr).toContain(fragment)
          expect(result.stderr.trim().split("\n")).toHaveLength(1)
          noStackTrace(result.stderr)
        })
      }
    })

    it("invalid settings content: a warning naming the file and field, and the rest still applies", async () => {
      const dir = tempProject({ "x.txt": "x\n" })
      const settings = path.join(dir, "bad-settings.json")
      fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Read"], defaultMode: 42 } }))
      const result = await runCli([
        "dispatch",
        "-",
        "--cwd",
        dir,
        "--settings",
        settings,
        "--output-format",
        "stream-json"
      ], {
        input: JSON.stringify([use("a", "Read", { file_path: "x.txt" })])
      })
      expect(result.stderr).toContain(settings)
      expect(result.stderr).toContain("defaultMode")
      // The valid deny rule still holds: Read is hidden from the visible tools, so the call is unknown.
      expect(result.code).toBe(1)
      const line = jsonLines(result).find((l) => l["type"] === "result")
      expect(line?.["status"]).not.toBe("success")
      const garbage = path.join(dir, "garbage.json")
      fs.writeFileSync(garbage, "{ this is not json")
      const broken = await runCli(["tools", "list", "--settings", garbage])
      expect(broken.code).toBe(0)
      expect(broken.stderr).toContain(garbage)
    })
  })

  describe("replay and demo", () => {
    it("replay runs the loop against a transcript with real tools", async () => {
      const dir = tempProject({ "a.txt": "hello from a\n" })
      const transcript = path.join(dir, "t.json")
      fs.writeFileSync(
        transcript,
        JSON.stringify({
          turns: [
            { expect: { user_text_includes: "a.txt" }, blocks: [{ block: use("t1", "Read", { file_path: "a.txt" }) }] },
            {
              expect: { tool_results: [{ tool_use_id: "t1", content_includes: "hello from a" }] },
              blocks: [{ block: { type: "text", text: "It says hello." } }]
            }
          ]
        })
      )
      const result = await runCli(["replay", transcript, "--cwd", dir])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("● Read(a.txt)")
      expect(result.stdout).toContain("It says hello.")
      const json = await runCli(["replay", transcript, "--cwd", dir, "--output-format", "json"])
      expect(JSON.parse(json.stdout)).toMatchObject({
        type: "result",
        subtype: "success",
        result: "It says hello.",
        num_turns: 2
      })
    })

    it("replay: a diverging transcript fails with exit 1; a missing or invalid one is bad input", async () => {
      const dir = tempProject()
      const transcript = path.join(dir, "t.json")
      fs.writeFileSync(
        transcript,
        JSON.stringify({ turns: [{ expect: { user_text_includes: "something else" }, blocks: [] }] })
      )
      const diverged = await runCli(["replay", transcript, "--cwd", dir, "--prompt", "hello"])
      expect(diverged.code).toBe(1)
      expect(diverged.stdout + diverged.stderr).toContain("something else")
      const missing = await runCli(["replay", path.join(dir, "nope.json")])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("Transcript not found")
      fs.writeFileSync(
        transcript,
        JSON.stringify({ turns: [{ blocks: [{ block: { type: "text", text: "x" }, delayMs: -5 }] }] })
      )
      const invalid = await runCli(["replay", transcript])
      expect(invalid.code).toBe(2)
      expect(invalid.stderr).toContain("delayMs")
    })

    it("demo: offline, edits the copied project, shows the parallel batches and sibling cancellation", async () => {
      const result = await runCli(["demo", "--keep"], { env: { ANTHROPIC_API_KEY: undefined } })
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("Summary")
      expect(result.stdout).toMatch(
        /\[Read\(src\/cart\.js\) ∥ Read\(src\/price\.js\) ∥ Read\(test\/cart\.test\.js\) ∥ Grep\(TODO\)\]/
      )
      // The slow Bash call and the failing one ran side by side; how many quick calls joined them
      // depends on real durations, so only their shared group is asserted.
      const groups = [...result.stdout.matchAll(/\[([^\]\n]*)\]/g)].map((m) => m[1]!.split(" ∥ "))
      expect(groups.some((g) => g.includes("Bash(sleep 5 && ls test)") && g.includes("Bash(cat CHANGELOG.md)"))).toBe(
        true
      )
      expect(result.stdout).toContain("failed → cancelled")
      expect(result.stdout).toMatch(/saved/)
      // "One after another" counts the cancelled slow call at its full scripted length (sleep 5),
      // not the moments it ran before its sibling's failure cancelled it.
      const ms = (text: string) => {
        const [, value, unit] = /^([\d.]+) (s|ms)$/.exec(text)!
        return Number(value) * (unit === "s" ? 1000 : 1)
      }
      const lines = result.stdout.split("\n")
      const slowTurn = lines.findIndex((l) => /^\s+turn \d+:.*Bash\(sleep 5 && ls test\)/.test(l))
      expect(slowTurn).toBeGreaterThan(-1)
      const serial = /one after another: ([\d.]+ m?s)\)/.exec(lines[slowTurn + 1]!)?.[1]
      expect(serial).toBeDefined()
      expect(ms(serial!)).toBeGreaterThanOrEqual(5000)
      const total = /one after another would wait ([\d.]+ m?s)/.exec(result.stdout)?.[1]
      expect(ms(total!)).toBeGreaterThanOrEqual(ms(serial!))
      // The turn count agrees with the JSON result's num_turns, and stream-json's.
      const turns = Number(/in (\d+) model turns/.exec(result.stdout)?.[1])
      expect(turns).toBe(5)
      const json = await runCli(["demo", "--output-format", "json"], { env: { ANTHROPIC_API_KEY: undefined } })
      expect(JSON.parse(json.stdout).num_turns).toBe(turns)
      expect(json.stderr).toBe("")
      const stream = await runCli(["demo", "--output-format", "stream-json"], { env: { ANTHROPIC_API_KEY: undefined } })
      const streamed = jsonLines(stream)
      expect(streamed.at(-1)).toMatchObject({ type: "result", num_turns: turns })
      expect(streamed.filter((l) => l["type"] === "assistant")).toHaveLength(turns)
      const kept = /kept at (.+)$/m.exec(result.stdout)?.[1]
      expect(kept).toBeDefined()
      expect(fs.readFileSync(path.join(kept!, "src/price.js"), "utf8")).toContain("Math.round")
      expect(fs.readFileSync(path.join(kept!, "src/cart.js"), "utf8")).toContain("reduce((a, b) => a + b, 0)")
      fs.rmSync(path.dirname(kept!), { recursive: true, force: true })
    }, 120_000)
  })

  describe("run", () => {
    it("a prompt without a terminal runs in print mode, with or without `run`", async () => {
      const result = await runCli(["hello"], { env: { ANTHROPIC_API_KEY: undefined } })
      // It got as far as needing a model: print mode, not an interactive session.
      expect(result.code).toBe(2)
      expect(result.stderr).toContain("ANTHROPIC_API_KEY")
    })

    it("without an API key says how to set one or run the demo", async () => {
      const result = await runCli(["run", "-p", "hello"], { env: { ANTHROPIC_API_KEY: undefined } })
      expect(result.code).toBe(2)
      expect(result.stderr).toContain("ANTHROPIC_API_KEY")
      expect(result.stderr).toContain("switchyard demo")
      expect(result.stderr.trim().split("\n")).toHaveLength(1)
    })

    it.scoped("run -p against the local Messages API server: tools run, the final text is printed", () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        const dir = tempProject({ "notes.md": "remember the milk\n" })
        server.enqueue(
          Server.message({
            blocks: [
              { block: { type: "text", text: "Reading." } },
              { block: { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "notes.md" } }, chunks: 7 }
            ]
          }),
          Server.message({ blocks: [{ block: { type: "text", text: "The note says: remember the milk." } }] })
        )
        const result = yield* Effect.promise(() =>
          runCli(["run", "-p", "What does notes.md say?", "--cwd", dir], {
            env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url }
          })
        )
        expect(result.stderr).toBe("")
        expect(result.code).toBe(0)
        expect(result.stdout.trim()).toBe("The note says: remember the milk.")
        expect(server.requests).toHaveLength(2)
        const second = server.requests[1]!.body as {
          messages: ReadonlyArray<
            { role: string; content: ReadonlyArray<{ type: string; tool_use_id?: string; content?: unknown }> }
          >
        }
        const toolResult = second.messages.at(-1)!.content[0]!
        expect(toolResult).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" })
        expect(JSON.stringify(toolResult.content)).toContain("remember the milk")
      }))

    it.scoped("run -p --output-format stream-json prints events and a final result line", () =>
      Effect.gen(function*() {
        const server = yield* Server.start()
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hi there." } }] }))
        const result = yield* Effect.promise(() =>
          runCli(["run", "-p", "hello", "--output-format", "stream-json"], {
            env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url }
          })
        )
        expect(result.code).toBe(0)
        const lines = jsonLines(result)
        expect(lines.map((l) => l["type"])).toEqual(["system", "assistant", "result"])
        expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "Hi there.", is_error: false })
      }))
  })
})
