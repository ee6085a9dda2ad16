/**
 * Words of a shell line as bash reads them: quote removal, `$'…'` decoding,
 * the glob and expansion forms the analyser can prove harmless, and the
 * commands embedded in a text (`$( )`, backticks).
 *
 * @internal
 */
import type { Word } from "./programs/table.js"

/** The `$( … )` and backtick bodies in a text, outermost first. */
export const embeddedCommands = (text: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "$" && text[i + 1] === "(" && text[i + 2] !== "(") {
      let depth = 1
      let j = i + 2
      for (; j < text.length && depth > 0; j++) {
        if (text[j] === "(") depth++
        else if (text[j] === ")") depth--
      }
      const inner = text.slice(i + 2, depth === 0 ? j - 1 : j)
      out.push(inner, ...embeddedCommands(inner))
      i = j - 1
    } else if (text[i] === "`") {
      const end = text.indexOf("`", i + 1)
      const inner = text.slice(i + 1, end === -1 ? text.length : end)
      out.push(inner, ...embeddedCommands(inner))
      i = end === -1 ? text.length : end
    }
  }
  return out.map((inner) => inner.trim()).filter((inner) => inner.length > 0)
}

export const naiveWords = (text: string): ReadonlyArray<Word> =>
  text.split(/\s+/).filter((word) => word.length > 0).map((value) => ({
    value: value.replace(/['"]/g, ""),
    dynamic: true
  }))

/** Arithmetic on literals only: with a name in it, `$(( ))` can assign or evaluate `a[$(cmd)]`. */
export const LITERAL_ARITHMETIC = /^\$\(\([\s\d+\-*/%()<>=!&|^~?:,]*\)\)$/

/**
 * `${…}` forms that only read a variable. Indirection (`${!x}`), transforms
 * (`${x@P}` expands a prompt string, which runs substitutions), non-literal
 * subscripts and offsets (evaluated as arithmetic, where `a[$(cmd)]` runs
 * `cmd`) and assignments (`${x:=y}`) are left out.
 */
export const SAFE_EXPANSION = new RegExp(
  String.raw`^\$\{#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:\[(?:[0-9]+|@|\*)\])?` +
    String.raw`(?:\}|:[0-9]+(?::[0-9]+)?\}|(?::?[-+?]|##?|%%?|\/[/#%]?|\^\^?|,,?)[\s\S]*\})$`
)

export const UNQUOTED_GLOB = /[*?]|\[.*\]|\{[^}]*(,|\.\.)[^}]*\}/

export const unquote = (text: string): { readonly value: string; readonly pattern: string } => {
  let value = ""
  // The word with escaped characters blanked, to look for glob characters.
  let pattern = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\\" && i + 1 < text.length) {
      const next = text[++i]!
      if (next !== "\n") {
        value += next
        pattern += "_"
      }
      continue
    }
    value += c
    pattern += c
  }
  return { value, pattern }
}

/** The value of a `$'…'` word: bash's backslash escapes decoded (`\x2d`, `\055`, `\u2028`, `\cA`, …). */
export const decodeAnsiC = (body: string): string => {
  const simple: Readonly<Record<string, string>> = {
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    n: "\n",
    r: "\r",
    t: "\t",
    v: "\v",
    "\\": "\\",
    "'": "'",
    "\"": "\"",
    "?": "?"
  }
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c !== "\\" || i + 1 >= body.length) {
      out += c
      continue
    }
    const next = body[++i]!
    const hex = (max: number) => {
      let digits = ""
      while (digits.length < max && /[0-9a-fA-F]/.test(body[i + 1] ?? "")) digits += body[++i]
      return digits
    }
    if (next in simple) out += simple[next]
    else if (next === "x") {
      const digits = hex(2)
      out += digits.length > 0 ? String.fromCharCode(parseInt(digits, 16)) : "\\x"
    } else if (next === "u" || next === "U") {
      const digits = hex(next === "u" ? 4 : 8)
      out += digits.length > 0 ? String.fromCodePoint(Math.min(parseInt(digits, 16), 0x10ffff)) : `\\${next}`
    } else if (/[0-7]/.test(next)) {
      let digits = next
      while (digits.length < 3 && /[0-7]/.test(body[i + 1] ?? "")) digits += body[++i]
      out += String.fromCharCode(parseInt(digits, 8) & 0xff)
    } else if (next === "c" && i + 1 < body.length) out += String.fromCharCode(body[++i]!.charCodeAt(0) & 0x1f)
    else out += `\\${next}`
  }
  return out
}

export const unescapeDoubleQuoted = (text: string): string =>
  text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))
