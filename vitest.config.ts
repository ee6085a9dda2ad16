import * as path from "node:path"
import { defineConfig } from "vitest/config"

const src = (pkg: string) => path.join(__dirname, "packages", pkg, "src")

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@switchyard\/(core|tools|durable|cli)$/, replacement: path.join(__dirname, "packages/$1/src/index.ts") },
      { find: /^@switchyard\/(core|tools|durable|cli)\/(.*)$/, replacement: path.join(__dirname, "packages/$1/src/$2.ts") }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks"
  }
})
