/**
 * Outside review of the git claim (`packages/tools/src/internal/shellGit.ts`,
 * `gitRepository.ts`, the Bash tool's check): "no Bash line whose git runs a
 * program that a repository's own files name runs without an ask — not
 * through the read-only set, not through narrow allow rules".
 *
 * Judged by effects: every line runs for real with `bash -c` in a throwaway
 * fixture, with the environment the Bash tool gives its shell
 * (`ShellProcess.gitSafety`); hostile repositories leave a mark when git runs
 * their program (`core.fsmonitor`, a `post-index-change` hook). A line that
 * left a mark must have been asked about by the chain with only the read-only
 * set, and by the chain with narrow rules (`Bash(git status:*)`,
 * `Bash(git diff:*)`, `Bash(cd:*)`, `Bash(ln -s:*)`); the tool's own check is reported beside.
 *
 * Held: the spellings the check follows (cd chains, pushd, subshells, braces,
 * `sh -c`, wrappers, `-C`) into a nested hostile repository. Gaps
 * (`it.effect.fails`, flipped when fixed), each where the check's model of git
 * differs from git's:
 * - paths: the check resolves `cd`/`-C`/`gitdir:` targets lexically; git (and
 *   the kernel) follow links first (`l -> ../evil/inner`, `l/..`);
 * - discovery: a `.git` directory git passes over (its HEAD is not a ref) is
 *   taken for the repository, hiding the one above;
 * - file values: `gitdir: X ` and `commondir` keep trailing blanks in git; a
 *   `core.hooksPath` value is parsed by git (`hooks # c`, `"ho"oks`);
 * - submodules: `git status` recurses into a gitlink the index holds, whether
 *   or not `.gitmodules` names it.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Tool, ToolUseContext } from "@switchyard/core"
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
import * as ShellProcess from "../packages/tools/src/internal/shellProcess.js"
import { runBash } from "../packages/tools/test/fixtures/runBash.js"
import { decide } from "./fixtures/permissionTools.js"

const hasGit = spawnSync("git", ["--version"]).status === 0
if (!hasGit) console.warn("attack-review-git.test.ts: git is not installed; skipped")

const git = (cwd: string, ...args: ReadonlyArray<string>) => {
  const result = spawnSync("git", [
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "-c",
    "init.defaultBranch=main",
    ...args
  ], { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} in ${cwd}: ${result.stderr}`)
  return result.stdout
}

const touched: Array<string> = []

/** A repository with a committed clean `c.txt` (touched before each run, so git refreshes the index) and a change. */
const repository = (dir: string) => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "f.txt"), "f\n")
  fs.writeFileSync(path.join(dir, "c.txt"), "c\n")
  git(dir, "init", "-q")
  git(dir, "add", "f.txt", "c.txt")
  git(dir, "commit", "-qm", "init")
  fs.writeFileSync(path.join(dir, "f.txt"), "changed\n")
  touched.push(path.join(dir, "c.txt"))
}

interface Fixture {
  readonly project: string
  readonly marks: string
  readonly home: string
}

const fsmonitor = (marks: string, name: string) => `touch ${marks}/${name}; false`

/**
 * A plain project (the session's directory) holding, beside its own plain
 * repository, what an unpacked download may hold: `vendor/evil` (a repository
 * with `core.fsmonitor`, with `inner/`, `deep/` and a `fake/.git` git passes
 * over), links into it, `.git` files and git directories whose names differ
 * by a trailing blank, hooks behind a `core.hooksPath` only git reads right,
 * and a superproject with a gitlink `.gitmodules` does not name.
 */
