/**
 * Issue 6: cold start of the `switchyard` binary (a fresh Node process each
 * time): `--help` and `tools list`, against a bare `node -e ""`.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fmt, record, timePromise } from "./harness.js"

const SUITE = "cli cold start"
const bin = path.join(import.meta.dirname, "..", "packages/cli/bin/switchyard.js")

const spawnTime = (args: ReadonlyArray<string>) =>
  timePromise(async () => {
    const result = spawnSync(process.execPath, args, { encoding: "utf8" })
    if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`)
  }, { samples: 7, warmup: 1 })

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const node = await spawnTime(["-e", ""])
  const help = await spawnTime([bin, "--help"])
  const list = await spawnTime([bin, "tools", "list"])
  record(SUITE, "node -e '' (ms)", fmt(node, 0))
  record(SUITE, "switchyard --help (ms)", fmt(help, 0), `+${fmt(help - node, 0)} ms over bare node`)
  record(SUITE, "switchyard tools list (ms)", fmt(list, 0), `+${fmt(list - node, 0)} ms over bare node`)
}
