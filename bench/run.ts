/**
 * `npm run bench`: every suite side by side in one run; writes bench/REPORT.md.
 * Numbers are medians of repeated samples on whatever machine runs this; the
 * ratios are what to compare.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { rows } from "./harness.js"

const suites: Record<string, () => Promise<void>> = {
  dispatch: () => import("./dispatch.js").then((m) => m.run()),
  tools: () => import("./tools.js").then((m) => m.run()),
  permissions: () => import("./permissions.js").then((m) => m.run()),
  streaming: () => import("./streaming.js").then((m) => m.run()),
  footprints: () => import("./footprints.js").then((m) => m.run()),
  cli: () => import("./cli.js").then((m) => m.run())
}

const only = process.argv.slice(2)
for (const [name, run] of Object.entries(suites)) {
  if (only.length > 0 && !only.includes(name)) continue
  await run()
}

const header = `# Benchmark report\n\nNode ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${new Date().toISOString()}\n`
const bySuite = new Map<string, Array<(typeof rows)[number]>>()
for (const row of rows) bySuite.set(row.suite, [...(bySuite.get(row.suite) ?? []), row])
let body = ""
for (const [suite, list] of bySuite) {
  body += `\n## ${suite}\n\n| measure | value | note |\n|---|---|---|\n`
  for (const row of list) body += `| ${row.name} | ${row.value} | ${row.note ?? ""} |\n`
}
const out = path.join(import.meta.dirname, "REPORT.md")
fs.writeFileSync(out, header + body)
console.log(`\nreport written to ${path.relative(process.cwd(), out)}`)
