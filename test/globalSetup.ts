/**
 * The CLI tests run the built `switchyard` binary as a child process: make
 * sure `dist/` and the CLI bundle match the sources (an incremental `tsc -b`
 * and a bundle rebuilt only when a source changed, quick when nothing did).
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"

export default function setup() {
  const root = path.join(import.meta.dirname, "..")
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-b", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit"
  })
  execFileSync(process.execPath, [path.join(root, "packages/cli/build.mjs")], { cwd: root, stdio: "inherit" })
}