const makeFixture = (): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-review-git-")))
  const project = path.join(root, "project")
  const marks = path.join(root, "marks")
  const home = path.join(root, "home")
  fs.mkdirSync(marks)
  fs.mkdirSync(home)
  repository(project)
  fs.mkdirSync(path.join(project, "sub"))

  const evil = path.join(project, "vendor", "evil")
  repository(evil)
  git(evil, "config", "core.fsmonitor", fsmonitor(marks, "evil"))
  for (const dir of ["inner", "deep", "fake/.git/objects", "fake/.git/refs"]) {
    fs.mkdirSync(path.join(evil, dir), { recursive: true })
  }
  // HEAD is not a ref: git passes over this `.git` and uses vendor/evil's.
  fs.writeFileSync(path.join(evil, "fake", ".git", "HEAD"), "not a ref\n")
  // Links in the project into the hostile repository; `sub2/.git` names a git directory through one.
  fs.symlinkSync("vendor/evil/inner", path.join(project, "l"))
  fs.symlinkSync("../vendor/evil/deep", path.join(project, "sub", "in"))
  fs.mkdirSync(path.join(project, "sub2"))
  fs.writeFileSync(path.join(project, "sub2", ".git"), "gitdir: ../l/../.git\n")

  // `sp/.git` says `gitdir: ../w/plain ` (a trailing blank): git uses `w/plain `, a hostile copy of `w/plain`.
  const store = path.join(project, "w")
  const spaced = path.join(project, "sp")
  fs.mkdirSync(store)
  fs.mkdirSync(spaced)
  git(project, "init", "-q", "--separate-git-dir", path.join(store, "plain"), spaced)
  fs.writeFileSync(path.join(spaced, "s.txt"), "s\n")
  git(spaced, "add", "s.txt")
  git(spaced, "commit", "-qm", "s")
  fs.writeFileSync(path.join(spaced, "s.txt"), "changed\n")
  fs.cpSync(path.join(store, "plain"), path.join(store, "plain "), { recursive: true })
  git(project, "config", "-f", path.join(store, "plain ", "config"), "core.fsmonitor", fsmonitor(marks, "space"))
  fs.writeFileSync(path.join(spaced, ".git"), "gitdir: ../w/plain \n")
  // A worktree-style git directory whose `commondir` has a trailing blank (git keeps it).
  fs.cpSync(path.join(store, "plain"), path.join(store, "common"), { recursive: true })
  fs.cpSync(path.join(store, "plain "), path.join(store, "common "), { recursive: true })
  const worktreeDir = path.join(store, "worktree")
  fs.mkdirSync(worktreeDir)
  fs.copyFileSync(path.join(store, "plain", "HEAD"), path.join(worktreeDir, "HEAD"))
  fs.writeFileSync(path.join(worktreeDir, "commondir"), "../common \n")
  fs.mkdirSync(path.join(project, "wt"))
  fs.writeFileSync(path.join(project, "wt", "s.txt"), "changed\n")
  fs.writeFileSync(path.join(project, "wt", ".git"), `gitdir: ${worktreeDir}\n`)

  // `core.hooksPath` values git parses: an inline comment, a quote mid-value. The hooks are in `hooks/`.
  for (const [name, value] of [["hc", "hooks # where the hooks are"], ["hq", "\"ho\"oks"]] as const) {
    const dir = path.join(project, name)
    repository(dir)
    fs.appendFileSync(path.join(dir, ".git", "config"), `\thooksPath = ${value}\n`)
    fs.mkdirSync(path.join(dir, "hooks"))
    fs.writeFileSync(path.join(dir, "hooks", "post-index-change"), `#!/bin/sh\ntouch ${marks}/${name}\n`, {
      mode: 0o755
    })
  }

  // A superproject whose index holds a gitlink `m` (no .gitmodules), checked out with a hostile configuration.
  const superproject = path.join(project, "sup")
  repository(superproject)
  const module = path.join(superproject, "m")
  repository(module)
  git(module, "config", "core.fsmonitor", fsmonitor(marks, "gitlink"))
  const head = git(module, "rev-parse", "HEAD").trim()
  git(superproject, "update-index", "--add", "--cacheinfo", `160000,${head},m`)
  git(superproject, "commit", "-qm", "gitlink")
  // Configuration files a line can make git read as the user's own (`HOME=.`, `XDG_CONFIG_HOME=.`).
  fs.writeFileSync(path.join(project, ".gitconfig"), `[core]\n\tfsmonitor = ${fsmonitor(marks, "home")}\n`)
  fs.mkdirSync(path.join(project, "git"))
  fs.writeFileSync(path.join(project, "git", "config"), `[core]\n\tfsmonitor = ${fsmonitor(marks, "xdg")}\n`)
  return { project, marks, home }
}

