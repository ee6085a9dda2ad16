/**
 * The bundled binary's front (packages/cli/src/front.ts) answers `--help`,
 * `<command> --help`, `--version` and `tools list` without the full parser.
 * Its answers must equal the full parser's, for every command that exists,
 * so the two never drift (issue 14).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { root, runCli } from "./support/cli.js"

const bundle = path.join(root, "packages/cli/bundle")
const pages = (): Record<string, string> => JSON.parse(fs.readFileSync(path.join(bundle, "help.json"), "utf8"))

/** The full parser (bundle/main.js, no front), piped like the tests' binary. */
const full = async (args: ReadonlyArray<string>, tty = false) => {
  const env = { ...process.env }
  delete env["FORCE_COLOR"]
  delete env["NO_COLOR"]
  const preload = tty ? ["--import", "data:text/javascript,process.stdout.isTTY=true"] : []
  const result = spawnSync(process.execPath, [...preload, path.join(bundle, "main.js"), ...args], { encoding: "utf8", env, cwd: root })
  return { code: result.status, stdout: result.stdout }
}
const fullOut = async (args: ReadonlyArray<string>, tty = false) => (await full(args, tty)).stdout

/** The commands the root help lists: two-space-indented lines of its commands section. */
const commandPaths = (rootHelp: string) => {
  const lines = rootHelp.split("\n")
  const start = lines.findIndex((line) => /^(COMMANDS|Commands:?)\s*$/.test(line))
  const paths: Array<string> = []
  for (const line of start === -1 ? [] : lines.slice(start + 1)) {
    if (/^\S/.test(line)) break
    const match = /^ {2}(?:- )?([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?= |$)/.exec(line)
    if (match !== null) paths.push(match[1]!)
  }
  return paths
}

describe("the CLI front", () => {
  it("has a page for --version, --help and every command's --help that the full parser lists", async () => {
    const rootHelp = await fullOut(["--help"])
    const expected = ["--version", "--help", ...new Set(commandPaths(rootHelp).map((p) => `${p} --help`))]
    expect(Object.keys(pages()).sort()).toEqual(expected.sort())
    expect(expected).toContain("tools list --help")
  })

  it("prints exactly what the full parser prints, piped, for every page and -h", async () => {
    for (const key of Object.keys(pages())) {
      const args = key.split(" ")
      const viaFront = await runCli(args)
      expect(viaFront.code, key).toBe(0)
      expect(viaFront.stdout, key).toBe(await fullOut(args))
      if (args.at(-1) === "--help") {
        const short = await runCli([...args.slice(0, -1), "-h"])
        expect(short.stdout, `${key} as -h`).toBe(await fullOut([...args.slice(0, -1), "-h"]))
      }
    }
  }, 180_000)

  it("stores the pages as a terminal sees them and prints them without colour when piped", async () => {
    const stored = pages()["--help"]!
    expect(stored).toBe(await fullOut(["--help"], true))
    expect((await runCli(["--help"])).stdout).not.toContain("\x1b[")
  })

  it("runs tools list and tools list --json as the full parser does", async () => {
    for (const args of [["tools", "list"], ["tools", "list", "--json"]]) {
      const viaFront = await runCli(args)
      expect(viaFront.code).toBe(0)
      expect(viaFront.stdout).toBe(await fullOut(args))
      expect(viaFront.stdout.length).toBeGreaterThan(100)
    }
  })

  it("leaves everything else to the full parser: options with --help, bad input", async () => {
    for (const args of [["dispatch", "--verbose", "--help"], ["tools", "list", "--frobnicate"], ["tools", "list", "--json", "x"]]) {
      const viaFront = await runCli(args)
      const viaFull = await full(args)
      expect(viaFront.code, args.join(" ")).toBe(viaFull.code)
      expect(viaFront.stdout, args.join(" ")).toBe(viaFull.stdout)
    }
    expect((await runCli(["tools", "list", "--frobnicate"])).code).toBe(2)
  })

  it("answers tools list in a directory with a broken settings file like the full parser", async () => {
    const dir = fs.mkdtempSync(path.join(root, ".switchyard-test-front-"))
    try {
      fs.mkdirSync(path.join(dir, ".claude"))
      fs.writeFileSync(path.join(dir, ".claude", "settings.json"), "{ not json")
      const viaFront = await runCli(["tools", "list"], { cwd: dir })
      const viaFull = await runCli(["tools", "list", "--verbose"], { cwd: dir })
      expect(viaFront.code).toBe(viaFull.code)
      expect(viaFront.stdout).toBe(viaFull.stdout)
      expect(viaFront.stderr.split("\n")[0]).toBe(viaFull.stderr.split("\n")[0])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
