/**
 * A process started from the CLI's start-up snapshot renews the randomness the
 * snapshot's build left behind (src/internal/processRandomness.ts); the
 * snapshot-level check, three `-p` runs with three session ids, is in
 * test/snapshot.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as ProcessRandomness from "../src/internal/processRandomness.js"

describe("processRandomness", () => {
  it("is reseeded from this process's Math.random", () => {
    const random = Math.random
    try {
      Math.random = () => 0.25
      ProcessRandomness.reseedDefaultRandom()
      const drawn = [Effect.runSync(Random.next), Effect.runSync(Random.next)]
      const expected = Random.make(0.25)
      expect(drawn).toEqual([Effect.runSync(expected.next), Effect.runSync(expected.next)])
      Math.random = () => 0.75
      ProcessRandomness.reseedDefaultRandom()
      expect(Effect.runSync(Random.next)).not.toBe(drawn[0])
    } finally {
      Math.random = random
      ProcessRandomness.reseedDefaultRandom()
    }
  })
})
