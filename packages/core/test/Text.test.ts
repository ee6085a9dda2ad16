import * as Text from "@switchyard/core/Text"
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { pipe } from "effect/Function"

const max = FastCheck.integer({ min: 1, max: 200 })

describe("Text.clip", () => {
  it("cuts to the limit, ending in an ellipsis", () => {
    expect(Text.clip("abcdef", 4)).toBe("abc…")
    expect(Text.clip("abcd", 4)).toBe("abcd")
    expect(pipe("abcdef", Text.clip(5))).toBe("abcd…")
  })

  it.prop("never exceeds the limit and keeps what fits", [FastCheck.string({ maxLength: 300 }), max], ([text, n]) => {
    const clipped = Text.clip(text, n)
    expect(clipped.length).toBeLessThanOrEqual(n)
    if (text.length <= n) expect(clipped).toBe(text)
    else expect(clipped).toBe(`${text.slice(0, n - 1)}…`)
    expect(Text.clip(n)(text)).toBe(clipped)
  })
})

describe("Text.clipNotingLength", () => {
  it.prop("keeps the first characters and says how long the text was", [FastCheck.string({ maxLength: 300 }), max], ([
    text,
    n
  ]) => {
    const clipped = Text.clipNotingLength(text, n)
    if (text.length <= n) expect(clipped).toBe(text)
    else expect(clipped).toBe(`${text.slice(0, n)}… (${text.length} characters)`)
    expect(Text.clipNotingLength(n)(text)).toBe(clipped)
  })
})
