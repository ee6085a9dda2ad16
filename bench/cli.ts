/**
 * Cold start of the `switchyard` binary (a fresh Node process each time):
 * `--help`, `tools list` and `tools schema` through the bundled front (in a
 * plain directory and in a project with a settings file, where the front must
 * run the command), the full parser alone and the unbundled tsc output,
 * against a bare `node -e 0`, interleaved.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { compare, note, ratio, recordStats } from "./harness.js"

const SUITE = "cli"
const cli = path.join(import.meta.dirname, "..", "packages/cli")
const bin = path.join(cli, "bin/switchyard.js")

const spawn = (args: ReadonlyArray<string>, cwd?: string) => async () => {
  const result = spawnSync(process.execPath, args, { encoding: "utf8", cwd })
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`)
}

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  if (!fs.existsSync(path.join(cli, "bundle/front.js"))) throw new Error("no CLI bundle: run `npm run build` first")
  // A project with a settings file: the stored `tools` pages do not apply, the front runs `tools list` itself.
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-bench-cli-"))
  fs.mkdirSync(path.join(project, ".claude"))
  fs.writeFileSync(
    path.join(project, ".claude", "settings.json"),
    JSON.stringify({ permissions: { deny: ["WebFetch"] } })
  )
  const t = await compare({
    node: spawn(["-e", "0"]),
    help: spawn([bin, "--help"]),
    list: spawn([bin, "tools", "list"]),
    schema: spawn([bin, "tools", "schema", "Read"]),
    listProject: spawn([bin, "tools", "list"], project),
    helpFull: spawn([path.join(cli, "bundle/main.js"), "--help"]),
    listFull: spawn([path.join(cli, "bundle/main.js"), "tools", "list"]),
    helpTsc: spawn([path.join(cli, "dist/internal/mainEntry.js"), "--help"]),
    listTsc: spawn([path.join(cli, "dist/internal/mainEntry.js"), "tools", "list"])
  }, { rounds: 11, warmup: 1 }).finally(() => fs.rmSync(project, { recursive: true, force: true }))
  recordStats(SUITE, "node -e 0", t.node, "ms")
  recordStats(SUITE, "switchyard --help", t.help, "ms", `${ratio(t.help, t.node)} bare node (goal ≤ 2.5×)`)
  recordStats(SUITE, "switchyard tools list", t.list, "ms", `${ratio(t.list, t.node)} bare node (goal ≤ 3×)`)
  recordStats(SUITE, "switchyard tools schema Read", t.schema, "ms", `${ratio(t.schema, t.node)} bare node`)
  recordStats(
    SUITE,
    "tools list in a project with settings (run, no parser)",
    t.listProject,
    "ms",
    `${ratio(t.listProject, t.node)} bare node`
  )
  recordStats(
    SUITE,
    "--help, bundled full parser (no front)",
    t.helpFull,
    "ms",
    `${ratio(t.helpFull, t.node)} bare node`
  )
  recordStats(
    SUITE,
    "tools list, bundled full parser (no front)",
    t.listFull,
    "ms",
    `${ratio(t.listFull, t.node)} bare node`
  )
  recordStats(
    SUITE,
    "--help, unbundled tsc output",
    t.helpTsc,
    "ms",
    `${ratio(t.helpTsc, t.node)} bare node; the bundle is ${ratio(t.helpTsc, t.help)} faster`
  )
  recordStats(
    SUITE,
    "tools list, unbundled tsc output",
    t.listTsc,
    "ms",
    `${ratio(t.listTsc, t.node)} bare node; the bundle is ${ratio(t.listTsc, t.list)} faster`
  )
  note(
    SUITE,
    "The binary is an esbuild bundle (packages/cli/build.mjs) with lazy chunks; `fast-check` is replaced by an empty module. " +
      "`--help`, `<command> --help` and `--version` are printed by a small front from pages the full parser rendered at build time; " +
      "`tools list [--json]` and `tools schema NAME` are printed from pages rendered at build time too, with what rendering them " +
      "read (configuration variables, settings files, `.mcp.json`) as conditions; where one of those is there, " +
      "`tools list` runs without `@effect/cli` and `tools schema` loads the full parser. Everything else loads the full parser."
  )
}
