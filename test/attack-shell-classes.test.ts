/**
 * The effect oracle for issue 19's ten classes (the third outside attack on
 * the Bash analysis), through the real CLI: `switchyard dispatch` with
 * settings, in the modes where each class applies, and `switchyard
 * speculate` for class 10. Every case is judged by what happened — a file
 * changed or created, a secret in a result, the victim of `rm` gone — never
 * by the decision printed. Each call that the layer lets through is run for
 * real by the Bash tool, so a gap shows as an effect.
 *
 * Class 7 (a link followed by `..`) relies on the permission environment's
 * `resolvePath` resolving `LINK/..` as the kernel does; the Bash analysis
 * hands it unnormalised paths and resolves each `..` after the real path of
 * what precedes it, so these cases hold with or without the engine's
 * component-by-component resolver.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

/** Each case is a few cold starts of the CLI on a shared machine. */
const TIMEOUT = 240_000

const SECRETS = { env: "env-secret-19c6", key: "key-secret-19c7" }

interface Fixture {
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly home: string
  readonly state: string
}

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8"
  })

const write = (file: string, content: string, mode?: number) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
  if (mode !== undefined) fs.chmodSync(file, mode)
}

/**
 * A project (a git repository) with a `.env` and `secrets/`, a directory
 * outside it, links that leave it (`sub/LINK` → `other/dir`, so
 * `sub/LINK/../../project` is the project again), a HOME and a state dir.
 */
const makeFixture = (settings: Record<string, unknown>): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-classes-")))
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  const home = path.join(root, "home")
  const state = path.join(root, "state")
  write(path.join(project, ".env"), `TOKEN=${SECRETS.env}\n`)
  write(path.join(project, "secrets", "key.txt"), `${SECRETS.key}\n`)
  write(path.join(project, "a.txt"), "alpha\n")
  write(path.join(project, ".claude", "settings.json"), JSON.stringify(settings))
  write(path.join(outside, "o.txt"), "outside\n")
  fs.mkdirSync(path.join(root, "other", "dir"), { recursive: true })
  fs.mkdirSync(path.join(project, "sub"), { recursive: true })
  fs.symlinkSync(path.join(root, "other", "dir"), path.join(project, "sub", "LINK"))
  fs.mkdirSync(home, { recursive: true })
  fs.mkdirSync(state, { recursive: true })
  git(project, "init", "-q")
  git(project, "add", "-A")
  git(project, "commit", "-qm", "init")
  return { root, project, outside, home, state }
}

interface Result {
  readonly id: string
  readonly status: string
  readonly isError: boolean
  readonly content: string
}

const use = (id: string, command: string) => ({ type: "tool_use", id, name: "Bash", input: { command } })

/** Dispatch Bash calls (id → command) in `mode`; the Bash tool runs with the fixture's HOME. */
const dispatch = async (
  fixture: Fixture,
  mode: string,
  commands: ReadonlyArray<readonly [string, string]>,
  options: { readonly cwd?: string; readonly args?: ReadonlyArray<string> } = {}
): Promise<ReadonlyMap<string, Result>> => {
  const result = await runCli(
    [
      "dispatch",
      "-",
      "--cwd",
      options.cwd ?? fixture.project,
      "--output-format",
      "stream-json",
      "--permission-mode",
      mode,
      ...(options.args ?? [])
    ],
    {
      input: JSON.stringify(commands.map(([id, command]) => use(id, command))),
      env: { SWITCHYARD_HOME: fixture.state, HOME: fixture.home },
      timeoutMs: 120_000
    }
  )
  const results = jsonLines(result).filter((line) => line["type"] === "result").map((line): Result => ({
    id: String(line["tool_use_id"]),
    status: String(line["status"]),
    isError: line["is_error"] === true,
    content: typeof line["content"] === "string" ? line["content"] : JSON.stringify(line["content"])
  }))
  expect(results.length, result.stderr).toBe(commands.length)
  return new Map(results.map((entry) => [entry.id, entry]))
}

const read = (file: string) => fs.readFileSync(file, "utf8")
const exists = (file: string) => fs.existsSync(file)

