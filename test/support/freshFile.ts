/**
 * What each test file starts from when a worker runs many files (`isolate: false`, vitest.config.ts):
 * what a fresh worker would give it, except third-party modules, which stay loaded.
 *
 * - Our own modules (packages/*\/src, the tests, their support and fixtures) are evaluated afresh for
 *   each file, so module-level state is per file as before: `Batches` reports each bad concurrency
 *   setting once per process, and Execution.test.ts asserts that once. Node keeps the third-party modules
 *   (effect, @effect/*, vitest) it imported natively, which is most of a file's import time.
 * - `@effect/vitest`'s `it` is its own again. `layer(L)(name, f)` hands `f` vitest's shared `it` after
 *   `Object.assign`-ing onto it an `effect`, `scoped`, `prop`, `flakyTest` and `layer` that run on L's one
 *   runtime (fixed upstream in Effect-TS/effect-smol#2177, not in 0.30.0). Without this, every later
 *   file's top-level `it.effect` ran on the last `layer`'s runtime: one `TestClock` for all of them,
 *   already advanced by earlier tests (ReplayModel read 4 200 ms before it slept).
 *
 * vitest runs setup files before each test file, so this undoes what the worker's earlier files did.
 */
import * as EffectVitest from "@effect/vitest"
import { vi } from "vitest"

vi.resetModules()

Object.assign(EffectVitest.it, {
  effect: EffectVitest.effect,
  scoped: EffectVitest.scoped,
  live: EffectVitest.live,
  scopedLive: EffectVitest.scopedLive,
  flakyTest: EffectVitest.flakyTest,
  layer: EffectVitest.layer,
  prop: EffectVitest.prop
})
