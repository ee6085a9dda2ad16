/**
 * `node --import tsx scripts/cpuReport.ts FILE`: the table of a `SWITCHYARD_TEST_CPU=FILE npm test`
 * run (test/support/cpuReport.ts), slowest first: per test file its worker's CPU seconds, its
 * children's, their sum and its wall seconds, and the totals.
 */
import * as fs from "node:fs"
import * as path from "node:path"

interface Line {
  readonly file: string
  readonly user: number
  readonly system: number
  readonly children: number
  readonly wall: number
}

const file = process.argv[2]
if (file === undefined) {
  console.error("usage: node --import tsx scripts/cpuReport.ts FILE")
  process.exit(2)
}
const root = path.join(import.meta.dirname, "..")
const lines = fs.readFileSync(file, "utf8").trim().split("\n").map((text) => JSON.parse(text) as Line)
const rows = lines
  .map((line) => ({ ...line, worker: line.user + line.system, cpu: line.user + line.system + line.children }))
  .sort((a, b) => b.cpu - a.cpu)
const seconds = (n: number) => n.toFixed(1).padStart(7)
console.log("| file | worker CPU s | children CPU s | CPU s | wall s |")
console.log("|---|---:|---:|---:|---:|")
for (const row of rows) {
  const name = path.relative(root, row.file)
  console.log(
    `| ${name} | ${seconds(row.worker)} | ${seconds(row.children)} | ${seconds(row.cpu)} | ${seconds(row.wall)} |`
  )
}
const sum = (f: (row: (typeof rows)[number]) => number) => rows.reduce((total, row) => total + f(row), 0)
console.log(
  `| **${rows.length} files** | ${seconds(sum((r) => r.worker))} | ${seconds(sum((r) => r.children))} | ` +
    `${seconds(sum((r) => r.cpu))} | ${seconds(sum((r) => r.wall))} |`
)