let shared: Fixture | undefined
const fixture = () => (shared ??= makeFixture())

const Live = Layer.mergeAll(ShellCommand.layer, BackgroundShells.layer).pipe(Layer.provideMerge(NodeContext.layer))

const NARROW = ["Bash(git status:*)", "Bash(git diff:*)", "Bash(cd:*)", "Bash(ln -s:*)"]

/** Run `line` from `cwd` as the Bash tool's shell would, and the marks it left. */
const execute = (f: Fixture, line: string, cwd: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    for (const name of fs.readdirSync(f.marks)) fs.rmSync(path.join(f.marks, name))
    // A clean file with a new mtime: git refreshes (writes) the index, which runs a post-index-change hook.
    const now = Date.now() / 1000
    for (const file of touched) fs.utimesSync(file, now, now + Math.random() * 1000)
    const env = { ...process.env, HOME: f.home, ...ShellProcess.gitSafety(process.env) }
    yield* runBash(line, cwd, env)
    // Links a line made (`ln -s … made`) go, so the next line is judged as this one was.
    fs.rmSync(path.join(f.project, "made"), { force: true })
    return fs.readdirSync(f.marks)
  })

interface Case {
  /** The session's directory, relative to the project. */
  readonly cwd: string
  readonly line: string
}

/** What a case did: the marks it left, and who let it through without asking. */
const judge = (f: Fixture, { cwd: relative, line }: Case) =>
  Effect.gen(function*() {
    const cwd = path.resolve(f.project, relative)
    const check = yield* Bash.Bash.checkPermissions({ command: line }, ToolUseContext.make({ cwd, sessionId: "r" }))
    // The real Bash tool in the chain, its services provided (its check is what the claim is about).
    const bash = Tool.provideContext(Bash.Bash, yield* Effect.context<Tool.Requirements<typeof Bash.Bash>>())
    const readOnly = yield* decide({ cwd }, bash, { command: line })
    const narrow = yield* decide({ cwd, allow: NARROW }, bash, { command: line })
    const marks = yield* execute(f, line, cwd)
    const allowedBy = [
      ...(readOnly.outcome === "allow" ? ["the read-only set"] : []),
      ...(narrow.outcome === "allow" ? ["narrow rules"] : [])
    ]
    return { marks, allowedBy, check: check.behavior }
  }).pipe(Effect.provide(Live))

/** The cases that ran a repository's program though someone allowed them. */
const violations = (cases: ReadonlyArray<Case>) =>
  Effect.gen(function*() {
    const f = fixture()
    const found: Array<string> = []
    for (const c of cases) {
      const { allowedBy, check, marks } = yield* judge(f, c)
      if (marks.length > 0 && allowedBy.length > 0) {
        found.push(
          `from ${c.cwd}: ${c.line} ran ${marks.join(",")}; allowed by ${allowedBy.join(", ")} (check: ${check})`
        )
      }
    }
    return found
  })

const seed = Number(process.env["ATTACK_SEED"] ?? Math.floor(Math.random() * 2 ** 31))

/** `git` from `dir` the ways a line can get there: `cd` chains, pushd, a subshell, braces, a nested shell. */
const from = (dir: string, subcommand: string) =>
  FastCheck.constantFrom(
    `cd ${dir} && git ${subcommand}`,
    `cd ${dir}; git ${subcommand}`,
    `cd ${dir} && cd . && git ${subcommand}`,
    `pushd ${dir} >/dev/null && git ${subcommand}`,
    `(cd ${dir} && git ${subcommand})`,
    `{ cd ${dir}; git ${subcommand}; }`,
    `sh -c 'cd ${dir} && git ${subcommand}'`,
    `git -C ${dir} ${subcommand}`,
    `timeout 5 git -C ${dir} ${subcommand}`
  )

const casesFrom = (dirs: ReadonlyArray<string>, numRuns: number, offset: number): ReadonlyArray<Case> =>
  FastCheck.sample(
    FastCheck.tuple(FastCheck.constantFrom(...dirs), FastCheck.constantFrom("status", "status --short", "diff"))
      .chain(([dir, subcommand]) => from(dir, subcommand)),
    { numRuns, seed: seed + offset }
  ).map((line) => ({ cwd: ".", line }))

