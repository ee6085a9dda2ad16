import * as Digest from "@switchyard/core/Digest"
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"

describe("Digest.sha256", () => {
  it("is SHA-256 in lower-case hex (FIPS 180-2's test vectors)", () => {
    expect(Digest.sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(Digest.sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })

  it("hashes a string as its UTF-8 bytes, as WebCrypto does (generated strings)", async () => {
    const texts = FastCheck.sample(FastCheck.string({ unit: "grapheme", maxLength: 64 }), 200)
    for (const text of texts) {
      const bytes = new TextEncoder().encode(text)
      const web = Buffer.from(await crypto.subtle.digest("SHA-256", bytes)).toString("hex")
      expect(Digest.sha256(text)).toBe(web)
      expect(Digest.sha256(bytes)).toBe(web)
    }
  })
})
