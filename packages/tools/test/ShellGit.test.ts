/**
 * The Bash tool's check of the git a line runs (`internal/shellGit.ts`),
 * judged by an execution oracle: generated lines run for real with `bash -c`
 * in a fixture where repositories beside the project have a `core.fsmonitor`
 * that leaves a mark, with the environment the Bash tool gives its shell. A
 * line that left a mark ran a program a repository's configuration named; the
 * property is that the tool's check asked for every such line. Lines that stay
 * in the project's own plain repository must not ask (the check must not make
 * every git command a question).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { ToolUseContext } from "@switchyard/core"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as GitRepository from "../src/internal/gitRepository.js"
import * as ShellProcess from "../src/internal/shellProcess.js"
import { runBash } from "./fixtures/runBash.js"

const git = (cwd: string, ...args: ReadonlyArray<string>) => {
  const result = spawnSync("git", [
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "-c",
    "init.defaultBranch=main",
    ...args
  ], {
    cwd,
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} in ${cwd}: ${result.stderr}`)
  return result.stdout
}

const hasGit = spawnSync("git", ["--version"]).status === 0
if (!hasGit) console.warn("ShellGit.test.ts: git is not installed; the git checks are skipped")

interface Fixture {
  readonly root: string
  readonly project: string
  readonly marks: string
  readonly home: string
}

const fsmonitor = (marks: string, name: string) => `touch ${marks}/${name}; false`

/**
 * A plain project repository (with `sub/` and `deep/` in it), and repositories
 * whose configuration runs a program: `lib` and `deep/er` embedded in the
 * project, `../outside` beside it, and `vendor/evil.git` (bare, reached only by
 * `--git-dir`); and `tools`, whose `post-index-change` hook runs.
 */
const makeFixture = (): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-shellgit-")))
  const project = path.join(root, "project")
  const marks = path.join(root, "marks")
  const home = path.join(root, "home")
  for (const dir of [project, marks, home, path.join(project, "sub"), path.join(project, "deep")]) {
    fs.mkdirSync(dir, { recursive: true })
  }
  fs.writeFileSync(path.join(project, "a.txt"), "a\n")
  git(project, "init", "-q")
  git(project, "add", "a.txt")
  git(project, "commit", "-qm", "init")
  fs.writeFileSync(path.join(project, "a.txt"), "changed\n")
  for (const [dir, mark] of [["project/lib", "lib"], ["project/deep/er", "er"], ["outside", "outside"]] as const) {
    const repository = path.join(root, dir)
    fs.mkdirSync(repository, { recursive: true })
    fs.writeFileSync(path.join(repository, "f.txt"), "f\n")
    git(repository, "init", "-q")
    git(repository, "add", "f.txt")
    git(repository, "commit", "-qm", "init")
    git(repository, "config", "core.fsmonitor", fsmonitor(marks, mark))
  }
  // A repository whose configuration is plain, with a hook `git status` runs when it refreshes the index.
  const hooked = path.join(project, "tools")
  fs.mkdirSync(hooked)
  fs.writeFileSync(path.join(hooked, "t.txt"), "t\n")
  git(hooked, "init", "-q")
  git(hooked, "add", "t.txt")
  git(hooked, "commit", "-qm", "init")
  fs.writeFileSync(path.join(hooked, ".git", "hooks", "post-index-change"), `#!/bin/sh\ntouch ${marks}/hook\n`, {
    mode: 0o755
  })
  const bare = path.join(project, "vendor", "evil.git")
  fs.mkdirSync(bare, { recursive: true })
  git(bare, "init", "-q", "--bare")
  git(bare, "config", "core.bare", "false")
  git(bare, "config", "core.worktree", "../..")
  git(bare, "config", "core.fsmonitor", fsmonitor(marks, "bare"))
  return { root, project, marks, home }
}

/** What the execution oracle's runs did: how many lines ran, and how many ran a repository's program. */
const generated = { runs: 0, ranPrograms: 0 }

let shared: Fixture | undefined
const fixture = () => (shared ??= makeFixture())

const Live = Layer.mergeAll(ShellCommand.layer, BackgroundShells.layer).pipe(Layer.provideMerge(NodeContext.layer))

/** The Bash tool's own check of `command` run from `cwd`. */
const checkOf = (command: string, cwd: string) =>
  Bash.Bash.checkPermissions({ command }, ToolUseContext.make({ cwd, sessionId: "shellgit-test" })).pipe(
    Effect.provide(Live)
  )

/**
 * Give a tracked file a new modification time, its content unchanged: the next index refresh (`git status`)
 * then rewrites the index, and so runs a `post-index-change` hook — every time, not only the first.
 */
let stamp = 1_000_000_000
const touchStat = (file: string) => {
  stamp += 7
  fs.utimesSync(file, stamp, stamp)
}

