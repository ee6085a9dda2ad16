import * as path from "node:path"
import { defineConfig } from "vitest/config"
import { LongFirst } from "./test/support/sequencer.js"

// `--sequence.shuffle.files` on the command line asks vitest for its random order: a sequencer set here
// would take precedence over it, so ours is installed only when no shuffle was asked for.
const shuffled = process.argv.some((arg) => arg.startsWith("--sequence.shuffle"))

// How many files run at a time: three, or a whole number given as `--maxWorkers=N` / `--maxWorkers N`.
const maxWorkersArg = (): string | undefined => {
  const at = process.argv.findIndex((arg) => arg === "--maxWorkers" || arg.startsWith("--maxWorkers="))
  const arg = process.argv[at]
  return arg === undefined ? undefined : arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : process.argv[at + 1]
}
const workers = Number.isInteger(Number(maxWorkersArg())) ? Number(maxWorkersArg()) : 3

export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^@switchyard\/(core|tools|durable|cli)$/,
        replacement: path.join(__dirname, "packages/$1/src/index.ts")
      },
      {
        find: /^@switchyard\/(core|tools|durable|cli)\/(?!internal\/)(.*)$/,
        replacement: path.join(__dirname, "packages/$1/src/$2.ts")
      }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // SWITCHYARD_TEST_CPU=FILE records each file's CPU time (test/support/cpuReport.ts); each file
    // starts from fresh modules of ours and @effect/vitest's own `it` (test/support/freshFile.ts).
    setupFiles: ["test/support/cpuReport.ts", "test/support/freshFile.ts"],
    // A timeout only catches a hang: a test that starts the CLI a few times legitimately takes tens
    // of seconds on a loaded two-core machine, two files at a time (tests set longer ones themselves).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Three files at a time on two cores: vitest's default (cores - 1) runs one at a time, and two left
    // the cores half idle, since most long files wait (for CLI processes, a sandbox, strace, a server,
    // a timer) rather than work. Files running side by side share nothing: each worker has its own
    // state directory (VITEST_POOL_ID), and process markers are per test. `--maxWorkers=1` runs
    // them one by one again.
    maxWorkers: workers,
    // As many as at most: tinypool ends a worker left idle while more than `minWorkers` exist with an
    // unawaited timer, and at the end of a run that raced with the last file handed to it ("Terminating
    // worker thread", and test/surface.test.ts never ran, with three workers and `minWorkers: 1`).
    minWorkers: workers,
    // The long files start first (test/support/sequencer.ts): a long file that starts last ends the run late.
    sequence: shuffled ? {} : { sequencer: LongFirst },
    // A worker runs many files instead of one fresh process per file: Node keeps effect, @effect/* and
    // vitest loaded between them (27 core files, one worker: 94 → 46 s wall, 53 → 22 worker CPU-s).
    // Our own modules are still evaluated afresh per file (test/support/freshFile.ts), so module-level
    // state stays per file. Files share the worker process: no test may change process-wide state
    // (process.env, the cwd, listeners, globals) without restoring it.
    isolate: false
  }
})
