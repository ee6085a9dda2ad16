/**
 * The program table's claims about its grammars (issue 19, class 1): a
 * grammar marked `complete` lists every option the program accepts, so a
 * word not known until run time can only become an option the table
 * describes. Checked against the installed program's `--help`: every long
 * option and every short option it prints must be in the grammar. A program
 * that is not installed, or prints no help, is reported and skipped.
 */
import * as Programs from "../src/internal/programs/table.js"
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"

const helpOf = (name: string): string | undefined => {
  const result = spawnSync(name, ["--help"], { encoding: "utf8", timeout: 10_000 })
  if (result.error !== undefined) return undefined
  const text = `${result.stdout}${result.stderr}`
  return text.length > 80 ? text : undefined
}

/** The options a `--help` text lists: `--long-name` and `-x` at the start of an entry. */
const optionsIn = (help: string) => ({
  long: new Set([...help.matchAll(/(?<![\w-])--([a-z0-9][a-z0-9-]*)/g)].map((match) => match[1]!)),
  short: new Set([...help.matchAll(/(?:^|[\s,[])-([A-Za-z0-9])(?=[\s,=[]|$)/gm)].map((match) => match[1]!))
})

/** Names in help texts that are not options of the program (examples, other programs' options). */
const NOT_OPTIONS: Readonly<Record<string, ReadonlyArray<string>>> = {
  // "-M" in "-M from first to M'th (included) byte": a range, not an option.
  cut: ["M"],
  // "-k" in "-k 1,1": sort's option, named in join's advice.
  join: ["k"],
  // jq's `--arg`-style pairs are read before the grammar.
  jq: ["args", "jsonargs", "arg", "argjson", "slurpfile", "rawfile"]
}

const complete = [...Programs.readOnlyCommandNames, ...Programs.writerNames].filter((name) =>
  Programs.grammarOf(name)?.complete === true
)

describe("program grammars marked complete list every option of the program (issue 19, class 1)", () => {
  it("most readers declare a complete grammar", () => {
    expect(complete.length).toBeGreaterThan(30)
  })

  for (const name of complete) {
    const help = helpOf(name)
    it.skipIf(help === undefined)(`${name}: --help names no option the grammar lacks`, () => {
      const grammar = Programs.grammarOf(name)!
      const listed = optionsIn(help!)
      const ignored = new Set(NOT_OPTIONS[name] ?? [])
      expect([...listed.long].filter((option) => !grammar.long.has(option) && !ignored.has(option))).toEqual([])
      expect([...listed.short].filter((option) => !grammar.short.has(option) && !ignored.has(option))).toEqual([])
    })
  }
})
