/**
 * Ctrl-C in a command that runs calls (`dispatch`, `replay`): the first
 * SIGINT aborts the run's interruption node with `user_interrupt`, so every
 * call still gets its result (a synthetic one when it was cut short) and the
 * command reports them and exits 1; a second SIGINT ends the program as
 * usual.
 *
 * @internal
 */
import type * as Interruption from "@switchyard/core/Interruption"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"

/** While `self` runs, the first SIGINT aborts `node` instead of the program. */
export const abortOnSigint =
  (node: Interruption.InterruptionNode) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      let previous: Array<NodeJS.SignalsListener> = []
      let installed = false
      const restore = () => {
        if (!installed) return
        installed = false
        process.removeListener("SIGINT", listener)
        for (const other of previous) process.on("SIGINT", other)
      }
      const listener = () => {
        // The next Ctrl-C goes to the program's own handler again.
        restore()
        Runtime.runFork(runtime)(node.abort("user_interrupt"))
      }
      return Effect.acquireUseRelease(
        Effect.sync(() => {
          previous = process.listeners("SIGINT") as Array<NodeJS.SignalsListener>
          process.removeAllListeners("SIGINT")
          process.on("SIGINT", listener)
          installed = true
        }),
        () => self,
        () => Effect.sync(restore)
      )
    })
