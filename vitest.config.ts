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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks"
    // One file at a time (vitest's default on two cores). Files can run side by side
    // (`--maxWorkers=2`: per-worker state directories, per-test process markers), which keeps both
    // cores busy while tests wait for child processes; on a loaded machine it pushed CLI tests past
    // their 30 s timeouts, so it is not the default.
  }
})
