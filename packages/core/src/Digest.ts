/**
 * Content digests: a file's read state, an overlay's copy of a file, a
 * settings file's fingerprint.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"

/**
 * The SHA-256 digest of `data` (a string is hashed as UTF-8), in lower-case
 * hex.
 *
 * @since 0.1.0
 * @category digests
 */
export const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex")
