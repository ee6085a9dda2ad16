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
import { opaque, type RedirectRecord, redirectPaths, unresolvedTargets } from "./shellRecords.js"
import { joinWords, LOWERCASE_NAME, PLAIN_NAME, WordWalker } from "./shellWordWalker.js"

/**
 * Builtins that evaluate some operands as arithmetic or subscripts, where
 * `a[$(cmd)]` runs `cmd` even from a single-quoted word: their operands' `$( )`
 * and backtick texts are reported as commands, so that deny rules see them.
 */
const EVALUATING_BUILTINS = new Set([
  "test",
  "[",
  "let",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "printf",
  "read",
  "unset",
  "mapfile",
  "readarray",
  "shift",
  "return",
  "exit",
  "break",
  "continue",
  "wait"
])

const STATEMENTS = new Set([
  "program",
  "list",
  "pipeline",
  "compound_statement",
  "subshell",
  "do_group",
  "if_statement",
  "elif_clause",
  "else_clause",
  "while_statement",
  "for_statement",
  "c_style_for_statement",
  "case_statement",
  "case_item",
  "negated_command",
  "redirected_statement",
  "command",
  "test_command",
  "variable_assignment",
  "variable_assignments",
  "declaration_command",
  "unset_command",
  "function_definition",
  "comment"
])

/** Expansions that `word` checks, wherever they are nested. */
const CHECKED_EXPANSIONS = new Set([
  "command_substitution",
  "process_substitution",
  "expansion",
  "arithmetic_expansion"
])

const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

/** Output targets that are not files. */
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"])

/** Builtins after which relative paths, and the repository git finds, are somewhere else. */
const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"])

/**
 * The `{NAME}` words written right before a redirection operator (`{fd}>file`,
 * `true {HOME}>/dev/null`): bash assigns NAME a new descriptor number. The
 * tree has them as ordinary words, so they are found in the source: a
 * `{NAME}` that starts a word and ends where a redirection starts.
 */
const namedDescriptorWords = (source: string, root: Node): ReadonlyMap<number, string> => {
  const out = new Map<number, string>()
  for (const redirect of root.descendantsOfType("file_redirect")) {
    const before = source.slice(Math.max(0, redirect.startIndex - 260), redirect.startIndex)
    const match = /(?:^|[\s;&|()])\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(before)
    if (match !== null) out.set(redirect.startIndex - match[1]!.length - 2, match[1]!)
  }
  return out
}

class Walker extends WordWalker {
  /** A `cd`, `pushd` or `popd` was walked: a later git may run in another repository (issue 19, class 4). */
  changedDirectory = false
  /** Start offsets of the `{NAME}` words of named-descriptor redirections (`{fd}>file`), with NAME. */
  readonly namedDescriptors: ReadonlyMap<number, string>

  constructor(source: string, root: Node) {
    super(source)
    this.namedDescriptors = namedDescriptorWords(source, root)
  }

