/**
 * The word-level half of the shell walk: a word's value as bash reads it,
 * whether it is one known literal and what it may expand to (issue 19, class
 * 1), and the line-level facts words reveal — substitutions, evaluations of
 * run-time values and rebound names (classes 2, 3, 9). `shellAnalyzer.ts`'s
 * walker of statements extends it.
 *
 * @internal
 */
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import type { Node } from "web-tree-sitter"
import type { Word } from "./programs/table.js"
import { type CommandRecord, opaque } from "./shellRecords.js"
import {
  decodeAnsiC,
  embeddedCommands,
  LITERAL_ARITHMETIC,
  naiveWords,
  SAFE_EXPANSION,
  unescapeDoubleQuoted,
  UNQUOTED_GLOB,
  unquote
} from "./shellWords.js"

/** Assignments to lowercase names cannot clobber the exported environment. */
export const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/

export const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Two words bash joins into one (`r\<newline>m`). */
export const joinWords = (first: Word, second: Word): Word =>
  first.dynamic || second.dynamic
    ? {
      value: first.value + second.value,
      dynamic: true,
      option: first.dynamic ? first.option !== false : first.value.startsWith("-"),
      several: (first.dynamic && first.several !== false) || (second.dynamic && second.several !== false)
    }
    : { value: first.value + second.value, dynamic: false }

/** A double-quoted word that expands to several words: `"$@"`, `"${a[@]}"`, `"${!prefix@}"`. */
export const QUOTED_SEVERAL = /\$@|\$\{@|\[@\]\}|\$\{![A-Za-z_][A-Za-z0-9_]*@\}/

export abstract class WordWalker {
  readonly commands: Array<CommandRecord> = []
  /** Command/process substitution or an unprovable command name. */
  dynamic = false
  /** Something that is never read-only, wherever it is. */
  unsafe = false
  /**
   * Bash evaluates a value known only at run time as arithmetic, a subscript,
   * a prompt string or a name (issue 19, class 2): it may run commands no part
   * shows.
   */
  evaluates = false
  /**
   * The line changes what later names mean: it assigns a variable that is not
   * lowercase and not harmless (`PATH`, `HOME`, `BASH_CMDS[ls]`, `GIT_*`),
   * with `VAR=`, `for VAR in`, `read VAR`, `{VAR}>` or a declaration, or
   * unsets one (issue 19, classes 3, 4 and 9).
   */
  rebinds = false

  constructor(readonly source: string) {}

  /** Walk a subtree for the statements and substitutions in it. */
  abstract generic(node: Node): void

  /** Bash evaluates a run-time value here (see `evaluates`). */
  evaluated(): void {
    this.unsafe = true
    this.evaluates = true
  }

  /** The line assigns `name` (or unsets it): a rebinding unless it is lowercase or harmless. */
  assigns(name: string): void {
    if (!LOWERCASE_NAME.test(name) && !ShellAnalysis.isHarmlessAssignment(`${name}=x`)) {
      this.rebinds = true
      this.unsafe = true
    }
  }

  /** Report the commands a text would run if bash evaluated it as arithmetic. */
  embedded(text: string): void {
    for (const inner of embeddedCommands(text)) {
      this.dynamic = true
      // A substitution the tree has (unquoted, double-quoted) was walked already.
      if (this.commands.some((command) => command.text.trim() === inner)) continue
      this.commands.push(opaque(inner, naiveWords(inner), [], [], false))
    }
  }

  /** A name a builtin assigns: a subscript or a name known only at run time is evaluated. */
  assignedName(word: Word): void {
    if (word.dynamic || !PLAIN_NAME.test(word.value)) this.evaluated()
    else this.assigns(word.value)
  }

  /**
   * A word's value as bash reads it, whether it is one known literal, and, when
   * it is not, whether its expansion may start with `-` or be several words
   * (issue 19, class 1: such a word is "any word, options included").
   */
  word(node: Node): Word {
    const text = node.text
    switch (node.type) {
      case "word": {
        // `$[ x ]`: bash's old arithmetic expansion.
        if (text.includes("$[")) this.evaluated()
        const { pattern, value } = unquote(text)
        if (!UNQUOTED_GLOB.test(pattern)) return { value, dynamic: false }
        // A glob or brace pattern: as many words as it matches, each starting like the pattern.
        return { value, dynamic: true, option: /^[-*?[{]/.test(pattern), several: true }
      }
      case "number":
        return { value: text, dynamic: false }
      case "raw_string":
        return { value: text.slice(1, -1), dynamic: false }
      case "string": {
        let value = ""
        let dynamic = false
        let option: boolean | undefined
        for (const child of node.children) {
          if (!child.isNamed) {
            if (child.type !== "\"") value += child.text
            continue
          }
          if (child.type === "string_content") {
            if (child.text.includes("$[")) this.evaluated()
            value += unescapeDoubleQuoted(child.text)
          } else {
            const part = this.word(child)
            value += part.value
            dynamic = true
          }
          option ??= child.type === "string_content" ? child.text.startsWith("-") : true
        }
        // Quoted: one word, unless it is `"$@"` or `"${a[@]}"`.
        return dynamic
          ? { value, dynamic, option: option ?? true, several: QUOTED_SEVERAL.test(text) }
          : { value, dynamic }
      }
      case "concatenation":
        return this.concatenation(node)
      case "simple_expansion":
        return { value: text, dynamic: true }
      case "expansion":
        if (!SAFE_EXPANSION.test(text)) this.evaluated()
        this.generic(node)
        return { value: text, dynamic: true }
      case "command_substitution":
        this.dynamic = true
        this.generic(node)
        return { value: text, dynamic: true }
      case "process_substitution":
        // One word, a `/dev/fd/N` path.
        this.dynamic = true
        this.generic(node)
        return { value: text, dynamic: true, option: false, several: false }
      case "arithmetic_expansion":
        if (!LITERAL_ARITHMETIC.test(text)) this.evaluated()
        this.generic(node)
        // A number: one word, maybe negative.
        return { value: text, dynamic: true, several: false }
      case "ansi_c_string":
        return { value: decodeAnsiC(text.slice(2, -1)), dynamic: false }
      case "brace_expression":
      case "extglob_pattern":
        return { value: text, dynamic: true }
      default:
        this.unsafe = true
        this.generic(node)
        return { value: text, dynamic: true }
    }
  }

  /** Words written next to each other (`a"$x"b`, `src/*.ts`): the first part decides whether it may be an option. */
  concatenation(node: Node): Word {
    let value = ""
    let pattern = ""
    let dynamic = false
    let several = false
    let option: boolean | undefined
    for (const child of node.children) {
      if (!child.isNamed) {
        this.unsafe = true
        dynamic = true
        several = true
        value += child.text
        option ??= true
        continue
      }
      const part = this.word(child)
      value += part.value
      dynamic ||= part.dynamic
      several ||= part.dynamic && part.several !== false
      const partPattern = child.type === "word" ? unquote(child.text).pattern : "_"
      option ??= part.dynamic ? part.option !== false : part.value.startsWith("-") || /^[*?[{]/.test(partPattern)
      pattern += partPattern
    }
    const glob = UNQUOTED_GLOB.test(pattern)
    if (!dynamic && !glob) return { value, dynamic: false }
    return { value, dynamic: true, option: option ?? true, several: several || glob }
  }

  /** Whether two words are separate words for bash, too (not joined by a line continuation). */
  separated(previous: Node, next: Node): boolean {
    const gap = this.source.slice(previous.endIndex, next.startIndex).replace(/\\\r?\n/g, "")
    return /^[ \t]/.test(gap)
  }
}
