/**
 * One state directory: `Settings.stateDirectory` (of a given home) and
 * `Results.stateDirectory` (of the process's home) follow the same rule —
 * `$SWITCHYARD_HOME`, else `<home>/.switchyard`, home being `$HOME`, else
 * `$USERPROFILE`, else `/` — for every mix of those variables.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Results from "@switchyard/core/Results"
import * as Settings from "@switchyard/core/Settings"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"

const values = [undefined, "/home/ada", "/root/", "/tmp/x y"] as const

describe("the state directory", () => {
  it.effect("Settings and Results agree, and follow SWITCHYARD_HOME, HOME, USERPROFILE, / (every combination)", () =>
    Effect.gen(function*() {
      let cases = 0
      for (const switchyardHome of values) {
        for (const home of values) {
          for (const userProfile of values) {
            const env = new Map<string, string>()
            if (switchyardHome !== undefined) env.set("SWITCHYARD_HOME", switchyardHome)
            if (home !== undefined) env.set("HOME", home)
            if (userProfile !== undefined) env.set("USERPROFILE", userProfile)
            const withEnv = Effect.withConfigProvider(ConfigProvider.fromMap(env))
            const expectedHome = home ?? userProfile ?? "/"
            const expected = switchyardHome ?? `${expectedHome.replace(/\/$/, "")}/.switchyard`
            const settingsHome = yield* withEnv(Settings.homeDirectory)
            expect(settingsHome).toBe(expectedHome)
            expect(yield* withEnv(Settings.stateDirectory(settingsHome))).toBe(expected)
            expect(yield* withEnv(Results.stateDirectory)).toBe(expected)
            cases++
          }
        }
      }
      expect(cases).toBe(64)
    }))
})
