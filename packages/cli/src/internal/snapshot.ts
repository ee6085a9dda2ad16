/**
 * The entry of the CLI's start-up snapshot (`bundle/snapshot.blob`, built by
 * scripts/snapshot.mjs, started by bin/switchyard): evaluated once, when the
 * snapshot is built, so a command starts with Effect, the engine, the tools and
 * the commands' modules already loaded, evaluated and compiled.
 *
 * What is evaluated here is frozen into every process started from the
 * snapshot, so nothing here (or in a module it imports statically) may read the
 * environment, the time, the working directory, the process id or a random
 * number at load time (the journal's owner id is made on first use for this
 * reason). Effect's default `Random` is the one exception it cannot avoid: it
 * is seeded at load, and Node draws UUIDs in batches: both are renewed for each process (processRandomness.ts).
 *
 * @internal
 */
import * as PrintCommand from "../Run.js"
import * as DispatchCommand from "../Dispatch.js"
import * as ToolsCommand from "../ToolsCommand.js"
import * as Main from "../main.js"
import * as Anthropic from "@switchyard/core/anthropic"
import * as JournalDatabase from "@switchyard/durable/JournalDatabase"
import * as fs from "node:fs"
import * as v8 from "node:v8"
import * as Front from "../front.js"
import * as ProcessRandomness from "./processRandomness.js"
import * as FastTools from "./fastTools.js"
import * as WarmUp from "./snapshotWarmUp.js"

/** The binary the snapshot stands for (bin/switchyard.js), set by the build: `process.argv[1]` for main.ts. */
declare const SWITCHYARD_SNAPSHOT_BIN: string

// Referenced so the bundler keeps (and the snapshot evaluates) the modules most commands run: the full
// command-line parser (main.ts, with @effect/cli) among them.
const evaluated = [Main, PrintCommand, DispatchCommand, ToolsCommand, Anthropic, JournalDatabase, FastTools]

if (v8.startupSnapshot.isBuildingSnapshot()) {
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
    Front.start(process.argv.slice(2)).catch((error: unknown) => {
      process.stderr.write(
        `switchyard: could not start (${error instanceof Error ? error.message : String(error)}).\n`
      )
      process.exitCode = 1
    })
  })
}
