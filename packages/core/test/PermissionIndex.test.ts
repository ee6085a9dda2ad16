/**
 * The indexed rule lookup (issue 18's 1 000-rule goal) decides exactly what
 * a plain scan of every rule decides. The reference below is written from
 * Claude Code's documented semantics alone: each rule in the settings'
 * order, its anchor (`//abs`, `~/`, `/` the rule's root, `./` or bare: the
 * cwd) giving the directory, a gitignore matcher made for it on the spot,
 * the path's real form found with the kernel's own `realpath(3)`. No lead
 * index, no memoised probe, no shared layout. Generated rule sets (mixed
 * behaviors, tools, anchors and globs, long enough for the index) × paths in
 * a real temporary tree with links to denied places.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { PermissionContext, type Tool, ToolUseContext } from "@switchyard/core"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import ignore from "ignore"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { decide, Edit, Read, Write } from "../../../test/fixtures/permissionTools.js"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-index-")))
const project = path.join(root, "project")
const outside = path.join(root, "outside")
const home = path.join(root, "home")
for (const dir of ["src/a", "src/b", "lib", "secrets"]) fs.mkdirSync(path.join(project, dir), { recursive: true })
for (const dir of [outside, home]) fs.mkdirSync(dir)
for (const file of ["src/a/x.ts", "src/b/y.js", "lib/z.ts", "secrets/k.pem"]) {
  fs.writeFileSync(path.join(project, file), "")
}
fs.writeFileSync(path.join(outside, "o.ts"), "")
fs.writeFileSync(path.join(home, "h.ts"), "")
fs.symlinkSync("../secrets", path.join(project, "src/link-secrets"))
fs.symlinkSync(outside, path.join(project, "lnk-out"))
fs.symlinkSync("../../lib/z.ts", path.join(project, "src/a/l.ts"))
fs.symlinkSync(path.join(outside, "new.ts"), path.join(project, "dang"))

/** What the tools are asked about: existing files, links, `..` after a link, new files, another case. */
const paths = [
  "src/a/x.ts",
  "src/b/y.js",
  "lib/z.ts",
  "secrets/k.pem",
  "src/link-secrets/k.pem",
  "src/link-secrets/../lib/z.ts",
  "src/a/l.ts",
  "lnk-out/o.ts",
  "lnk-out/fresh.ts",
  "dang",
  "src/a/new.ts",
  "missing/deep/f.ts",
  "SRC/A/X.TS",
  `${outside}/o.ts`,
  "~/h.ts",
  "src/../secrets/k.pem"
]

const segment = FastCheck.oneof(
  {
    arbitrary: FastCheck.constantFrom("src", "a", "b", "lib", "secrets", "outside", "project", "SRC"),
    weight: 2
  },
  { arbitrary: FastCheck.constantFrom("x.ts", "z.ts", "k.pem", "o.ts", "h.ts"), weight: 1 },
  // Globs, also first (a rule without a literal lead, checked for every path under its directory).
  { arbitrary: FastCheck.constantFrom("*", "**", "*.ts", "*.pem", "?.ts"), weight: 2 }
)
const anchor = FastCheck.constantFrom(`/${root}/`, `/${project}/`, "./", "", "", "/", "~/")
const specifier = FastCheck.tuple(anchor, FastCheck.array(segment, { minLength: 1, maxLength: 3 })).map(
  ([lead, segments]) => `${lead}${segments.join("/")}`
)
const rule = FastCheck.record({
  behavior: FastCheck.constantFrom<PermissionContext.RuleBehavior>("allow", "ask", "deny"),
  tool: FastCheck.constantFrom("Read", "Edit", "Write"),
  specifier: FastCheck.option(specifier, { freq: 12, nil: undefined })
}).map(({ behavior, specifier, tool }) =>
  PermissionContext.parseRule(specifier === undefined ? tool : `${tool}(${specifier})`, behavior, "test", project)!
)
/**
 * Rules of the same tools that match none of the paths, in among the others (never cited, so one parsed
 * rule a text: compiled once, which keeps the runs quick).
 */
const noise = FastCheck.constantFrom(
  ...(["allow", "ask", "deny"] as const).flatMap((behavior) =>
    ["Read", "Edit"].flatMap((tool) =>
      ["./noise%/**", "//nowhere/%/*", "~/notes%/*.md", "noise%/**/*.ts"].flatMap((form) =>
        Array.from(
          { length: 5 },
          (_, n) => PermissionContext.parseRule(`${tool}(${form.replace("%", String(n))})`, behavior, "test", project)!
        )
      )
    )
  )
)
// Long enough that each behavior's candidates go through the index (16 and more), short ones too.
const ruleSet = FastCheck.array(FastCheck.oneof({ arbitrary: rule, weight: 1 }, { arbitrary: noise, weight: 2 }), {
  minLength: 0,
  maxLength: 160,
  size: "max"
})

// ---------------------------------------------------------------------------
// The reference
// ---------------------------------------------------------------------------

/** The kernel's answer: the real path, or the deepest existing ancestor's plus the rest; a dangling link's target. */
const kernelReal = (absolute: string): string => {
  try {
    return fs.realpathSync.native(absolute)
  } catch {
    const info = fs.lstatSync(absolute, { throwIfNoEntry: false })
    if (info?.isSymbolicLink()) {
      return kernelReal(path.resolve(kernelReal(path.dirname(absolute)), fs.readlinkSync(absolute)))
    }
    const parent = path.dirname(absolute)
    return parent === absolute ? absolute : path.join(kernelReal(parent), path.basename(absolute))
  }
}

const family = (tool: string) => (tool === "Read" ? "Read" : "Edit")

