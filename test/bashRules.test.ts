/**
 * The Bash classes of the trust issue (issue 9: items 1, 3, 7, 8, 9, 10 and
 * the precedence section) and issue 13's Bash rule items, decided by the real
 * chain with the tree-sitter analyser. Each case failed before the fix.
 */
import { Hooks, PermissionChain, ToolUseContext } from "@switchyard/core"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mutatingCommands, readOnlyCommands } from "../packages/tools/test/fixtures/shell-corpus.js"
import { Bash, CWD, decide, HOME, type Outcome, rulesOf, type Setup } from "./fixtures/permissionTools.js"

interface Case extends Setup {
  readonly command: string
  readonly expect: Outcome
}

const cases: ReadonlyArray<readonly [string, ReadonlyArray<Case>]> = [
  ["1. arithmetic evaluation runs code", [
    { deny: ["Bash(touch *)"], allow: ["Bash"], command: "test 'a[$(touch pwned)]' -eq 1", expect: "deny" },
    { deny: ["Bash(touch *)"], allow: ["Bash"], command: "[ -v 'a[$(touch pwned)]' ]", expect: "deny" },
    { deny: ["Bash(touch *)"], allow: ["Bash"], command: "[[ 'a[`touch pwned`]' -lt 2 ]]", expect: "deny" },
    { deny: ["Bash(touch *)"], allow: ["Bash"], command: "declare -i x='a[$(touch pwned)]'", expect: "deny" },
    { command: "[[ 'a[$(touch pwned)]' -eq 1 ]]", expect: "ask" },
    { command: "[[ -v 'x[$(touch pwned)]' ]]", expect: "ask" },
    { command: "[[ x -eq 1 ]]", expect: "ask" },
    { command: "test 'a[$(touch pwned)]' -ge 0", expect: "ask" },
    { command: "printf -v 'a[$(touch pwned)]' x", expect: "ask" },
    { command: "[[ 1 -eq 1 ]] && test 2 -gt 1", expect: "allow" }
  ]],
  ["3. sed -i under acceptEdits", [
    { mode: "acceptEdits", command: "sed -i 's/a/b/w /tmp/stolen' notes.txt", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i '1e touch pwned' notes.txt", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i 's/x/touch pwned/e' notes.txt", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i 'r /etc/shadow' notes.txt", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i 'W /tmp/out' notes.txt", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i 's/a/b/' /etc/hosts", expect: "ask" },
    { mode: "acceptEdits", command: "sed -i 's/a/b/g; 2d' notes.txt", expect: "allow" }
  ]],
  ["7. glob and brace characters in paths", [
    { deny: ["Read(./secrets/**)"], command: "cat sec*/key.txt", expect: "ask" },
    { deny: ["Read(./secrets/**)"], command: "cat {secrets,src}/key.txt", expect: "ask" },
    { deny: ["Edit(./secrets/**)"], allow: ["Bash"], command: "echo x > sec?ets/a", expect: "ask" },
    { deny: ["Read(./secrets/**)"], allow: ["Bash(cp *)"], command: "cp s*/key.txt out.txt", expect: "ask" },
    { deny: ["Read(./secrets/**)"], command: "cat $DIR/key.txt", expect: "ask" },
    { deny: ["Read(./secrets/**)"], command: "cat *", expect: "ask" },
    // Without a rule that could match, a glob is an ordinary read.
    { command: "cat src/*.ts", expect: "allow" },
    { deny: ["Read(./secrets/**)"], command: "cat src/*.ts", expect: "allow" }
  ]],
  ["8. Bash reads of denied paths", [
    { deny: ["Read(./.env)"], command: "cat < .env", expect: "deny" },
    { deny: ["Read(./.env)"], command: "base64 .env", expect: "deny" },
    { deny: ["Read(./.env)"], command: "xxd .env | head", expect: "deny" },
    { deny: ["Read(./.env)"], command: "git show HEAD:.env", expect: "deny" },
    { deny: ["Read(./secrets/**)"], command: "git grep key", expect: "deny" },
    { deny: ["Read(./secrets/**)"], command: "grep -r key .", expect: "deny" },
    { deny: ["Read(./secrets/**)"], command: "rg key", expect: "deny" },
    { deny: ["Read(./secrets/**)"], command: "cat list.txt | xargs cat", expect: "ask" },
    { deny: ["Read(./.env)"], command: "tac .env", expect: "deny" },
    { deny: ["Read(./.env)"], command: "awk '{print}' .env", expect: "deny" },
    { deny: ["Read(./secrets/**)"], command: "grep -r key src", expect: "allow" },
    { deny: ["Read(./secrets/**)"], command: "ls -R .", expect: "allow" },
    // /proc/self is the command's own process: its cwd is the session's, not this process's; reached by a
    // climb, it is not resolved here at all (the footprint oracle's find; the last failed before).
    { deny: ["Read(./secrets/**)"], allow: ["Bash(cat *)"], command: "cat /proc/self/cwd/secrets/k", expect: "deny" },
    { deny: ["Read(./.env)"], allow: ["Bash(cat *)"], command: "cat /proc/thread-self/cwd/.env", expect: "deny" },
    { deny: ["Read(./.env)"], allow: ["Bash(cat *)"], command: "cat /proc/self/../self/cwd/.env", expect: "ask" }
  ]],
  ["9. environment prefixes", [
    { allow: ["Bash(git log *)"], command: "HOME=/tmp/evil git log", expect: "ask" },
    { allow: ["Bash(git log *)"], command: "XDG_CONFIG_HOME=/tmp/evil git log", expect: "ask" },
    { allow: ["Bash(npm test *)"], command: "npm_config_script_shell=/tmp/evil npm test", expect: "ask" },
    { allow: ["Bash(git status *)"], command: "GIT_EXTERNAL_DIFF=/tmp/evil git status", expect: "ask" },
    { command: "HOME=/tmp/evil git log", expect: "ask" },
    { command: "LC_ALL=C ls", expect: "allow" },
    { allow: ["Bash(npm test *)"], command: "NODE_ENV=test npm test", expect: "allow" },
    // glibc opens a locale or time-zone value that names a file (the footprint oracle's find): read anywhere.
    { command: "TZ=/etc/shadow date", expect: "ask" },
    { command: "TZ=:/home/other/.ssh/id_rsa ls -l", expect: "ask" },
    { command: "LANG=../../../../tmp/x ls", expect: "ask" },
    { command: "LANGUAGE=fr:/tmp/x ls", expect: "ask" },
    { allow: ["Bash(date *)"], command: "TZ='/etc/shadow' date +%s", expect: "ask" },
    { command: "TZ=Europe/Paris date", expect: "allow" },
    { command: "LC_ALL=C.UTF-8 LANGUAGE=fr:de ls", expect: "allow" }
  ]],
  ["10. dynamic command names in bypassPermissions", [
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "/bin/rm -rf build", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "$'rm' -rf build", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "$'\\x72\\x6d' -rf build", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "r\\\nm -rf build", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "bash -c -- 'rm -rf build'", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "env -S 'rm -rf build'", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "alias d='rm -rf'\nd build", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "find build -delete", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "find . -name x -exec rm {} \\;", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "CMD=rm; $CMD -rf build", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "bash <<< 'rm -rf build'", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Bash(rm *)"], command: "echo 'rm -rf build' | sh", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./secrets/**)"], command: "echo x | tee secrets/a", expect: "deny" },
    {
      mode: "bypassPermissions",
      deny: ["Read(./secrets/**)"],
      command: "dd if=/dev/zero of=secrets/a count=1",
      expect: "deny"
    },
    { mode: "bypassPermissions", deny: ["Read(./secrets/**)"], command: "truncate -s 0 secrets/a", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./secrets/**)"], command: "ln -sf /dev/null secrets/a", expect: "deny" },
    // No rule that could match: bypass runs it.
    { mode: "bypassPermissions", command: "CMD=ls; $CMD", expect: "allow" }
  ]],
  ["review A: a link the line makes before it reads through it", [
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "ln -s . l && cat l/.env", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "cat l/.env; ln -s /proc/self/cwd l", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(/etc/shadow)"], command: "ln -s /etc e && cat e/shadow", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "tar xf links.tar && cat l/.env", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "bash -c 'ln -s . l' && cat l/.env", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "npm run make-links && cat l/.env", expect: "ask" },
    // A path the rule matches as written is still denied; writers that make no links keep their precision.
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "ln -s . l && cat .env", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "mkdir -p out && cat src/a.ts", expect: "allow" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "cp a b && rm -f c && cat b", expect: "allow" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "ln -s src l", expect: "allow" },
    { mode: "bypassPermissions", command: "ln -s . l && cat l/.env", expect: "allow" }
  ]],
  ["review B: bash reads without a program", [
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "echo \"$(<.env)\"", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "x=$(< .env); echo \"$x\"", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "echo `<.env`", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "source .env; echo $TOKEN", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: ". ./.env", expect: "deny" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "echo \"$(<src/a.ts)\"", expect: "allow" }
  ]],
  ["review C: undescribed invocations that name the denied file or find it", [
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "tar cf - .env | tar xOf -", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "link .env src/x", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "install -m 644 .env src/i", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "zip --out=.env a.zip", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Edit(./.env)"], command: "dd of=x if=y; tee_like .env", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "find . -name '.e*' -exec cat {} +", expect: "ask" },
    { mode: "bypassPermissions", deny: ["Read(./secrets/**)"], command: "find -exec grep -l key {} +", expect: "ask" },
    { deny: ["Read(./.env)"], allow: ["Bash"], command: "find . -exec cat {} \\;", expect: "ask" },
    // Words that name nothing a rule covers, and find below a tree without the denied file, keep their verdict.
    { mode: "bypassPermissions", deny: ["Read(./.env)"], command: "tar cf - src | wc -c", expect: "allow" },
    {
      mode: "bypassPermissions",
      deny: ["Read(./.env)"],
      command: "find src -name '*.ts' -exec cat {} +",
      expect: "allow"
    },
    { mode: "bypassPermissions", command: "tar cf - .env | tar xOf -", expect: "allow" }
  ]],
  ["precedence and the blanket rule", [
    {
      allow: ["Bash"],
      deny: ["Read(./secrets/**)"],
      command: "for i in $(seq 1 3); do echo $i; done",
      expect: "allow"
    },
    { allow: ["Bash(*)"], command: "echo $(date) $HOME", expect: "allow" },
    { allow: ["Bash"], command: "while read -r f; do wc -l \"$f\"; done < list.txt", expect: "allow" },
    { allow: ["Bash"], deny: ["Bash(rm *)"], command: "echo $(rm -rf x)", expect: "deny" },
    { allow: ["Bash"], ask: ["Bash(git push *)"], command: "git push $(echo origin)", expect: "ask" },
    { allow: ["Bash"], deny: ["Bash(rm *)"], command: "$CMD x", expect: "ask" },
    { deny: ["Bash(rm *)"], command: "[ -f x ] && [[ -d y ]] && echo ok", expect: "allow" },
    { allow: ["Bash"], deny: ["Read(./secrets/**)"], command: "cat secrets/key.txt", expect: "deny" }
  ]]
]

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

layer(TestLayer)("Bash rules (issue 9)", (it) => {
  for (const [title, list] of cases) {
    describe(title, () => {
      for (const testCase of list) {
        it.effect(`${JSON.stringify(testCase.command)} → ${testCase.expect}`, () =>
          Effect.gen(function*() {
            const { outcome, decision } = yield* decide(testCase, Bash, { command: testCase.command })
            expect(outcome, "message" in decision ? decision.message : decision.reason).toBe(testCase.expect)
          }))
      }
    })
  }
})

/** Run two calls through one chain: the first answered "always", the second with nobody to ask. */
const alwaysThenAgain = (command: string) =>
  Effect.gen(function*() {
    const chain = yield* PermissionChain.make({ home: HOME })
    const context = ToolUseContext.make({
      cwd: CWD,
      permissions: { mode: "default", rules: rulesOf({}), additionalDirectories: [] }
    })
    const suggested: Array<ReadonlyArray<string>> = []
    const decideWith = (answer: "always" | "unavailable") =>
      chain.decide({
        tool: Bash,
        toolUseId: "toolu_1",
        input: { command },
        context,
        hook: Hooks.emptyPreToolUse,
        emit: () => Effect.void
      }).pipe(
        Effect.provideService(PermissionChain.PermissionPrompt, {
          ask: (question) =>
            Effect.sync(() => {
              suggested.push(question.suggestions)
              return answer === "always"
                ? ({ answer: "always", persist: false } as const)
                : ({ answer: "unavailable", reason: "a test prompt" } as const)
            })
        })
      )
    const first = yield* decideWith("always")
    const second = yield* decideWith("unavailable")
    return { first, second, suggested }
  })

layer(TestLayer)("Bash suggestions (issue 13)", (it) => {
  it.effect(
    "for every command of the corpus, the rule \"always\" saves allows the same call next time",
    () =>
      Effect.gen(function*() {
        const wrong: Array<string> = []
        for (const command of [...readOnlyCommands, ...mutatingCommands]) {
          const { first, second, suggested } = yield* alwaysThenAgain(command)
          if (first.behavior !== "allow") wrong.push(`${command}: "always" did not allow it`)
          // A call that asked and got rules must now be allowed by them; one allowed at once asked nobody.
          if (suggested.length > 0 && suggested[0]!.length > 0 && second.behavior !== "allow") {
            wrong.push(`${JSON.stringify(command)}: saved ${suggested[0]!.join(", ")} but was asked again`)
          }
        }
        expect(wrong).toEqual([])
      }),
    120_000
  )

  it.effect("a fail-closed ask suggests no rule", () =>
    Effect.gen(function*() {
      const { decision } = yield* decide({ deny: ["Bash(rm *)"] }, Bash, { command: "$CMD x" })
      expect(decision.behavior).toBe("deny")
      expect("message" in decision ? decision.message : "").not.toContain("Bash($CMD")
    }))
})
