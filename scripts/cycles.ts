/**
 * `npm run cycles [-- ROOT]`: the import-cycle check. Reads every module of
 * `packages/<name>/src` with the TypeScript compiler's parser, takes the edges
 * that exist at run time — static imports and re-exports, side-effect
 * imports, and `import()` of a literal path — and reports every cycle among
 * them; it exits 1 when there is one. Type-only imports and exports
 * (`import type`, `export type`, and imports whose every name is `type`)
 * vanish at compile time, so they are not edges.
 *
 * A specifier is followed when it is relative (`./Run.js` → `Run.ts`) or names
 * a workspace package (`@switchyard/core/Tool` → `packages/core/src/Tool.ts`);
 * third-party packages are leaves.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

/** An import of `to` by `from` at `line`, and how it was written. */
export interface Edge {
  readonly from: string
  readonly to: string
  readonly line: number
  readonly kind: "import" | "export" | "dynamic"
}

const isTypeOnlyImport = (node: ts.ImportDeclaration): boolean => {
  const clause = node.importClause
  if (clause === undefined) return false
  if (clause.isTypeOnly) return true
  if (clause.name !== undefined) return false
  const bindings = clause.namedBindings
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
}

const isTypeOnlyExport = (node: ts.ExportDeclaration): boolean => {
  if (node.isTypeOnly) return true
  const clause = node.exportClause
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
}

/** The run-time imports of one source file, as specifiers with their line and kind. */
export const importsOf = (
  fileName: string,
  text: string
): Array<{ readonly specifier: string; readonly line: number; readonly kind: Edge["kind"] }> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<{ specifier: string; line: number; kind: Edge["kind"] }> = []
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!isTypeOnlyImport(node)) {
        found.push({ specifier: node.moduleSpecifier.text, line: lineOf(node), kind: "import" })
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!isTypeOnlyExport(node)) {
        found.push({ specifier: node.moduleSpecifier.text, line: lineOf(node), kind: "export" })
      }
    } else if (
      ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0]!)
    ) {
      found.push({ specifier: (node.arguments[0] as ts.StringLiteralLike).text, line: lineOf(node), kind: "dynamic" })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The `.ts` file a specifier names, or `undefined` for a third-party package. */
const resolve = (root: string, from: string, specifier: string): string | undefined => {
  const workspace = /^@switchyard\/([a-z]+)(?:\/(.+))?$/.exec(specifier)
  const base = workspace !== null
    ? path.join(root, "packages", workspace[1]!, "src", workspace[2] ?? "index")
    : specifier.startsWith(".")
    ? path.resolve(path.dirname(from), specifier)
    : undefined
  if (base === undefined) return undefined
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, path.join(base, "index.ts")]
  return candidates.find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile())
}

const sourcesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourcesUnder(full)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

/** Every run-time import edge among the modules of `packages/<name>/src` under `root`. */
export const edgesOf = (root: string): Array<Edge> =>
  sourcesOf(root).flatMap((from) =>
    importsOf(from, fs.readFileSync(from, "utf8")).flatMap(({ kind, line, specifier }) => {
      const to = resolve(root, from, specifier)
      return to === undefined ? [] : [{ from, to, line, kind }]
    })
  )

/** Every module of `packages/<name>/src` under `root`. */
export const sourcesOf = (root: string): Array<string> => {
  const packages = path.join(root, "packages")
  return fs.readdirSync(packages)
    .map((name) => path.join(packages, name, "src"))
    .filter((dir) => fs.existsSync(dir))
    .flatMap(sourcesUnder)
}

/**
 * The cycles of the graph: for each strongly connected component with more
 * than one module (or a module importing itself), its elementary cycles, each
 * listed once, starting at its smallest module; at most `limit` a component.
 */
export const cyclesOf = (edges: ReadonlyArray<Edge>, limit = 100): Array<Array<Edge>> => {
  const out = new Map<string, Array<Edge>>()
  for (const edge of edges) {
    const list = out.get(edge.from) ?? []
    if (!list.some((other) => other.to === edge.to)) list.push(edge)
    out.set(edge.from, list)
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  let next = 0
  const strongConnect = (node: string): void => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const { to } of out.get(node) ?? []) {
      if (!index.has(to)) {
        strongConnect(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      components.push(component)
    }
  }
  const nodes = [...new Set(edges.flatMap((edge) => [edge.from, edge.to]))].sort()
  for (const node of nodes) if (!index.has(node)) strongConnect(node)

  const cycles: Array<Array<Edge>> = []
  for (const component of components) {
    const members = new Set(component)
    const selfLoop = component.length === 1 && (out.get(component[0]!) ?? []).some((edge) => edge.to === component[0])
    if (component.length === 1 && !selfLoop) continue
    // Elementary cycles through each start, visiting only larger modules, so each cycle is found once.
    const sorted = [...component].sort()
    let found = 0
    for (const start of sorted) {
      const path: Array<Edge> = []
      const visiting = new Set<string>([start])
      const walk = (node: string): void => {
        for (const edge of out.get(node) ?? []) {
          if (found >= limit || !members.has(edge.to) || edge.to < start) continue
          if (edge.to === start) {
            cycles.push([...path, edge])
            found++
          } else if (!visiting.has(edge.to)) {
            visiting.add(edge.to)
            path.push(edge)
            walk(edge.to)
            path.pop()
            visiting.delete(edge.to)
          }
        }
      }
      walk(start)
    }
  }
  return cycles
}

/** One line per cycle: `a.ts → b.ts (b.ts:12 dynamic) → a.ts`. */
export const formatCycle = (root: string, cycle: ReadonlyArray<Edge>): string => {
  const name = (file: string) => path.relative(root, file)
  const steps = cycle.map((edge) =>
    `→ ${name(edge.to)} (${path.basename(edge.from)}:${edge.line}${edge.kind === "import" ? "" : ` ${edge.kind}`})`
  )
  return `${name(cycle[0]!.from)} ${steps.join(" ")}`
}

/** The check's report for the tree at `root`: its lines, and whether it passed. */
export const check = (root: string): { readonly passed: boolean; readonly lines: ReadonlyArray<string> } => {
  const edges = edgesOf(root)
  const cycles = cyclesOf(edges)
  if (cycles.length === 0) {
    return { passed: true, lines: [`cycles: none among ${sourcesOf(root).length} modules (type-only imports aside)`] }
  }
  return {
    passed: false,
    lines: [
      `cycles: ${cycles.length} import cycle(s) among the source modules (type-only imports aside):`,
      ...cycles.map((cycle) => `  ${formatCycle(root, cycle)}`)
    ]
  }
}

// The repository's root, or the directory given as the first argument.
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === import.meta.filename) {
  const report = check(path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..")))
  for (const line of report.lines) console.log(line)
  if (!report.passed) process.exitCode = 1
}
