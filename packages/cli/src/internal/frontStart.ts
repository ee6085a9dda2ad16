/**
 * What the front (front.ts) does, without the full parser: the pages of
 * `help.json` and `tools.json`, and the commands it runs itself. The start-up
 * snapshots evaluate it: the full one (snapshot.ts) with main.ts behind it,
 * the light one (snapshotLight.ts) without.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as PrintArguments from "./printArguments.js"

/** What the full parser prints, as a terminal sees it, by the arguments joined with spaces ("tools list --help"). */
type Pages = Readonly<Record<string, string>>

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

// The same test as Output.colorEnabled (kept here so the front imports nothing).
const colorEnabled = (stream: NodeJS.WriteStream) =>
  stream.isTTY === true && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

/**
 * `tools` pages rendered in a fresh directory, with what rendering them read:
 * variables that were unset and paths (`<cwd>/…`, `$HOME/…`, `$NAME/…` for
 * each variable in `set`, or absolute) that were absent or directories.
 */
export interface ToolPages {
  /** The directory variables that were set (to fresh directories). */
  readonly set: ReadonlyArray<string>
  readonly variables: ReadonlyArray<string>
  readonly paths: ReadonlyArray<{ readonly path: string; readonly kind: string }>
  readonly pages: Pages
}

const readJson = <A>(name: string): A | undefined => {
  try {
    return JSON.parse(fs.readFileSync(new URL(name, import.meta.url), "utf8")) as A
  } catch {
    return undefined
  }
}

const kindOf = (p: string): string => {
  try {
    const stat = fs.statSync(p, { throwIfNoEntry: false })
    return stat === undefined ? "absent" : stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other"
  } catch {
    return "other"
  }
}

/**
 * Whether this process would read what the pages were rendered from: HOME
 * and every `set` variable given, every recorded variable unset and every
 * recorded path of the same kind, with `<cwd>` standing for the working
 * directory and `$NAME` for the variable's value.
 */
export const unchanged = (
  conditions: Omit<ToolPages, "pages">,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string
): boolean => {
  if (!["HOME", ...conditions.set].every((name) => (env[name] ?? "") !== "")) return false
  if (conditions.variables.some((name) => env[name] !== undefined)) return false
  const expand = (p: string): string | undefined => {
    const [first = "", ...rest] = p.split("/")
    if (first === "<cwd>") return path.join(cwd, ...rest)
    if (!first.startsWith("$")) return p
    const dir = env[first.slice(1)]
    return dir === undefined || dir === "" ? undefined : path.join(dir, ...rest)
  }
  return conditions.paths.every(({ kind, path: p }) => {
    const expanded = expand(p)
    return expanded !== undefined && kindOf(expanded) === kind
  })
}

/**
 * What the front prints for these arguments, or undefined when the full
 * parser must run.
 */
export const answer = (args: ReadonlyArray<string>, pages: Pages): string | undefined => {
  if (args.some((arg) => /\s/.test(arg))) return undefined
  const key = args.map((arg, i) => (arg === "-h" && i === args.length - 1 ? "--help" : arg)).join(" ")
  return Object.hasOwn(pages, key) ? pages[key] : undefined
}

const toolPage = (args: ReadonlyArray<string>): string | undefined => {
  const tools = readJson<{ readonly variants?: ReadonlyArray<ToolPages> }>("./tools.json")
  if (!Array.isArray(tools?.variants)) return undefined
  let cwd: string
  try {
    cwd = process.cwd()
  } catch {
    return undefined
  }
  for (const variant of tools.variants as ReadonlyArray<ToolPages>) {
    const text = answer(args, variant.pages)
    if (text !== undefined && unchanged(variant, process.env, cwd)) return text
  }
  return undefined
}

/**
 * The commands the front runs without the full parser, with the defaults it gives every option: `tools list
 * [--json]` (fastTools.ts), `dispatch FILE` (fastDispatch.ts, FILE a path or `-`) and `-p PROMPT …` or
 * `--print PROMPT …` (fastPrint.ts; the lines printArguments.ts accepts). bin/switchyard starts the first two
 * from the light snapshot (`bundle/snapshot-light.blob`) and the third from the print snapshot
 * (`bundle/snapshot-print.blob`): for the first two its test and this one must agree; a `-p` line the launcher
 * sends to the print snapshot and this one refuses is run by the full one from there (snapshotPrint.ts).
 */
export type FastCommand =
  | { readonly _tag: "ToolsList"; readonly json: boolean }
  | { readonly _tag: "Dispatch"; readonly file: string }
  | { readonly _tag: "Print"; readonly line: PrintArguments.PrintArguments }

/** Which fast command `args` is, if any (see FastCommand). */
export const fastCommand = (args: ReadonlyArray<string>): FastCommand | undefined => {
  if (args[0] === "tools" && args[1] === "list" && (args.length === 2 || (args.length === 3 && args[2] === "--json"))) {
    return { _tag: "ToolsList", json: args.length === 3 }
  }
  const file = args[1]
  if (args[0] === "dispatch" && args.length === 2 && file !== undefined && file !== "") {
    if (file === "-" || !file.startsWith("-")) return { _tag: "Dispatch", file }
  }
  // The parser reads `-p PROMPT …` as `run --print PROMPT …` whatever word PROMPT is (the first word decides the
  // command); printArguments.ts says which such lines need no parser.
  const line = PrintArguments.parse(args)
  return line === undefined ? undefined : { _tag: "Print", line }
}

/**
 * How the entry loads what a command runs: the full parser (main.ts, which
 * reads `process.argv`) and the fast paths. Given by the entry, so the
 * project's modules are imported dynamically only from main.ts and front.ts
 * (issue 23's rule) and the light snapshot hands in what it evaluated.
 */
export interface Entries {
  readonly full: () => Promise<void>
  readonly tools: () => Promise<{ readonly list: (json: boolean) => Promise<number> }>
  readonly dispatch: () => Promise<{ readonly dispatch: (file: string) => void }>
  readonly print: () => Promise<{ readonly print: (line: PrintArguments.PrintArguments) => void }>
}

/**
 * Answer the command line `args` (without `node` and the script): from the
 * pages when they hold the answer, the fast commands without the full parser,
 * everything else with `entries.full`.
 */
export const start = async (args: ReadonlyArray<string>, entries: Entries): Promise<void> => {
  // Every page is `--version` or ends in --help (or -h): other commands skip reading and parsing 50 kB of JSON.
  const last = args.at(-1)
  const page = last === "--help" || last === "-h" || (args.length === 1 && last === "--version")
  const pages = page ? readJson<Pages>("./help.json") : undefined
  const text = (pages === undefined ? undefined : answer(args, pages)) ??
    (args[0] === "tools" ? toolPage(args) : undefined)
  const fast = text === undefined ? fastCommand(args) : undefined
  if (fast?._tag === "ToolsList") {
    const { list } = await entries.tools()
    process.exitCode = await list(fast.json)
  } else if (fast?._tag === "Dispatch") {
    const { dispatch } = await entries.dispatch()
    dispatch(fast.file)
  } else if (fast?._tag === "Print") {
    const { print } = await entries.print()
    print(fast.line)
  } else if (text === undefined) {
    await entries.full()
  } else {
    process.stdout.write(colorEnabled(process.stdout) ? text : text.replace(ANSI, ""))
  }
}
