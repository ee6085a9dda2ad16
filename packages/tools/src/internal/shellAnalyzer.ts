/**
 * From a tree-sitter-bash syntax tree to simple commands and a read-only
 * verdict.
 *
 * The walk visits every node. Node types it knows are handled precisely;
 * anything else — and every construct that can change state without running
 * a command (function definitions, bare assignments, arithmetic, `${x:=y}`,
 * background `&`) — marks the whole line as not read-only, while the walk
 * still descends so that `split` reports every command inside, including the
 * commands of `$( )`, backticks and process substitution.
 *
 * A few tree-sitter-bash quirks are handled on purpose:
 * - Words after a redirection (`ls > f -la`) are parsed as extra redirect
 *   destinations; bash passes them to the command.
 * - `a\<newline>b` is parsed as two words; bash joins them into one, so such
 *   a command is not read-only (`-del\<newline>ete`).
 * - Backticks inside an unquoted here-document body are not parsed; such a
 *   body makes the line dynamic and its backtick texts are reported as
 *   commands.
 * - A here-document redirect may hold the rest of the line (`cat <<EOF | grep
 *   x`); those statements are walked like any other.
 *
 * @internal
 */
import * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import type { Node, Tree } from "web-tree-sitter"
import { describeInvocation, type Word } from "./programs/table.js"
import * as TestOperands from "./programs/testOperands.js"
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

interface CommandRecord {
  readonly text: string
  readonly words: ReadonlyArray<Word>
  readonly assignments: ReadonlyArray<string>
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
  readonly readOnly: boolean
  readonly readPaths: ReadonlyArray<ShellAnalysis.PathUse>
  readonly writePaths: ReadonlyArray<ShellAnalysis.PathUse>
  readonly pathsKnown: boolean
  readonly unresolvedPaths: boolean
  readonly unresolvedWords: ReadonlyArray<string>
  readonly onlyWritesPaths: boolean
}

interface RedirectRecord {
  /** Set for output redirections to a file. */
  readonly redirect: ShellAnalysis.Redirect | undefined
  readonly safe: boolean
  /** The file it reads (`< f`) or writes (`> f`), when it names one. */
  readonly read?: ShellAnalysis.PathUse
  readonly write?: ShellAnalysis.PathUse
  /** Its target is static. */
  readonly known: boolean
  /** The target as written, when it is not static. */
  readonly unresolved?: string
}

/** A command record for something that is not a program invocation the table knows. */
const opaque = (
  text: string,
  words: ReadonlyArray<Word>,
  assignments: ReadonlyArray<string>,
  redirects: ReadonlyArray<RedirectRecord>,
  pathsKnown: boolean,
  readOnly = false
): CommandRecord => ({
  text,
  words,
  assignments,
  redirects: redirects.flatMap((record) => (record.redirect === undefined ? [] : [record.redirect])),
  readOnly,
  ...redirectPaths(redirects),
  pathsKnown: pathsKnown && redirects.every((record) => record.known),
  unresolvedPaths: !redirects.every((record) => record.known),
  unresolvedWords: unresolvedTargets(redirects),
  onlyWritesPaths: false
})

const unresolvedTargets = (redirects: ReadonlyArray<RedirectRecord>): ReadonlyArray<string> =>
  redirects.flatMap((record) => (record.unresolved === undefined ? [] : [record.unresolved]))

const redirectPaths = (redirects: ReadonlyArray<RedirectRecord>) => ({
  readPaths: redirects.flatMap((record) => (record.read === undefined ? [] : [record.read])),
  writePaths: redirects.flatMap((record) => (record.write === undefined ? [] : [record.write]))
})

/**
 * Builtins that evaluate some operands as arithmetic or subscripts, where
 * `a[$(cmd)]` runs `cmd` even from a single-quoted word: their operands' `$( )`
 * and backtick texts are reported as commands, so that deny rules see them.
 */
