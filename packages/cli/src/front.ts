/**
 * The entry of the bundled `switchyard` binary. `--help`, `<command> --help`
 * and `--version` are answered from `help.json`, which the build renders with
 * the full parser (packages/cli/build.mjs), so they start without loading
 * `@effect/cli` or Effect; everything else loads the full parser (main.ts).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"

/** What the full parser prints, as a terminal sees it, by the arguments joined with spaces ("tools list --help"). */
type Pages = Readonly<Record<string, string>>

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

// The same test as Output.colorEnabled (kept here so the front imports nothing).
const colorEnabled = (stream: NodeJS.WriteStream) =>
  stream.isTTY === true && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

const readPages = (): Pages | undefined => {
  try {
    return JSON.parse(fs.readFileSync(new URL("./help.json", import.meta.url), "utf8")) as Pages
  } catch {
    return undefined
  }
}

/**
 * What the front prints for these arguments, or undefined when the full
 * parser must run.
 *
 * @since 0.1.0
 */
export const answer = (args: ReadonlyArray<string>, pages: Pages): string | undefined => {
  if (args.some((arg) => /\s/.test(arg))) return undefined
  const key = args.map((arg, i) => (arg === "-h" && i === args.length - 1 ? "--help" : arg)).join(" ")
  return Object.hasOwn(pages, key) ? pages[key] : undefined
}

const args = process.argv.slice(2)
const pages = readPages()
const text = pages === undefined ? undefined : answer(args, pages)
if (text === undefined && args[0] === "tools" && args[1] === "list" && (args.length === 2 || (args.length === 3 && args[2] === "--json"))) {
  const { list } = await import("./internal/fastTools.js")
  process.exitCode = await list(args.length === 3)
} else if (text === undefined) {
  await import("./main.js")
} else {
  process.stdout.write(colorEnabled(process.stdout) ? text : text.replace(ANSI, ""))
}
