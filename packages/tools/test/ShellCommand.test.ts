import { ShellAnalysis } from "@switchyard/core"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mutatingCommands, readOnlyCommands } from "./fixtures/shell-corpus.js"
import { freshReadOnlyCommands } from "./fixtures/shell-recall.js"

const classify = (commands: ReadonlyArray<string>) =>
  Effect.forEach(
    commands,
    (command) => Effect.map(ShellCommand.isReadOnly(command), (readOnly) => ({ command, readOnly }))
  )

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

    it.effect("recall on a second corpus of read-only lines an agent runs (issue 19: measured, held above 95%)", () =>
      Effect.gen(function*() {
        const results = yield* classify(freshReadOnlyCommands)
        const recall = results.filter((result) => result.readOnly).length / results.length
        expect(recall, results.filter((result) => !result.readOnly).map((result) => result.command).join("\n"))
          .toBeGreaterThanOrEqual(0.95)
      }))

    it.effect("an empty command line is not read-only (nothing proves it)", () =>
      Effect.gen(function*() {
        expect(yield* ShellCommand.isReadOnly("")).toBe(false)
        expect(yield* ShellCommand.isReadOnly("# only a comment")).toBe(false)
      }))
  })

  describe("issue 9 classes", () => {
    const notReadOnly: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["1. arithmetic operands and subscripts", [
        "[[ 'a[$(touch p)]' -eq 1 ]]",
        "[[ -v 'a[$(touch p)]' ]]",
        "[[ x -lt 1 ]]",
        "test 'a[$(touch p)]' -eq 1",
        "[ 1 -eq 'a[`touch p`]' ]",
        "test -v 'a[$(touch p)]'",
        "[ -R 'r[$(touch p)]' ]",
        "read -t 'a[$(touch p)]' x",
        "read 'a[$(touch p)]'",
        "printf -v 'a[$(touch p)]' x",
        "echo $((a[$(touch p)]))",
        "(( a[$(touch p)] ))",
        "declare -i x='a[$(touch p)]'",
        "test $x -eq 1"
      ]],
      ["2. option grammars", [
        "xxd -r -as in out",
        "xxd -s 1 in out",
        "git branch --sort=refname new",
        "git branch --format=%(refname) new",
        "git branch --column new",
        "git branch -v new",
        "git branch -i new",
        "git tag --sort=refname v2",
        "git tag --format=x v2",
        "git tag --column v2",
        "tree -Lo 2 out",
        "tar -xf a.tar",
        "tar cf out.tar src",
        "tar -tf a.tar --to-command=sh",
        "tar -tf host:a.tar",
        "uniq -c in out",
        "sort -mo out in",
        "sort -cmo out in",
        "gzip data.txt",
        "awk '{ print > \"out\" }' f",
        "awk 'BEGIN { system(\"id\") }'",
        "awk '{ print | \"sh\" }' f",
        "awk -f prog.awk f",
        "date -s 2020-01-01 +%s"
      ]],
      ["9. environment prefixes", [
        "HOME=/tmp/x git log",
        "GIT_DIR=/tmp/x git status",
        "XDG_CONFIG_HOME=/tmp git log",
        "PAGER=sh git log",
        "npm_config_x=1 ls",
        "LC_ALL=$(id) ls"
      ]]
    ]
    for (const [title, commands] of notReadOnly) {
      it.effect(`${title}: not read-only`, () =>
        Effect.gen(function*() {
          const results = yield* classify(commands)
          expect(results.filter((result) => result.readOnly).map((result) => result.command)).toEqual([])
        }))
    }

    it.effect("12. recall: version queries, git listings, printing awk and sed, archive listings, xargs", () =>
      Effect.gen(function*() {
        const results = yield* classify([
          "node --version",
          "python3 --version",
          "git tag -l 'v*'",
          "git tag -n",
          "git branch --contains HEAD",
          "git branch --list 'feat/*'",
          "awk '{ print $1 }' data.txt",
          "awk -F: 'NR == 1 { print NF }' /etc/passwd",
          "sed 's/a/b/g' file",
          "sed -e '1d' -e 's/x/y/' file",
          "tar -tf archive.tar",
          "tar tvf archive.tar",
          "tar --list --file=archive.tar.gz -z",
          "gzip -l data.gz",
          "zcat data.gz",
          "unzip -l archive.zip",
          "find . -name '*.ts' | xargs wc -l",
          "ls | xargs -n 1 basename",
          "LC_ALL=C sort data.txt",
          "TZ=UTC date",
          "echo $'\\x41'",
          "jq --arg x 1 '.a' data.json"
        ])
        expect(results.filter((result) => !result.readOnly).map((result) => result.command)).toEqual([])
      }))

    const anchorOf = (use: ShellAnalysis.PathUse) =>
      use.anchor === "repository" ? "<repo>/" : use.anchor === "gitDirectory" ? "<git>/" : ""
    const pathsOf = (command: string) =>
      Effect.map(ShellCommand.analyze(command), (analysis) =>
        Option.getOrThrow(analysis).commands.map((simple) => ({
          reads: simple.readPaths.map((use) =>
            `${anchorOf(use)}${use.path}${use.subtree ? "/**" : ""}${use.content ? "" : " (names)"}`
          ),
          writes: simple.writePaths.map((use) => `${anchorOf(use)}${use.path}${use.subtree ? "/**" : ""}`),
          known: simple.pathsKnown,
          unresolved: simple.unresolvedWords,
          onlyWrites: simple.onlyWritesPaths
        })))

    it.effect("reports what each simple command reads and writes (issue 15's footprint)", () =>
      Effect.gen(function*() {
        const none = { known: true, unresolved: [], onlyWrites: false }
        expect(yield* pathsOf("grep -rn x src")).toEqual([{ ...none, reads: ["src/**"], writes: [] }])
        expect(yield* pathsOf("grep x")).toEqual([{ ...none, reads: [], writes: [] }])
        // rg also reads the ignore files of every parent directory: its paths are not proven complete.
        expect(yield* pathsOf("rg -e x")).toEqual([{ ...none, known: false, reads: ["./**"], writes: [] }])
        expect(yield* pathsOf("ls")).toEqual([{ ...none, reads: ["./** (names)"], writes: [] }])
        expect(yield* pathsOf("find src -name '*.ts'")).toEqual([{ ...none, reads: ["src/** (names)"], writes: [] }])
        expect(yield* pathsOf("cat < in.txt > out.txt")).toEqual([{ ...none, reads: ["in.txt"], writes: ["out.txt"] }])
        // `0<` is one redirection of descriptor 0, not an argument `0` (the tree reads it so; the oracle found it).
        expect(yield* pathsOf("cp a b 0< c")).toEqual([{
          ...none,
          reads: ["a", "c"],
          writes: ["b/**"],
          onlyWrites: true
        }])
        expect(yield* pathsOf("cat a 0 < c")).toEqual([{ ...none, reads: ["a", "0", "c"], writes: [] }])
        expect(yield* pathsOf("cp -r a b")).toEqual([{ ...none, reads: ["a/**"], writes: ["b/**"], onlyWrites: true }])
        expect(yield* pathsOf("rm -rf build")).toEqual([{ ...none, reads: [], writes: ["build/**"], onlyWrites: true }])
        expect(yield* pathsOf("mkdir -p a/b && touch a/b/c")).toEqual([
          { ...none, reads: [], writes: ["a/b"], onlyWrites: true },
          { ...none, reads: [], writes: ["a/b/c"], onlyWrites: true }
        ])
        expect(yield* pathsOf("sed -i 's/a/b/' f.txt")).toEqual([{
          ...none,
          reads: [],
          writes: ["f.txt"],
          onlyWrites: true
        }])
        // `w log` writes a file the operands do not name: the paths are not proven (issue 20).
        expect(yield* pathsOf("sed -i 's/a/b/w log' f.txt")).toEqual([{
          ...none,
          known: false,
          reads: [],
          writes: ["f.txt"]
        }])
        // `rev:path` may name a tree (`HEAD:secrets`): what is below it is read.
        // git also reads the repository it finds, anchored at the work tree's root and the git directory (issue 20).
        expect(yield* pathsOf("git show HEAD:src/a.ts")).toEqual([
          { ...none, reads: ["./** (names)", "<repo>/./**", "<git>/./**", "src/a.ts/**"], writes: [] }
        ])
        expect(yield* pathsOf("git status")).toEqual([
          { ...none, reads: ["./** (names)", "<repo>/./**", "<git>/./**"], writes: ["<git>/index"] }
        ])
        expect(yield* pathsOf("echo hi; seq 3")).toEqual([
          { ...none, reads: [], writes: [] },
          { ...none, reads: [], writes: [] }
        ])
        expect(yield* pathsOf("cat src/*.ts")).toEqual([{
          reads: [],
          writes: [],
          known: false,
          unresolved: ["src/*.ts"],
          onlyWrites: false
        }])
        expect(yield* pathsOf("npm test")).toEqual([{
          reads: [],
          writes: [],
          known: false,
          unresolved: [],
          onlyWrites: false
        }])
        expect((yield* pathsOf("cd src && ls"))[0]!.known).toBe(false)
      }))
  })

  describe("issue 19 classes (the analysis models bash, not a list of spellings)", () => {
    const notReadOnly: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["1. a word not one known literal is any word, options included", [
        "sed -n 1p *",
        "sed -n p ?",
        "sed -n p [-]i x",
        "sed -n p {-i,x}",
        "sed -n p \"$f\"",
        "sed -n p $f",
        "ls | xargs sed -n 1p",
        "for f in *; do sed -n 1p $f; done",
        "ls | while read -r f; do sed -n p \"$f\" x; done",
        "uniq *",
        "uniq a $b",
        "uniq \"$@\"",
        "uniq {README.md,data.txt}",
        "uniq a{,.out}",
        "ls | xargs uniq",
        "awk * '{print}'",
        "join a $b",
        "base64 *",
        "sort -n $opts data.txt",
        "rg x $y",
        "tree $x",
        "file $x",
        "test $x",
        "[ $x ]",
        "test \"$a\" \"$b\" \"$c\""
      ]],
      ["2. lines bash evaluates at run time", [
        "read -r x < f; echo \"${x@P}\"",
        "read -r y < f; echo $((y))",
        "read -r y < f; echo $[y]",
        "read -r y < f; (( y ))",
        "read -r y < f; test -v \"$y\"",
        "read -r y < f; echo \"${!y}\"",
        "read -r y < f; printf -v \"$y\" x",
        "read -r y < f; [[ $y -eq 1 ]]",
        "let x=y",
        "declare -n r=$x",
        "for ((i = x; i < 2; i++)); do echo; done",
        "read -r y < f; unset \"$y\""
      ]],
      ["3. {NAME}> assigns NAME", ["true {HOME}>/dev/null; git status", "ls {PATH}>/dev/null"]],
      ["4. git in a repository the project supplies, HOME changes", [
        "cd vendor/x.git && git status",
        "cd lib && git log",
        "pushd lib && git status",
        "popd && git log",
        "for HOME in evil; do git status; done",
        "HOME=evil git status",
        "export HOME=evil; git status",
        "XDG_CONFIG_HOME=x git log"
      ]],
      ["5. queries that load project configuration", [
        "mvn --version",
        "cargo --version",
        "rustc --version",
        "terraform --version",
        "npm --version",
        "yarn --version",
        "go version",
        "gradle --version",
        "git log --show-signature",
        "git log --format=%G?",
        "git show --pretty=%GS"
      ]],
      ["8. sed -i and its suffix", ["sed -i'.en*' s/a/b/ v", "sed -i/tmp/* s/a/b/ v", "sed --in-place=.bak s/a/b/ v"]]
    ]
    for (const [title, commands] of notReadOnly) {
      it.effect(`${title}: not read-only`, () =>
        Effect.gen(function*() {
          const results = yield* classify(commands)
          expect(results.filter((result) => result.readOnly).map((result) => result.command)).toEqual([])
        }))
    }

    it.effect("2, 3, 4. an evaluating or rebinding line runs what no part shows (runsUnseen)", () =>
      Effect.gen(function*() {
        for (
          const command of [
            "read -r x < f; echo \"${x@P}\"",
            "echo $((y))",
            "(( y ))",
            "true {HOME}>/dev/null",
            "PATH=/tmp; ls",
            "BASH_CMDS[ls]=/bin/rm; ls",
            "for PATH in /tmp; do ls; done",
            "unset GIT_CONFIG_COUNT",
            "read -r PS4 < f"
          ]
        ) {
          expect(Option.getOrThrow(yield* ShellCommand.analyze(command)).runsUnseen, command).toBe(true)
        }
        for (
          const command of ["echo $((1 + 2))", "x=1; echo $x", "for f in a b; do echo $f; done", "exec {fd}>/dev/null"]
        ) {
          expect(Option.getOrThrow(yield* ShellCommand.analyze(command)).runsUnseen, command).toBe(false)
        }
      }))

    it.effect("1. what a word can become is narrowed by how it is written: recall stays", () =>
      Effect.gen(function*() {
        const results = yield* classify([
          "wc -l src/*.ts",
          "cat ./*.md",
          "for f in *.ts; do wc -l \"$f\"; done",
          "ls *.ts",
          "grep -n x src/*.ts",
          "sed -n 1p src/*.ts",
          "sed -n 1p \"./$f\"",
          "head -n 3 \"src/$f\"",
          "test -f \"$f\"",
          "test \"$a\" = b",
          "find . -name '*.ts' | xargs grep -l x",
          "cat {README,CHANGELOG}.md"
        ])
        expect(results.filter((result) => !result.readOnly).map((result) => result.command)).toEqual([])
      }))

    it.effect("6, 8, 20. paths a program touches besides its operands are reported", () =>
      Effect.gen(function*() {
        const analysis = (command: string) => Effect.map(ShellCommand.analyze(command), Option.getOrThrow)
        const reads = (command: string) =>
          Effect.map(analysis(command), (a) =>
            a.commands.flatMap((c) => c.readPaths.filter((u) => u.anchor === undefined).map((u) => u.path)))
        const writes = (command: string) =>
          Effect.map(analysis(command), (a) =>
            a.commands.flatMap((c) => c.writePaths.map((u) => u.path)))
        expect(yield* reads("strings @.env")).toEqual([".env"])
        expect(yield* reads("git blame --ignore-revs-file=.env a.txt")).toEqual([".", ".env", "a.txt"])
        expect(yield* reads("git blame --ignore-revs-file .env a.txt")).toEqual([".", ".env", "a.txt"])
        expect(yield* reads("git cat-file -p 1234abcd")).toEqual([".", "1234abcd", "."])
        expect(yield* writes("sed -i'.en*' s/a/b/ v")).toEqual(["v", ".env"])
        expect(yield* writes("sed -i.bak s/a/b/ d/v")).toEqual(["d/v", "d/v.bak"])
        expect(yield* writes("sed -i'bak/*' s/a/b/ d/v")).toEqual(["d/v", "bak/d/v"])
        expect(yield* writes("uniq a b")).toEqual(["b"])
        expect(yield* writes("gzip a")).toEqual(["a", "a.gz"])
        expect(yield* reads("test -f a -a -d b")).toEqual(["a", "b"])
        expect(yield* reads("[ a -nt b ]")).toEqual(["a", "b"])
        expect(yield* reads("find . -newer ref")).toEqual([".", "ref"])
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
        const analysis = yield* ShellCommand.analyze(
          "FOO=1 BAR='x y' grep -n \"a b\" file > out.txt 2>&1 && ls >/dev/null"
        )
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
              unresolvedWords: [],
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
              unresolvedWords: [],
              readOnly: true,
              onlyWritesPaths: false
            }
          ],
          hasDynamicParts: false,
          runsUnseen: false,
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
