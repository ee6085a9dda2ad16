/**
 * Ending a stdio server without orphans: TERM to the process and everything
 * it started, then KILL to whatever is still alive after the grace period.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Fs from "node:fs"

/** Whether a process exists (and is not a zombie we could still signal pointlessly). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    // A zombie has exited; only its parent's wait is missing.
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return true
  }
}

/** The descendants of a process (Linux `/proc`; elsewhere none are found). */
export const descendants = (pid: number): Array<number> => {
  let entries: Array<string>
  try {
    entries = Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  const children = new Map<number, Array<number>>()
  for (const entry of entries) {
    try {
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      const list = children.get(ppid)
      if (list === undefined) children.set(ppid, [Number(entry)])
      else list.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  const out: Array<number> = []
  const stack = [pid]
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      out.push(child)
      stack.push(child)
    }
  }
  return out
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig)
  } catch {
    // Already gone.
  }
}

/** TERM the process tree, wait up to `graceMs` for it to end, then KILL what is left. */
export const terminate = (pid: number, graceMs: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const tree = [pid, ...descendants(pid)]
    for (const p of tree) signal(p, "SIGTERM")
    const anyAlive = Effect.sync(() => tree.some(isAlive))
    return anyAlive.pipe(
      Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("20 millis") }),
      Effect.timeout(graceMs),
      Effect.ignore,
      Effect.zipRight(Effect.sync(() => {
        for (const p of tree) if (isAlive(p)) signal(p, "SIGKILL")
      }))
    )
  })
