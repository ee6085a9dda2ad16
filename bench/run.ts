/**
 * `npm run bench [-- NAME …]`: the project's performance report. Runs every
 * suite (or the named ones) and writes bench/REPORT.md and bench/report.json
 * with the machine and versions. A run of some suites keeps the other suites'
 * last figures from report.json, so one suite can be re-measured alone.
 *
 * To add a suite: one line in `suites` below, naming a module that exports
 * `run(): Promise<void>` and records rows with ./harness.js.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { prose, type Row, rows } from "./harness.js"

const suites: Record<string, () => Promise<{ readonly run: () => Promise<void> }>> = {
  dispatch: () => import("./dispatch.js"),
  order: () => import("./order.js"),
  memory: () => import("./memory.js"),
  tools: () => import("./tools.js"),
  permissions: () => import("./permissions.js"),
  streaming: () => import("./streaming.js"),
  footprints: () => import("./footprints.js"),
  cli: () => import("./cli.js"),
  startup: () => import("./startup.js"),
  mcp: () => import("./mcp.js"),
  speculation: () => import("./speculation.js"),
  journal: () => import("./journal.js"),
  sandbox: () => import("./sandbox.js")
}

interface SuiteReport {
  readonly measuredAt: string
  readonly seconds: number
  readonly rows: ReadonlyArray<Row>
  readonly notes: ReadonlyArray<string>
}

interface Report {
  readonly machine: Record<string, string | number>
  readonly versions: Record<string, string>
  readonly suites: Record<string, SuiteReport>
}

const only = process.argv.slice(2)
const unknown = only.filter((name) => !(name in suites))
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(", ")}; suites: ${Object.keys(suites).join(", ")}`)
  process.exit(2)
}

const jsonPath = path.join(import.meta.dirname, "report.json")
const previous: Report | undefined = fs.existsSync(jsonPath) ? JSON.parse(fs.readFileSync(jsonPath, "utf8")) : undefined
const measured: Record<string, SuiteReport> = {}
const started = Date.now()
for (const [name, load] of Object.entries(suites)) {
  if (only.length > 0 && !only.includes(name)) continue
  const t0 = Date.now()
  const firstRow = rows.length
  const firstNote = prose.length
  await (await load()).run()
  measured[name] = {
    measuredAt: new Date().toISOString(),
    seconds: Math.round((Date.now() - t0) / 100) / 10,
    rows: rows.slice(firstRow),
    notes: prose.slice(firstNote).map((p) => p.text)
  }
}

const require = createRequire(import.meta.url)
const versionOf = (pkg: string) => {
  try {
    return (require(`${pkg}/package.json`) as { version: string }).version
  } catch {
    return "not installed"
  }
}
const rgVersion = () => {
  try {
    return execFileSync("rg", ["--version"], { encoding: "utf8" }).split("\n")[0]!
  } catch {
    return "not installed"
  }
}

const report: Report = {
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "unknown",
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`
  },
  versions: {
    node: process.version,
    effect: versionOf("effect"),
    "@effect/ai": versionOf("@effect/ai"),
    ai: versionOf("ai"),
    "@effect/cli": versionOf("@effect/cli"),
    esbuild: versionOf("esbuild"),
    rg: rgVersion()
  },
  // Suites in registry order; ones not run this time keep their last figures.
  suites: Object.fromEntries(
    Object.keys(suites).flatMap((name) => {
      const suite = measured[name] ?? previous?.suites[name]
      return suite === undefined ? [] : [[name, suite]]
    })
  )
}
fs.writeFileSync(jsonPath, JSON.stringify(report, null, 2) + "\n")

const cell = (s: string) => s.replaceAll("|", "\\|")
let md = "# Performance report\n\n"
md +=
  "Written by `npm run bench` (one suite: `npm run bench -- NAME`). Every timed figure is the median of interleaved\n"
md += "rounds with the min–max in brackets; compare the ratios, not the absolute times, across machines.\n\n"
md +=
  `Machine: ${report.machine.cpus} × ${report.machine.cpu}, ${report.machine.memoryGB} GB, ${report.machine.os}.\n\n`
md += `Versions: ${Object.entries(report.versions).map(([k, v]) => `${k} ${v}`).join(", ")}.\n`
for (const [name, suite] of Object.entries(report.suites)) {
  md += `\n## ${name}\n\n_measured ${suite.measuredAt} in ${suite.seconds} s_\n\n`
  for (const text of suite.notes) md += `${text}\n\n`
  md += "| measure | median (min–max) | note |\n|---|---|---|\n"
  for (const row of suite.rows) md += `| ${cell(row.name)} | ${cell(row.value)} | ${cell(row.note ?? "")} |\n`
}
const mdPath = path.join(import.meta.dirname, "REPORT.md")
fs.writeFileSync(mdPath, md)
console.log(
  `\n${Object.keys(measured).length} suite(s) in ${Math.round((Date.now() - started) / 1000)} s; report written to ${
    path.relative(process.cwd(), mdPath)
  } and report.json`
)
