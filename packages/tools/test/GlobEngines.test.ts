/**
 * Glob's two engines (issue 14): the `rg --files` listing and the walk
 * through the `FileSystem` service answer alike, on generated trees (hidden
 * files, links to files and directories) and generated patterns.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Glob from "@switchyard/tools/Glob"
import * as GlobRipgrep from "../src/internal/globRipgrep.js"
import { PermissionContext } from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import picomatch from "picomatch"
import { dispatch, makeContext, tempDir, toolsLayer } from "./fixtures/toolHarness.js"
import * as System from "../../../test/support/system.js"

const hasRg = System.has("rg", "ripgrep")

const names = ["a", "b", "src", ".h", "x.ts", "a.ts", ".e.ts", "y.md", "ab.d.ts", "c d.ts", "[x]", "x.js"]
const segment = FastCheck.constantFrom(...names)
const tree = FastCheck.record({
  files: FastCheck.uniqueArray(FastCheck.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/")), {
    minLength: 1,
    maxLength: 25
  }),
  links: FastCheck.array(FastCheck.tuple(FastCheck.nat(30), FastCheck.constantFrom("ln1", "ln2", "src/ln3")), {
    maxLength: 2
  })
})
const patternPart = FastCheck.constantFrom(
  "**",
  "*",
  "*.ts",
  "a*",
  "?.ts",
  "{a,src}",
  "*.{ts,md}",
  "[ab]*",
  ".h",
  ".*",
  "+(a|b)",
  "x.ts",
  "*.d.ts",
  "src",
  "ln1",
  "c d.ts",
  // Segments the per-path matcher must judge as the walk's pruning does: escapes, a brace holding a slash, extglobs.
  "\\[x\\]",
  "[x]",
  "{src/a,b}",
  "@(a|src)",
  "!(a)",
  "*(x).ts",
  "a/**",
  "**/.h",
  "{.h,b}",
  // First in a pattern, a `!` that starts no extglob makes the whole pattern an exclusion.
  "!x.ts",
  "!*"
)
const pattern = FastCheck.tuple(
  FastCheck.array(patternPart, { minLength: 1, maxLength: 4 }),
  FastCheck.constantFrom("", "./"),
  FastCheck.constantFrom("", "/")
).map(([parts, lead, trail]) => lead + parts.join("/") + trail)

