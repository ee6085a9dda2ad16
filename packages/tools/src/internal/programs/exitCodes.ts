/**
 * Exit codes that are answers, not failures (issue 20, item 4; SPEC §4.13):
 * `grep` exiting 1 found no match, `diff` exiting 1 found a difference,
 * `test` exiting 1 said false. Such a Bash call is a result saying what the
 * code means ("exit 1: no matches"), not an error, and cancels nothing.
 *
 * The command that decides a line's exit status is found as bash's `$?`
 * would be: the last statement's last command (in a list or a pipeline
 * without `pipefail`, the last one run), through redirections, subshells and
 * `{ }` groups. A negated statement (`! grep x`), a loop, an `if` or a `case`
 * decides nothing here: the code then means what it means for any program.
 *
 * @internal
 */
import type { Node } from "web-tree-sitter"

/** What an exit code means, per program (and `git` subcommand). */
const ANSWERS: ReadonlyMap<string, ReadonlyMap<number, string>> = new Map([
  ...["grep", "egrep", "fgrep", "rg", "ag", "git grep"].map((name) => [name, new Map([[1, "no matches"]])] as const),
  ...["diff", "cmp"].map((name) => [name, new Map([[1, "files differ"]])] as const),
  ...["test", "[", "[["].map((name) => [name, new Map([[1, "false"]])] as const)
])

/** The program names the table knows, for tests. */
export const answeringPrograms: ReadonlyArray<string> = [...ANSWERS.keys()]

/** What `code` means for `program` (`git grep` for git's subcommand), if it is an answer. */
export const answerFor = (program: string, code: number): string | undefined => ANSWERS.get(program)?.get(code)

/** The last named child that is a statement (not a comment or an operator). */
const lastStatement = (node: Node): Node | undefined => {
  const statements = node.namedChildren.filter((child) => child.type !== "comment")
  return statements[statements.length - 1]
}

/**
 * The program whose exit status is the line's: `grep`, `git grep`, `[[`, …;
 * `undefined` when no single program decides it (negation, loops,
 * conditionals, a dynamic name).
 */
export const decidingProgram = (node: Node): string | undefined => {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
    case "subshell":
    case "compound_statement": {
      if (node.type === "compound_statement" && node.firstChild?.type !== "{") return undefined
      const last = lastStatement(node)
      return last === undefined ? undefined : decidingProgram(last)
    }
    case "redirected_statement": {
      const body = node.childForFieldName("body")
      return body === null ? undefined : decidingProgram(body)
    }
    case "test_command":
      return "[["
    case "command": {
      const name = node.childForFieldName("name")
      if (name === null || name.namedChildren.some((child) => child.type !== "word")) return undefined
      const program = name.text
      if (program !== "git") return /^[\w.[-]+$/.test(program) ? program : undefined
      // `git grep`: the first word after git's own options.
      const words = node.namedChildren.filter((child) => child.type === "word").map((child) => child.text)
      const subcommand = words.find((word) => !word.startsWith("-"))
      return subcommand === undefined ? "git" : `git ${subcommand}`
    }
    default:
      return undefined
  }
}
