/**
 * Path permissions judged by what a path denotes (issue 9, items 4, 6 and 7):
 * symbolic links inside the working directory to denied files, denied
 * directories, protected directories and places outside; glob and brace
 * characters in file tool paths; WebFetch to a host no rule allows. Real
 * temporary trees; the chain with the real `FileSystem`.
 */
import { Tool } from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { decide, Edit, Glob, Grep, Read, type Setup, Write } from "../../../test/fixtures/permissionTools.js"

/** WebFetch as the built-in declares it: read-only. */
const WebFetch = Tool.make("WebFetch", {
  description: "Fetch a URL",
  input: Schema.Struct({ url: Schema.String }),
  isReadOnly: () => true,
  call: () => Effect.succeed("")
})

interface Tree {
  readonly root: string
  readonly project: string
  readonly outside: string
}

/** A project with `.env`, `secrets/`, `.git/`, `src/` and a directory outside it. */
const makeTree = (): Tree => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-paths-")))
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  for (const dir of ["secrets", ".git", "src"]) fs.mkdirSync(path.join(project, dir), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(project, ".env"), "TOKEN=env-secret\n")
  fs.writeFileSync(path.join(project, "secrets", "key.txt"), "key-secret\n")
  fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n")
  fs.writeFileSync(path.join(project, "src", "a.ts"), "export {}\n")
  fs.writeFileSync(path.join(outside, "data.txt"), "outside\n")
  return { root, project, outside }
}

const tree = makeTree()
const { outside, project } = tree
const link = (name: string, target: string) => {
  const at = path.join(project, name)
  fs.mkdirSync(path.dirname(at), { recursive: true })
  if (!fs.existsSync(at)) fs.symlinkSync(target, at)
  return at
}
link("src/env-link", path.join(project, ".env"))
link("src/secrets-link", path.join(project, "secrets"))
link("src/relative-secrets", "../secrets")
link("src/out", outside)
link("src/git-link", path.join(project, ".git"))
link("src/dangling", path.join(outside, "new.txt"))
const projectLink = path.join(tree.root, "project-link")
if (!fs.existsSync(projectLink)) fs.symlinkSync(project, projectLink)

const inProject = (setup: Setup): Setup => ({ cwd: project, ...setup })
const denySecrets: Setup = inProject({ deny: ["Read(./.env)", "Read(./secrets/**)"] })

const outcome = (setup: Setup, tool: Tool.Any, input: unknown) =>
  Effect.map(decide(setup, tool, input), (result) => result.outcome)

