/**
 * Ending a sandboxed command: every process inside its PID namespace, then
 * bubblewrap's own group, so that "no process left after an interrupt"
 * (SPEC §5) holds inside the sandbox too.
 *
 * bubblewrap runs the command under an init of its own (PID 1 of a new PID
 * namespace, in a new session, so the command's processes are not in
 * bubblewrap's process group). When that init dies the kernel kills
 * everything else in the namespace; `--die-with-parent` kills the init when
 * bubblewrap dies. So: SIGTERM to every process in the namespace (the
 * command may clean up), after the grace period SIGKILL to bubblewrap's
 * group and to whatever is left in the namespace, and wait until the
 * namespace's init is gone — it is reaped only once the namespace is empty.
 * The namespace is found from `/proc` (bubblewrap's child and its
 * `ns/pid`), read with `node:fs`: the kernel's view, never an overlay's.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as ProcessGroup from "../shellProcessGroup.js"

const POLL_INTERVAL = Duration.millis(20)
const AFTER_KILL = Duration.seconds(5)

interface Stat {
  readonly state: string
  readonly ppid: number
  readonly startTime: string
}

const statOf = (pid: number): Stat | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0]!, ppid: Number(fields[1]), startTime: fields[19]! }
  } catch {
    return undefined
  }
}

const pids = (): ReadonlyArray<number> => {
  try {
    return fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)
  } catch {
    return []
  }
}

const namespaceOf = (pid: number): string | undefined => {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`)
  } catch {
    return undefined
  }
}

/** The sandbox's init: bubblewrap's child, with the namespace it leads and its start time (pids are reused). */
interface Init {
  readonly pid: number
  readonly namespace: string
  readonly startTime: string
}

const initsOf = (bwrapPid: number): ReadonlyArray<Init> => {
  const own = namespaceOf(bwrapPid)
  return pids().flatMap((pid) => {
    const stat = statOf(pid)
    if (stat === undefined || stat.ppid !== bwrapPid) return []
    const namespace = namespaceOf(pid)
    return namespace === undefined || namespace === own ? [] : [{ pid, namespace, startTime: stat.startTime }]
  })
}

const isLive = (stat: Stat | undefined) => stat !== undefined && stat.state !== "Z" && stat.state !== "X"

const initAlive = (init: Init): boolean => {
  const stat = statOf(init.pid)
  return isLive(stat) && stat!.startTime === init.startTime
}

/** The live processes of a namespace but its init. */
const members = (init: Init): ReadonlyArray<number> =>
  pids().filter((pid) => pid !== init.pid && isLive(statOf(pid)) && namespaceOf(pid) === init.namespace)

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name)
  } catch {
    // Gone already.
  }
}

const awaitUntil = (done: () => boolean, within: Duration.Duration): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(within)
    while (!done()) {
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(POLL_INTERVAL)
    }
    return true
  })

/**
 * End a sandboxed command whose bubblewrap has `bwrapPid` (its process group
 * id): SIGTERM inside, SIGKILL after `grace`, and return once nothing of it
 * is left (or the kernel did not confirm it within a few seconds of SIGKILL).
 * A deadline rather than `Effect.timeout`: this runs in finalizers.
 */
export const terminate = (bwrapPid: number, grace: Duration.DurationInput): Effect.Effect<void> =>
  Effect.gen(function*() {
    // bubblewrap exits only after its init, and the init only once the namespace is empty: nothing is left.
    if (!ProcessGroup.isGroupAlive(bwrapPid)) return
    const inits = initsOf(bwrapPid)
    const gone = () => !ProcessGroup.isGroupAlive(bwrapPid) && inits.every((init) => !initAlive(init))
    if (gone()) return
    for (const init of inits) for (const pid of members(init)) signal(pid, "SIGTERM")
    // The command ending on TERM ends its init, and with it bubblewrap.
    if (yield* awaitUntil(gone, Duration.decode(grace))) return
    ProcessGroup.signalGroup(bwrapPid, "SIGKILL")
    for (const init of inits) {
      for (const pid of members(init)) signal(pid, "SIGKILL")
      signal(init.pid, "SIGKILL")
    }
    yield* awaitUntil(gone, AFTER_KILL)
  })
