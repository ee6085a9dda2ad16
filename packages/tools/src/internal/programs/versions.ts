/**
 * Version queries: programs whose `--version` alone prints a version.
 *
 * @internal
 */
import type { Word } from "./invocation.js"

/** Programs whose `--version` (alone) prints a version and does nothing else. */
export const VERSION_ONLY: ReadonlyArray<string> = [
  "node", "npm", "npx", "yarn", "pnpm", "python", "python3", "pip", "pip3", "ruby", "gem", "rustc", "cargo",
  "gcc", "g++", "cc", "clang", "make", "cmake", "tsc", "deno", "bun", "perl", "php", "bash", "curl", "wget",
  "docker", "kubectl", "terraform", "java", "javac", "mvn", "gradle", "dotnet", "swift", "go", "awk", "gawk",
  "mawk", "sed", "tar", "gzip", "unzip", "tmux", "vim", "less", "man", "ssh", "rsync", "zip", "bwrap"
]

export const versionQuery = (args: ReadonlyArray<Word>): boolean =>
  args.length === 1 && !args[0]!.dynamic && args[0]!.value === "--version"
