/**
 * String replacement for Edit and MultiEdit: exact occurrences, counted
 * without overlap, applied in order to an in-memory copy, so that a failing
 * edit leaves the file untouched (all-or-nothing). Also the short diff that
 * the result shows.
 *
 * @internal
 */
import { structuredPatch } from "diff"
import * as Either from "effect/Either"

/** @internal */
export interface EditSpec {
  readonly old_string: string
  readonly new_string: string
  readonly replace_all?: boolean | undefined
}

/** @internal */
export interface EditFailure {
  readonly reason: "NoMatch" | "Ambiguous" | "NoChange" | "AlreadyExists" | "NotFound"
  readonly message: string
}

/** Non-overlapping occurrences, as `split` would count them. */
const countOccurrences = (haystack: string, needle: string): number => {
  if (needle.length === 0) return 0
  let count = 0
  let from = 0
  for (;;) {
    const index = haystack.indexOf(needle, from)
    if (index === -1) return count
    count++
    from = index + needle.length
  }
}

// `String.prototype.replace` would interpret `$&` and friends in the replacement; slicing does not.
const replaceFirst = (haystack: string, needle: string, replacement: string): string => {
  const index = haystack.indexOf(needle)
  return haystack.slice(0, index) + replacement + haystack.slice(index + needle.length)
}

const toCrlf = (text: string): string => text.replace(/\r?\n/g, "\r\n")

/**
 * Where an edit applies: verbatim, or — in a CRLF file, for strings the model
 * wrote with LF line ends — with both strings converted to CRLF, so the file
 * keeps its line endings.
 */
const locate = (
  content: string,
  edit: EditSpec
): { readonly old: string; readonly new: string; readonly count: number } => {
  const verbatim = countOccurrences(content, edit.old_string)
  if (verbatim > 0 || !content.includes("\r\n") || !edit.old_string.includes("\n")) {
    return { old: edit.old_string, new: edit.new_string, count: verbatim }
  }
  const old = toCrlf(edit.old_string)
  return { old, new: toCrlf(edit.new_string), count: countOccurrences(content, old) }
}

/**
 * Apply edits in order. `original` is `undefined` when the file does not
 * exist: then the first edit must have an empty `old_string` (it creates the
 * file). `label(i)` prefixes messages about edit `i` (empty for Edit).
 *
 * @internal
 */
export const applyEdits = (
  original: string | undefined,
  edits: ReadonlyArray<EditSpec>,
  label: (index: number) => string
): Either.Either<string, EditFailure> => {
  let content = original
  for (let i = 0; i < edits.length; i++) {
    const edit = edits[i]!
    const prefix = label(i)
    if (edit.old_string === edit.new_string) {
      return Either.left({
        reason: "NoChange",
        message: `${prefix}No changes to make: old_string and new_string are exactly the same.`
      })
    }
    if (edit.old_string === "") {
      if (content !== undefined && content !== "") {
        return Either.left({
          reason: "AlreadyExists",
          message: `${prefix}Cannot create new file - file already exists. Use a non-empty old_string to edit it.`
        })
      }
      content = edit.new_string
      continue
    }
    if (content === undefined) {
      return Either.left({ reason: "NotFound", message: "" })
    }
    const located = locate(content, edit)
    if (located.count === 0) {
      return Either.left({
        reason: "NoMatch",
        message: `${prefix}String to replace not found in file.\nString: ${edit.old_string}`
      })
    }
    if (located.count > 1 && edit.replace_all !== true) {
      return Either.left({
        reason: "Ambiguous",
        message: `${prefix}Found ${located.count} matches of the string to replace, but replace_all is false. ` +
          "To replace all occurrences, set replace_all to true. To replace only one occurrence, " +
          `please provide more context to uniquely identify the instance.\nString: ${edit.old_string}`
      })
    }
    content = edit.replace_all === true
      ? content.split(located.old).join(located.new)
      : replaceFirst(content, located.old, located.new)
  }
  return Either.right(content ?? "")
}

/** The most diff lines shown in a result. */
const MAX_DIFF_LINES = 60

/**
 * A unified diff of the change (3 lines of context), cut at
 * `MAX_DIFF_LINES`.
 *
 * @internal
 */
export const diffSnippet = (filePath: string, before: string, after: string): string => {
  const patch = structuredPatch(filePath, filePath, before, after, undefined, undefined, { context: 3 })
  const lines: Array<string> = []
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`)
    for (const line of hunk.lines) lines.push(line.endsWith("\r") ? line.slice(0, -1) : line)
  }
  if (lines.length <= MAX_DIFF_LINES) return lines.join("\n")
  return [...lines.slice(0, MAX_DIFF_LINES), `... (${lines.length - MAX_DIFF_LINES} more diff lines)`].join("\n")
}