/** Run `command` as the Bash tool's shell would (its git safety environment), and the marks it left. */
const execute = (f: Fixture, command: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    for (const name of fs.readdirSync(f.marks)) fs.rmSync(path.join(f.marks, name))
    touchStat(path.join(f.project, "tools", "t.txt"))
    const env = { ...process.env, HOME: f.home, ...ShellProcess.gitSafety(process.env) }
    yield* runBash(command, f.project, env)
    return fs.readdirSync(f.marks)
  })

const HOSTILE_DIRS = ["lib", "deep/er", "../outside", "deep/er/..//er", "lib/../lib", "tools"]
const PLAIN_DIRS = [".", "sub", "deep", "lib/..", "deep/er/.."]
const SUBCOMMANDS = ["status", "status --short", "diff", "diff --stat", "ls-files", "log -1 --oneline"]

/** Generated lines that run git, from directories in `dirs` (and `--git-dir` when `hostile`). */
const lines = (dirs: ReadonlyArray<string>, hostile: boolean) => {
  const dir = FastCheck.constantFrom(...dirs)
  const globals = FastCheck.oneof(
    FastCheck.constant(""),
    FastCheck.constant(" --no-pager"),
    FastCheck.constant(" -c color.ui=never"),
    dir.map((d) => ` -C ${d}`),
    FastCheck.tuple(dir, dir).map(([a, b]) => ` -C ${a} -C ${b}`),
    ...(hostile ? [FastCheck.constant(" --git-dir=vendor/evil.git")] : [])
  )
  const call = FastCheck.tuple(globals, FastCheck.constantFrom(...SUBCOMMANDS)).map(([g, s]) => `git${g} ${s}`)
  const wrapped = FastCheck.oneof(
    call,
    call.map((c) => `env FOO=1 ${c}`),
    call.map((c) => `timeout 5 ${c}`),
    call.map((c) => `nice ${c}`),
    call.map((c) => `command ${c}`),
    call.map((c) => `sh -c '${c}'`),
    FastCheck.tuple(dir, call).map(([d, c]) => `bash -c 'cd ${d} && ${c}'`),
    call.map((c) => `find . -maxdepth 0 -exec ${c} \\;`),
    FastCheck.tuple(dir, call).map(([d, c]) => `(cd ${d} && ${c})`),
    FastCheck.tuple(dir, call).map(([d, c]) => `{ cd ${d}; ${c}; }`),
    FastCheck.tuple(dir, call).map(([d, c]) => `pushd ${d} >/dev/null && ${c}`),
    ...(hostile
      ? [
        dir.map((d) => `echo ${d} | xargs git status -C`),
        dir.map((d) => `echo -C ${d} | xargs git`),
        call.map((c) => `GIT_DIR=vendor/evil.git ${c}`),
        call.map((c) => `env GIT_DIR=vendor/evil.git ${c}`),
        dir.map((d) => `find ${d} -maxdepth 0 -execdir git status \;`),
        dir.map((d) => `find ${d} -maxdepth 0 -exec git -C {} status \;`)
      ]
      : [])
  )
  const step = FastCheck.oneof(
    dir.map((d) => `cd ${d}`),
    FastCheck.constant("true"),
    FastCheck.constant("ls >/dev/null")
  )
  return FastCheck.tuple(
    FastCheck.array(step, { maxLength: 2 }),
    FastCheck.constantFrom(" && ", "; "),
    wrapped
  ).map(([steps, separator, last]) => [...steps, last].join(separator))
}

