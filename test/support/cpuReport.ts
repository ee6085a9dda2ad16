/**
 * Where the suite's time goes, per test file: with `SWITCHYARD_TEST_CPU=FILE`, each test file appends
 * one JSON line to FILE with the CPU time its worker spent on it (user and system) and the CPU time
 * of the child processes it ran and waited for (the CLI, git, shells, bwrap, MCP servers), read from
 * /proc/self/stat, and its wall time, both from before the file is imported to its end. Unlike wall time, these hardly move when the machine is busy.
 * Without the variable it does nothing. (`node scripts/cpuReport.ts FILE` turns the lines into a table.)
 */
import { afterAll, expect } from "vitest"
import * as fs from "node:fs"

const out = process.env["SWITCHYARD_TEST_CPU"]
const TICKS_PER_SECOND = 100

/** utime, stime, cutime, cstime in seconds (fields 14–17 of /proc/self/stat). */
const times = (): ReadonlyArray<number> => {
  const stat = fs.readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return fields.slice(11, 15).map((ticks) => Number(ticks) / TICKS_PER_SECOND)
}

if (out !== undefined && fs.existsSync("/proc/self/stat")) {
  // Taken before the test file is imported, so its collection counts too.
  const start = times()
  const startedAt = Date.now()
  afterAll(() => {
    const end = times()
    const [user, system, childUser, childSystem] = end.map((value, i) => value - (start[i] ?? 0))
    const file = expect.getState().testPath ?? "unknown"
    const line = { file, user, system, children: childUser! + childSystem!, wall: (Date.now() - startedAt) / 1000 }
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