  statement(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    switch (node.type) {
      case "comment":
        return
      case "command":
        return this.command(node, inherited, [])
      case "redirected_statement":
        return this.redirectedStatement(node, inherited)
      case "compound_statement":
        // `(( … ))` is an arithmetic command: it evaluates names and can assign.
        if (node.firstChild?.type !== "{") this.evaluated()
        return this.container(node, inherited)
      case "for_statement": {
        // `for HOME in …` sets HOME for the loop's commands.
        const variable = node.childForFieldName("variable")
        if (variable === null || !LOWERCASE_NAME.test(variable.text)) this.unsafe = true
        if (variable !== null) this.assigns(variable.text)
        return this.container(node, inherited)
      }
      case "test_command":
        return this.testCommand(node, inherited)
      case "variable_assignment":
      case "variable_assignments":
      case "declaration_command":
      case "unset_command":
        return this.stateChange(node, inherited)
      case "c_style_for_statement":
        this.evaluated()
        return this.container(node, inherited)
      case "function_definition":
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
          // tree-sitter-bash reads `0<`/`0>` (the digit, then the operator) as an argument `0` and a redirection
          // without a descriptor; bash reads one redirection of descriptor 0 (`cp a b 0< c` copies to `b`, not
          // to `0`: found by the footprint oracle, seed 202612). The redirection is walked with the statement.
          if (
            child.type === "number" && /^[0-9]+$/.test(child.text) && /[<>]/.test(this.source[child.endIndex] ?? "")
          ) {
            break
          }
          const descriptor = this.namedDescriptors.get(child.startIndex)
          if (descriptor !== undefined) {
            // `{NAME}>file` assigns NAME a new descriptor number (issue 19, class 3).
            assignments.push(`${descriptor}=10`)
            this.assigns(descriptor)
            break
          }
          const word = this.word(child)
          if (joinNext) words.push(joinWords(words.pop()!, word))
          else words.push(word)
        }
      }
    }
    for (const extra of extraArguments) words.push(this.word(extra))

    const [name, ...args] = words
    let invocation = name === undefined || name.dynamic ? undefined : describeInvocation(name.value, args)
    if (name !== undefined && !name.dynamic) {
      if (DIRECTORY_CHANGES.has(name.value)) this.changedDirectory = true
      // After a `cd`, git may run in a repository the project supplies (its config runs programs).
      if (name.value === "git" && this.changedDirectory && invocation !== undefined) {
        invocation = { ...invocation, readOnly: false, pathsKnown: false }
      }
      this.builtinEvaluates(name.value, args)
    }
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
      record: {
        redirect,
        safe: harmless,
        known: !word.dynamic,
        ...paths,
        ...(word.dynamic ? { unresolved: word.value } : {})
      },
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
      "simple_expansion",
      "expansion",
      "command_substitution",
      "process_substitution",
      "arithmetic_expansion"
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
    if (evaluates) {
      this.embedded(node.text)
      this.evaluated()
    }
    this.generic(node)
    const record = opaque(
      node.text,
      [
        { value: "[[", dynamic: false },
        ...node.namedChildren.map((child) => ({ value: child.text, dynamic: expands }))
      ],
      [],
      inherited,
      true,
      !expands && !evaluates && inherited.every((record) => record.safe)
    )
    // The files its operators name are read (their metadata), so the footprint is that (issue 20).
    const files = this.testFiles(node)
    this.commands.push({
      ...record,
      readPaths: [...files.reads, ...record.readPaths],
      pathsKnown: record.pathsKnown && files.known,
      unresolvedPaths: record.unresolvedPaths || !files.known,
      unresolvedWords: [...files.unresolved, ...record.unresolvedWords]
    })
  }

  /** The operands of `[ ]`/`[[ ]]`'s file operators (`-f x`, `a -nt b`). */
  testFiles(node: Node): {
    readonly reads: ReadonlyArray<ShellAnalysis.PathUse>
    readonly known: boolean
    readonly unresolved: ReadonlyArray<string>
  } {
    const reads: Array<ShellAnalysis.PathUse> = []
    const unresolved: Array<string> = []
    const add = (operand: Node | undefined) => {
      if (operand === undefined) return
      const word = operand.type === "word" || operand.type === "raw_string" ? this.word(operand) : undefined
      if (word === undefined || word.dynamic) unresolved.push(operand.text)
      else reads.push({ path: word.value, subtree: false, content: false })
    }
    for (const expression of node.descendantsOfType(["binary_expression", "unary_expression"])) {
      const operator = expression.childForFieldName("operator")?.text ?? ""
      const operands = expression.namedChildren.filter((child) => child.type !== "test_operator")
      if (TestOperands.FILE_OPERATORS.has(operator) && expression.type === "unary_expression") add(operands[0])
      else if (TestOperands.FILE_COMPARISONS.has(operator)) operands.forEach(add)
    }
    return { reads, known: unresolved.length === 0, unresolved }
  }

  /** Assignments and declarations: they change the shell's state. */
  stateChange(node: Node, inherited: ReadonlyArray<RedirectRecord>): void {
    const assignments: Array<string> = []
    const words: Array<Word> = []
    const assigned = (assignment: Node) => {
      assignments.push(assignment.text)
      const name = assignment.childForFieldName("name") ?? assignment.firstNamedChild
      // `BASH_CMDS[ls]=/bin/rm`: the array's name.
      const variable = name?.type === "subscript" ? name.childForFieldName("name") ?? name.firstNamedChild : name
      if (variable !== null && variable !== undefined) this.assigns(variable.text)
      this.generic(assignment)
    }
    if (node.type === "variable_assignment") assigned(node)
    else {
      for (const child of node.children) {
        if (child.type === "variable_assignment") assigned(child)
        else if (child.type === "variable_assignments") {
          for (const inner of child.namedChildren) if (inner.type === "variable_assignment") assigned(inner)
        } else if (!child.isNamed) words.push({ value: child.text, dynamic: false })
        else words.push(this.word(child))
      }
    }
    const [keyword, ...rest] = words
    if (node.type === "unset_command") {
      // `unset PATH`, `unset GIT_CONFIG_COUNT`; a subscript in a name is evaluated.
      for (const word of rest) {
        if (word.dynamic || /[[\]]/.test(word.value)) this.evaluated()
        else if (!word.value.startsWith("-")) this.assigns(word.value)
      }
    } else if (node.type === "declaration_command") {
      // `declare -i`/`-n` evaluate values as arithmetic or names; a word not known until run time may be either.
      const flags = rest.filter((word) => !word.dynamic && /^[-+][a-zA-Z]+$/.test(word.value)).map((w) => w.value)
      if (rest.some((word) => word.dynamic) || flags.some((flag) => /[in]/.test(flag))) {
        if (rest.some((word) => word.dynamic) || assignments.some((a) => !/^[^=]*=[+-]?[0-9]*$/.test(a))) {
          this.evaluated()
        }
      }
      if (keyword?.value === "export") {
        for (const word of rest) if (!word.dynamic && PLAIN_NAME.test(word.value)) this.assigns(word.value)
      }
    }
    this.commands.push(opaque(node.text, words, assignments, inherited, true))
    // `declare -i x='a[$(cmd)]'`, `unset 'a[$(cmd)]'`: evaluated as arithmetic or subscripts.
    this.embedded(node.text)
  }

  /**
   * What an evaluating builtin does with words known only at run time (issue
   * 19, class 2): `let` evaluates its arguments; `test`/`[` may evaluate an
   * operand; `read`, `mapfile` and `printf -v` assign names whose subscripts
   * are evaluated, and assign (rebind) uppercase names.
   */
  builtinEvaluates(name: string, args: ReadonlyArray<Word>): void {
    if (name === "let") this.evaluated()
    else if (name === "test" || name === "[") {
      if (TestOperands.evaluatesAtRunTime(name === "[" ? args.slice(0, -1) : args)) this.evaluated()
    } else if (name === "printf") {
      // `-v NAME` is printf's only option, and only first.
      const first = args[0]
      if (first !== undefined && (first.dynamic || /^-v/.test(first.value))) {
        const target = first.dynamic || first.value === "-v" ? args[1] : { value: first.value.slice(2), dynamic: false }
        this.assignedName(first.dynamic ? first : target ?? first)
      }
    } else if (name === "read" || name === "mapfile" || name === "readarray") {
      for (let i = 0; i < args.length; i++) {
        const arg = args[i]!
        if (arg.dynamic) this.evaluated()
        else if (/^-[a-zA-Z]*[dpntuNOsCcTu]$/.test(arg.value)) i++
        else if (!arg.value.startsWith("-")) this.assignedName(arg)
      }
    }
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
  const walker = new Walker(source, root)
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
    runsUnseen: walker.evaluates || walker.rebinds,
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
  const walker = new Walker(source, tree.rootNode)
  walker.statement(tree.rootNode, [])
  const texts = walker.commands.map((command) => command.text.trim()).filter((text) => text.length > 0)
  if (!tree.rootNode.hasError) return texts
  return [...new Set([...texts, ...naiveSplit(source)])]
}
