/**
 * Links a line makes (packages/core/src/internal/bashLinks.ts): at decision
 * time they do not exist, so a path through one resolves to what is there now.
 * With `Bash(ln *)` allowed, `ln -s OUTSIDE l && cat l/secret.txt` had a
 * read-only part "inside" the project, auto-allowed, that printed a file from
 * outside it; two separate calls were judged with the link on disk and asked.
 *
 * Judged by the effect: generated lines — a part that makes a link (ln with
 * its option spellings, link, cp -a/-r/-s, mv, tar x) beside parts that read
 * through it, in either order, in loops, across `cd` — are decided by the
 * real chain with the tree-sitter analyser; every line it allows is run for
 * real with bash in a fresh copy of the project, and its output must hold no
 * byte of the file outside. The controls show that the oracle sees a leak and
 * that lines whose reads cannot meet the link stay allowed.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Bash, decide, type Outcome, type Setup } from "./fixtures/permissionTools.js"

const SECRET = "outside-secret-4d1e"

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-line-links-")))
/** A directory beside the project, with the file no line may print without an ask. */
const OUTSIDE = path.join(base, "outside")
const template = path.join(base, "template")
const files: Record<string, string> = {
  "outside/secret.txt": `${SECRET}\n`,
  "outside/d/secret.txt": `${SECRET}\n`,
  "template/src/a.txt": "visible-inside\n",
  "template/sub/.keep": ""
}
for (const [name, content] of Object.entries(files)) {
  fs.mkdirSync(path.dirname(path.join(base, name)), { recursive: true })
  fs.writeFileSync(path.join(base, name), content)
}
// Links that already exist inside the project: copying or moving the directory carries them along.
fs.mkdirSync(path.join(template, "carry"))
fs.symlinkSync(OUTSIDE, path.join(template, "carry", "o"))
// An archive whose member is a link out of the project.
const staging = path.join(base, "staging")
fs.mkdirSync(staging)
fs.symlinkSync(OUTSIDE, path.join(staging, "t"))

let copies = 0