const EVALUATING_BUILTINS = new Set([
  "test", "[", "let", "declare", "typeset", "local", "export", "readonly", "printf", "read", "unset", "mapfile",
  "readarray", "shift", "return", "exit", "break", "continue", "wait"
])


const STATEMENTS = new Set([
  "program", "list", "pipeline", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause",
  "else_clause", "while_statement", "for_statement", "c_style_for_statement", "case_statement", "case_item",
  "negated_command", "redirected_statement", "command", "test_command", "variable_assignment",
  "variable_assignments", "declaration_command", "unset_command", "function_definition", "comment"
])

/** Expansions that `word` checks, wherever they are nested. */
const CHECKED_EXPANSIONS = new Set(["command_substitution", "process_substitution", "expansion", "arithmetic_expansion"])

const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

/** Output targets that are not files. */
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"])

/** Assignments by `for`/`read` to lowercase names cannot clobber the exported environment. */
const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/


class Walker {
  readonly commands: Array<CommandRecord> = []
  /** Command/process substitution or an unprovable command name. */
  dynamic = false
  /** Something that is never read-only, wherever it is. */
  unsafe = false

  constructor(readonly source: string) {}

  statement(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    switch (node.type) {
      case "comment":
        return
      case "command":
        return this.command(node, inherited, [])
      case "redirected_statement":
        return this.redirectedStatement(node, inherited)
      case "compound_statement":
        // `(( … ))` is an arithmetic command: it can assign.
        if (node.firstChild?.type !== "{") this.unsafe = true
        return this.container(node, inherited)
      case "for_statement": {
        const variable = node.childForFieldName("variable")
        if (variable === null || !LOWERCASE_NAME.test(variable.text)) this.unsafe = true
        return this.container(node, inherited)
      }
      case "test_command":
        return this.testCommand(node, inherited)
      case "variable_assignment":
      case "variable_assignments":
      case "declaration_command":
      case "unset_command":
        return this.stateChange(node, inherited)
      case "function_definition":
      case "c_style_for_statement":
        this.unsafe = true
        return this.container(node, inherited)
      case "program":
      case "list":
      case "pipeline":
      case "subshell":
      case "do_group":
      case "if_statement":
      case "elif_clause":
      case "else_clause":
      case "while_statement":
      case "case_statement":
      case "case_item":
      case "negated_command":
        return this.container(node, inherited)
      default:
        this.unsafe = true
        return this.generic(node)
    }
  }

  /** Statements in sequence; `&` runs the one before it in the background. */
  container(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    for (const child of node.children) {
      if (!child.isNamed) {
        if (child.type === "&") this.unsafe = true
        continue
      }
      if (STATEMENTS.has(child.type)) this.statement(child, inherited)
      else if (child.type === "variable_name") continue
      else this.word(child)
    }
  }

  /** Walk an unknown subtree for the statements and substitutions in it. */
  generic(node: Node): void {
    for (const child of node.namedChildren) {
      if (STATEMENTS.has(child.type)) this.statement(child, [])
      else if (CHECKED_EXPANSIONS.has(child.type)) this.word(child)
      else this.generic(child)
    }
  }