describe("PermissionChain on real paths", () => {
  describe("symbolic links", () => {
    it.effect.each(
      [
        ["a link to a denied file", Read, { file_path: "src/env-link" }],
        ["a link to a denied directory", Read, { file_path: path.join(project, "src/secrets-link/key.txt") }],
        ["a relative link to a denied directory", Read, { file_path: "src/relative-secrets/key.txt" }],
        ["an edit through a link to a denied file", Edit, { file_path: "src/env-link" }],
        ["a write of a new file through a link to a denied directory", Write, {
          file_path: "src/secrets-link/new.txt"
        }],
        ["Grep of a link to a denied directory", Grep, { pattern: "x", path: "src/secrets-link" }],
        ["Glob of a link to a denied directory", Glob, { pattern: "*", path: "src/secrets-link" }]
      ] as const
    )("%s is denied", ([, tool, input]) =>
      Effect.gen(function*() {
        expect(yield* outcome(denySecrets, tool, input)).toBe("deny")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect.each(
      [
        ["Read through a link to a directory outside", Read, { file_path: "src/out/data.txt" }, "default"],
        ["Grep of a link to a directory outside", Grep, { pattern: "x", path: "src/out" }, "default"],
        ["Glob of a link to a directory outside", Glob, { pattern: "*", path: "src/out" }, "default"],
        ["Write through a link to a directory outside", Write, { file_path: "src/out/new.txt" }, "acceptEdits"],
        ["Write through a dangling link to a file outside", Write, { file_path: "src/dangling" }, "acceptEdits"],
        ["Edit through a link into .git", Edit, { file_path: "src/git-link/config" }, "acceptEdits"],
        [
          "Write of a new file through a link into .git",
          Write,
          { file_path: "src/git-link/hooks/post-checkout" },
          "acceptEdits"
        ]
      ] as const
    )("%s asks", ([, tool, input, mode]) =>
      Effect.gen(function*() {
        expect(yield* outcome(inProject({ mode }), tool, input)).toBe("ask")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("plain paths are unaffected: reads inside allowed, edits inside allowed with acceptEdits", () =>
      Effect.gen(function*() {
        expect(yield* outcome(denySecrets, Read, { file_path: "src/a.ts" })).toBe("allow")
        expect(yield* outcome(inProject({ mode: "acceptEdits" }), Write, { file_path: "src/new.ts" })).toBe("allow")
        expect(yield* outcome(inProject({ mode: "acceptEdits" }), Write, { file_path: "src/deep/new.ts" })).toBe(
          "allow"
        )
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("a working directory reached through a link keeps its rules", () =>
      Effect.gen(function*() {
        const setup: Setup = { cwd: projectLink, deny: ["Read(./secrets/**)"] }
        expect(yield* outcome(setup, Read, { file_path: "secrets/key.txt" })).toBe("deny")
        expect(yield* outcome(setup, Read, { file_path: "src/secrets-link/key.txt" })).toBe("deny")
        expect(yield* outcome(setup, Read, { file_path: "src/a.ts" })).toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("an allow rule for the link's name does not allow its target", () =>
      Effect.gen(function*() {
        const setup = inProject({ allow: ["Read(./src/**)"], mode: "default" })
        expect(yield* outcome(setup, Read, { file_path: "src/out/data.txt" })).toBe("ask")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("the suggested rule names the target, so it would allow the call", () =>
      Effect.gen(function*() {
        const { asked } = yield* decide(inProject({}), Read, { file_path: "src/out/data.txt" })
        expect(asked[0]).toContain(`a link to ${path.join(outside, "data.txt")}`)
        const allowed = yield* outcome(inProject({ allow: [`Read(/${outside}/**)`] }), Read, {
          file_path: "src/out/data.txt"
        })
        expect(allowed).toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))

    // Chains of links with generated names, each ending at a denied file or inside a denied directory.
    it.effect("generated link chains to denied paths are denied", () =>
      Effect.promise(() =>
        FastCheck.assert(
          FastCheck.asyncProperty(
            FastCheck.array(FastCheck.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/), { minLength: 1, maxLength: 3 }),
            FastCheck.constantFrom(".env", "secrets", "secrets/key.txt"),
            FastCheck.boolean(),
            FastCheck.constantFrom(Read, Edit, Write, Grep),
            async (names, target, relative, tool) => {
              const dir = fs.mkdtempSync(path.join(project, "src", "gen-"))
              let previous = path.join(project, target)
              for (const [i, name] of names.entries()) {
                const at = path.join(dir, `${name}-${i}`)
                fs.symlinkSync(relative ? path.relative(dir, previous) : previous, at)
                previous = at
              }
              const file = target === "secrets" ? path.join(previous, "key.txt") : previous
              const input = tool === Grep ? { pattern: "x", path: file } : { file_path: file }
              const result = await Effect.runPromise(
                outcome(denySecrets, tool, input).pipe(Effect.provide(NodeContext.layer))
              )
              fs.rmSync(dir, { recursive: true, force: true })
              return result === "deny"
            }
          ),
          { numRuns: 60 }
        )
      ))
  })

  describe("glob and brace characters in file tool paths", () => {
    it.effect.each(
      [
        ["secrets/*", "Read"],
        [".e?v", "Read"],
        ["[.]env", "Read"],
        ["{src,secrets}/key.txt", "Read"],
        ["**/key.txt", "Read"],
        ["secrets/*", "Edit"],
        ["sec*/key.txt", "Write"]
      ] as const
    )("%s (%s) counts as matching the deny rules it could match", ([file, tool]) =>
      Effect.gen(function*() {
        expect(yield* outcome(denySecrets, { Read, Edit, Write }[tool], { file_path: file })).toBe("deny")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("without a rule it could match, a pattern path is judged as written", () =>
      Effect.gen(function*() {
        const unrelated = inProject({ deny: ["Read(//etc/**)"] })
        expect(yield* outcome(unrelated, Read, { file_path: "src/*.ts" })).toBe("allow")
        expect(yield* outcome(inProject({}), Read, { file_path: "src/{a,b}.ts" })).toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect.each([".gi?/config", "{.git,src}/config", "**/config", ".[g]it/hooks/x"])(
      "acceptEdits does not write %s: not proven outside the protected directories",
      (file) =>
        Effect.gen(function*() {
          expect(yield* outcome(inProject({ mode: "acceptEdits" }), Write, { file_path: file })).toBe("ask")
        }).pipe(Effect.provide(NodeContext.layer))
    )

    it.effect("acceptEdits writes a pattern path that cannot be protected", () =>
      Effect.gen(function*() {
        expect(yield* outcome(inProject({ mode: "acceptEdits" }), Write, { file_path: "src/a*.ts" })).toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))
  })

  describe("WebFetch", () => {
    const host = FastCheck.tuple(
      FastCheck.array(FastCheck.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), { minLength: 1, maxLength: 3 }),
      FastCheck.constantFrom("com", "org", "io", "test", "localhost")
    ).map(([labels, tld]) => [...labels, tld].join("."))

    it.effect("a host no rule allows asks, in default, plan and acceptEdits mode", () =>
      Effect.promise(() =>
        FastCheck.assert(
          FastCheck.asyncProperty(
            host,
            FastCheck.constantFrom("default" as const, "plan" as const, "acceptEdits" as const),
            async (name, mode) => {
              const result = await Effect.runPromise(
                outcome(inProject({ mode }), WebFetch, { url: `http://${name}/x` }).pipe(
                  Effect.provide(NodeContext.layer)
                )
              )
              return result === "ask"
            }
          ),
          { numRuns: 40 }
        )
      ))

    it.effect("an allow rule for the host allows it; another host still asks; dontAsk denies", () =>
      Effect.gen(function*() {
        const setup = inProject({ allow: ["WebFetch(domain:docs.example.com)"] })
        expect(yield* outcome(setup, WebFetch, { url: "https://docs.example.com/a" })).toBe("allow")
        expect(yield* outcome({ ...setup, mode: "plan" }, WebFetch, { url: "https://docs.example.com/a" })).toBe(
          "allow"
        )
        expect(yield* outcome(setup, WebFetch, { url: "https://example.com/a" })).toBe("ask")
        expect(yield* outcome(inProject({ mode: "dontAsk" }), WebFetch, { url: "http://127.0.0.1/" })).toBe("deny")
        expect(yield* outcome(inProject({ mode: "bypassPermissions" }), WebFetch, { url: "http://127.0.0.1/" }))
          .toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.effect("the suggested rule allows the call it was made for", () =>
      Effect.gen(function*() {
        const { decision } = yield* decide(inProject({}), WebFetch, { url: "https://api.example.org/v1" })
        expect(decision.behavior).toBe("deny")
        const message = decision.behavior === "deny" ? decision.message : ""
        expect(message).toContain("WebFetch(domain:api.example.org)")
        const allowed = yield* outcome(inProject({ allow: ["WebFetch(domain:api.example.org)"] }), WebFetch, {
          url: "https://api.example.org/v1"
        })
        expect(allowed).toBe("allow")
      }).pipe(Effect.provide(NodeContext.layer)))
  })
})
