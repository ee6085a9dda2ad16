/**
 * The entry of the CLI's start-up snapshot (`bundle/snapshot.blob`, built by
 * scripts/snapshot.mjs, started by bin/switchyard): evaluated once, when the
 * snapshot is built, so a command starts with Effect, the engine, the tools and
 * the commands' modules already loaded, evaluated and compiled. What it may
 * not do at load: snapshotMain.ts.
 *
 * @internal
 */
import * as PrintCommand from "../Run.js"
import * as DispatchCommand from "../Dispatch.js"
import * as ToolsCommand from "../ToolsCommand.js"
import * as Main from "../main.js"
import * as Anthropic from "@switchyard/core/anthropic"
import * as JournalDatabase from "@switchyard/durable/JournalDatabase"
import * as Front from "../front.js"
import * as FastDispatch from "./fastDispatch.js"
import * as FastPrint from "./fastPrint.js"
import * as FastTools from "./fastTools.js"
import * as SnapshotMain from "./snapshotMain.js"

// Referenced so the bundler keeps (and the snapshot evaluates) the modules most commands run: the full
// command-line parser (main.ts, with @effect/cli) among them.
const evaluated = [
  Main,
  PrintCommand,
  DispatchCommand,
  ToolsCommand,
  Anthropic,
  JournalDatabase,
  FastTools,
  FastDispatch,
  FastPrint
]

SnapshotMain.install(evaluated, Front.start)
