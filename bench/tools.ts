/**
 * Issue 3: Grep and Glob on a large tree (this repository's node_modules) side
 * by side with `rg` and `rg --files`, both Grep engines; Read of a 10 MB file
 * against a bare `readFile` + split.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Execution, Messages, Results, ToolUseContext } from "@switchyard/core"
import * as Glob from "@switchyard/tools/Glob"
import * as Grep from "@switchyard/tools/Grep"
import * as Read from "@switchyard/tools/Read"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { compare, fmt, note, promised, ratio, record, recordStats, timeEffect, timePromise } from "./harness.js"

const SUITE = "tools"
const root = path.join(import.meta.dirname, "..")
const tree = path.join(root, "node_modules")

const runOne = (
  tool: typeof Grep.Grep | typeof Glob.Glob | typeof Read.Read,
  input: unknown,
  engine?: Grep.Engine,
  globEngine: Glob.Engine = "auto"
) =>
  Effect.gen(function*() {
    const context = yield* Ref.make(ToolUseContext.make({ cwd: root, sessionId: "bench" }))
    const env: Execution.Environment = { tools: [tool as never], pool: [tool as never], context }
    const result = yield* Execution.runToolUse(Messages.toolUse("b", tool.name, input), env).pipe(
      Stream.filter((e) => e._tag === "Result"),
      Stream.runHead
    )
    return result
  }).pipe(
    Effect.provide(Layer.mergeAll(NodeContext.layer, Results.layerMemory)),
    engine === undefined ? (e) => e : Effect.provideService(Grep.GrepEngine, engine),
    Effect.provideService(Glob.GlobEngine, globEngine)
  )

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const hasRg = spawnSync("rg", ["--version"]).status === 0
  const queries = [
    {
      label: "Grep files_with_matches 'createRequire'",
      input: { pattern: "createRequire", path: tree },
      rg: ["-l", "createRequire", tree]
    },
    {
      label: "Grep content -n 'Semaphore' glob *.d.ts",
      input: { pattern: "Semaphore", path: tree, glob: "*.d.ts", output_mode: "content", "-n": true },
      rg: ["-n", "-g", "*.d.ts", "Semaphore", tree]
    }
  ]
  for (const q of queries) {
    const builtin = await timeEffect(runOne(Grep.Grep, q.input, "builtin"), { samples: 3, warmup: 1 })
    if (hasRg) {
      const viaRg = await timeEffect(runOne(Grep.Grep, q.input, "ripgrep"), { samples: 3, warmup: 1 })
      const raw = await timePromise(
        async () => void spawnSync("rg", ["--no-config", ...q.rg], { maxBuffer: 1 << 28 }),
        { samples: 3, warmup: 1 }
      )
      record(SUITE, `${q.label}: raw rg (ms)`, fmt(raw, 1))
      record(SUITE, `${q.label}: Grep via rg (ms)`, fmt(viaRg, 1), `${fmt(viaRg / raw, 2)}× raw rg`)
      record(SUITE, `${q.label}: Grep built-in engine (ms)`, fmt(builtin, 1), `${fmt(builtin / raw, 1)}× raw rg`)
    } else {
      record(SUITE, `${q.label}: Grep built-in engine (ms)`, fmt(builtin, 1), "rg not installed")
    }
  }
  if (hasRg) {
    const g = await compare({
      rgFiles: async () =>
        void spawnSync("rg", ["--files", "--no-ignore", "-g", "*.d.ts", tree], { maxBuffer: 1 << 28 }),
      viaRipgrep: promised(runOne(Glob.Glob, { pattern: "**/*.d.ts", path: tree }, undefined, "auto")),
      walk: promised(runOne(Glob.Glob, { pattern: "**/*.d.ts", path: tree }, undefined, "walk"))
    }, { rounds: 11, warmup: 2 })
    recordStats(SUITE, "Glob '**/*.d.ts' in node_modules: rg --files -g '*.d.ts'", g.rgFiles, "ms")
    recordStats(
      SUITE,
      "Glob '**/*.d.ts' in node_modules: Glob tool, rg engine",
      g.viaRipgrep,
      "ms",
      `${
        ratio(g.viaRipgrep, g.rgFiles)
      } rg --files (goal ≤ 1.5×; includes the full tool pipeline and a stat of every match for the mtime sort, done while rg still lists)`
    )
    recordStats(
      SUITE,
      "Glob '**/*.d.ts' in node_modules: Glob tool, FileSystem walk",
      g.walk,
      "ms",
      `${ratio(g.walk, g.rgFiles, 1)} rg --files (the engine for overlays and machines without rg)`
    )
    note(
      SUITE,
      "Glob's rg engine runs `rg --files --no-ignore --hidden --follow` (with `--glob` when the pattern allows), matches each listed path as it arrives by tinyglobby's rule (the walk's), and stats each match for the newest-first sort while rg is still listing. What it does beyond `rg --files` is that stat per match (rg itself lists from directory entries) and the tool's pipeline; the FileSystem walk, for overlays and machines without rg, stats every entry through the platform service."
    )
  } else {
    const walkMs = await timeEffect(runOne(Glob.Glob, { pattern: "**/*.d.ts", path: tree }), { samples: 3, warmup: 1 })
    record(SUITE, "Glob '**/*.d.ts' in node_modules: Glob tool (ms)", fmt(walkMs, 1), "rg not installed")
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-bench-"))
  const big = path.join(dir, "big.txt")
  const line = "const value = computeSomething(alpha, beta, gamma) // a line of about eighty characters\n"
  fs.writeFileSync(big, line.repeat(Math.ceil(10_000_000 / line.length)))
  const raw = await timePromise(async () => {
    const text = await fs.promises.readFile(big, "utf8")
    text.split("\n").slice(0, 2000).map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n")
  }, { samples: 5 })
  const viaTool = await timeEffect(runOne(Read.Read, { file_path: big }), { samples: 5 })
  record(SUITE, "Read of a 10 MB file: readFile + split (ms)", fmt(raw, 1))
  record(
    SUITE,
    "Read of a 10 MB file: Read tool, full pipeline (ms)",
    fmt(viaTool, 1),
    `${fmt(viaTool / raw, 2)}× the bare read (includes the sha256 for the file-state cache)`
  )
  fs.rmSync(dir, { recursive: true, force: true })
  void execFileSync
}
