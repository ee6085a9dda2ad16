/**
 * The library installs as the README says (issue 24, item 6): the three
 * packages are packed (`npm pack`), the README's install lines run in an
 * empty project (the packed tarballs standing in for the `@switchyard/*`
 * names, everything else from the npm registry), and the README's example
 * runs there. Judged by the project's node_modules (one Effect, version 3)
 * and the example's output. Skipped, with a line saying so, when the npm
 * registry cannot be reached.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { root } from "./support/cli.js"

// Asynchronous: a long synchronous install would starve the test worker's event loop.
const run = async (file: string, args: ReadonlyArray<string>, cwd: string) =>
  (await promisify(execFile)(file, [...args], { cwd, encoding: "utf8", timeout: 300_000, maxBuffer: 64 << 20 })).stdout
const npm = (args: ReadonlyArray<string>, cwd: string) => run("npm", args, cwd)

const registryReachable = (() => {
  const ping = spawnSync("npm", ["ping"], { stdio: "ignore", timeout: 30_000 })
  if (ping.status !== 0) process.stderr.write("skipped: the install test needs the npm registry (npm ping failed)\n")
  return ping.status === 0
})()

const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")

/** The lines of the README's install block. */
const installLines = (): ReadonlyArray<string> => {
  const section = readme.slice(readme.indexOf("### Install"))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ""
  return block.split("\n").filter((line) => line.startsWith("npm install "))
}

describe.skipIf(!registryReachable)("installing the packages as the README says", () => {
  it("the README names the exact versions, and peers keep Effect 4 out", () => {
    const lines = installLines()
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain("effect@3.22.4")
    for (const pkg of ["core", "tools", "cli"]) {
      const manifest = JSON.parse(fs.readFileSync(path.join(root, "packages", pkg, "package.json"), "utf8"))
      expect(manifest.peerDependencies.effect).toBe("~3.22.4")
      expect(manifest.dependencies?.effect).toBeUndefined()
      for (const name of Object.keys(manifest.dependencies ?? {})) expect(name.startsWith("@effect/")).toBe(false)
    }
  })

  it("packs, installs with only the README's lines, and runs the README example", async () => {
    const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-install-")))
    const packs = path.join(work, "packs")
    const project = path.join(work, "project")
    fs.mkdirSync(packs)
    fs.mkdirSync(project)
    // One `npm pack` for the four workspaces (each npm start costs a CPU-second): one tarball each.
    const pkgs = ["core", "tools", "durable", "cli"]
    const names = (await npm([
      "pack",
      "--silent",
      "--pack-destination",
      packs,
      ...pkgs.map((pkg) => `-w=packages/${pkg}`)
    ], root))
      .trim().split("\n")
    expect(names).toHaveLength(pkgs.length)
    const tarballs: Record<string, string> = Object.fromEntries(
      pkgs.map((
        pkg
      ) => [`@switchyard/${pkg}`, path.join(packs, names.find((n) => n.startsWith(`switchyard-${pkg}-`))!)])
    )
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "empty", version: "1.0.0", private: true, type: "module" })
    )
    for (const line of installLines()) {
      const args = line.slice("npm install ".length).split(/\s+/).map((arg) => tarballs[arg] ?? arg)
      await npm(["install", "--no-audit", "--no-fund", ...args], project)
    }
    // One Effect, version 3, wherever a package looks for it.
    const effects =
      (await run("find", ["node_modules", "-path", "*/effect/package.json", "-not", "-path", "*/@*/effect/*"], project))
        .trim().split("\n")
    expect(effects).toEqual(["node_modules/effect/package.json"])
    expect(JSON.parse(fs.readFileSync(path.join(project, "node_modules/effect/package.json"), "utf8")).version).toBe(
      "3.22.4"
    )
    // The README's example, as it stands, with the project's packages.
    const example = /```ts\n([\s\S]*?)```/.exec(readme)![1]!
    fs.writeFileSync(path.join(project, "example.ts"), example)
    fs.writeFileSync(
      path.join(project, "run.ts"),
      "import * as Effect from \"effect/Effect\"\nimport { main } from \"./example.ts\"\nprocess.stdout.write(await Effect.runPromise(main))\n"
    )
    const tsx = path.join(root, "node_modules/tsx/dist/esm/index.mjs")
    const output = await run(process.execPath, ["--import", tsx, "run.ts"], project)
    expect(output.trim().split("\n").at(-1)).toBe("Sunny in Oslo today.")
    // The command too: the packed binary runs.
    const version = await run(path.join(project, "node_modules/.bin/switchyard"), ["--version"], project)
    expect(version.trim()).toBe(
      JSON.parse(fs.readFileSync(path.join(root, "packages/cli/package.json"), "utf8")).version
    )
    fs.rmSync(work, { recursive: true, force: true })
  }, 600_000)
})
