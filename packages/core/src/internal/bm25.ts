/**
 * BM25 ranking over small fielded documents (tool name, search hint,
 * description), with the tokenizer and the light stemmer ToolSearch uses.
 */

/** Split on anything that is not a letter or digit, on `_`/`-`, and on camelCase and letter/digit boundaries. */
export const tokenize = (text: string): Array<string> =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])([0-9])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0 && !STOP_WORDS.has(token))
    .map(stem)

const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "in",
  "into",
  "is",
  "it",
  "its",
  "of",
  "on",
  "or",
  "that",
  "the",
  "this",
  "to",
  "with",
  "me",
  "my",
  "i",
  "all",
  "some",
  "can",
  "use",
  "using"
])

/** A light suffix stemmer: plurals, -ing, -ed, -er (enough for "issues" ≈ "issue", "listing" ≈ "list"). */
export const stem = (word: string): string => {
  if (word.length <= 3) return word
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`
  if (word.endsWith("sses")) return word.slice(0, -2)
  if (/(?:ches|shes|xes|zes)$/.test(word)) return word.slice(0, -2)
  if (word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us")) return word.slice(0, -1)
  if (word.endsWith("ing") && word.length > 5) return undouble(word.slice(0, -3))
  if (word.endsWith("ed") && word.length > 4) return undouble(word.slice(0, -2))
  return word
}

const undouble = (word: string): string =>
  word.length > 2 && word[word.length - 1] === word[word.length - 2] && !/[lsz]/.test(word[word.length - 1]!)
    ? word.slice(0, -1)
    : word

/** One field of a document: its term frequencies and length. */
export interface Field {
  readonly terms: ReadonlyMap<string, number>
  readonly length: number
}

export const field = (text: string): Field => {
  const terms = new Map<string, number>()
  const tokens = tokenize(text)
  for (const token of tokens) terms.set(token, (terms.get(token) ?? 0) + 1)
  return { terms, length: tokens.length }
}

/** A document: its fields, in the order of the weights given to `rank`. */
export interface Document {
  readonly fields: ReadonlyArray<Field>
}

const K1 = 1.2
const B = 0.75

/** Postings of one field: for each term, the documents holding it and how often. */
interface FieldIndex {
  readonly postings: ReadonlyMap<string, ReadonlyArray<readonly [doc: number, tf: number]>>
  readonly lengths: Float64Array
  readonly averageLength: number
}

/** An inverted index over documents, built once and searched many times. */
export interface Index {
  readonly size: number
  readonly fields: ReadonlyArray<FieldIndex>
}

export const index = (documents: ReadonlyArray<Document>, fieldCount: number): Index => {
  const fields: Array<FieldIndex> = []
  for (let f = 0; f < fieldCount; f++) {
    const postings = new Map<string, Array<readonly [number, number]>>()
    const lengths = new Float64Array(documents.length)
    let total = 0
    documents.forEach((doc, i) => {
      const fieldOf = doc.fields[f]
      if (fieldOf === undefined) return
      lengths[i] = fieldOf.length
      total += fieldOf.length
      for (const [term, tf] of fieldOf.terms) {
        const list = postings.get(term)
        if (list === undefined) postings.set(term, [[i, tf]])
        else list.push([i, tf])
      }
    })
    fields.push({ postings, lengths, averageLength: total / Math.max(1, documents.length) || 1 })
  }
  return { size: documents.length, fields }
}

/**
 * Score the documents for the query terms: per field BM25, weighted and
 * summed. Returns the indices of documents with a positive score, best first
 * (ties keep document order).
 */
export const rank = (
  idx: Index,
  query: ReadonlyArray<string>,
  weights: ReadonlyArray<number>
): Array<{ readonly index: number; readonly score: number }> => {
  const terms = [...new Set(query)]
  const n = idx.size
  if (terms.length === 0 || n === 0) return []
  const scores = new Map<number, number>()
  idx.fields.forEach((field, f) => {
    const weight = weights[f] ?? 0
    for (const term of terms) {
      const postings = field.postings.get(term)
      if (postings === undefined) continue
      const df = postings.length
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
      for (const [doc, tf] of postings) {
        const norm = tf + K1 * (1 - B + (B * field.lengths[doc]!) / field.averageLength)
        scores.set(doc, (scores.get(doc) ?? 0) + weight * idf * ((tf * (K1 + 1)) / norm))
      }
    }
  })
  const out: Array<{ index: number; score: number }> = []
  for (const [doc, score] of scores) if (score > 0) out.push({ index: doc, score })
  return out.sort((a, b) => b.score - a.score || a.index - b.index)
}
