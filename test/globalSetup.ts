/**
 * The CLI tests run the built `switchyard` binary as a child process: make
 * sure `dist/` matches the sources (an incremental `tsc -b`, quick when
 * nothing changed).
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"

export default function setup() {
  const root = path.join(import.meta.dirname, "..")
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-b", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit"
  })
}
