/**
 * Effect's default `Random` service is seeded once, when `effect` is loaded. In a process started from the
 * CLI's start-up snapshot that happened when the snapshot was built, so every such process would draw the same
 * numbers; V8 itself reseeds `Math.random` for each process started from a snapshot.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

/** Give the default `Random` service (the one every fiber without its own sees) a seed of this process. */
export const reseed = (): void => {
  Object.assign(Effect.runSync(Effect.random), Random.make(Math.random()))
}
