/**
 * Ending a shell's process group: SIGTERM to the whole group, then SIGKILL
 * after a grace period (SPEC §4.9).
 *
 * This exists because the platform's `NodeCommandExecutor` sends SIGTERM to
 * the group when its scope closes and then waits for the exit without ever
 * escalating, so a child that traps TERM would hang the caller (SPEC §1).
 *
 * Whether a group is still alive is read from the kernel's process table:
 * `kill(-pgid, 0)` also succeeds for zombies, and under an init that does not
 * reap orphans (some containers) the zombies of killed grandchildren stay in
 * the group forever. On Linux, `/proc` tells zombies from live processes; it
 * is read with `node:fs` on purpose — it is the kernel's view, not project
 * files, and must never go through a FileSystem overlay.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { readdirSync, readFileSync } from "node:fs"

const POLL_INTERVAL = Duration.millis(20)
/** After SIGKILL the kernel needs no grace; this only bounds the wait for the table to catch up. */
const AFTER_KILL = Duration.seconds(5)

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

/**
 * The pids of the live (not zombie) members of a process group, read from
 * `/proc`; `undefined` where there is no `/proc`.
 */
export const liveMembers = (pgid: number): ReadonlyArray<number> | undefined => {
  let entries: ReadonlyArray<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return undefined
  }
  const members: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue // exited while we looked
    }
    // "pid (comm) state ppid pgrp ..."; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const state = fields[0]
    if (Number(fields[2]) === pgid && state !== "Z" && state !== "X") members.push(Number(entry))
  }
  return members
}

/** Whether any live process is left in the group. */
export const isGroupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    return errorCode(error) === "EPERM"
  }
  const members = liveMembers(pgid)
  return members === undefined || members.length > 0
}

/** Send a signal to every process of the group; a group that is gone is fine. */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: nothing left to signal.
  }
}

/**
 * Wait until the group has no live process, polling; false when `within`
 * passed first. A deadline rather than `Effect.timeout`, because this runs in
 * finalizers, where nothing can be interrupted.
 */
const awaitGone = (pgid: number, within: Duration.Duration): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(within)
    while (isGroupAlive(pgid)) {
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(POLL_INTERVAL)
    }
    return true
  })

/**
 * SIGTERM to the group; if anything is still alive after `grace`, SIGKILL.
 * Returns once no live process is left (or the kernel did not confirm it
 * within a few seconds of SIGKILL).
 */
export const terminateGroup = (pgid: number, grace: Duration.DurationInput): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (!isGroupAlive(pgid)) return
    signalGroup(pgid, "SIGTERM")
    if (yield* awaitGone(pgid, Duration.decode(grace))) return
    signalGroup(pgid, "SIGKILL")
    yield* awaitGone(pgid, AFTER_KILL)
  })
