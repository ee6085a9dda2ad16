/**
 * How far apart two words are, for "did you mean" hints: unknown tools,
 * missing files, misspelt commands and options.
 *
 * @since 0.1.0
 */

/**
 * The Levenshtein distance: the fewest insertions, deletions and
 * substitutions that turn `a` into `b`.
 *
 * @since 0.1.0
 * @category utils
 */
export const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
