import * as path from "node:path"
import { defineConfig } from "vitest/config"

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
    // Two files at a time: on two cores, vitest's default (cores - 1) runs one at a time and leaves a
    // core idle whenever a test waits for a child process, a sandbox, a server or a timer. Files
    // running side by side share nothing: each worker has its own state directory (VITEST_POOL_ID),
    // and process markers are per test. `--maxWorkers=1` runs them one by one again.
    maxWorkers: 2,
    minWorkers: 1,
    // A worker runs many files instead of one fresh process per file: Node keeps effect, @effect/* and
    // vitest loaded between them (27 core files, one worker: 94 → 46 s wall, 53 → 22 worker CPU-s).
    // Our own modules are still evaluated afresh per file (test/support/freshFile.ts), so module-level
    // state stays per file. Files share the worker process: no test may change process-wide state
    // (process.env, the cwd, listeners, globals) without restoring it.
    isolate: false
  }
})
