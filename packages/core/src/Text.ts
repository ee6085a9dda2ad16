/**
 * Cutting text down for a message, a status line or a label, the same way
 * everywhere: the engine's error texts, the tools' and the CLI's output.
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"

/**
 * `text` cut to at most `max` characters, the last of them `…` when it was
 * cut: `clip("abcdef", 4)` is `"abc…"`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const clip: {
  (max: number): (text: string) => string
  (text: string, max: number): string
} = dual(2, (text: string, max: number): string => text.length > max ? `${text.slice(0, max - 1)}…` : text)

/**
 * `text` cut to its first `max` characters followed by `… (N characters)`
 * when it was longer, so the reader knows how much was left out.
 *
 * @since 0.1.0
 * @category formatting
 */
export const clipNotingLength: {
  (max: number): (text: string) => string
  (text: string, max: number): string
} = dual(2, (text: string, max: number): string => {
  if (text.length <= max) return text
  return `${text.slice(0, max)}… (${text.length} characters)`
})
