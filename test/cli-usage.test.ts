/**
 * Usage errors and help through the CLI (issue 13): every usage error is one
 * line `switchyard: …` naming the flag or command and what to do, with a
 * "did you mean", exit 2 and no parser noise; `--help` of every command is
 * the command table's text, with a real description of every option.
 */
import { describe, expect, it } from "@effect/vitest"
import * as CommandLine from "@switchyard/cli/CommandLine"
import * as FastCheck from "effect/FastCheck"
import { runCli } from "./support/cli.js"

const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
  [["dispath"], "unknown command `dispath`; did you mean `dispatch`?"],
  [
    ["dispatch", "--outptu-format", "json"],
    "unknown option --outptu-format for `switchyard dispatch`; did you mean --output-format?"
  ],
  [["run", "--max-turns", "abc", "hello"], "--max-turns needs a whole number of at least 1, not 'abc'"],
  [["--frobnicate", "hi"], "unknown option --frobnicate for `switchyard run`"],
  [["dispatch", "--output-format", "xml"], "--output-format must be one of text, json, stream-json, not 'xml'"],
  [["tools", "lst"], "unknown command `tools lst`; did you mean `tools list`?"],
  [["tools", "schema"], "`switchyard tools schema` needs NAME"],
  [["replay"], "`switchyard replay` needs TRANSCRIPT"],
  [["dispatch", "a.json", "b.json"], "unexpected argument 'b.json' for `switchyard dispatch`"],
  [["run", "-p", "hi", "--model"], "--model needs a value (NAME)"],
  [["demo", "--keep=yes"], "--keep takes no value"],
  [["demo", "--cwd", "/tmp"], "unknown option --cwd for `switchyard demo`"],
  [["--completions"], "--completions needs a shell"],
  [["demo", "--permission-mode", "acceptEdit"], "unknown option --permission-mode for `switchyard demo`"],
  [["run", "--permission-mode", "acceptEdit", "hi"], "did you mean acceptEdits?"]
]

describe("usage errors: one line, exit 2", () => {
  it("through the CLI, each names what is wrong and what to do, and nothing runs", async () => {
    // Two at a time: the machine is shared.
    const results: Array<Awaited<ReturnType<typeof runCli>>> = []
    for (let i = 0; i < cases.length; i += 2) {
      results.push(...await Promise.all(cases.slice(i, i + 2).map(([args]) => runCli(args, { timeoutMs: 60_000 }))))
    }
    results.forEach((result, i) => {
      const [args, fragment] = cases[i]!
      const lines = result.stderr.split("\n").filter((l) => l !== "")
      expect({ args, lines }).toEqual({ args, lines: [expect.stringMatching(/^switchyard: /)] })
      expect(lines[0]).toContain(fragment)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(result.stderr).not.toMatch(/Received unknown argument|is not a integer|USAGE|A user-defined/)
    })
  }, 300_000)

  it.prop(
    "a command word misspelt by one or two letters is an error with the right suggestion, never a prompt",
    [FastCheck.constantFrom("dispatch", "replay", "tools", "demo"), FastCheck.nat(), FastCheck.nat()],
    ([word, at, letter]) => {
      const i = at % word.length
      const typo = word.slice(0, i) + "qxz"[letter % 3] + word.slice(i + 1)
      const parsed = CommandLine.parse(["node", "switchyard", typo])
      if (typo === word) return true
      expect(parsed).toMatchObject({ _tag: "UsageError", message: expect.stringContaining(`did you mean \`${word}\``) })
      return true
    }
  )

  it("a prompt of several words, or any prompt after `run`, is a prompt", () => {
    expect(CommandLine.parse(["node", "switchyard", "fix the tests"])).toEqual({
      _tag: "Run",
      argv: ["node", "switchyard", "run", "--", "fix the tests"]
    })
    expect(CommandLine.parse(["node", "switchyard", "run", "dispath"])).toMatchObject({ _tag: "Run" })
    expect(CommandLine.parse(["node", "switchyard", "-p", "-r", "abc", "hi"])).toEqual({
      _tag: "Run",
      argv: ["node", "switchyard", "run", "--print", "--resume", "abc", "--", "hi"]
    })
    expect(CommandLine.parse(["node", "switchyard", "-r"])).toEqual({
      _tag: "Run",
      argv: ["node", "switchyard", "run", "--resume", ""]
    })
  })
})

