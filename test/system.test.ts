/**
 * Tests that need a system program skip with one line naming the Debian
 * package (issue 24, item 7).
 */
import { describe, expect, it } from "@effect/vitest"
import * as System from "./support/system.js"

describe("system programs", () => {
  it("a missing program is one line naming its package, once; a present one says nothing", () => {
    const written: Array<string> = []
    const write = process.stderr.write.bind(process.stderr)
    process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof write
    try {
      expect(System.has("switchyard-no-such-program", "switchyard-pkg")).toBe(false)
      expect(System.has("switchyard-no-such-program", "switchyard-pkg")).toBe(false)
      expect(System.has("sh")).toBe(true)
    } finally {
      process.stderr.write = write
    }
    expect(written).toEqual(["skipped: tests that need switchyard-no-such-program (apt-get install switchyard-pkg)\n"])
  })
})