  command(node: Node, inherited: ReadonlyArray<RedirectRecord>, extraArguments: ReadonlyArray<Node>): void {
    let structural = true
    const assignments: Array<string> = []
    const words: Array<Word> = []
    const redirects: Array<RedirectRecord> = [...inherited]
    const rest: Array<Node> = []
    let previous: Node | undefined
    // Words bash joins (`r\<newline>m`): their values are concatenated, as bash runs them.
    let joinNext = false
    for (const child of node.children) {
      const isRedirect = REDIRECTS.has(child.type)
      joinNext = false
      if (previous !== undefined && !isRedirect && !this.separated(previous, child)) {
        structural = false
        joinNext = previous.isNamed && child.isNamed && words.length > 0 && child.type !== "variable_assignment"
      }
      previous = isRedirect ? undefined : child
      if (!child.isNamed) {
        // A bare token inside a command (`$"…"`): not a form we can prove anything about.
        structural = false
        continue
      }
      switch (child.type) {
        case "variable_assignment":
          assignments.push(child.text)
          this.generic(child)
          break
        case "command_name": {
          const name = this.word(child.firstNamedChild ?? child)
          if (name.dynamic) this.dynamic = true
          words.push(name)
          break
        }
        case "file_redirect": {
          const { extra, record } = this.fileRedirect(child)
          redirects.push(record)
          // Words after a redirection inside a command: bash's reading differs from the tree's.
          if (extra.length > 0) structural = false
          break
        }
        case "heredoc_redirect": {
          const heredoc = this.heredoc(child)
          redirects.push(...heredoc.records)
          rest.push(...heredoc.rest)
          break
        }
        case "herestring_redirect":
          this.generic(child)
          break
        default: {
          const word = this.word(child)
          if (joinNext) {
            const last = words.pop()!
            words.push({ value: last.value + word.value, dynamic: last.dynamic || word.dynamic })
          } else words.push(word)
        }
      }
    }
    for (const extra of extraArguments) words.push(this.word(extra))

    const [name, ...args] = words
    const invocation = name === undefined || name.dynamic ? undefined : describeInvocation(name.value, args)
    // The program itself; the line's verdict also weighs the redirections (`redirects`, `writePaths`).
    const readOnly = structural &&
      assignments.every(ShellAnalysis.isHarmlessAssignment) &&
      invocation !== undefined &&
      invocation.readOnly
    if (!redirects.every((record) => record.safe)) this.unsafe = true
    const fromRedirects = redirectPaths(redirects)
    this.commands.push({
      text: this.textWithoutRedirects(node, extraArguments),
      words,
      assignments,
      redirects: redirects.flatMap((record) => (record.redirect === undefined ? [] : [record.redirect])),
      readOnly,
      readPaths: [...(invocation?.reads ?? []), ...fromRedirects.readPaths],
      writePaths: [...(invocation?.writes ?? []), ...fromRedirects.writePaths],
      pathsKnown: structural && invocation !== undefined && invocation.pathsKnown &&
        redirects.every((record) => record.known),
      unresolvedPaths: (invocation?.unresolvedPaths ?? false) || !redirects.every((record) => record.known),
      unresolvedWords: [...(invocation?.unresolvedWords ?? []), ...unresolvedTargets(redirects)],
      onlyWritesPaths: structural && assignments.length === 0 && invocation !== undefined && invocation.onlyWritesPaths
    })
    if (name !== undefined && !name.dynamic && EVALUATING_BUILTINS.has(name.value)) {
      for (const arg of args) this.embedded(arg.value)
    }
    for (const statement of rest) this.statement(statement, [])
  }

  redirectedStatement(
    node: Node,
    inherited: ReadonlyArray<RedirectRecord>,
    outerExtra: ReadonlyArray<Node> = []
  ): void {
    const body = node.childForFieldName("body")
    const own: Array<RedirectRecord> = []
    const extra: Array<Node> = []
    const rest: Array<Node> = []
    for (const child of node.children) {
      if (body !== null && child.equals(body)) continue
      if (!child.isNamed) {
        if (child.type === "&") this.unsafe = true
        continue
      }
      if (child.type === "file_redirect") {
        const redirect = this.fileRedirect(child)
        own.push(redirect.record)
        extra.push(...redirect.extra)
      } else if (child.type === "heredoc_redirect") {
        const heredoc = this.heredoc(child)
        own.push(...heredoc.records)
        rest.push(...heredoc.rest)
      } else if (child.type === "herestring_redirect") this.generic(child)
      else this.statement(child, [])
    }
    extra.push(...outerExtra)
    if (body === null) {
      // A redirection alone (`> f`) truncates or creates a file; report it as a command.
      for (const word of extra) this.word(word)
      this.commands.push(opaque(node.text, [], [], [...inherited, ...own], true))
    } else this.attach(body, inherited, own, extra)
    for (const statement of rest) this.statement(statement, [])
  }