describe("Claude Code's parsing (issue 24)", () => {
  it("a list option takes the words after it up to the next option or --; the prompt goes before it", () => {
    expect(CommandLine.parse(["node", "sy", "-p", "q", "--allowedTools", "Bash(git log *)", "Read", "--verbose"]))
      .toEqual({
        _tag: "Run",
        argv: [
          "node",
          "sy",
          "run",
          "--print",
          "--allowed-tools",
          "Bash(git log *)",
          "--allowed-tools",
          "Read",
          "--verbose",
          "--",
          "q"
        ]
      })
    expect(CommandLine.parse(["node", "sy", "--add-dir", "a", "b", "--", "the prompt"])).toEqual({
      _tag: "Run",
      argv: ["node", "sy", "run", "--add-dir", "a", "--add-dir", "b", "--", "the prompt"]
    })
    // A non-list option takes one value; the next word is the prompt again.
    expect(CommandLine.parse(["node", "sy", "--model", "opus", "fix it"])).toEqual({
      _tag: "Run",
      argv: ["node", "sy", "run", "--model", "opus", "--", "fix it"]
    })
    // An empty list survives the hand-over to @effect/cli (which drops empty values).
    expect(CommandLine.parse(["node", "sy", "tools", "list", "--tools", ""])).toEqual({
      _tag: "Run",
      argv: ["node", "sy", "tools", "list", "--tools", ","]
    })
  })

  it("-v is --version; a misspelt command followed by arguments is a usage error", () => {
    expect(CommandLine.parse(["node", "sy", "-v"])).toEqual({ _tag: "Version" })
    expect(CommandLine.parse(["node", "sy", "-p", "x", "--", "-v"])).toMatchObject({ _tag: "Run" })
    expect(CommandLine.parse(["node", "sy", "dispach", "calls.json"])).toMatchObject({
      _tag: "UsageError",
      message: expect.stringContaining("did you mean `dispatch`?")
    })
    expect(CommandLine.parse(["node", "sy", "tols", "list", "--json"])).toMatchObject({ _tag: "UsageError" })
    // A quoted prompt, or words not close to a command, are prompts.
    expect(CommandLine.parse(["node", "sy", "explain", "the", "code"])).toMatchObject({ _tag: "Run" })
  })
})

describe("--help", () => {
  it(
    "every command's help is the table's, with usage lines naming the command and every option described",
    async () => {
      const paths = CommandLine.commands.map((c) => c.path)
      for (const path of [[], ...paths]) {
        const result = await runCli([...path, "--help"], { timeoutMs: 60_000 })
        expect(result.code).toBe(0)
        expect(result.stdout).toBe(CommandLine.help(path))
      }
      const run = CommandLine.help(["run"])
      expect(run).toMatch(/^Usage: switchyard run \[options\] \[PROMPT\]$/m)
      for (const option of CommandLine.findCommand(["run"])!.options) {
        expect(run).toContain(`--${option.name}`)
        expect(option.description.length).toBeGreaterThan(15)
      }
      expect(run).toMatch(/--settings FILE +An extra settings file[^\n]*\n?[^\n]*\(repeatable\)/)
      expect(run).toMatch(/-r, --resume \[ID\]/)
      expect(CommandLine.help(["tools", "schema"])).toMatch(/NAME +The tool's name or alias \(required\)/)
      expect(CommandLine.help([])).toMatch(/^Usage: switchyard \[options\] \[PROMPT\]/)
    },
    300_000
  )
})
