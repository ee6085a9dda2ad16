/**
 * docs/DESIGN.md stays the design the code cites: every `§N[.N…]` in the
 * sources, tests, benchmarks and Markdown names a numbered heading of
 * DESIGN.md, and every `chapter 5.N` names a row of its table of the book
 * chapter's sections (cited without `§`, since the chapter's numbering clashes
 * with ours).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const design = fs.readFileSync(path.join(root, "docs", "DESIGN.md"), "utf8")

/** `## 4. The algorithms` → 4, `### 4.13 Footprints` → 4.13. */
const sections = new Set(
  Array.from(design.matchAll(/^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/gm), (match) => match[1]!)
)

/** The rows of the chapter table: `| 5.6.3 | … |`. */
const chapterSections = new Set(Array.from(design.matchAll(/^\|\s*(5(?:\.\d+)+)\s*\|/gm), (match) => match[1]!))

const skipped = new Set(["node_modules", "dist", "bundle", ".generated", ".git"])

const filesUnder = (dir: string, extensions: ReadonlyArray<string>): Array<string> => {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : filesUnder(full, extensions)
    return extensions.some((extension) => entry.name.endsWith(extension)) ? [full] : []
  })
}

const packages = fs.readdirSync(path.join(root, "packages"))
const citing = [
  ...packages.flatMap((name) => filesUnder(path.join(root, "packages", name, "src"), [".ts"])),
  ...packages.flatMap((name) => filesUnder(path.join(root, "packages", name, "test"), [".ts"])),
  ...filesUnder(path.join(root, "test"), [".ts"]),
  ...filesUnder(path.join(root, "bench"), [".ts"]),
  ...filesUnder(path.join(root, "docs"), [".md"]),
  ...["README.md", "SECURITY.md", "CONTRIBUTING.md"].map((name) => path.join(root, name)).filter(fs.existsSync)
]

interface Citation {
  readonly where: string
  readonly section: string
}

/** Every match of `pattern` in the files, with the file and line it stands on; group 1 (and 2, if any) are cited. */
const citations = (pattern: RegExp): Array<Citation> =>
  citing.flatMap((file) => {
    const text = fs.readFileSync(file, "utf8")
    return Array.from(text.matchAll(pattern)).flatMap((match) => {
      const line = text.slice(0, match.index).split("\n").length
      const where = `${path.relative(root, file)}:${line}`
      return [match[1], match[2]].filter((section) => section !== undefined).map((section) => ({ where, section }))
    })
  })

const sectionCitations = citations(/§\s?(\d+(?:\.\d+)*)/g)
const chapterCitations = citations(/\bchapter\s+(\d+(?:\.\d+)+)(?:\s*[–-]\s*(\d+(?:\.\d+)+))?/gi)

describe("docs/DESIGN.md", () => {
  it("numbers its sections 1–6 with §4's fourteen subsections", () => {
    for (const section of ["1", "2", "3", "4", "5", "6"]) expect(sections).toContain(section)
    for (let n = 1; n <= 14; n++) expect(sections).toContain(`4.${n}`)
  })

  it("has a heading for every § the code, the tests and the docs cite", () => {
    expect(sectionCitations.length).toBeGreaterThan(100)
    const unresolved = sectionCitations.filter((citation) => !sections.has(citation.section))
    expect(unresolved.map((citation) => `${citation.where}: §${citation.section}`)).toEqual([])
  })

  it("has a row for every section of the book chapter that is cited", () => {
    expect(chapterCitations.length).toBeGreaterThan(5)
    const unresolved = chapterCitations.filter((citation) => !chapterSections.has(citation.section))
    expect(unresolved.map((citation) => `${citation.where}: chapter ${citation.section}`)).toEqual([])
  })

  it("the chapter's sections are not §-numbered headings, so a stray chapter citation with § cannot resolve", () => {
    for (const section of chapterSections) expect(sections).not.toContain(section)
  })
})