  /**
   * Give a statement's redirections to the command they belong to.
   * tree-sitter-bash attaches `> f` in `a && b > f` or `a | b > f` to the
   * whole list or pipeline; in bash it belongs to the last command only.
   */
  attach(
    body: Node,
    inherited: ReadonlyArray<RedirectRecord>,
    own: ReadonlyArray<RedirectRecord>,
    extra: ReadonlyArray<Node>
  ): void {
    switch (body.type) {
      case "command":
        return this.command(body, [...inherited, ...own], extra)
      case "redirected_statement":
        return this.redirectedStatement(body, [...inherited, ...own], extra)
      case "list":
      case "pipeline": {
        const statements = body.namedChildren.filter((child) => STATEMENTS.has(child.type) && child.type !== "comment")
        const last = statements[statements.length - 1]
        for (const child of body.children) {
          if (!child.isNamed) {
            if (child.type === "&") this.unsafe = true
          } else if (last !== undefined && child.equals(last)) this.attach(child, inherited, own, extra)
          else if (STATEMENTS.has(child.type)) this.statement(child, inherited)
          else this.word(child)
        }
        return
      }
      default:
        if (extra.length > 0) {
          this.unsafe = true
          for (const word of extra) this.word(word)
        }
        return this.statement(body, [...inherited, ...own])
    }
  }

  fileRedirect(node: Node): { readonly record: RedirectRecord; readonly extra: ReadonlyArray<Node> } {
    let descriptor = ""
    let operator = ""
    const targets: Array<Node> = []
    for (const child of node.children) {
      if (child.type === "file_descriptor") descriptor = child.text
      else if (!child.isNamed) operator += child.text
      else if (child.type === "ERROR") this.unsafe = true
      else targets.push(child)
    }
    const [target, ...extra] = targets
    if (target === undefined) {
      // `>&-` / `<&-` close a descriptor.
      return { record: { redirect: undefined, safe: operator.endsWith("-"), known: true }, extra }
    }
    const word = this.word(target)
    const use: ShellAnalysis.PathUse = { path: word.value, subtree: false, content: true }
    if ((operator === ">&" || operator === "<&") && !word.dynamic && /^(\d+-?|-)$/.test(word.value)) {
      // Descriptor duplication (`2>&1`), not a file.
      return { record: { redirect: undefined, safe: true, known: true }, extra }
    }
    if (operator.startsWith("<") && operator !== "<>") {
      return {
        record: {
          redirect: undefined,
          // bash opens `/dev/tcp/host/port` as a socket: a network client, not a read.
          safe: word.dynamic || !/^\/dev\/+(?:tcp|udp)\//.test(word.value),
          known: !word.dynamic,
          ...(word.dynamic ? { unresolved: word.value } : { read: use })
        },
        extra
      }
    }
    const redirect: ShellAnalysis.Redirect = { operator: `${descriptor}${operator}`, target: word.value }
    const harmless = !word.dynamic && HARMLESS_TARGETS.has(word.value)
    const paths = word.dynamic || harmless ? {} : operator === "<>" ? { read: use, write: use } : { write: use }
    return {
      record: { redirect, safe: harmless, known: !word.dynamic, ...paths, ...(word.dynamic ? { unresolved: word.value } : {}) },
      extra
    }
  }

