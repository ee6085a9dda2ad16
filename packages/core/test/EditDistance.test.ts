import * as EditDistance from "@switchyard/core/EditDistance"
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"

const word = FastCheck.string({ unit: FastCheck.constantFrom("a", "b", "c", "d"), maxLength: 8 })

describe("EditDistance.levenshtein", () => {
  it("counts insertions, deletions and substitutions", () => {
    expect(EditDistance.levenshtein("dispath", "dispatch")).toBe(1)
    expect(EditDistance.levenshtein("outptu", "output")).toBe(2)
    expect(EditDistance.levenshtein("kitten", "sitting")).toBe(3)
    expect(EditDistance.levenshtein("", "abc")).toBe(3)
  })

  it.prop("is a metric bounded by the longer word", [word, word, word], ([a, b, c]) => {
    const d = EditDistance.levenshtein
    expect(d(a, b) === 0).toBe(a === b)
    expect(d(a, b)).toBe(d(b, a))
    expect(d(a, c)).toBeLessThanOrEqual(d(a, b) + d(b, c))
    expect(d(a, b)).toBeGreaterThanOrEqual(Math.abs(a.length - b.length))
    expect(d(a, b)).toBeLessThanOrEqual(Math.max(a.length, b.length))
  })
})
