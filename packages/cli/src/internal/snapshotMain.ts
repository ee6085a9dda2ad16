/**
 * What both start-up snapshots (snapshot.ts, snapshotLight.ts) do at build time: run the warm-up, and install
 * the function a process started from the blob runs first.
 *
 * What is evaluated in a snapshot is frozen into every process started from it, so nothing a snapshot's entry
 * imports statically may read the environment, the time, the working directory, the process id or a random
 * number at load time (the journal's owner id is made on first use for this reason). Effect's default `Random`
 * is the one exception it cannot avoid: it is seeded at load, and Node draws UUIDs in batches: both are renewed
 * for each process (processRandomness.ts).
 *
 * @internal
 */
import * as fs from "node:fs"
import * as v8 from "node:v8"
import * as ProcessRandomness from "./processRandomness.js"
import * as WarmUp from "./snapshotWarmUp.js"

/** The binary the snapshot stands for (bin/switchyard.js), set by the build: `process.argv[1]` for main.ts. */
declare const SWITCHYARD_SNAPSHOT_BIN: string

/**
 * While the snapshot is built: warm up, and make `start` (given the command line) the started process's main.
 * `evaluated` are the entry's modules, referenced so that the bundler keeps them (and the build evaluates them).
 */
export const install = (
  evaluated: ReadonlyArray<unknown>,
  start: (args: ReadonlyArray<string>) => Promise<void>
): void => {
  if (!v8.startupSnapshot.isBuildingSnapshot()) return
  // The build (scripts/snapshot.mjs) reports a failed warm-up from this file.
  const report = process.env["SWITCHYARD_SNAPSHOT_REPORT"]
  void WarmUp.run().then((failure) => {
    if (failure !== undefined && report !== undefined) fs.writeFileSync(report, failure)
  })
  v8.startupSnapshot.setDeserializeMainFunction(() => {
    void evaluated
    ProcessRandomness.renew()
    // Started as `node --snapshot-blob FILE args…`: argv[1] is the first argument; main.ts expects the script there.
    process.argv.splice(1, 0, SWITCHYARD_SNAPSHOT_BIN)
    start(process.argv.slice(2)).catch((error: unknown) => {
      process.stderr.write(
        `switchyard: could not start (${error instanceof Error ? error.message : String(error)}).\n`
      )
      process.exitCode = 1
    })
  })
}
