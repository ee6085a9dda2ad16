/**
 * Memory and spilling: peak RSS of a child process dispatching 10 000 calls
 * whose results are 100 KB each (every one spilled to the file store), next
 * to the same child dispatching nothing; and the cost of spilling a large
 * result through `Results.layerDirectory` against a plain `fs.writeFile`.
 */
import { Batches, type Execution, Messages, Results, Tool, ToolUseContext } from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { compare, note, ratio, recordStats, scale, stats } from "./harness.js"

const SUITE = "memory"
const RESULT_CHARS = 100_000

const big = Tool.make("Big", {
  description: "returns 100 KB",
  input: Schema.Struct({ n: Schema.Number }),
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  // A fresh string per call, as a real tool's output would be.
  call: (input) => Effect.sync(() => `${input.n}`.padEnd(RESULT_CHARS, "x"))
})

const dispatch = (n: number, directory: string) =>
  Effect.gen(function*() {
    const calls = Array.from({ length: n }, (_, i) => Messages.toolUse(`t${i}`, "Big", { n: i }))
    const context = yield* Ref.make(ToolUseContext.make({ cwd: directory, sessionId: "bench" }))
    const env: Execution.Environment = { tools: [big], pool: [big], context }
    yield* Stream.runDrain(Batches.runTools(calls, env, { concurrency: 10 }))
  }).pipe(
    Effect.provide(Results.layerDirectory(directory)),
    Effect.withTracerEnabled(false)
  )

/** In the child: dispatch, then print the peak RSS in MB. */
const child = async (n: number) => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-memory-"))
  try {
    await Effect.runPromise(dispatch(n, directory))
    console.log(JSON.stringify({ maxRssMB: process.resourceUsage().maxRSS / 1024 }))
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

/**
 * The child runs this file compiled to plain JavaScript (esbuild, packages left
 * to node_modules), so no TypeScript loader's memory is counted.
 */
const compiled = async (): Promise<string> => {
  // Inside the repository, so that the packages resolve from node_modules.
  const out = path.join(import.meta.dirname, "..", "node_modules", ".cache", "switchyard-bench", "memory.mjs")
  await esbuild.build({
    entryPoints: [import.meta.filename],
    bundle: true,
    packages: "external",
    format: "esm",
    platform: "node",
    outfile: out,
    logLevel: "warning"
  })
  return out
}

const peak = (script: string, n: number): number => {
  const result = spawnSync(process.execPath, [script, "--child", String(n)], {
    encoding: "utf8",
    cwd: path.join(import.meta.dirname, "..")
  })
  if (result.status !== 0) throw new Error(`memory child failed: ${result.stderr}`)
  return (JSON.parse(result.stdout.trim().split("\n").at(-1)!) as { maxRssMB: number }).maxRssMB
}

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const rounds = 3
  const script = await compiled()
  const idle: Array<number> = []
  const full: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    idle.push(peak(script, 0))
    full.push(peak(script, 10_000))
  }
  fs.rmSync(script, { force: true })
  const idleStats = stats(idle)
  const fullStats = stats(full)
  recordStats(SUITE, "peak RSS, child that dispatches nothing (same imports)", idleStats, "MB")
  recordStats(
    SUITE,
    "peak RSS, 10 000 calls × 100 KB results (all spilled)",
    fullStats,
    "MB",
    `goal < 250 MB; ${(fullStats.median - idleStats.median).toFixed(0)} MB over the idle child`
  )

  // Spilling: the store's persist against writing the same text with fs, interleaved, 200 files per sample. The
  // store writes a temp file and renames it (a reader never sees half a file), so plain fs doing the same is a
  // second peer.
  // In memory when the machine has a tmpfs, so the figures are the writers' own cost, not the disk's writeback
  // (which otherwise lands on whichever candidate runs when the dirty-page limit is hit).
  const spillRoot = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir()
  const directory = fs.mkdtempSync(path.join(spillRoot, "switchyard-spill-"))
  const plainDir = path.join(directory, "plain")
  const renamedDir = path.join(directory, "renamed")
  fs.mkdirSync(plainDir)
  fs.mkdirSync(renamedDir)
  const text = "y".repeat(RESULT_CHARS)
  const perSample = 200
  let round = 0
  const persist = Effect.gen(function*() {
    const store = yield* Results.ResultStore
    round++
    for (let i = 0; i < perSample; i++) yield* store.persist("bench", `r${round}-${i}`, text)
  }).pipe(Effect.provide(Results.layerDirectory(path.join(directory, "store"))))
  const t = await compare({
    plain: async () => {
      round++
      for (let i = 0; i < perSample; i++) await fs.promises.writeFile(path.join(plainDir, `r${round}-${i}.txt`), text)
    },
    renamed: async () => {
      round++
      for (let i = 0; i < perSample; i++) {
        const file = path.join(renamedDir, `r${round}-${i}.txt`)
        await fs.promises.writeFile(`${file}.tmp`, text)
        await fs.promises.rename(`${file}.tmp`, file)
      }
    },
    store: () => Effect.runPromise(persist)
  }, { rounds: 11, warmup: 2 })
  fs.rmSync(directory, { recursive: true, force: true })
  const perFile = 1000 / perSample
  recordStats(SUITE, "write a 100 KB result: fs.promises.writeFile", scale(t.plain, perFile), "µs")
  recordStats(
    SUITE,
    "write a 100 KB result: fs.promises.writeFile to a temp file + rename",
    scale(t.renamed, perFile),
    "µs",
    `${ratio(t.renamed, t.plain)} plain writeFile (the same atomicity as the store)`
  )
  recordStats(
    SUITE,
    "spill a 100 KB result: Results.layerDirectory persist",
    scale(t.store, perFile),
    "µs",
    `${ratio(t.store, t.plain)} plain writeFile (goal ≤ 1.3×), ${
      ratio(t.store, t.renamed)
    } writeFile + rename; a temp file and a rename, so a reader never sees half a file`
  )
  note(
    SUITE,
    "Peak RSS is the child's `process.resourceUsage().maxRSS` (the child is this suite compiled to JavaScript, on the built packages). Spilling is timed 200 files per sample on a tmpfs (/dev/shm, else the temp directory), so that disk writeback does not decide the ratio; every side writes the same bytes, one file at a time. The store does what plain `writeFile` + `rename` does (a temp file, then the rename that makes it appear whole) with `node:fs` callbacks and a reused encode buffer, so its cost over plain `writeFile` is the rename (and the temp file's own name), about what plain `writeFile` + `rename` pays."
  )
}

if (process.argv[2] === "--child") await child(Number(process.argv[3]))
