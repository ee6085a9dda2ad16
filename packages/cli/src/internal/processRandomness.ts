/**
 * Randomness a process started from the CLI's start-up snapshot must not share with the process that built it
 * (or with every other process started from it). V8 reseeds `Math.random` for each such process, and
 * `crypto.randomBytes` and `getRandomValues` draw from OpenSSL each time; two sources kept state from the build:
 *
 * - Effect's default `Random` service, seeded once when `effect` is loaded;
 * - Node's `crypto.randomUUID`, which serves UUIDs from a batch of 128 drawn ahead (lib/internal/crypto/random.js):
 *   the rest of a batch begun at build time (the warm-up makes a session id) would be the same in every process.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as crypto from "node:crypto"

/** Node's `randomUUID` batch (`kBatchSize`): drawing this many crosses a refill whatever the batch's position. */
const UUID_BATCH = 128

/** Give the default `Random` service (the one every fiber without its own sees) a seed of this process. */
export const reseedDefaultRandom = (): void => {
  Object.assign(Effect.runSync(Effect.random), Random.make(Math.random()))
}

/** Draw out what is left of `randomUUID`'s batch, so the next UUID comes from a batch drawn in this process. */
export const drainUuidBatch = (): void => {
  for (let i = 0; i < UUID_BATCH; i++) crypto.randomUUID()
}

/** Both, first thing in a process started from the snapshot. */
export const renew = (): void => {
  reseedDefaultRandom()
  drainUuidBatch()
}
