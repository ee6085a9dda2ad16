import * as path from "node:path"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@switchyard\/(core|tools|cli)$/, replacement: path.join(__dirname, "packages/$1/src/index.ts") },
      {
        find: /^@switchyard\/(core|tools|cli)\/(?!internal\/)(.*)$/,
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
    pool: "forks",
    // Vitest's default is one worker per core less one: on two cores, one file at a time, and a core
    // idle whenever a test waits for a child process (the CLI, tmux, MCP servers, bwrap, git). Two
    // files at a time keep both busy; `--maxWorkers=1` runs them one by one again.
    maxWorkers: 2,
    minWorkers: 1
  }
})