describe("attack: issue 19's classes through the CLI, judged by effects", () => {
  it(
    "1. words that expand into options or output operands: nothing read-only rewrites a file (default mode)",
    async () => {
      const fixture = makeFixture({})
      const { project } = fixture
      // `*` matches `-i` first: `sed -n 1p *` is `sed -n 1p -i notes.txt victim.txt`, an in-place edit.
      write(path.join(project, "-i"), "")
      write(path.join(project, "victim.txt"), "one\ntwo\n")
      write(path.join(project, "notes.txt"), "first\nsecond\n")
      const uniqDir = path.join(project, "u")
      write(path.join(uniqDir, "a"), "x\nx\n")
      write(path.join(uniqDir, "b"), "kept\n")
      await dispatch(fixture, "default", [
        ["glob", "sed -n 1p *"],
        ["xargs", "ls | xargs sed -n 1p"],
        ["printf-xargs", "printf '%s\\n' * | xargs sed -n 1p"],
        ["read", "ls | while read -r f; do sed -n 1p \"$f\" victim.txt; done"],
        ["for", "for f in *; do sed -n 1p $f; done"],
        ["brace", "sed -n 1p {-i,victim.txt}"]
      ])
      expect(read(path.join(project, "victim.txt"))).toBe("one\ntwo\n")
      expect(read(path.join(project, "notes.txt"))).toBe("first\nsecond\n")
      // `uniq *` is `uniq a b`: b is its output.
      await dispatch(fixture, "default", [["uniq", "uniq *"], ["uniq-xargs", "ls | xargs uniq"]], { cwd: uniqDir })
      expect(read(path.join(uniqDir, "b"))).toBe("kept\n")
    },
    TIMEOUT
  )

  it(
    "2. a line bash evaluates at run time is not allowed because its parts match allow rules (default, bypass)",
    async () => {
      const allow = ["Bash(read *)", "Bash(echo *)", "Bash(test *)", "Bash(printf *)"]
      const fixture = makeFixture({ permissions: { allow, deny: ["Bash(touch *)"] } })
      const { project } = fixture
      write(path.join(project, "prompt.txt"), `$(touch ${project}/pwned-2a)\n`)
      write(path.join(project, "subscript.txt"), `a[$(touch ${project}/pwned-2b)]\n`)
      const lines: ReadonlyArray<readonly [string, string]> = [
        ["prompt", "read -r x < prompt.txt; echo \"${x@P}\""],
        ["arith", "read -r y < subscript.txt; echo $((y))"],
        ["old-arith", "read -r y < subscript.txt; echo $[y]"],
        ["command", "a=(1); read -r y < subscript.txt; (( y ))"],
        ["test-v", "a=(1); read -r y < subscript.txt; test -v \"$y\""],
        ["indirect", "read -r y < subscript.txt; echo \"${!y}\""],
        ["printf-v", "a=(1); read -r y < subscript.txt; printf -v \"$y\" x"]
      ]
      for (const mode of ["default", "bypassPermissions"]) {
        await dispatch(fixture, mode, lines)
        expect(fs.readdirSync(project).filter((name) => name.startsWith("pwned")), mode).toEqual([])
      }
    },
    TIMEOUT
  )

  it("3. {NAME}> assigns NAME: git does not read a planted .gitconfig through {HOME}> (default, bypass)", async () => {
    const fixture = makeFixture({ permissions: { deny: ["Bash(touch *)"] } })
    const { project } = fixture
    // bash gives the descriptor a number from 10 up: HOME becomes `10`, `11`, … relative to the cwd.
    for (const n of ["10", "11", "12"]) {
      write(path.join(project, n, ".gitconfig"), `[core]\n\tfsmonitor = "touch ${project}/pwned-3; false"\n`)
    }
    for (const mode of ["default", "bypassPermissions"]) {
      await dispatch(fixture, mode, [
        ["home", "true {HOME}>/dev/null; git status"],
        ["path", "ls {XDG_CONFIG_HOME}>/dev/null; git status --short"]
      ])
      expect(exists(path.join(project, "pwned-3")), mode).toBe(false)
    }
  }, TIMEOUT)

  it(
    "4. repositories the project supplies: a bare or embedded repository's config does not run (default, bypass)",
    async () => {
      const fixture = makeFixture({})
      const { project, root } = fixture
      // A bare repository with a work tree and an fsmonitor hook, discovered by walking into it.
      const bare = path.join(project, "vendor", "evil.git")
      fs.mkdirSync(bare, { recursive: true })
      git(bare, "init", "-q", "--bare")
      git(bare, "config", "core.bare", "false")
      git(bare, "config", "core.worktree", "..")
      git(bare, "config", "core.fsmonitor", `touch ${project}/pwned-4-bare; false`)
      // A non-bare embedded repository whose `.git` file points at a git directory in the project.
      const embedded = path.join(project, "lib")
      fs.mkdirSync(embedded, { recursive: true })
      git(embedded, "init", "-q")
      git(embedded, "config", "core.fsmonitor", `touch ${project}/pwned-4-embedded; false`)
      // A planted HOME with a .gitconfig, reached by a loop variable.
      write(
        path.join(project, "evilhome", ".gitconfig"),
        `[core]\n\tfsmonitor = "touch ${project}/pwned-4-home; false"\n`
      )
      await dispatch(fixture, "default", [
        ["bare", "cd vendor/evil.git && git status"],
        ["embedded", "cd lib && git status"],
        ["pushd", "pushd lib && git status"],
        ["home", "for HOME in evilhome; do git status; done"]
      ])
      expect(fs.readdirSync(project).filter((name) => name.startsWith("pwned")), "default").toEqual([])
      // In bypassPermissions everything runs; git is started with safe.bareRepository=explicit.
      await dispatch(fixture, "bypassPermissions", [["bare", "cd vendor/evil.git && git status"]])
      expect(exists(path.join(project, "pwned-4-bare")), "bypassPermissions").toBe(false)
      expect(root.length).toBeGreaterThan(0)
    },
    TIMEOUT
  )

  it(
    "5. queries that load project configuration are not read-only: git --show-signature runs no gpg (default)",
    async () => {
      const fixture = makeFixture({})
      const { project } = fixture
      // A commit with a signature header, and the repository's gpg program a script that leaves a mark.
      write(path.join(project, "fake-gpg"), `#!/bin/sh\ntouch ${project}/pwned-5\nexit 1\n`, 0o755)
      git(project, "config", "gpg.program", path.join(project, "fake-gpg"))
      const tree = git(project, "rev-parse", "HEAD^{tree}").stdout.trim()
      const parent = git(project, "rev-parse", "HEAD").stdout.trim()
      const signed = [
        `tree ${tree}`,
        `parent ${parent}`,
        "author t <t@t> 1 +0000",
        "committer t <t@t> 1 +0000",
        "gpgsig -----BEGIN PGP SIGNATURE-----",
        " ",
        " iQ==",
        " -----END PGP SIGNATURE-----",
        "",
        "signed",
        ""
      ].join("\n")
      const object = spawnSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], { cwd: project, input: signed })
      git(project, "update-ref", "HEAD", object.stdout.toString().trim())
      await dispatch(fixture, "default", [
        ["signature", "git log --show-signature -1"],
        ["placeholder", "git log -1 --format=%G?"],
        ["show", "git show --show-signature --stat HEAD"]
      ])
      expect(exists(path.join(project, "pwned-5"))).toBe(false)
    },
    TIMEOUT
  )

  it(
    "6. file arguments not seen as paths: @FILE, --opt=FILE and object ids do not read a denied file (default)",
    async () => {
      const fixture = makeFixture({ permissions: { deny: ["Read(./.env)", "Read(./secrets/**)"] } })
      const blob = git(fixture.project, "rev-parse", "HEAD:.env").stdout.trim()
      const keyBlob = git(fixture.project, "rev-parse", "HEAD:secrets/key.txt").stdout.trim()
      const results = await dispatch(fixture, "default", [
        ["strings", "strings @.env"],
        ["strings-secret", "strings @secrets/key.txt"],
        ["blame", "git blame --ignore-revs-file=.env a.txt"],
        ["blame-split", "git blame --ignore-revs-file .env a.txt"],
        ["cat-file", `git cat-file -p ${blob}`],
        ["cat-file-blob", `git cat-file blob ${keyBlob}`],
        ["pathspec", "git ls-files --pathspec-from-file=.env"]
      ])
      for (const [id, result] of results) {
        expect(result.content, id).not.toContain(SECRETS.env)
        expect(result.content, id).not.toContain(SECRETS.key)
      }
    },
    TIMEOUT
  )

  it(
    "7. a link followed by `..`: the kernel's path, not the lexical one, is judged (default, acceptEdits)",
    async () => {
      const fixture = makeFixture({
        permissions: { deny: ["Read(./secrets/**)", "Read(./.env)", "Edit(./.env)"] }
      })
      const { project } = fixture
      // `sub/LINK` is `other/dir`: `sub/LINK/../../project` is the project, lexically `project/project`.
      const reads = await dispatch(fixture, "default", [
        ["read", "cat sub/LINK/../../project/secrets/key.txt"],
        ["read-env", "head sub/LINK/../../project/.env"]
      ])
      for (const [id, result] of reads) {
        expect(result.content, id).not.toContain(SECRETS.key)
        expect(result.content, id).not.toContain(SECRETS.env)
      }
      await dispatch(fixture, "acceptEdits", [
        ["write", "echo planted > sub/LINK/../../project/.env"],
        // `sub/LINK/../../outside/o.txt` is outside the working directory.
        ["remove", "rm sub/LINK/../../outside/o.txt"],
        ["touch", "touch sub/LINK/../../outside/new.txt"]
      ])
      expect(read(path.join(project, ".env"))).toBe(`TOKEN=${SECRETS.env}\n`)
      expect(exists(path.join(fixture.outside, "o.txt"))).toBe(true)
      expect(exists(path.join(fixture.outside, "new.txt"))).toBe(false)
    },
    TIMEOUT
  )

  it("8. sed -i SUFFIX is a write path: no backup lands on a denied file or outside (acceptEdits)", async () => {
    const fixture = makeFixture({ permissions: { deny: ["Edit(./.env)", "Read(./.env)"] } })
    const { project, outside } = fixture
    write(path.join(project, "v"), "a\n")
    write(path.join(project, "w"), "a\n")
    await dispatch(fixture, "acceptEdits", [
      // The backup of `v` is `.en` + `v`: the denied `.env`.
      ["star", "sed -i'.en*' s/a/b/ v"],
      ["outside", `sed -i'${outside}/*' s/a/b/ w`],
      ["long", `sed --in-place='${outside}/x-*' s/a/b/ w`]
    ])
    expect(read(path.join(project, ".env"))).toBe(`TOKEN=${SECRETS.env}\n`)
    expect(fs.readdirSync(outside).sort()).toEqual(["o.txt"])
  }, TIMEOUT)

  it(
    "9. Bash(rm *) in bypassPermissions: wrappers with --, BASH_CMDS, fc, mapfile -C, PS4, env -S and links",
    async () => {
      const fixture = makeFixture({ permissions: { deny: ["Bash(rm *)"] } })
      const { project } = fixture
      const attacks = [
        "nice -n 5 -- rm VICTIM",
        "stdbuf -o0 -- rm VICTIM",
        "time -- rm VICTIM",
        "timeout 5 -- rm VICTIM",
        "BASH_CMDS[ls]=/bin/rm; ls VICTIM",
        "shopt -s expand_aliases; BASH_ALIASES[x]=rm; eval 'x VICTIM'",
        "set -o history; history -s 'rm VICTIM'; fc -s",
        "mapfile -C 'rm VICTIM #' -c 1 <<< x",
        "PS4='$(rm VICTIM)'; set -x; true",
        "env -S 'rm\\_VICTIM'",
        "ln -s /bin/rm ./x; ./x VICTIM",
        "cp /bin/rm ./y; ./y VICTIM",
        "PATH=.:$PATH; ln -s /bin/rm z; z VICTIM"
      ]
      const victims = attacks.map((_, index) => `victim-${index}`)
      for (const victim of victims) write(path.join(project, victim), "still here\n")
      await dispatch(
        fixture,
        "bypassPermissions",
        attacks.map((
          attack,
          index
        ): readonly [string, string] => [`a${index}`, attack.replaceAll("VICTIM", victims[index]!)])
      )
      const removed = attacks.filter((_, index) => !exists(path.join(project, victims[index]!)))
      expect(removed).toEqual([])
    },
    TIMEOUT
  )

  it("10. speculation does not run classes 1 and 7 on the real tree: no file changes, no denied content", async () => {
    const fixture = makeFixture({ permissions: { deny: ["Read(./secrets/**)"] } })
    const { project } = fixture
    write(path.join(project, "-i"), "")
    write(path.join(project, "victim.txt"), "one\ntwo\n")
    const transcript = path.join(fixture.root, "transcript.json")
    const bash = (id: string, command: string) => ({
      block: { type: "tool_use", id, name: "Bash", input: { command } }
    })
    fs.writeFileSync(
      transcript,
      JSON.stringify({
        turns: [
          { blocks: [bash("s1", "ls | xargs sed -n 1p")] },
          { blocks: [bash("s2", "cat sub/LINK/../../project/secrets/key.txt")] },
          { blocks: [{ block: { type: "text", text: "Done." } }] }
        ]
      })
    )
    for (const mode of ["default", "acceptEdits", "bypassPermissions"]) {
      const result = await runCli(
        [
          "speculate",
          "Look around",
          "--replay",
          transcript,
          "--cwd",
          project,
          "--output-format",
          "json",
          "--permission-mode",
          mode
        ],
        { env: { SWITCHYARD_HOME: fixture.state, HOME: fixture.home }, timeoutMs: 120_000 }
      )
      expect(result.stdout, `${mode}: ${result.stderr}`).not.toContain(SECRETS.key)
      expect(read(path.join(project, "victim.txt")), mode).toBe("one\ntwo\n")
    }
  }, TIMEOUT)
})

