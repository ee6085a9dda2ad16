/**
 * The order test files start in (vitest.config.ts `sequence.sequencer`): the files known to be long
 * first, longest first, then the rest in vitest's own order (its duration cache of earlier runs, else
 * larger files first).
 *
 * A worker runs one file at a time, so a 60 s file that starts last ends the run up to 60 s after the
 * others. vitest's cache orders by duration only where an earlier run left one
 * (node_modules/.vite/vitest/…/results.json): a fresh clone, as in CI, started with the largest files
 * by bytes, which are not the longest. The list below is measured (`npm test -- --reporter=json`, an
 * idle two-core machine), rounded; a file missing from it only starts later, so it cannot be wrong in a
 * way that fails a test. `--sequence.shuffle.files` still shuffles (vitest.config.ts does not install
 * this sequencer then).
 */
import * as path from "node:path"
import { BaseSequencer } from "vitest/node"
import type { TestSpecification } from "vitest/node"

/** Seconds of the files that take longest, by path from the repository root. */
export const longFiles: Readonly<Record<string, number>> = {
  "test/durable-crash.test.ts": 60,
  "packages/tools/test/ShellFootprint.observed.test.ts": 55,
  "test/front.test.ts": 33,
  "test/install.test.ts": 32,
  "test/mcpCli.test.ts": 31,
  "test/sandboxEffects.test.ts": 30,
  "packages/core/test/Invariants.test.ts": 30,
  "packages/tools/test/ShellCommand.oracle.test.ts": 25,
  "test/cli.test.ts": 25,
  "test/cli-claude-habits.test.ts": 24,
  "test/durable-postgres.test.ts": 24,
  "test/mcp.test.ts": 19,
  "test/snapshot.test.ts": 13,
  "test/mcpScopes.test.ts": 13,
  "test/attack-shell-classes.test.ts": 13,
  "test/cli-headless.test.ts": 12,
  "test/speculate.test.ts": 11,
  "test/mcpApproval.test.ts": 11,
  "packages/tools/test/Sandbox.test.ts": 10,
  "test/cli-completions.test.ts": 9,
  "test/cli-sessions.test.ts": 8,
  "test/permissionEffects.test.ts": 8
}

const root = path.join(import.meta.dirname, "..", "..")

/** Known-long files first (longest first); the others keep the order vitest's own sequencer gives them. */
export class LongFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const ordered = await super.sort(files)
    const seconds = (file: TestSpecification) => longFiles[path.relative(root, file.moduleId)] ?? 0
    // Array.prototype.sort is stable: files that are not listed keep vitest's order among themselves.
    return ordered.sort((a, b) => seconds(b) - seconds(a))
  }
}