/**
 * The rule names that cover a tool, in the order a rule is cited when several match (as today: the tool's
 * own, its family's, then a Read deny over an edit or an Edit allow over a read; the settings' order within).
 */
const covering = (tool: string, behavior: PermissionContext.RuleBehavior): ReadonlyArray<string> => {
  const names = [tool, family(tool)]
  if (behavior === "deny" && family(tool) === "Edit") names.push("Read")
  if (behavior === "allow" && family(tool) === "Read") names.push("Edit")
  return Array.from(new Set(names))
}

const specifierMatches = (spec: string, absolute: string, ruleRoot: string): boolean => {
  let base = project
  let pattern = spec
  if (spec.startsWith("//")) [base, pattern] = ["/", spec.slice(1)]
  else if (spec.startsWith("~/")) [base, pattern] = [home, spec.slice(1)]
  else if (spec.startsWith("/")) base = ruleRoot
  else if (spec.startsWith("./")) pattern = spec.slice(1)
  const relative = base === "/" ? absolute.slice(1) : absolute.startsWith(`${base}/`)
    ? absolute.slice(base.length + 1)
    : undefined
  return relative !== undefined && relative !== "" && matcherOf(pattern).ignores(relative)
}

/** gitignore matchers by pattern (the library's, as Claude Code's; pure, so kept to keep the runs quick). */
const matchers = new Map<string, ReturnType<typeof ignore>>()
const matcherOf = (pattern: string) => {
  let matcher = matchers.get(pattern)
  if (matcher === undefined) matchers.set(pattern, matcher = ignore().add(pattern))
  return matcher
}

/** The rule of a behavior cited for a call: covering the tool, matching one of the forms, first as above. */
const firstRule = (
  rules: ReadonlyArray<PermissionContext.PermissionRule>,
  behavior: PermissionContext.RuleBehavior,
  tool: string,
  forms: ReadonlyArray<string>
) => {
  for (const name of covering(tool, behavior)) {
    const found = rules.find((rule) =>
      rule.behavior === behavior && rule.toolName === name &&
      (rule.specifier === undefined || forms.some((form) => specifierMatches(rule.specifier!, form, rule.root!)))
    )
    if (found !== undefined) return found
  }
  return undefined
}

const expected = (rules: ReadonlyArray<PermissionContext.PermissionRule>, tool: string, written: string) => {
  const joined = written.startsWith("~/") ? path.join(home, written.slice(2)) : path.resolve(project, written)
  const lexical = path.resolve(joined)
  // Joined as written: the kernel follows a link before the `..` after it.
  const real = kernelReal(written.startsWith("~/") || written.startsWith("/") ? joined : `${project}/${written}`)
  const guarded = lexical === real ? [real] : [lexical, real]
  const deny = firstRule(rules, "deny", tool, guarded)
  return {
    real,
    match: deny ?? firstRule(rules, "ask", tool, guarded),
    allow: firstRule(rules, "allow", tool, [real])
  }
}

const tools: Record<string, Tool.Any> = { Read, Edit, Write }

describe("the indexed rule lookup against a plain scan (issue 18)", () => {
  it.effect("the same deny, ask and allow rule is cited for every generated rule set and path", () =>
    Effect.gen(function*() {
      const fileSystem = yield* FileSystem.FileSystem
      const pathService = yield* Path.Path
      const directoryRealPaths = new Map<string, string>()
      FastCheck.assert(
        FastCheck.property(
          ruleSet,
          FastCheck.constantFrom(...paths),
          FastCheck.constantFrom("Read", "Edit", "Write"),
          (rules, written, toolName) => {
            const context = ToolUseContext.make({
              cwd: project,
              permissions: { mode: "default", rules, additionalDirectories: [] }
            })
            const env = PermissionRules.makeEnvironment({
              cwd: project,
              home,
              additionalDirectories: context.permissions.additionalDirectories,
              path: pathService,
              fileSystem,
              realPaths: "kernel",
              directoryRealPaths
            })
            const assessment = Effect.runSync(
              PermissionRules.assess(
                { tool: tools[toolName]!, input: { file_path: written }, context },
                { ruleSets: [rules, []], env }
              )
            )
            const want = expected(rules, toolName, written)
            expect(assessment.match?.rule).toBe(want.match)
            expect(assessment.match?.behavior).toBe(want.match?.behavior)
            expect(assessment.allowRules[0]).toBe(want.allow)
          }
        ),
        { numRuns: 200 }
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a deny on a link's target denies the call through the link, among a thousand other rules", () =>
    Effect.gen(function*() {
      const noise = Array.from(
        { length: 1_000 },
        (_, i) => [`Read(./src/module${i}/**)`, `Edit(//tmp/project${i}/**)`, `Read(~/notes${i}/*.md)`][i % 3]!
      )
      for (
        const [written, deny, tool] of [
          ["src/link-secrets/k.pem", `Read(//${project.slice(1)}/secrets/**)`, Read],
          ["src/link-secrets/k.pem", "Edit(./secrets/*.pem)", Write],
          ["lnk-out/fresh.ts", `Edit(//${outside.slice(1)}/**)`, Edit],
          ["dang", `Read(//${outside.slice(1)}/new.ts)`, Write],
          ["src/a/l.ts", "Read(/lib/**)", Read]
        ] as const
      ) {
        const result = yield* decide(
          { cwd: project, allow: [...noise, "Read", "Edit", "Write"], deny: [...noise.slice(0, 500), deny] },
          tool,
          { file_path: written }
        )
        expect(result.outcome, `${tool.name} ${written} under ${deny}`).toBe("deny")
        expect(result.decision.behavior === "deny" && result.decision.message).toContain(deny)
      }
    }).pipe(Effect.provide(NodeContext.layer)))
})
