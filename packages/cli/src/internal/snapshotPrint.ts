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
import * as childProcess from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// Referenced so the bundler keeps (and the snapshot evaluates) the modules `-p` runs, the ones it imports on
// first use (the model's SDK, the journal's database) among them.
const evaluated = [FastPrint, Anthropic, JournalDatabase]

const refused = (args: ReadonlyArray<string>) => () =>
  Promise.reject(new Error(`the print snapshot runs only \`-p PROMPT …\`, not \`${args.join(" ")}\``))

/**
 * The launcher sends `-p` lines here by their shape (bin/switchyard); one that needs the parser after all (a value
 * it must check, an option spelled otherwise) is run from the full snapshot, in a child that has the terminal and
 * the exit code, under this process's V8 flags.
 */
const fromFullSnapshot = (args: ReadonlyArray<string>) => () =>
  new Promise<void>((resolve, reject) => {
    const full = path.join(path.dirname(fileURLToPath(import.meta.url)), "snapshot.blob")
    const flags = process.execArgv.map((flag, i) => process.execArgv[i - 1] === "--snapshot-blob" ? full : flag)
    const child = childProcess.spawn(process.execPath, [...flags, "--", ...args], { stdio: "inherit" })
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
    const signals = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((signal) => [signal, forward(signal)] as const)
    for (const [signal, handler] of signals) process.on(signal, handler)
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      for (const [name, handler] of signals) process.off(name, handler)
      if (signal !== null) process.kill(process.pid, signal)
      process.exitCode = code ?? 1
      resolve()
    })
  })

SnapshotMain.install(evaluated, (args) =>
  FrontStart.start(args, {
    full: fromFullSnapshot(args),
    tools: refused(args),
    dispatch: refused(args),
    print: () => Promise.resolve(FastPrint)
  }))
