/**
 * Tests that need a system program skip where it is missing, with one line
 * naming the Debian package that provides it.
 */
import { spawnSync } from "node:child_process"

const noticed = new Set<string>()

/**
 * Whether `program` is on the PATH; when it is not, one line (once per
 * program) says which package to install.
 */
export const has = (program: string, debianPackage: string = program): boolean => {
  const found = spawnSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" }).status === 0
  if (!found && !noticed.has(program)) {
    noticed.add(program)
    process.stderr.write(`skipped: tests that need ${program} (apt-get install ${debianPackage})\n`)
  }
  return found
}