describe("exit codes that are answers (issue 20, item 4), through the CLI", () => {
  it(
    "grep with no match, diff of different files and a false test are results, not errors, and cancel nothing",
    async () => {
      const fixture = makeFixture({})
      const { project } = fixture
      write(path.join(project, "b.txt"), "beta\n")
      const results = await dispatch(
        fixture,
        "bypassPermissions",
        [
          ["slow", "sleep 1; echo ran > ran.txt"],
          ["grep", "grep nomatch a.txt"],
          ["rg", "rg nomatch a.txt"],
          ["pipe", "cat a.txt | grep -c nomatch"],
          ["diff", "diff a.txt b.txt"],
          ["test", "test -f missing.txt"],
          ["brackets", "[[ -d missing ]]"]
        ],
        { args: ["--scheduling", "greedy"] }
      )
      const failures = await dispatch(fixture, "bypassPermissions", [
        ["error", "grep -q x missing-file.txt"],
        ["negated", "! grep alpha a.txt"]
      ])
      const answer = (id: string) => {
        const result = results.get(id)!
        return [result.status, result.isError, result.content.split("\n").at(-1)]
      }
      expect(answer("grep")).toEqual(["success", false, "exit 1: no matches"])
      expect(answer("rg")).toEqual(["success", false, "exit 1: no matches"])
      expect(answer("pipe")).toEqual(["success", false, "exit 1: no matches"])
      expect(answer("diff")).toEqual(["success", false, "exit 1: files differ"])
      expect(answer("test")).toEqual(["success", false, "exit 1: false"])
      expect(answer("brackets")).toEqual(["success", false, "exit 1: false"])
      // grep's 2 is an error; a negated grep's 1 means it found something: an error like any other.
      expect(failures.get("error")!.isError).toBe(true)
      expect(failures.get("negated")!.isError).toBe(true)
      // Under the chapter's sibling cancellation, an answer cancelled nothing: the slow call finished.
      expect(results.get("slow")!.status).toBe("success")
      expect(read(path.join(project, "ran.txt"))).toBe("ran\n")
    },
    TIMEOUT
  )
})