describe.skipIf(!hasGit)("review: the git a Bash line runs, judged by the marks it leaves", () => {
  it.effect("the oracle sees every class's program run", () =>
    Effect.gen(function*() {
      const f = fixture()
      const at = (cwd: string, line: string) => execute(f, line, path.resolve(f.project, cwd))
      expect(yield* at(".", "git status")).toEqual([])
      expect(yield* at(".", "cd vendor/evil && git status")).toEqual(["evil"])
      expect(yield* at(".", "cd l && git status")).toEqual(["evil"])
      expect(yield* at(".", "cd -P sub/in/.. && git status")).toEqual(["evil"])
      expect(yield* at(".", "cd vendor/evil/fake && git status")).toEqual(["evil"])
      expect(yield* at("sub2", "git status")).toEqual(["evil"])
      expect(yield* at("sp", "git status")).toEqual(["space"])
      expect(yield* at("wt", "git status")).toEqual(["space"])
      expect(yield* at("hc", "git status")).toEqual(["hc"])
      expect(yield* at("hq", "git status")).toEqual(["hq"])
      expect(yield* at("sup", "git status")).toEqual(["gitlink"])
      expect(yield* at(".", "ln -s vendor/evil/inner made && cd made && git status")).toEqual(["evil"])
    }))

  it.effect(`held: the spellings the check follows into a nested hostile repository ask (ATTACK_SEED=${seed})`, () =>
    Effect.gen(function*() {
      const cases = casesFrom(["vendor/evil", "vendor/evil/deep", "vendor/evil/inner", "sub/../vendor/evil"], 14, 0)
      expect(yield* violations(cases)).toEqual([])
    }))

  describe("the gaps the review found, closed", () => {
    // Why: `cd l` and `git -C l` are resolved with path.resolve, and discovery walks up the lexical path
    // (project/l → project/.git, plain); git's cwd is the link's target, and it walks up the physical path
    // (vendor/evil/inner → vendor/evil/.git). `l/..` is the target's parent for the kernel (`git -C`, `cd -P`).
    // Fix: resolve every start with realpath (fs.realPath, following links the way the kernel does: `..` after
    // a link is the target's parent) before `discover`, and `discover` from that physical path.
    it.effect(`paths through a link: cd l, git -C l, cd -P l/.. (ATTACK_SEED=${seed})`, () =>
      Effect.gen(function*() {
        const cases = [
          ...casesFrom(["l", "sub/in", "l/.", "sub/in/../../l"], 16, 1),
          { cwd: ".", line: "cd -P sub/in/.. && git status" },
          { cwd: ".", line: "cd sub && cd -P in/.. && git status" }
        ]
        expect(yield* violations(cases)).toEqual([])
      }))

    // Why: when the line is judged `made` does not exist (discovery from project/made finds project/.git);
    // the line makes it a link into vendor/evil before its git runs. Realpath at decision time cannot see it.
    // Fix: after a command that may make a link or a directory (`ln -s`, `cp -s`, `mkdir`, a redirection that
    // writes a `.git` file…), a later `cd`/`-C` into a place under what it made is unknown (ask).
    it.effect("a link the line makes, then cd into it (ln -s allowed by a rule)", () =>
      Effect.gen(function*() {
        expect(
          yield* violations([
            { cwd: ".", line: "ln -s vendor/evil/inner made && cd made && git status" },
            { cwd: ".", line: "ln -s vendor/evil/deep made; cd made; git diff" }
          ])
        ).toEqual([])
      }))

    // Why: `gitdir: ../l/../.git` is resolved lexically (project/.git); git resolves it physically (evil/.git).
    // The read-only set allows plain `git status` there. Fix: as above, realpath the gitdir (and commondir).
    it.effect("a .git file whose gitdir has .. after a link (read-only git status)", () =>
      Effect.gen(function*() {
        expect(yield* violations([{ cwd: "sub2", line: "git status" }, { cwd: ".", line: "cd sub2 && git status" }]))
          .toEqual([])
      }))

    // Why: `isGitDirectory` wants HEAD, objects and refs to exist; git also wants HEAD to be a ref or an object
    // id (setup.c validate_headref), and passes over this `.git`, to vendor/evil/.git. Fix: read HEAD as git
    // does ("ref: refs/…" or a hex id; a symlink into refs/), or, failing closed, keep walking up and examine
    // every repository above a `.git` the check is not sure git takes.
    it.effect("a .git directory git passes over (HEAD not a ref) hides the repository above", () =>
      Effect.gen(function*() {
        expect(
          yield* violations([
            { cwd: "vendor/evil/fake", line: "git status" },
            { cwd: ".", line: "cd vendor/evil/fake && git status" }
          ])
        ).toEqual([])
      }))

    // Why: git reads a gitfile as "gitdir: " + the rest, trimming only \n and \r (setup.c read_gitfile_gently);
    // commondir likewise (get_common_dir_noenv). The check's `/^gitdir:\s*(.+?)\s*$/m` and `.trim()` drop the
    // blanks (and `m` takes any line). Fix: parse exactly as git: the file must start with "gitdir: ", the path
    // is everything after it with trailing CR/LF removed; commondir: trailing CR/LF removed only.
    it.effect("gitdir: and commondir values with a trailing blank (read-only git status)", () =>
      Effect.gen(function*() {
        expect(yield* violations([{ cwd: "sp", line: "git status" }, { cwd: "wt", line: "git status" }])).toEqual([])
      }))

    // Why: hookEntry takes the raw text after `=` (stripping only surrounding quotes): `hooks # where…` and
    // `"ho"oks` name no directory, so no hook is found; git parses the value (inline comment dropped, quotes
    // removed mid-value) to `hooks`. Fix: parse values as git does (quotes anywhere, `\` escapes, `#`/`;`
    // comments outside quotes), or fail closed on a hooksPath value with a quote, `#`, `;` or `\`.
    it.effect("core.hooksPath values git parses differently (read-only git status)", () =>
      Effect.gen(function*() {
        expect(yield* violations([{ cwd: "hc", line: "git status" }, { cwd: "hq", line: "git status" }])).toEqual([])
      }))

    // Why: programEntry examines submodules under .git/modules and the paths `.gitmodules` names; git status
    // recurses into every populated gitlink in the index. Fix: list the index's gitlinks (mode 160000; or fail
    // closed when the index holds any gitlink) and examine each populated one's `.git`.
    it.effect("a gitlink .gitmodules does not name (read-only git status)", () =>
      Effect.gen(function*() {
        expect(yield* violations([{ cwd: "sup", line: "git status" }])).toEqual([])
      }))

    // The tool's own check (defence in depth: the chain asks for these today only because no narrow rule
    // matches them). Why: the check follows GIT_* variables, a fixed wrapper list and nested lines given as a
    // word; git also reads HOME's and XDG_CONFIG_HOME's configuration, bash's cd follows CDPATH, `hash -p`
    // names git otherwise, a shell reads its script from a here-string, and strace/fish run git too.
    // Fix: treat HOME, XDG_CONFIG_HOME, CDPATH (and PATH) assignments/exports like GIT_*; `hash`, a shell with
    // a here-string or stdin script, and any unknown program whose words mention git as unknown.
    it.effect("the tool's check asks for every line that ran a repository's program", () =>
      Effect.gen(function*() {
        const f = fixture()
        const allowed: Array<string> = []
        for (
          const line of [
            "HOME=. git status",
            "XDG_CONFIG_HOME=. git status",
            "export HOME=$PWD; git status",
            "CDPATH=vendor/evil cd deep && git status",
            "hash -p /usr/bin/git ls; cd vendor/evil; ls status",
            "bash <<< 'cd vendor/evil && git status'",
            "fish -c 'cd vendor/evil; git status'",
            "strace -o /dev/null git -C vendor/evil status"
          ]
        ) {
          const check = yield* Bash.Bash.checkPermissions(
            { command: line },
            ToolUseContext.make({ cwd: f.project, sessionId: "r" })
          ).pipe(Effect.provide(Live))
          const marks = yield* execute(f, line, f.project)
          if (marks.length > 0 && check.behavior === "allow") allowed.push(`${line} ran ${marks.join(",")}`)
        }
        expect(allowed).toEqual([])
      }))
  })
})