describe.skipIf(!hasGit)("ShellGit: the git a Bash line runs", () => {
  it.effect("the oracle sees the attack: git status in a repository with core.fsmonitor runs its program", () =>
    Effect.gen(function*() {
      const f = fixture()
      expect(yield* execute(f, "git -C lib status")).toEqual(["lib"])
      expect(yield* execute(f, "cd ../outside && git diff")).toEqual(["outside"])
      expect(yield* execute(f, "git --git-dir=vendor/evil.git status")).toEqual(["bare"])
      expect(yield* execute(f, "git -C tools status")).toEqual(["hook"])
      // The project itself is plain: nothing runs.
      expect(yield* execute(f, "git status && git diff")).toEqual([])
      // A bare repository is found only when named (the shell's safe.bareRepository=explicit).
      expect(yield* execute(f, "cd vendor/evil.git && git status")).toEqual([])
    }))

  it.effect("asks for git in a repository whose configuration runs a program, naming the file and entry", () =>
    Effect.gen(function*() {
      const f = fixture()
      const check = yield* checkOf("git -C lib status", f.project)
      expect(check.behavior).toBe("ask")
      expect(check.behavior === "ask" && check.message).toContain(`${f.project}/lib/.git/config`)
      expect(check.behavior === "ask" && check.message).toContain("`core.fsmonitor`")
      expect((yield* checkOf("git status", path.join(f.project, "lib"))).behavior).toBe("ask")
      expect((yield* checkOf("cd deep/er && git log -1", f.project)).behavior).toBe("ask")
      // Not only git: any line naming git through a wrapper or a nested line.
      expect((yield* checkOf("timeout 5 git -C ../outside status", f.project)).behavior).toBe("ask")
      expect((yield* checkOf("sh -c 'cd lib; git status'", f.project)).behavior).toBe("ask")
      // Places known only at run time ask in any repository.
      expect((yield* checkOf("echo lib | xargs git -C", f.project)).behavior).toBe("ask")
      expect((yield* checkOf("cd - && git status", f.project)).behavior).toBe("ask")
      expect((yield* checkOf("GIT_DIR=vendor/evil.git git status", f.project)).behavior).toBe("ask")
      // The plain project, and lines that only mention git, do not ask.
      for (const line of ["git status", "cd sub && git diff", "grep -rn git .", "find . -name git", "cat .gitignore"]) {
        expect((yield* checkOf(line, f.project)).behavior, line).toBe("allow")
      }
    }))

  it.effect.prop(
    "every generated line that ran a repository's program was asked about (execution oracle)",
    [lines([...HOSTILE_DIRS, ...PLAIN_DIRS], true)],
    ([line]) =>
      Effect.gen(function*() {
        const f = fixture()
        const check = yield* checkOf(line, f.project)
        const marks = yield* execute(f, line)
        generated.runs++
        if (marks.length > 0) generated.ranPrograms++
        if (marks.length > 0) expect(check.behavior, `${line} ran ${marks.join(", ")}`).toBe("ask")
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it("the generated lines reached the repositories' programs often enough to prove something", () => {
    expect(generated.runs).toBeGreaterThanOrEqual(150)
    expect(generated.ranPrograms / generated.runs).toBeGreaterThan(0.05)
  })

  it.effect.prop(
    "lines that stay in the project's plain repository do not ask",
    [lines(PLAIN_DIRS, false)],
    ([line]) =>
      Effect.gen(function*() {
        const check = yield* checkOf(line, fixture().project)
        expect(check.behavior, line).toBe("allow")
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("a post-index-change hook (git status runs it) and alternates ask; core.hooksPath is followed", () =>
    Effect.gen(function*() {
      const f = fixture()
      const hooked = path.join(f.root, "hooked")
      fs.mkdirSync(hooked)
      fs.writeFileSync(path.join(hooked, "h.txt"), "h\n")
      git(hooked, "init", "-q")
      git(hooked, "add", "h.txt")
      git(hooked, "commit", "-qm", "h")
      expect((yield* checkOf("git status", hooked)).behavior).toBe("allow")
      const hook = path.join(hooked, ".git", "hooks", "post-index-change")
      fs.writeFileSync(hook, `#!/bin/sh\ntouch ${f.marks}/hook\n`, { mode: 0o755 })
      touchStat(path.join(hooked, "h.txt"))
      for (const name of fs.readdirSync(f.marks)) fs.rmSync(path.join(f.marks, name))
      const env = { ...process.env, HOME: f.home, ...ShellProcess.gitSafety(process.env) }
      spawnSync("git", ["status"], { cwd: hooked, env, stdio: "ignore" })
      expect(fs.readdirSync(f.marks)).toEqual(["hook"])
      const check = yield* checkOf("git status", hooked)
      expect(check.behavior === "ask" && check.message).toContain(`${hook}, whose entry \`the post-index-change hook\``)
      // Hooks moved by core.hooksPath (relative to the work tree) are the ones examined.
      fs.rmSync(hook)
      git(hooked, "config", "core.hooksPath", ".githooks")
      expect((yield* checkOf("git status", hooked)).behavior).toBe("allow")
      fs.mkdirSync(path.join(hooked, ".githooks"))
      fs.writeFileSync(path.join(hooked, ".githooks", "post-index-change"), "#!/bin/sh\n", { mode: 0o755 })
      expect((yield* checkOf("git status", hooked)).behavior).toBe("ask")
      git(hooked, "config", "--unset", "core.hooksPath")
      fs.mkdirSync(path.join(hooked, ".git", "objects", "info"), { recursive: true })
      fs.writeFileSync(path.join(hooked, ".git", "objects", "info", "alternates"), `${f.project}/.git/objects\n`)
      const alternates = yield* checkOf("git log -1", hooked)
      expect(alternates.behavior === "ask" && alternates.message).toContain("objects/info/alternates")
    }))

  it.effect("submodules: a configuration under .git/modules, or in a submodule's own .git, is examined", () =>
    Effect.gen(function*() {
      const f = fixture()
      const source = path.join(f.root, "libsource")
      fs.mkdirSync(source, { recursive: true })
      fs.writeFileSync(path.join(source, "s.txt"), "s\n")
      git(source, "init", "-q")
      git(source, "add", "s.txt")
      git(source, "commit", "-qm", "s")
      const superproject = path.join(f.root, "super")
      fs.mkdirSync(superproject)
      git(superproject, "init", "-q")
      git(superproject, "-c", "protocol.file.allow=always", "submodule", "add", "-q", source, "mod")
      git(superproject, "commit", "-qm", "with a submodule")
      // A plain submodule: its git directory's `core.worktree` names its tree, and nothing asks.
      expect((yield* checkOf("git status", superproject)).behavior).toBe("allow")
      // `git status` recurses into the submodule, whose configuration then runs a program.
      git(path.join(superproject, "mod"), "config", "core.fsmonitor", fsmonitor(f.marks, "module"))
      fs.writeFileSync(path.join(superproject, "mod", "s.txt"), "changed\n")
      const env = { ...process.env, HOME: f.home, ...ShellProcess.gitSafety(process.env) }
      for (const name of fs.readdirSync(f.marks)) fs.rmSync(path.join(f.marks, name))
      spawnSync("git", ["status"], { cwd: superproject, env, stdio: "ignore" })
      expect(fs.readdirSync(f.marks)).toEqual(["module"])
      const check = yield* checkOf("git status", superproject)
      expect(check.behavior === "ask" && check.message).toContain(`${superproject}/.git/modules/mod/config`)
    }))
})

describe("GitRepository: which configuration entries are plain", () => {
  const permission: GitRepository.Reading = { reader: "permission", place: "repository" }
  it("knows git init's own entries, remotes and branches, and names the first entry it does not know", () => {
    const init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
    expect(GitRepository.unknownEntry(init)).toBeUndefined()
    const remote = `${init}[remote "origin"]\n\turl = git@x:y.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n` +
      `[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n`
    expect(GitRepository.unknownEntry(remote)).toBeUndefined()
    expect(GitRepository.unknownEntry(`${init}\tfsmonitor = "touch x"\n`)).toBe("core.fsmonitor")
    expect(GitRepository.unknownEntry(`${init}[diff "bin"]\n\ttextconv = ./x\n`)).toBe("diff.\"bin\".textconv")
    // A driver's subsection is not the plain section's: `[diff "x"] algorithm` names a driver.
    expect(GitRepository.unknownEntry(`[diff "x"]\n\talgorithm = histogram\n`)).toBe("diff.\"x\".algorithm")
    expect(GitRepository.unknownEntry(`[diff]\n\talgorithm = histogram\n`)).toBeUndefined()
    expect(GitRepository.unknownEntry(`[remote]\n\turl = x\n`)).toBe("remote.url")
    expect(GitRepository.unknownEntry(`[include]\n\tpath = ../x\n`)).toBe("include.path")
    // What the scanner cannot read plainly fails closed.
    expect(GitRepository.unknownEntry(`[core]\n\tabbrev = 7 \\\n fsmonitor = x\n`)).toBe(
      "a line it cannot read plainly"
    )
    expect(GitRepository.unknownEntry(`[core.x]\n\tabbrev = 7\n`)).toBe("a line it cannot read plainly")
    expect(GitRepository.unknownEntry(`[core] fsmonitor = x\n`)).toBe("a line it cannot read plainly")
  })

  it("Git LFS's standard filter is plain for the permission check only, and only with its exact commands", () => {
    const lfs = `[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n` +
      `\tprocess = git-lfs filter-process\n\trequired = true\n[lfs]\n\trepositoryformatversion = 0\n`
    expect(GitRepository.unknownEntry(lfs, permission)).toBeUndefined()
    expect(GitRepository.unknownEntry(lfs)).toBe("filter.\"lfs\".clean")
    const changed = lfs.replace("git-lfs clean -- %f", "git-lfs clean -- %f && touch x")
    expect(GitRepository.unknownEntry(changed, permission)).toBe("filter.\"lfs\".clean")
    // core.fsmonitor = true is git's own daemon (a footprint cannot bound it); a program is a program.
    expect(GitRepository.unknownEntry("[core]\n\tfsmonitor = true\n", permission)).toBeUndefined()
    expect(GitRepository.unknownEntry("[core]\n\tfsmonitor = true\n")).toBe("core.fsmonitor")
    expect(GitRepository.unknownEntry("[core]\n\tfsmonitor = .git/hooks/fsmonitor-watchman\n", permission))
      .toBe("core.fsmonitor")
    // A submodule's git directory names its work tree; a repository's own `core.worktree` is another tree.
    expect(GitRepository.unknownEntry("[core]\n\tworktree = ../../../mod\n", permission)).toBe("core.worktree")
    expect(GitRepository.unknownEntry("[core]\n\tworktree = ../../../mod\n", { ...permission, place: "submodule" }))
      .toBeUndefined()
  })
})
