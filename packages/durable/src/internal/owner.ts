/**
 * Who holds a session: `host pid nonce`. A holder on this host whose process
 * is gone has let go at once (a SIGKILL leaves no chance to say so); any
 * holder whose heartbeat is older than `STALE_MS` has let go too (another
 * machine, or a reused process id).
 *
 * @internal
 */
import * as os from "node:os"

/** How often a process that holds sessions says it is alive. */
export const HEARTBEAT_MS = 1_000

/** A holder silent for this long is taken to be gone. */
export const STALE_MS = 10_000

let id: string | undefined

/**
 * This process, as a session holder (made on first use, not at load: a process started from the CLI's start-up
 * snapshot would otherwise carry the id of the process that built it).
 */
export const self = (): string => id ??= `${os.hostname()} ${process.pid} ${Math.random().toString(36).slice(2, 10)}`

/** The parts of a holder id. */
export const parse = (owner: string): { readonly host: string; readonly pid: number } | undefined => {
  const [host, pid] = owner.split(" ")
  return host === undefined || pid === undefined || !/^\d+$/.test(pid) ? undefined : { host, pid: Number(pid) }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, but is someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether a recorded holder has let go. */
export const isGone = (owner: string, heartbeatAt: number | undefined, now: number): boolean => {
  const parsed = parse(owner)
  if (parsed !== undefined && parsed.host === os.hostname() && !isAlive(parsed.pid)) return true
  return heartbeatAt === undefined || now - heartbeatAt > STALE_MS
}

/** How a holder reads in a message: `pid 123 on host`. */
export const describe = (owner: string): string => {
  const parsed = parse(owner)
  return parsed === undefined ? owner : `process ${parsed.pid} on ${parsed.host}`
}
