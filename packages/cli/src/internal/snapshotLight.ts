/**
 * The entry of the light start-up snapshot (`bundle/snapshot-light.blob`):
 * only what `tools list [--json]` and `dispatch FILE` run (the engine, the
 * tools, the front's fast paths), without the full parser, the Anthropic SDK,
 * the journal or the terminal UI. Deserialising a blob costs CPU by its size
 * before any work (bench/REPORT.md, startup), so bin/switchyard starts these
 * commands, the ones scripts call most, from this smaller one
 * (frontStart.fastCommand says which). What it may not do at load:
 * snapshotMain.ts.
 *
 * @internal
 */
import * as FastDispatch from "./fastDispatch.js"
import * as FastTools from "./fastTools.js"
import * as FrontStart from "./frontStart.js"
import * as SnapshotMain from "./snapshotMain.js"

// Referenced so the bundler keeps (and the snapshot evaluates) the fast paths' modules.
const evaluated = [FastTools, FastDispatch]

const refused = (args: ReadonlyArray<string>) => () =>
  Promise.reject(
    new Error(`the light snapshot runs only \`tools list\` and \`dispatch FILE\`, not \`${args.join(" ")}\``)
  )

SnapshotMain.install(evaluated, (args) =>
  FrontStart.start(args, {
    full: refused(args),
    tools: () => Promise.resolve(FastTools),
    dispatch: () => Promise.resolve(FastDispatch),
    print: refused(args)
  }))
