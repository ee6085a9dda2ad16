/**
 * The CLI's modules form a DAG with one composition root (issue 23): no
 * import cycle among `packages/cli/src` (type-only imports aside, dynamic
 * imports counted), and the project's own modules are imported dynamically
 * only by the entry points (`main.ts`, `front.ts`), so a lazy import never
 * hides a cycle.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const src = path.join(import.meta.dirname, "..", "src")

const modules = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? modules(full) : entry.name.endsWith(".ts") ? [full] : []
  })

interface Edge {
  readonly to: string
  readonly dynamic: boolean
}

/** The relative imports of a module that exist at run time: static value imports, re-exports and `import()`. */
const edges = (file: string): ReadonlyArray<Edge> => {
  const text = fs.readFileSync(file, "utf8")
  const target = (spec: string) => path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts"))
  const found: Array<Edge> = []
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gm)) {
    if (match[1] === undefined) found.push({ to: target(match[2]!), dynamic: false })
  }
  for (const match of text.matchAll(/import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) {
    found.push({ to: target(match[1]!), dynamic: true })
  }
  return found
}

const graph = new Map(modules(src).map((file) => [file, edges(file)] as const))
const name = (file: string) => path.relative(src, file)

const cycles = (): ReadonlyArray<string> => {
  const state = new Map<string, "visiting" | "done">()
  const stack: Array<string> = []
  const found: Array<string> = []
  const visit = (file: string) => {
    state.set(file, "visiting")
    stack.push(file)
    for (const { to } of graph.get(file) ?? []) {
      if (state.get(to) === "visiting") found.push([...stack.slice(stack.indexOf(to)), to].map(name).join(" → "))
      else if (state.get(to) === undefined) visit(to)
    }
    stack.pop()
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file)
  return found
}

describe("the CLI's module graph", () => {
  it("every relative import names a module that exists", () => {
    const missing = [...graph].flatMap(([file, list]) =>
      list.filter((edge) => !graph.has(edge.to)).map((edge) => `${name(file)} → ${name(edge.to)}`)
    )
    expect(missing).toEqual([])
  })

  it("has no import cycle (type-only imports aside)", () => {
    expect(cycles()).toEqual([])
  })

  it("imports its own modules dynamically only from main.ts and front.ts", () => {
    const roots = new Set(["main.ts", "front.ts"])
    const dynamic = [...graph].flatMap(([file, list]) =>
      roots.has(name(file)) ? [] : list.filter((e) => e.dynamic).map((e) => `${name(file)} → ${name(e.to)}`)
    )
    expect(dynamic).toEqual([])
  })

  it("the check sees a cycle: a module importing itself is one", () => {
    const self = path.join(src, "Run.ts")
    graph.set(self, [...(graph.get(self) ?? []), { to: self, dynamic: false }])
    try {
      expect(cycles()).toContain("Run.ts → Run.ts")
    } finally {
      graph.set(self, edges(self))
    }
  })
})
