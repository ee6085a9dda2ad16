/**
 * The import-cycle check (`npm run cycles`, scripts/cycles.ts) on small trees
 * made for each case, judged by the cycles it names; once as CI runs it, a
 * process judged by its exit status.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Cycles from "../scripts/cycles.js"

const root = path.join(import.meta.dirname, "..")
const script = path.join(root, "scripts", "cycles.ts")

/** A tree `packages/<pkg>/src/<file>` with these files, checked in this process or by the script as a child. */
const check = (files: Record<string, string>, how: "in-process" | "process" = "in-process") => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-cycles-"))
  try {
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(dir, "packages", name)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, text)
    }
    if (how === "in-process") {
      const report = Cycles.check(dir)
      return { status: report.passed ? 0 : 1, output: report.lines.join("\n") }
    }
    const run = spawnSync(process.execPath, ["--import", "tsx", script, dir], { cwd: root, encoding: "utf8" })
    return { status: run.status, output: run.stdout + run.stderr }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("the import-cycle check", () => {
  it("passes a tree whose only way back is type-only imports and exports", () => {
    const result = check({
      "core/src/A.ts": `import * as B from "./B.js"\nexport const a = B.b\nexport interface A { readonly n: number }\n`,
      "core/src/B.ts": `import type * as A from "./A.js"\nexport const b = 1\nexport type T = A.A\n`,
      "core/src/C.ts": `import { type A } from "./A.js"\nexport type { A }\nexport type { A as Alias } from "./A.js"\n`,
      "core/src/D.ts": `import { C } from "./C.js"\nexport const d = C\n`,
      "core/src/index.ts": `export * as A from "./A.js"\nexport * as D from "./D.js"\n`
    })
    expect(result.output).toContain("cycles: none")
    expect(result.status).toBe(0)
  })

  it("fails on a value import that closes a loop, naming the files and lines (as a process: exit 1)", () => {
    const result = check({
      "cli/src/Dispatch.ts": `import * as Render from "./Render.js"\nexport const line = Render.render\n`,
      "cli/src/Render.ts": `\nimport { line } from "./Dispatch.js"\nexport const render = () => line\n`
    }, "process")
    expect(result.status).toBe(1)
    expect(result.output).toContain(
      "packages/cli/src/Dispatch.ts → packages/cli/src/Render.ts (Dispatch.ts:1) → packages/cli/src/Dispatch.ts (Render.ts:2)"
    )
  })

  it("counts dynamic imports, re-exports, side-effect imports and workspace package names as edges", () => {
    const result = check({
      "cli/src/Run.ts": `export const run = () => import("./Terminal.js")\n`,
      "cli/src/Terminal.ts": `import "./Slash.js"\nexport const t = 1\n`,
      "cli/src/Slash.ts": `export * from "@switchyard/cli/Run"\n`,
      "core/src/Tool.ts": `import { x } from "@switchyard/tools"\nexport const tool = x\n`,
      "tools/src/index.ts": `export { tool as x } from "@switchyard/core/Tool"\n`
    })
    expect(result.status).toBe(1)
    expect(result.output).toContain("cycles: 2 import cycle(s)")
    expect(result.output).toContain("(Run.ts:1 dynamic)")
    expect(result.output).toContain("packages/cli/src/Run.ts (Slash.ts:1 export)")
    expect(result.output).toContain("packages/core/src/Tool.ts → packages/tools/src/index.ts (Tool.ts:1)")
  })

  it("reports every elementary cycle of a knot, each once", () => {
    const result = check({
      "cli/src/A.ts": `import "./B.js"\nimport "./C.js"\n`,
      "cli/src/B.ts": `import "./A.js"\nimport "./C.js"\n`,
      "cli/src/C.ts": `import "./A.js"\n`
    })
    expect(result.status).toBe(1)
    // A→B→A, A→B→C→A, A→C→A.
    expect(result.output).toContain("cycles: 3 import cycle(s)")
  })
})