/** Run `command` with bash in `cwd`; stdout and stderr together. Asynchronous: a test worker must not block. */
const run = (command: string, cwd: string): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const child = spawn("bash", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.once("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed(out))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

/** A fresh copy of the project (a line changes it), with the archive made inside it. */
const freshProject = Effect.promise(async () => {
  const dir = path.join(base, `p${copies++}`)
  await fs.promises.cp(template, dir, { recursive: true, verbatimSymlinks: true })
  return dir
}).pipe(Effect.tap((dir) => run(`tar -cf ${JSON.stringify(path.join(dir, "links.tar"))} -C ${staging} t`, dir)))

/** The copy lines are judged in (deciding changes nothing); a line that is allowed runs in a fresh one. */
const judged = Effect.runSync(Effect.cached(freshProject))

/** Where a maker puts its link, and the paths that read the outside file through it. */
interface Maker {
  readonly make: string
  readonly reads: ReadonlyArray<string>
}

const makers: FastCheck.Arbitrary<Maker> = FastCheck.oneof(
  FastCheck.constantFrom<Maker>(
    { make: `ln -s ${OUTSIDE} l`, reads: ["l/secret.txt", "./l/d/secret.txt", "l/d/../secret.txt"] },
    { make: `ln -sf -- ${OUTSIDE} sub/l`, reads: ["sub/l/secret.txt", "sub/./l/secret.txt"] },
    { make: `ln -s ${OUTSIDE} l -S .bak`, reads: ["l/secret.txt"] },
    { make: `ln -st sub ${OUTSIDE}`, reads: ["sub/outside/secret.txt"] },
    { make: `ln -s -t sub ${OUTSIDE}`, reads: ["sub/outside/d/secret.txt"] },
    { make: `ln --target-directory=sub -s ${OUTSIDE}`, reads: ["sub/outside/secret.txt"] },
    { make: `ln --target sub -s ${OUTSIDE}`, reads: ["sub/outside/secret.txt"] },
    { make: `ln -s ${OUTSIDE}`, reads: ["outside/secret.txt"] },
    { make: `ln ${OUTSIDE}/secret.txt h`, reads: ["h"] },
    { make: `link ${OUTSIDE}/secret.txt h`, reads: ["h"] },
    { make: `cp -l ${OUTSIDE}/secret.txt h`, reads: ["h"] },
    { make: `cp -s ${OUTSIDE}/secret.txt h`, reads: ["h"] },
    { make: "cp -a carry c2", reads: ["c2/o/secret.txt"] },
    { make: "cp -r carry sub", reads: ["sub/carry/o/secret.txt"] },
    { make: "mv carry m", reads: ["m/o/secret.txt"] },
    { make: "mv -t sub carry", reads: ["sub/carry/o/d/secret.txt"] },
    { make: "tar -xf links.tar", reads: ["t/secret.txt"] },
    { make: "tar -xf links.tar -C sub", reads: ["sub/t/secret.txt"] },
    // A link below another maker's link: `a -> .` makes `a/l` the project's own `l`.
    { make: `ln -s . a && ln -s ${OUTSIDE} a/l`, reads: ["l/secret.txt"] }
  )
)

const readers = FastCheck.constantFrom(
  (file: string) => `cat ${file}`,
  (file: string) => `head -c 100 ${file}`,
  (file: string) => `tail -n 1 ${file}`,
  (file: string) => `grep -h secret ${file}`,
  (file: string) => `sort ${file}`,
  (file: string) => `cat < ${file}`,
  (file: string) => `wc -l ${file} && cat ${file}`
)

/** How the two parts are put together: in order, reversed inside a loop (the second round reads), in a subshell. */
const shapes = FastCheck.constantFrom(
  (make: string, read: string) => `${make} && ${read}`,
  (make: string, read: string) => `${make}; ${read}`,
  (make: string, read: string) => `for i in 1 2; do ${read}; ${make}; done`,
  (make: string, read: string) => `(${make}) && { ${read}; }`,
  (make: string, read: string) => `${make} && cd . && ${read}`,
  (make: string, read: string) => `${make} && cd sub && ${read.replace(/(\s)(?!-)([^\s<]+)$/, "$1../$2")}`
)

const lines = FastCheck.tuple(makers, readers, shapes, FastCheck.nat()).map(([maker, reader, shape, pick]) =>
  shape(maker.make, reader(maker.reads[pick % maker.reads.length]!))
)

const seed = Number(process.env["ATTACK_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const generated = [...new Set(FastCheck.sample(lines, { numRuns: 90, seed }))]

/** The user allowed the link makers; the reads have only the read-only set. */
const ALLOW = ["Bash(ln *)", "Bash(link *)", "Bash(cp *)", "Bash(mv *)", "Bash(tar *)"]

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

const decideIn = (dir: string, setup: Setup, command: string) =>
  decide({ ...setup, cwd: dir }, Bash, { command }).pipe(Effect.map(({ decision, outcome }) => ({
    outcome,
    reason: "reason" in decision ? String(decision.reason) : ""
  })))

layer(TestLayer)("links a line makes, judged by what the line prints", (it) => {
  describe.each([
    { name: "narrow allow rules", setup: { allow: ALLOW } },
    { name: "acceptEdits", setup: { allow: ALLOW, mode: "acceptEdits" as const } },
    {
      name: "an allowed reader beside a Read deny of the outside",
      setup: { allow: [...ALLOW, "Bash(cat *)", "Bash(head *)"], deny: [`Read(/${OUTSIDE}/**)`] }
    }
  ])("$name", ({ setup }) => {
    it.effect(`no allowed line (replay with ATTACK_SEED=${seed}) prints the outside file`, () =>
      Effect.gen(function*() {
        const outcomes: Record<Outcome, number> = { allow: 0, ask: 0, deny: 0 }
        const project = yield* judged
        for (const command of generated) {
          const { outcome, reason } = yield* decideIn(project, setup, command)
          outcomes[outcome] += 1
          if (outcome !== "allow") continue
          const out = yield* run(command, yield* freshProject)
          expect(out.includes(SECRET), `allowed (${reason}) and printed the outside file: ${command}`).toBe(false)
        }
        // Every generated line reads through its link in some order: none may be allowed without an ask.
        expect(outcomes.allow, JSON.stringify(outcomes)).toBe(0)
      }))
  })

  it.effect("the oracle sees a leak: with the blanket rule the lines run and print the outside file", () =>
    Effect.gen(function*() {
      const samples = [
        `ln -s ${OUTSIDE} l && cat l/secret.txt`,
        `for i in 1 2; do cat sub/outside/secret.txt; ln -st sub ${OUTSIDE}; done`,
        "mv carry m && cat m/o/secret.txt",
        "tar -xf links.tar -C sub && cat sub/t/secret.txt",
        `ln -s . a && ln -s ${OUTSIDE} a/l && cat l/secret.txt`
      ]
      for (const command of samples) {
        const dir = yield* freshProject
        expect((yield* decideIn(dir, { allow: ["Bash"] }, command)).outcome).toBe("allow")
        expect(yield* run(command, dir), command).toContain(SECRET)
      }
    }))

  it.effect("reads the link cannot reach stay allowed, and so does removing the link", () =>
    Effect.gen(function*() {
      const allowed = [
        `ln -s ${OUTSIDE} sub/l && cat src/a.txt`,
        `ln -s ${OUTSIDE} l && ls`,
        `ln -st sub ${OUTSIDE} && head -1 src/a.txt`,
        "mv carry m && cat src/a.txt"
      ]
      for (const command of allowed) {
        const dir = yield* freshProject
        const { outcome, reason } = yield* decideIn(dir, { allow: ALLOW }, command)
        expect(outcome, `${command}: ${reason}`).toBe("allow")
        expect(yield* run(command, dir)).not.toContain(SECRET)
      }
      // `rm l` removes the link itself, not what it points to: acceptEdits allows it inside the project.
      const removing = `ln -sf ${OUTSIDE} l && rm l`
      const project = yield* freshProject
      expect((yield* decideIn(project, { allow: ALLOW, mode: "acceptEdits" }, removing)).outcome).toBe("allow")
      yield* run(removing, project)
      expect(fs.existsSync(path.join(project, "l"))).toBe(false)
      expect(fs.readFileSync(path.join(OUTSIDE, "secret.txt"), "utf8")).toBe(`${SECRET}\n`)
      // The same read as a second call is judged with the link on disk: outside, so it asks.
      const dir = yield* freshProject
      yield* run(`ln -s ${OUTSIDE} l`, dir)
      expect((yield* decideIn(dir, { allow: ALLOW }, "cat l/secret.txt")).outcome).toBe("ask")
    }))
})