  /**
   * A here-document: input, but it may carry output redirections and the rest
   * of the line (`cat <<EOF | grep x`), returned for the caller to walk after
   * the command it belongs to.
   */
  heredoc(node: Node): { readonly records: ReadonlyArray<RedirectRecord>; readonly rest: ReadonlyArray<Node> } {
    const records: Array<RedirectRecord> = []
    const rest: Array<Node> = []
    const start = node.children.find((child) => child.type === "heredoc_start")
    const expands = start !== undefined && !/['"\\]/.test(start.text)
    for (const child of node.children) {
      if (!child.isNamed) {
        if (child.type === "&") this.unsafe = true
        continue
      }
      switch (child.type) {
        case "heredoc_start":
        case "heredoc_end":
          break
        case "heredoc_body":
          if (expands) this.heredocBody(child)
          break
        case "file_redirect":
          records.push(this.fileRedirect(child).record)
          break
        case "heredoc_redirect": {
          const nested = this.heredoc(child)
          records.push(...nested.records)
          rest.push(...nested.rest)
          break
        }
        default:
          if (STATEMENTS.has(child.type)) rest.push(child)
          else this.generic(child)
      }
    }
    return { records, rest }
  }

  heredocBody(node: Node): void {
    for (const child of node.namedChildren) {
      if (child.type !== "heredoc_content") this.word(child)
    }
    // tree-sitter-bash does not parse every substitution in a body; look at the text too.
    const text = node.text
    if (text.includes("`") || text.includes("$(")) this.dynamic = true
    for (const match of text.matchAll(/`((?:\\.|[^`\\])*)`/g)) {
      const inner = match[1]!.trim()
      if (inner.length > 0) this.commands.push(opaque(inner, [], [], [], false))
    }
  }

  testCommand(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    // `[[ ]]` evaluates arithmetic for -eq and friends, so an expansion in it can run code.
    const expands = node.descendantsOfType([
      "simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"
    ]).length > 0
    // The operands of -eq and friends are arithmetic, and `-v`'s a subscripted name: bash runs
    // `$(cmd)` inside `a[…]` even from a quoted word, and names are evaluated recursively.
    let evaluates = false
    for (const expression of node.descendantsOfType(["binary_expression", "unary_expression"])) {
      const operator = expression.childForFieldName("operator")?.text ?? ""
      const operands = expression.namedChildren.filter((child) => child.type !== "test_operator")
      if (TestOperands.ARITHMETIC_OPERATORS.has(operator)) {
        const literal = (child: Node) => child.type === "number" || !TestOperands.evaluatesOperand(operator, child.text)
        if (!operands.every(literal)) evaluates = true
      } else if (TestOperands.NAME_OPERATORS.has(operator)) {
        const plain = (child: Node) => child.type === "word" && !TestOperands.evaluatesOperand(operator, child.text)
        if (!operands.every(plain)) evaluates = true
      }
    }
    if (evaluates) this.embedded(node.text)
    this.generic(node)
    this.commands.push(opaque(
      node.text,
      [{ value: "[[", dynamic: false }, ...node.namedChildren.map((child) => ({ value: child.text, dynamic: expands }))],
      [],
      inherited,
      true,
      !expands && !evaluates && inherited.every((record) => record.safe)
    ))
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

  /** Assignments and declarations: they change the shell's state. */
  stateChange(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    const assignments: Array<string> = []
    const words: Array<Word> = []
    if (node.type === "variable_assignment") {
      assignments.push(node.text)
      this.generic(node)
    } else {
      for (const child of node.children) {
        if (child.type === "variable_assignment") {
          assignments.push(child.text)
          this.generic(child)
        } else if (!child.isNamed) words.push({ value: child.text, dynamic: false })
        else words.push(this.word(child))
      }
    }
    this.commands.push(opaque(node.text, words, assignments, inherited, true))
    // `declare -i x='a[$(cmd)]'`, `unset 'a[$(cmd)]'`: evaluated as arithmetic or subscripts.
    this.embedded(node.text)
  }

  word(node: Node): Word {
    const text = node.text
    switch (node.type) {
      case "word": {
        const { pattern, value } = unquote(text)
        return { value, dynamic: UNQUOTED_GLOB.test(pattern) }
      }
      case "number":
        return { value: text, dynamic: false }
      case "raw_string":
        return { value: text.slice(1, -1), dynamic: false }
      case "string": {
        let value = ""
        let dynamic = false
        for (const child of node.children) {
          if (!child.isNamed) {
            if (child.type !== "\"") value += child.text
          } else if (child.type === "string_content") value += unescapeDoubleQuoted(child.text)
          else {
            value += this.word(child).value
            dynamic = true
          }
        }
        return { value, dynamic }
      }
      case "concatenation": {
        let value = ""
        let pattern = ""
        let dynamic = false
        for (const child of node.children) {
          if (!child.isNamed) {
            this.unsafe = true
            dynamic = true
            value += child.text
            continue
          }
          const part = this.word(child)
          value += part.value
          dynamic ||= part.dynamic
          pattern += child.type === "word" ? unquote(child.text).pattern : "_"
        }
        return { value, dynamic: dynamic || UNQUOTED_GLOB.test(pattern) }
      }
      case "simple_expansion":
        return { value: text, dynamic: true }
      case "expansion":
        if (!SAFE_EXPANSION.test(text)) this.unsafe = true
        this.generic(node)
        return { value: text, dynamic: true }
      case "command_substitution":
      case "process_substitution":
        this.dynamic = true
        this.generic(node)
        return { value: text, dynamic: true }
      case "arithmetic_expansion":
        if (!LITERAL_ARITHMETIC.test(text)) this.unsafe = true
        this.generic(node)
        return { value: text, dynamic: true }
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

  /** Whether two words are separate words for bash, too (not joined by a line continuation). */
  separated(previous: Node, next: Node): boolean {
    const gap = this.source.slice(previous.endIndex, next.startIndex).replace(/\\\r?\n/g, "")
    return /^[ \t]/.test(gap)
  }

  textWithoutRedirects(node: Node, extraArguments: ReadonlyArray<Node>): string {
    const inner = node.namedChildren.filter((child) => REDIRECTS.has(child.type))
    let text: string
    if (inner.length === 0) text = node.text
    else {
      const pieces: Array<string> = []
      let cursor = node.startIndex
      for (const redirect of inner) {
        pieces.push(this.source.slice(cursor, redirect.startIndex))
        cursor = redirect.endIndex
      }
      pieces.push(this.source.slice(cursor, node.endIndex))
      text = pieces.map((piece) => piece.trim()).filter((piece) => piece.length > 0).join(" ")
    }
    return [text, ...extraArguments.map((extra) => extra.text)].join(" ")
  }
}

/**
 * The full analysis of a parsed command line, or `undefined` when the parser
 * found syntax errors.
 */
export const analyze = (tree: Tree, source: string): ShellAnalysis.Analysis | undefined => {
  const root = tree.rootNode
  if (root.hasError) return undefined
  const walker = new Walker(source)
  walker.statement(root, [])
  const commands = walker.commands
  return {
    commands: commands.map((command) => ({
      text: command.text,
      argv: command.words.map((word) => word.value),
      assignments: command.assignments,
      redirects: command.redirects,
      readPaths: command.readPaths,
      writePaths: command.writePaths,
      pathsKnown: command.pathsKnown,
      unresolvedPaths: command.unresolvedPaths,
      unresolvedWords: command.unresolvedWords,
      readOnly: command.readOnly,
      onlyWritesPaths: command.onlyWritesPaths
    })),
    hasDynamicParts: walker.dynamic,
    readOnly: !walker.unsafe && !walker.dynamic && commands.length > 0 && commands.every((command) => command.readOnly)
  }
}

/**
 * The simple commands of a command line, as written. With syntax errors the
 * commands tree-sitter still recognised are combined with a naive split on
 * the control operators, so that deny rules see at least every part.
 */
export const split = (
  tree: Tree,
  source: string,
  naiveSplit: (command: string) => ReadonlyArray<string>
): ReadonlyArray<string> => {
  const walker = new Walker(source)
  walker.statement(tree.rootNode, [])
  const texts = walker.commands.map((command) => command.text.trim()).filter((text) => text.length > 0)
  if (!tree.rootNode.hasError) return texts
  return [...new Set([...texts, ...naiveSplit(source)])]
}
