/**
 * The entry of the print start-up snapshot (`bundle/snapshot-print.blob`):
 * only what `-p PROMPT` runs (fastPrint.ts: the engine, the tools, the
 * conversation, the journal and the Anthropic SDK), without the full parser
 * (main.ts, `@effect/cli`), the terminal UI or the other commands.
 * Deserialising a blob costs CPU and memory by its size before any work
 * (bench/REPORT.md, startup), so bin/switchyard starts the one-shot call
 * scripts and hooks make most from this smaller one (frontStart.fastCommand
 * says which). What it may not do at load: snapshotMain.ts.
 *
 * @internal
 */
import * as Anthropic from "@switchyard/core/anthropic"
import * as JournalDatabase from "@switchyard/durable/JournalDatabase"
import * as FastPrint from "./fastPrint.js"
import * as FrontStart from "./frontStart.js"
import * as SnapshotMain from "./snapshotMain.js"

// Referenced so the bundler keeps (and the snapshot evaluates) the modules `-p` runs, the ones it imports on
// first use (the model's SDK, the journal's database) among them.
const evaluated = [FastPrint, Anthropic, JournalDatabase]

const refused = (args: ReadonlyArray<string>) => () =>
  Promise.reject(new Error(`the print snapshot runs only \`-p PROMPT\`, not \`${args.join(" ")}\``))

SnapshotMain.install(evaluated, (args) =>
  FrontStart.start(args, {
    full: refused(args),
    tools: refused(args),
    dispatch: refused(args),
    print: () => Promise.resolve(FastPrint)
  }))
