import { ShellAnalysis } from "@switchyard/core"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mutatingCommands, readOnlyCommands } from "./fixtures/shell-corpus.js"

const classify = (commands: ReadonlyArray<string>) =>
  Effect.forEach(commands, (command) => Effect.map(ShellCommand.isReadOnly(command), (readOnly) => ({ command, readOnly })))

describe("ShellCommand", () => {
  describe("isReadOnly over the corpus", () => {
    it("the corpus is large enough", () => {
      expect(readOnlyCommands.length).toBeGreaterThanOrEqual(100)
      expect(mutatingCommands.length).toBeGreaterThanOrEqual(100)
    })

    it.effect("classifies no mutating or dangerous command as read-only", () =>
      Effect.gen(function*() {
        const results = yield* classify(mutatingCommands)
        expect(results.filter((result) => result.readOnly).map((result) => result.command)).toEqual([])
      }))

    it.effect("classifies every read-only command as read-only", () =>
      Effect.gen(function*() {
        const results = yield* classify(readOnlyCommands)
        expect(results.filter((result) => !result.readOnly).map((result) => result.command)).toEqual([])
      }))

    it.effect("an empty command line is not read-only (nothing proves it)", () =>
      Effect.gen(function*() {
        expect(yield* ShellCommand.isReadOnly("")).toBe(false)
        expect(yield* ShellCommand.isReadOnly("# only a comment")).toBe(false)
      }))
  })

  describe("split", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["ls -la", ["ls -la"]],
      ["ls && pwd", ["ls", "pwd"]],
      ["ls || pwd", ["ls", "pwd"]],
      ["ls; pwd", ["ls", "pwd"]],
      ["ls | wc -l", ["ls", "wc -l"]],
      ["ls |& wc -l", ["ls", "wc -l"]],
      ["sleep 1 & pwd", ["sleep 1", "pwd"]],
      ["ls\npwd\n\nwhoami", ["ls", "pwd", "whoami"]],
      ["git status && rm -rf x", ["git status", "rm -rf x"]],
      ["echo \"a && b\"", ["echo \"a && b\""]],
      ["echo 'a; b | c'", ["echo 'a; b | c'"]],
      ["echo a\\;b", ["echo a\\;b"]],
      ["(cd src; ls)", ["cd src", "ls"]],
      ["{ ls; pwd; }", ["ls", "pwd"]],
      ["if test -f x; then cat x; else rm y; fi", ["test -f x", "cat x", "rm y"]],
      ["while true; do rm x; done", ["true", "rm x"]],
      ["for f in a b; do rm \"$f\"; done", ["rm \"$f\""]],
      ["case $x in a) rm y;; esac", ["rm y"]],
      ["git status $(rm x)", ["rm x", "git status $(rm x)"]],
      ["echo `rm x`", ["rm x", "echo `rm x`"]],
      ["cat <(rm x) >(tee y)", ["rm x", "tee y", "cat <(rm x) >(tee y)"]],
      ["echo \"$(whoami; rm x)\"", ["whoami", "rm x", "echo \"$(whoami; rm x)\""]],
      ["ls > out.txt 2>&1", ["ls"]],
      ["ls > out.txt -la", ["ls -la"]],
      ["> f", ["> f"]],
      ["timeout 5 FOO=1 ls", ["timeout 5 FOO=1 ls"]],
      ["FOO=1 BAR=2 make test", ["FOO=1 BAR=2 make test"]],
      ["cat <<EOF | grep x\nhello\nEOF", ["cat", "grep x"]],
      ["cat <<EOF\n`rm x`\nEOF", ["rm x", "cat"]],
      ["", []],
      ["   ", []]
    ]
    for (const [command, expected] of cases) {
      it.effect(`${JSON.stringify(command)}`, () =>
        Effect.gen(function*() {
          expect(yield* ShellCommand.split(command)).toEqual(expected)
        }))
    }

    it.effect("a line that does not parse is still split on every control operator", () =>
      Effect.gen(function*() {
        const parts = yield* ShellCommand.split("ls && rm -rf x (")
        expect(parts).toContain("ls")
        expect(parts.some((part) => part.startsWith("rm -rf x"))).toBe(true)
      }))
  })

  describe("analyze", () => {
    it.effect("reports argv without quotes, assignments and output redirections", () =>
      Effect.gen(function*() {
        const analysis = yield* ShellCommand.analyze("FOO=1 BAR='x y' grep -n \"a b\" file > out.txt 2>&1 && ls >/dev/null")
        expect(Option.getOrThrow(analysis)).toEqual({
          commands: [
            {
              text: "FOO=1 BAR='x y' grep -n \"a b\" file",
              argv: ["grep", "-n", "a b", "file"],
              assignments: ["FOO=1", "BAR='x y'"],
              redirects: [{ operator: ">", target: "out.txt" }],
              readPaths: [{ path: "file", subtree: false, content: true }],
              writePaths: [{ path: "out.txt", subtree: false, content: true }],
              pathsKnown: true,
              unresolvedPaths: false,
              readOnly: false,
              onlyWritesPaths: false
            },
            {
              text: "ls",
              argv: ["ls"],
              assignments: [],
              redirects: [{ operator: ">", target: "/dev/null" }],
              readPaths: [{ path: ".", subtree: true, content: false }],
              writePaths: [],
              pathsKnown: true,
              unresolvedPaths: false,
              readOnly: true,
              onlyWritesPaths: false
            }
          ],
          hasDynamicParts: false,
          readOnly: false
        })
      }))

    it.effect("marks substitutions and expansions in command position as dynamic", () =>
      Effect.gen(function*() {
        const dynamic = ["echo $(ls)", "cat <(ls)", "$CMD x", "echo `id`"]
        for (const command of dynamic) {
          const analysis = Option.getOrThrow(yield* ShellCommand.analyze(command))
          expect(analysis.hasDynamicParts, command).toBe(true)
          expect(analysis.readOnly, command).toBe(false)
        }
        const plain = Option.getOrThrow(yield* ShellCommand.analyze("echo $HOME"))
        expect(plain.hasDynamicParts).toBe(false)
        expect(plain.readOnly).toBe(true)
      }))

    it.effect("a redirection after a list or pipeline belongs to its last command", () =>
      Effect.gen(function*() {
        const analysis = Option.getOrThrow(yield* ShellCommand.analyze("ls && cat x | sort > out.txt"))
        expect(analysis.commands.map((command) => [command.text, command.redirects])).toEqual([
          ["ls", []],
          ["cat x", []],
          ["sort", [{ operator: ">", target: "out.txt" }]]
        ])
      }))

    it.effect("redirections of a group apply to every command in it", () =>
      Effect.gen(function*() {
        const analysis = Option.getOrThrow(yield* ShellCommand.analyze("{ ls; pwd; } >> log.txt"))
        expect(analysis.commands.map((command) => command.redirects)).toEqual([
          [{ operator: ">>", target: "log.txt" }],
          [{ operator: ">>", target: "log.txt" }]
        ])
      }))

    it.effect("is None for a line with syntax errors", () =>
      Effect.gen(function*() {
        expect(Option.isNone(yield* ShellCommand.analyze("echo \"unterminated"))).toBe(true)
        expect(Option.isNone(yield* ShellCommand.analyze("if true; then ls"))).toBe(true)
      }))
  })

  describe("layer", () => {
    it.effect("provides the tree-sitter analyser as core's ShellAnalysis port", () =>
      Effect.gen(function*() {
        const port = yield* ShellAnalysis.ShellAnalysis
        expect(yield* port.isReadOnly("ls -la")).toBe(true)
        expect(yield* port.split("echo \"a && b\" && rm x")).toEqual(["echo \"a && b\"", "rm x"])
        expect(Option.isSome(yield* port.analyze("ls"))).toBe(true)
      }).pipe(Effect.provide(ShellCommand.layer)))

    it.effect("without the layer core fails closed", () =>
      Effect.gen(function*() {
        const port = yield* ShellAnalysis.ShellAnalysis
        expect(yield* port.isReadOnly("ls -la")).toBe(false)
      }))
  })
})
