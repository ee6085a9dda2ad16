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
    // SWITCHYARD_TEST_CPU=FILE records each file's CPU time (test/support/cpuReport.ts).
    setupFiles: ["test/support/cpuReport.ts"],
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
    minWorkers: 1
    // Files stay isolated (a fresh module graph each): `isolate: false` cut the collect CPU about 3×
    // (16 small files: 54 → 16 CPU-s), but tests on the TestClock then read times shifted by earlier
    // files (StreamingExecutor, QueryLoop, Execution, ReplayModel); see CONTRIBUTING.md.
  }
})
