/**
 * Grep and Glob leave out what a Read deny rule covers (issue 9, item 5):
 * searching a tree that holds denied paths — directly, hidden, or through a
 * link — returns none of their names or contents, with either Grep engine,
 * in every output mode, whatever the glob. Judged by the result text.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Path from "@effect/platform/Path"
import { PermissionContext } from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as GrepRipgrep from "../src/internal/grepRipgrep.js"
import * as Grep from "@switchyard/tools/Grep"
import * as Glob from "@switchyard/tools/Glob"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { dispatch, makeContext, tempDir, toolsLayer } from "./fixtures/toolHarness.js"
import * as System from "../../../test/support/system.js"

const hasRipgrep = System.has("rg", "ripgrep")
const engines: ReadonlyArray<Grep.Engine> = hasRipgrep ? ["builtin", "ripgrep"] : ["builtin"]

const layerFor = (engine: Grep.Engine) =>
  toolsLayer(Layer.merge(Grep.layer, Glob.layer).pipe(Layer.provide(Layer.succeed(Grep.GrepEngine, engine))))

/** Every file says "marker"; the denied ones also carry a secret. */
const makeTree = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const dir = yield* tempDir
  const files: ReadonlyArray<readonly [string, string]> = [
    [".env", "marker TOKEN=env-secret\n"],
    ["secrets/key.txt", "marker key-secret\n"],
    ["secrets/deep/more.txt", "marker deep-secret\n"],
    ["config/prod.pem", "marker pem-secret\n"],
    ["src/a.ts", "marker public\n"],
    ["docs/readme.md", "marker docs\n"]
  ]
  for (const [name, content] of files) {
    yield* fs.makeDirectory(`${dir}/${name.slice(0, name.lastIndexOf("/") + 1)}`, { recursive: true })
    yield* fs.writeFileString(`${dir}/${name}`, content)
  }
  // Links inside the tree to denied places: a file, a directory.
  yield* fs.symlink(`${dir}/.env`, `${dir}/src/env-link`)
  yield* fs.symlink(`${dir}/secrets`, `${dir}/docs/secrets-link`)
  return dir
})

const denyRules = (dir: string) =>
  ["Read(./.env)", "Read(./secrets/**)", "Read(*.pem)"].map((raw) => {
    const rule = PermissionContext.parseRule(raw, "deny", "test", dir)
    if (rule === undefined) throw new Error(raw)
    return rule
  })

const SECRETS = ["env-secret", "key-secret", "deep-secret", "pem-secret", ".env", "key.txt", "more.txt", "prod.pem"]

const contextFor = (dir: string) =>
  makeContext(dir, {
    permissions: { ...PermissionContext.empty, mode: "bypassPermissions", rules: denyRules(dir) }
  })

describe("Grep and Glob leave out Read-denied paths", () => {
  for (const engine of engines) {
    it.scoped(`Grep (${engine}) with generated globs, modes and options returns no denied path or content`, () =>
      Effect.gen(function*() {
        const dir = yield* makeTree
        const ctx = yield* contextFor(dir)
        const input = FastCheck.record({
          pattern: FastCheck.constantFrom("marker", "secret", ".", "TOKEN|key"),
          glob: FastCheck.option(FastCheck.constantFrom("*", "**/*", ".env", "*.txt", "*.{pem,txt}", "!src/**", "**"), {
            nil: undefined
          }),
          output_mode: FastCheck.constantFrom("content", "files_with_matches", "count"),
          path: FastCheck.option(FastCheck.constantFrom(".", "docs", "src", "config"), { nil: undefined }),
          "-C": FastCheck.option(FastCheck.integer({ min: 0, max: 2 }), { nil: undefined })
        }, { requiredKeys: ["pattern"] })
        const samples = FastCheck.sample(input, { numRuns: 40, seed: 9 })
        for (const sample of samples) {
          const result = yield* dispatch(ctx, "Grep", sample)
          for (const secret of SECRETS) {
            expect(result.text, `${JSON.stringify(sample)}\n${result.text}`).not.toContain(secret)
          }
        }
        const open = yield* dispatch(ctx, "Grep", { pattern: "marker", output_mode: "content" })
        expect(open.text).toContain("public")
        expect(open.text).toContain("docs")
      }).pipe(Effect.provide(layerFor(engine))))
  }

  it.scoped("Glob with generated patterns returns no denied path", () =>
    Effect.gen(function*() {
      const dir = yield* makeTree
      const ctx = yield* contextFor(dir)
      const patterns = FastCheck.sample(
        FastCheck.constantFrom(
          "**/*",
          "**",
          ".env",
          "**/.env",
          "secrets/**",
          "**/*.pem",
          "*/*",
          "**/key.txt",
          "docs/**"
        ),
        { numRuns: 30, seed: 9 }
      )
      for (const pattern of [...new Set(patterns), `${dir}/**/*`, `${dir}/secrets/*`]) {
        const result = yield* dispatch(ctx, "Glob", { pattern })
        for (const secret of SECRETS) expect(result.text, `${pattern}\n${result.text}`).not.toContain(secret)
      }
      const all = yield* dispatch(ctx, "Glob", { pattern: "**/*" })
      expect(all.text).toContain(`${dir}/src/a.ts`)
    }).pipe(Effect.provide(layerFor("builtin"))))

  it.scoped.skipIf(!hasRipgrep)(
    "ripgrep itself leaves the denied paths out: its exclusions, before any filtering",
    () =>
      Effect.gen(function*() {
        const dir = yield* makeTree
        const path = yield* Path.Path
        const env = PermissionRules.makeEnvironment({
          cwd: dir,
          home: "/nonexistent-home",
          additionalDirectories: [],
          path
        })
        const permissions = { ...PermissionContext.empty, rules: denyRules(dir) }
        for (
          const [root, expected] of [[dir, ["/.env", "/secrets/**", "*.pem"]], [`${dir}/config`, ["*.pem"]]] as const
        ) {
          const globs = PermissionRules.readDeniedPatterns(permissions, "Grep", env, root)
          expect(globs).toEqual(expected)
          for (const userGlobs of [[], ["**/.env", "*.txt", "*.pem"]]) {
            const results = yield* GrepRipgrep.search({
              pattern: "marker",
              root,
              rootIsFile: false,
              globs: [...userGlobs, ...globs.map((glob) => `!${glob}`)],
              type: undefined,
              caseInsensitive: false,
              multiline: false,
              mode: "content",
              before: 0,
              after: 0
            }, root)
            const text = JSON.stringify(results)
            for (const secret of SECRETS) expect(text, `${root} ${userGlobs.join(",")}`).not.toContain(secret)
          }
        }
      }).pipe(Effect.provide(layerFor("ripgrep")))
  )

  it.scoped("without deny rules nothing is left out", () =>
    Effect.gen(function*() {
      const dir = yield* makeTree
      const ctx = yield* makeContext(dir)
      const result = yield* dispatch(ctx, "Grep", { pattern: "key-secret", output_mode: "content", glob: "*.txt" })
      expect(result.text).toContain("key-secret")
    }).pipe(Effect.provide(layerFor("builtin"))))
})
