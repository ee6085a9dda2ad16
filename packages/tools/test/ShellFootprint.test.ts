import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Batches, DispatchEvent, Execution, Footprint, Messages, StreamingExecutor } from "@switchyard/core"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Read from "@switchyard/tools/Read"
import * as Write from "@switchyard/tools/Write"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { execFileSync } from "node:child_process"
import { makeContext, tempDir, toolsLayer } from "./fixtures/toolHarness.js"

const Tools = toolsLayer(
  Layer.mergeAll(Bash.layer, Read.layer, Write.layer).pipe(Layer.provideMerge(BackgroundShells.layer))
)

const footprintOf = (env: Execution.Environment, input: unknown) =>
  Effect.flatMap(Ref.get(env.context), (context) =>
    Effect.map(
      Batches.classify(Messages.toolUse("x", "Bash", input), env, context, "footprints"),
      (c) => c.footprint
    ))

/** A temp dir as the context's cwd, and the footprint of a command run there. */
const setup = Effect.gen(function*() {
  const dir = yield* tempDir
  const env = yield* Execution.makeEnvironment(yield* makeContext(dir))
  return { dir, env, of: (command: string) => footprintOf(env, { command }) }
})

describe("Bash footprint (issue 15)", () => {
  it.scoped("redirection targets and the path arguments of the writers are written", () =>
    Effect.gen(function*() {
      const { dir, of } = yield* setup
      expect(yield* of("echo x > b")).toEqual({ writes: [`${dir}/b`] })
      expect(yield* of("printf x >> out.txt")).toEqual({ writes: [`${dir}/out.txt`] })
      expect(yield* of("mkdir d")).toEqual({ writes: [`${dir}/d`] })
      expect(yield* of("touch a b")).toEqual({ writes: [`${dir}/a`, `${dir}/b`] })
      expect(yield* of("rm c")).toEqual({ writes: [`${dir}/c`] })
      expect(yield* of("rm -r d")).toEqual({ writes: [`${dir}/d/**`] })
      expect(yield* of("rmdir d")).toEqual({ writes: [`${dir}/d`] })
      expect((yield* of("mv a b")).writes).toEqual([`${dir}/a/**`, `${dir}/b/**`])
      const cp = yield* of("cp -r src dst")
      expect(cp).toEqual({ reads: [`${dir}/src/**`], writes: [`${dir}/dst/**`] })
      expect(yield* of("echo hi | tee out")).toEqual({ writes: [`${dir}/out`] })
      expect(yield* of("truncate -s 0 f")).toEqual({ writes: [`${dir}/f`] })
      expect(yield* of("sed -i s/a/b/ f")).toEqual({ writes: [`${dir}/f`] })
      // Making a link changes what other paths mean: a barrier (issue 20).
      expect(yield* of("ln -s a b")).toEqual(Footprint.writesEverything)
      expect(yield* of("cp -s a b")).toEqual(Footprint.writesEverything)
      expect(yield* of(`mkdir ${dir}/where`)).toEqual({ writes: [`${dir}/where`] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("a write under a missing directory writes the outermost missing directory: it may create it", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, of } = yield* setup
      expect(yield* of("mkdir -p d/e/f")).toEqual({ writes: [`${dir}/d`] })
      expect(yield* of("touch d/f")).toEqual({ writes: [`${dir}/d`] })
      expect(yield* of("echo x > d/e/out")).toEqual({ writes: [`${dir}/d`] })
      yield* fs.makeDirectory(`${dir}/d`)
      expect(yield* of("mkdir -p d/e/f")).toEqual({ writes: [`${dir}/d/e`] })
      expect(yield* of("touch d/f")).toEqual({ writes: [`${dir}/d/f`] })
      // So `touch d/f` conflicts with an earlier `mkdir -p d/e`, whose success it depends on.
      yield* fs.remove(`${dir}/d`, { recursive: true })
      expect(Footprint.conflict(yield* of("mkdir -p d/e"), yield* of("touch d/f"))).toBe(`writes ${dir}/d`)
    }).pipe(Effect.provide(Tools)))

  it.scoped("read-only programs read their file arguments; recursive ones and bare ls/find/rg a subtree", () =>
    Effect.gen(function*() {
      const { dir, of } = yield* setup
      // `test`, `[ ]` and `[[ ]]` read the files their operators name (issue 20).
      expect(yield* of("[[ -f x ]]")).toEqual({ reads: [`${dir}/x`] })
      expect(yield* of("[ a -nt b ] && test -d c")).toEqual({ reads: [`${dir}/a`, `${dir}/b`, `${dir}/c`] })
      expect(yield* of("cat a")).toEqual({ reads: [`${dir}/a`] })
      expect(yield* of("cat < a")).toEqual({ reads: [`${dir}/a`] })
      expect(yield* of("grep x a sub/b")).toEqual({ reads: [`${dir}/a`, `${dir}/sub/b`] })
      expect(yield* of("grep -r x sub")).toEqual({ reads: [`${dir}/sub/**`] })
      for (const command of ["ls", "find", "grep -r x"]) {
        expect(yield* of(command)).toEqual({ reads: [`${dir}/**`] })
      }
      // rg also reads the ignore files of every parent directory: not proven, so a barrier (issue 20).
      expect(yield* of("rg x")).toEqual(Footprint.writesEverything)
      // Reads and writes together: `sort a > b`.
      expect(yield* of("sort a > b")).toEqual({ reads: [`${dir}/a`], writes: [`${dir}/b`] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("sleep, true, false, :, exit N, and echo/printf without redirection touch nothing", () =>
    Effect.gen(function*() {
      const { of } = yield* setup
      for (const command of ["sleep 1", "true", "false", ":", "exit 3", "exit", "echo hi", "printf '%s' x"]) {
        expect(yield* of(command), command).toEqual(Footprint.none)
      }
      expect(yield* of("sleep 1; true && echo done || exit 1")).toEqual(Footprint.none)
    }).pipe(Effect.provide(Tools)))

  it.scoped("a compound command's footprint is the union of its parts", () =>
    Effect.gen(function*() {
      const { dir, of } = yield* setup
      expect(yield* of("mkdir d && cat a | grep x > d/out; rm -r old")).toEqual({
        reads: [`${dir}/a`],
        writes: [`${dir}/d`, `${dir}/old/**`]
      })
      expect(yield* of("(cat a; cat a) && { echo x > b; }")).toEqual({ reads: [`${dir}/a`], writes: [`${dir}/b`] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("anything else writes *: unknown programs, unresolvable paths, cd, substitutions, assignments", () =>
    Effect.gen(function*() {
      const { of } = yield* setup
      for (
        const command of [
          "python3 script.py",
          "make",
          "cat a && node x.js",
          "cat *.ts",
          "rm -r $DIR",
          "echo x > \"$OUT\"",
          "cat {a,b}",
          "cd d",
          "cd d && cat a",
          "cat $(ls)",
          "echo `rm a`",
          "diff <(cat a) b",
          "PATH=/tmp ls",
          "X=1; cat a",
          "cat ~/notes",
          "[[ -f $x ]]",
          "[ -e \"$x\" ] && echo y",
          "exit $CODE",
          "find . | xargs rm",
          "ls &&& ls"
        ]
      ) expect(yield* of(command), command).toEqual(Footprint.writesEverything)
      // Background commands outlive the call, so nothing bounds what they touch.
      expect(yield* footprintOf((yield* setup).env, { command: "sleep 1", run_in_background: true }))
        .toEqual(Footprint.writesEverything)
    }).pipe(Effect.provide(Tools)))

  it.scoped("input that fails to decode writes *", () =>
    Effect.gen(function*() {
      const { env } = yield* setup
      expect(yield* footprintOf(env, { command: 42 })).toEqual(Footprint.writesEverything)
      expect(yield* footprintOf(env, {})).toEqual(Footprint.writesEverything)
    }).pipe(Effect.provide(Tools)))

  it.scoped("paths are relative to the context's cwd and canonical, through symlinks", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir } = yield* setup
      yield* fs.makeDirectory(`${dir}/work/real`, { recursive: true })
      yield* fs.writeFileString(`${dir}/work/real/a.txt`, "one\n")
      yield* fs.symlink(`${dir}/work/real`, `${dir}/work/link`)
      yield* fs.symlink(`${dir}/work/real/a.txt`, `${dir}/work/alias.txt`)
      const env = yield* Execution.makeEnvironment(yield* makeContext(`${dir}/work`))
      // The link on the way is read too: what `link/a.txt` means depends on it (`rm link` changes it), and so
      // is the directory it leads to (`mkdir -p` enters it).
      expect(yield* footprintOf(env, { command: "echo two > link/a.txt" })).toEqual({
        reads: [`${dir}/work/link`, `${dir}/work/real`],
        writes: [`${dir}/work/real/a.txt`]
      })
      expect(yield* footprintOf(env, { command: "cat ../work/link/a.txt" })).toEqual({
        reads: [`${dir}/work/real/a.txt`, `${dir}/work/link`, `${dir}/work/real`]
      })
      const rmLink = yield* footprintOf(env, { command: "rm link" })
      expect(Footprint.conflict(rmLink, yield* footprintOf(env, { command: "mkdir -p link/sub" }))).not.toBeUndefined()
      // A command on the link itself touches the link's entry as well as its target.
      expect(yield* footprintOf(env, { command: "rm alias.txt" })).toEqual({
        writes: [`${dir}/work/real/a.txt`, `${dir}/work/alias.txt`]
      })
      const write = yield* footprintOf(env, { command: "echo two > link/a.txt" })
      const read = yield* Batches.classify(
        Messages.toolUse("r", "Read", { file_path: `${dir}/work/alias.txt` }),
        env,
        yield* Ref.get(env.context),
        "footprints"
      )
      expect(Footprint.conflict(write, read.footprint)).toBe(`writes ${dir}/work/real/a.txt`)
    }).pipe(Effect.provide(Tools)))

  it.scoped("a path through /proc/self or /proc/<pid> means the command's process: a barrier (oracle)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, of } = yield* setup
      yield* fs.writeFileString(`${dir}/a.txt`, "one\n")
      yield* fs.symlink("/proc/self/cwd", `${dir}/here`)
      yield* fs.symlink("here", `${dir}/again`)
      // Resolved here, `/proc/self/cwd` would be this process's directory, not the command's.
      for (
        const command of [
          "cat /proc/self/cwd/a.txt",
          "cat /proc/thread-self/cwd/a.txt",
          "cat /proc/1/root/etc/hostname",
          `cat ${"../".repeat(12)}proc/self/cwd/a.txt`,
          "cat here/a.txt",
          "echo x > again/a.txt"
        ]
      ) expect(yield* of(command), command).toEqual(Footprint.writesEverything)
      expect(yield* of("cat /proc/cpuinfo")).toEqual({ reads: ["/proc/cpuinfo"] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("git in a repository whose configuration names a program, a file or a tree is a barrier", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, of } = yield* setup
      execFileSync("git", ["init", "-q", dir])
      const config = yield* fs.readFileString(`${dir}/.git/config`)
      // A fresh repository's configuration, a clone's remote and branch: bounded by the repository.
      const clone =
        `${config}[remote "origin"]\n\turl = https://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n` +
        `[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n`
      yield* fs.writeFileString(`${dir}/.git/config`, clone)
      expect((yield* of("git status")).reads).toContain(`${dir}/.git/**`)
      // `core.fsmonitor` runs its program for `git ls-files` too; `include.path` reads a file anywhere.
      for (
        const extra of [
          "[core]\n\tfsmonitor = cat /etc/hostname\n",
          "[diff \"x\"]\n\ttextconv = cat\n",
          "[include]\n\tpath = ../../elsewhere.cfg\n",
          "[core]\n\tworktree = /tmp\n",
          "[log]\n\tshowSignature = true\n",
          "[core.x]\n\tbare = false\n",
          "[user]\n\tname = a \\\n\temail = b\n"
        ]
      ) {
        yield* fs.writeFileString(`${dir}/.git/config`, clone + extra)
        expect(yield* of("git ls-files"), extra).toEqual(Footprint.writesEverything)
      }
      // Submodules: `git status` runs in each, under its own configuration.
      yield* fs.writeFileString(`${dir}/.git/config`, clone)
      yield* fs.makeDirectory(`${dir}/.git/modules/sub`, { recursive: true })
      expect(yield* of("git status")).toEqual(Footprint.writesEverything)
    }).pipe(Effect.provide(Tools)))

  it.scoped("what the oracle found the table missing: `-` files, find following links, gzip -dN, cp -L, getconf", () =>
    Effect.gen(function*() {
      const { dir, of } = yield* setup
      // `-` is a file for mkdir, rev, readlink (standard input for others): declared either way.
      expect(yield* of("mkdir -")).toEqual({ writes: [`${dir}/-`] })
      expect(yield* of("rev -")).toEqual({ reads: [`${dir}/-`] })
      expect(yield* of("getconf NAME_MAX a")).toEqual({ reads: [`${dir}/a`] })
      expect(yield* of("getconf -a .")).toEqual({ reads: [dir] })
      for (
        const command of [
          "find . -xtype d",
          "find . -readable",
          "find . -printf '%-4Y %p'",
          "gzip -d -N x.gz",
          "ls -lF",
          "ls --format=long --indicator-style=classify",
          "ls --hyperlink=always",
          "cp -rL a b"
        ]
      ) expect(yield* of(command), command).toEqual(Footprint.writesEverything)
      expect(yield* of("find . -printf '%p'")).toEqual({ reads: [`${dir}/**`] })
      expect(yield* of("ls -F")).toEqual({ reads: [`${dir}/**`] })
      expect(yield* of("find a -")).toEqual({ reads: [`${dir}/a/**`, `${dir}/-/**`] })
    }).pipe(Effect.provide(Tools)))

  it.scoped("a locale or time-zone value that names a file outside the system's directories is a barrier", () =>
    Effect.gen(function*() {
      const { dir, of } = yield* setup
      // glibc opens `TZ=:FILE`, an absolute `TZ`, and `LANGUAGE`/`LC_*` names under its directories (`..` climbs).
      for (
        const command of [
          "TZ=:/etc/passwd ls -l a",
          "TZ=/tmp/x stat a",
          "TZ=../../../tmp/x ls -l a",
          "LANGUAGE=fr:../../../tmp cat a",
          "LC_ALL=/../../../tmp/x ls a"
        ]
      ) expect(yield* of(command), command).toEqual(Footprint.writesEverything)
      for (const command of ["TZ=UTC stat a", "TZ=Europe/Paris stat a", "LC_ALL=C.UTF-8 LANGUAGE=fr:de cat a"]) {
        expect(yield* of(command), command).toEqual({ reads: [`${dir}/a`] })
      }
    }).pipe(Effect.provide(Tools)))
})

const runTurn = (env: Execution.Environment, calls: ReadonlyArray<Messages.ToolUseBlock>) =>
  Effect.map(Stream.runCollect(StreamingExecutor.runAll(calls, env)), Chunk.toArray)

// Real processes and the real clock: overlap is judged by the calls' start and end times relative to each other.
describe("Bash under footprint scheduling (issue 15 scenarios)", () => {
  it.scopedLive("two slow Bash calls writing different files overlap", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, env } = yield* setup
      const events = yield* runTurn(env, [
        Messages.toolUse("b1", "Bash", { command: "sleep 0.4; echo one > a.txt" }),
        Messages.toolUse("b2", "Bash", { command: "sleep 0.4; echo two > b.txt" })
      ])
      const results = events.filter(DispatchEvent.isResult)
      const [r1, r2] = ["b1", "b2"].map((id) => results.find((r) => r.toolUseId === id)!)
      expect(r1!.status).toBe("success")
      expect(r2!.status).toBe("success")
      // Each started before the other ended.
      expect(r2!.startedAt).toBeLessThan(r1!.endedAt)
      expect(r1!.startedAt).toBeLessThan(r2!.endedAt)
      const started = events.filter(DispatchEvent.isStarted)
      expect(started.find((e) => e.toolUseId === "b2")!.waitedFor).toBeUndefined()
      // And the second Started came before the first Result.
      const firstResult = events.findIndex(DispatchEvent.isResult)
      expect(events.findIndex((e) => DispatchEvent.isStarted(e) && e.toolUseId === "b2")).toBeLessThan(firstResult)
      expect(yield* fs.readFileString(`${dir}/a.txt`)).toBe("one\n")
      expect(yield* fs.readFileString(`${dir}/b.txt`)).toBe("two\n")
    }).pipe(Effect.provide(Tools)))

  it.scopedLive("two Bash calls writing the same file run one after the other, in call order", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, env } = yield* setup
      const events = yield* runTurn(env, [
        Messages.toolUse("b1", "Bash", { command: "sleep 0.3; echo one > a.txt" }),
        Messages.toolUse("b2", "Bash", { command: "echo two >> a.txt" })
      ])
      const results = events.filter(DispatchEvent.isResult)
      const [r1, r2] = ["b1", "b2"].map((id) => results.find((r) => r.toolUseId === id)!)
      expect(r2!.startedAt).toBeGreaterThanOrEqual(r1!.endedAt)
      const started = events.filter(DispatchEvent.isStarted).find((e) => e.toolUseId === "b2")!
      expect(started.waitedFor?.map((w) => w.toolUseId)).toEqual(["b1"])
      expect(yield* fs.readFileString(`${dir}/a.txt`)).toBe("one\ntwo\n")
    }).pipe(Effect.provide(Tools)))

  it.scopedLive("a failing `mkdir d && false` cancels a later Read under d but not a Write to an unrelated file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { dir, env } = yield* setup
      const events = yield* runTurn(env, [
        Messages.toolUse("mk", "Bash", { command: "sleep 0.2; mkdir d && echo x > d/f && false" }),
        Messages.toolUse("read", "Read", { file_path: `${dir}/d/f` }),
        Messages.toolUse("write", "Write", { file_path: `${dir}/other.txt`, content: "unrelated\n" })
      ])
      const results = events.filter(DispatchEvent.isResult)
      const byId = (id: string) => results.find((r) => r.toolUseId === id)!
      expect(byId("mk").block.is_error).toBe(true)
      expect(Messages.contentText(byId("mk").block.content)).toContain("Exit code 1")
      // The dependent Read is cancelled with a synthetic result naming the failed call.
      expect(byId("read").block.is_error).toBe(true)
      expect(Messages.contentText(byId("read").block.content)).toContain("depends on mk (Bash), which failed")
      expect(events.some((e) => DispatchEvent.isStarted(e) && e.toolUseId === "read")).toBe(false)
      // The unrelated Write ran, and its file is there.
      expect(byId("write").status).toBe("success")
      expect(yield* fs.readFileString(`${dir}/other.txt`)).toBe("unrelated\n")
      // It did not wait for the failed call: it started while that was still running.
      const writeStarted = events.filter(DispatchEvent.isStarted).find((e) => e.toolUseId === "write")
      expect(writeStarted?.waitedFor).toBeUndefined()
      expect(byId("write").startedAt).toBeLessThan(byId("mk").endedAt)
    }).pipe(Effect.provide(Tools)))
})