/** Files at the generated paths (a path that is a prefix of another becomes a directory), and links to some of them. */
const build = (
  dir: string,
  spec: { files: ReadonlyArray<string>; links: ReadonlyArray<readonly [number, string]> }
) => {
  const directories = new Set(
    spec.files.flatMap((file) => file.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/")))
  )
  const made: Array<string> = []
  for (const file of spec.files) {
    if (directories.has(file)) continue
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    fs.writeFileSync(path.join(dir, file), file)
    made.push(file)
  }
  const targets = [...made, ...directories]
  const links: Array<{ readonly at: string; readonly target: string }> = []
  for (const [index, name] of spec.links) {
    const target = targets[index % targets.length]!
    const at = path.join(dir, name)
    if (fs.existsSync(at) || at.startsWith(path.join(dir, target) + "/")) continue
    // A link cannot go under a name that is a file.
    if (fs.existsSync(path.dirname(at)) && !fs.statSync(path.dirname(at)).isDirectory()) continue
    fs.mkdirSync(path.dirname(at), { recursive: true })
    fs.symlinkSync(path.join(dir, target), at)
    links.push({ at, target: path.join(dir, target) })
  }
  return links
}

const inside = (child: string, parent: string) => child === parent || child.startsWith(`${parent}/`)

/**
 * The one tree shape where the engines are known to differ (the open case below): a link to a directory whose
 * real place is inside another linked directory, pointing further into it without being a loop. fdir (under
 * tinyglobby, the walk) takes it for a loop and does not descend through the outer link; ripgrep does.
 */
const nestedLinkIntoLinkedDirectory = (links: ReadonlyArray<{ readonly at: string; readonly target: string }>) =>
  links.some((outer) =>
    fs.statSync(outer.target).isDirectory() &&
    links.some((nested) =>
      nested !== outer && fs.statSync(nested.target).isDirectory() &&
      inside(fs.realpathSync(path.dirname(nested.at)), outer.target) && nested.target.startsWith(`${outer.target}/`) &&
      !inside(fs.realpathSync(path.dirname(nested.at)), nested.target)
    )
  )

const globWith = (
  engine: Glob.Engine,
  dir: string,
  input: { pattern: string; path?: string },
  deny: ReadonlyArray<string> = []
) =>
  Effect.gen(function*() {
    const rules = deny.map((raw) => PermissionContext.parseRule(raw, "deny", "test")!)
    const ctx = yield* makeContext(dir, { permissions: { ...PermissionContext.empty, rules } })
    return yield* dispatch(ctx, "Glob", input)
  }).pipe(Effect.provideService(Glob.GlobEngine, engine))

describe.runIf(hasRg)("Glob engines", () => {
  it.scoped.prop(
    "rg --files and the FileSystem walk give the same answer",
    [tree, pattern],
    ([spec, glob]) =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-globs-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        // That shape is the open case below, judged there; every other tree here.
        if (nestedLinkIntoLinkedDirectory(build(dir, spec))) return
        const viaRipgrep = yield* Effect.exit(GlobRipgrep.search(glob, dir))
        expect(Exit.isSuccess(viaRipgrep), `rg engine answered ${glob}`).toBe(true)
        const walked = yield* globWith("walk", dir, { pattern: glob })
        const listed = yield* globWith("ripgrep", dir, { pattern: glob })
        expect(listed).toEqual(walked)
        const found = walked.text === "No files found" ? [] : walked.text.split("\n")
        if (Exit.isSuccess(viaRipgrep)) {
          expect(viaRipgrep.value.map((entry) => entry.file).sort()).toEqual([...found].sort())
        }
      }).pipe(Effect.provide(toolsLayer(Glob.layer))),
    { fastCheck: { numRuns: 60 } }
  )

  it.scoped.fails(
    "open: a link into a linked directory's target (src/ln3 → src/a, ln1 → src): the walk misses ln1/ln3/.h",
    () =>
      Effect.gen(function*() {
        // Found by the property above (seed -847890300): fdir's loop check takes a link whose target lies inside
        // the target of a linked directory above it for a loop (a prefix test), where ripgrep refuses only a link
        // to its own ancestor. ripgrep lists ln1/a/.h, ln1/ln3/.h, src/a/.h and src/ln3/.h; the walk the first,
        // third and fourth.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-globs-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const links = build(dir, { files: ["a", "src/a/.h"], links: [[10, "ln1"], [27, "src/ln3"]] })
        expect(nestedLinkIntoLinkedDirectory(links)).toBe(true)
        const walked = yield* globWith("walk", dir, { pattern: "**/.h" })
        const listed = yield* globWith("ripgrep", dir, { pattern: "**/.h" })
        expect(listed.text).toContain(path.join(dir, "ln1", "ln3", ".h"))
        expect(listed).toEqual(walked)
      }).pipe(Effect.provide(toolsLayer(Glob.layer)))
  )

  it.scoped.prop(
    "a Read deny rule leaves out the same paths from both engines: no listed path's target is denied",
    [tree, pattern, FastCheck.nat(40), FastCheck.boolean()],
    ([spec, glob, pick, wholeDirectory]) =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-globs-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        if (nestedLinkIntoLinkedDirectory(build(dir, spec))) return
        // Deny one of the tree's own paths (a file, or a directory with everything under it); links reach it too.
        // (A name with glob characters, `[x]`, would be a pattern in the rule, not that name.)
        const paths = spec.files.flatMap((file) =>
          file.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))
        )
          .filter((candidate) => !candidate.includes("["))
        if (paths.length === 0) return
        const target = paths[pick % paths.length]!
        const denied = path.join(dir, target)
        const isDirectory = fs.statSync(denied).isDirectory()
        const rule = isDirectory && wholeDirectory ? `Read(./${target}/**)` : `Read(./${target})`
        const walked = yield* globWith("walk", dir, { pattern: glob }, [rule])
        const listed = yield* globWith("ripgrep", dir, { pattern: glob }, [rule])
        expect(listed).toEqual(walked)
        const files = listed.text === "No files found" ? [] : listed.text.split("\n")
        for (const file of files) {
          const real = fs.realpathSync(file)
          const covered = isDirectory && wholeDirectory ? real.startsWith(`${denied}/`) : real === denied
          expect(covered, `${file} (${real}) under ${rule}`).toBe(false)
        }
      }).pipe(Effect.provide(toolsLayer(Glob.layer))),
    { fastCheck: { numRuns: 40 } }
  )

  it.scoped("a link loop: rg declines and the walk answers", () =>
    Effect.gen(function*() {
      const fsService = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      yield* fsService.makeDirectory(`${dir}/a`, { recursive: true })
      yield* fsService.writeFileString(`${dir}/a/one.txt`, "1")
      yield* fsService.symlink(dir, `${dir}/a/loop`)
      const declined = yield* Effect.flip(GlobRipgrep.search("**/*.txt", dir))
      expect(declined).toEqual({ _tag: "Unsupported", reason: "link loop" })
      const auto = yield* globWith("auto", dir, { pattern: "**/*.txt" })
      expect(auto).toEqual(yield* globWith("walk", dir, { pattern: "**/*.txt" }))
      expect(auto.text).toContain(`${dir}/a/one.txt`)
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.scoped("absolute patterns, a path argument and bad patterns answer alike", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      build(dir, { files: ["src/a.ts", "src/deep/b.ts", "lib/c.ts", ".h/d.ts"], links: [] })
      for (
        const input of [
          { pattern: `${dir}/src/**/*.ts` },
          { pattern: "*.ts", path: "lib" },
          { pattern: "../*/src/*.ts", path: "lib" },
          { pattern: "**/*.ts" },
          { pattern: ".h/*" },
          { pattern: "src/{a" }
        ]
      ) {
        expect(yield* globWith("ripgrep", dir, input), JSON.stringify(input)).toEqual(
          yield* globWith("walk", dir, input)
        )
      }
      expect((yield* globWith("auto", dir, { pattern: "**/*.ts" })).text.split("\n").sort()).toEqual(
        [`${dir}/lib/c.ts`, `${dir}/src/a.ts`, `${dir}/src/deep/b.ts`].sort()
      )
    }).pipe(Effect.provide(toolsLayer(Glob.layer))))

  it.prop(
    "the compiled matcher agrees with picomatch's own on every glob and path",
    [pattern, FastCheck.array(segment, { minLength: 0, maxLength: 4 }).map((s) => s.join("/"))],
    ([glob, input]) => {
      const options = { nobrace: false, nocase: false, noextglob: false, noglobstar: false, posix: true }
      const normalized = path.posix.normalize(glob.endsWith("/") ? glob.slice(0, -1) : glob)
      expect(GlobRipgrep.compile(normalized)(input)).toBe(picomatch(normalized, options)(input))
      // The pattern's own text is a path too (picomatch accepts it literally).
      expect(GlobRipgrep.compile(normalized)(normalized)).toBe(picomatch(normalized, options)(normalized))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("lists with rg's flags that match the walk: no ignore files, hidden files, links followed", () => {
    expect(GlobRipgrep.args("**/*.ts")).toEqual([
      "--no-config",
      "--files",
      "--no-ignore",
      "--hidden",
      "--follow",
      "--null",
      "--glob",
      "**/*.ts",
      "--",
      "."
    ])
    expect(GlobRipgrep.args("+(a|b).ts")).not.toContain("--glob")
    expect(GlobRipgrep.supports("../x/*.ts")).toBe(false)
  })
})
