/**
 * The start-up snapshot (issue 25): `bin/switchyard` starts Node from
 * `bundle/snapshot.blob` when the build made one for this Node binary, and
 * from `bin/switchyard.js` otherwise. Judged by what the process really is —
 * a Bash call prints its parent's command line (`/proc/$PPID/cmdline`: the
 * Node process that runs the tool) — and by its output, which must be the same
 * on both paths: pages, tool lists, a dispatch, an error.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin, root, runCli } from "./support/cli.js"
import * as Server from "./support/messagesServer.js"

const bundle = path.join(root, "packages/cli/bundle")
const built = fs.existsSync(path.join(bundle, "snapshot.blob")) && fs.existsSync(path.join(bundle, "snapshot.node"))
if (!built) console.warn("test/snapshot.test.ts: no start-up snapshot was built here (see `npm run build`); skipped")

const withProject = <A>(f: (dir: string) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-snapshot-")))
      fs.mkdirSync(path.join(dir, ".claude"))
      fs.writeFileSync(
        path.join(dir, ".claude", "settings.json"),
        JSON.stringify({ permissions: { allow: ["Read", "Bash(tr *)"], deny: ["WebFetch"] } })
      )
      fs.writeFileSync(path.join(dir, "notes.txt"), "alpha\nbeta\n")
      fs.writeFileSync(
        path.join(dir, "parent.json"),
        JSON.stringify([{
          type: "tool_use",
          id: "toolu_1",
          name: "Bash",
          input: { command: "tr '\\0' ' ' < /proc/$PPID/cmdline" }
        }])
      )
      fs.writeFileSync(
        path.join(dir, "read.json"),
        JSON.stringify([{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "notes.txt" } }])
      )
      return dir
    }),
    (dir) => Effect.promise(() => f(dir)),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The command line of the Node process that ran the Bash call, from the dispatch's JSON result. */
const toolParent = (stdout: string): string => {
  const [result] = JSON.parse(stdout) as ReadonlyArray<{ readonly content: unknown }>
  return JSON.stringify(result?.content)
}

/** The command bin/switchyard execs for `args`: its last `exec` as `sh -x` traces it. */
const startedFrom = (args: ReadonlyArray<string>, cwd: string): string => {
  const traced = spawnSync("sh", ["-x", bin, ...args], { cwd, encoding: "utf8", input: "[]" })
  return traced.stderr.split("\n").filter((line) => /^\++ exec /.test(line)).at(-1) ?? traced.stderr
}

describe.skipIf(!built)("the start-up snapshot", () => {
  it.effect("bin/switchyard runs the command from the snapshot, and with NODE_OPTIONS from bin/switchyard.js", () =>
    withProject(async (cwd) => {
      const args = ["dispatch", "parent.json", "--output-format", "json"]
      const fromSnapshot = await runCli(args, { cwd })
      expect(fromSnapshot.code, fromSnapshot.stderr).toBe(0)
      expect(toolParent(fromSnapshot.stdout)).toContain("--snapshot-blob")
      expect(toolParent(fromSnapshot.stdout)).toContain("/bundle/snapshot.blob -- dispatch parent.json")
      // NODE_OPTIONS may carry V8 flags the snapshot was not built with: the launcher does not risk it.
      const fromScript = await runCli(args, { cwd, env: { NODE_OPTIONS: "--no-warnings" } })
      expect(fromScript.code, fromScript.stderr).toBe(0)
      expect(toolParent(fromScript.stdout)).not.toContain("--snapshot-blob")
      expect(toolParent(fromScript.stdout)).toContain("switchyard.js")
    }))

  it.effect("prints what bin/switchyard.js prints: pages, tool lists, schemas, a dispatch, bad input", () =>
    withProject(async (cwd) => {
      const commands = [
        ["--version"],
        ["--help"],
        ["tools", "list"],
        ["tools", "list", "--json"],
        ["tools", "schema", "Bash"],
        ["tools", "search", "notebook"],
        ["dispatch", "read.json", "--output-format", "json"],
        ["dispatch", "read.json"],
        ["dispatch", "missing.json"],
        ["dispatch", "read.json", "--allowed-tools", "Bash("],
        ["--no-such-flag"]
      ]
      for (const args of commands) {
        const fromSnapshot = await runCli(args, { cwd })
        const fromScript = await runCli(args, { cwd, env: { NODE_OPTIONS: "--no-warnings" } })
        const timing = (text: string) =>
          text.replace(/"(durationMs|startedAt|endedAt|at|duration_ms)":\s*\d+/g, "$1").replace(/ *\d+ ms/g, " N ms")
        expect({ args, code: fromSnapshot.code, stderr: fromSnapshot.stderr, stdout: timing(fromSnapshot.stdout) })
          .toEqual({ args, code: fromScript.code, stderr: fromScript.stderr, stdout: timing(fromScript.stdout) })
      }
    }))

  it.effect("tools list and dispatch FILE start from the light snapshot, -p PROMPT from the print one", () =>
    withProject(async (cwd) => {
      const light = "/bundle/snapshot-light.blob"
      const print = "/bundle/snapshot-print.blob"
      const fullBlob = "/bundle/snapshot.blob"
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["dispatch", "-"], light],
        [["dispatch", "read.json"], light],
        [["tools", "list"], light],
        [["tools", "list", "--json"], light],
        [["-p", "hi"], print],
        [["--print", "tools"], print],
        [["-p", "hi", "--verbose"], print],
        [["-p", "hi", "--output-format", "json", "--allowed-tools", "Read", "--resume", "abc"], print],
        // The shape is the print snapshot's; the value is the parser's to refuse (run from the full one, below).
        [["-p", "hi", "--output-format", "xml"], print],
        [["-p", "hi", "--output-format=json"], fullBlob],
        [["-p", "hi", "--allowedTools", "Read", "Grep"], fullBlob],
        [["-p", "hi", "--model"], fullBlob],
        [["-p", "hi", "--frobnicate", "x"], fullBlob],
        [["-p", "--verbose"], fullBlob],
        [["-p", ""], fullBlob],
        [["run", "-p", "hi"], fullBlob],
        [["dispatch", "read.json", "--verbose"], fullBlob],
        [["dispatch", "--verbose"], fullBlob],
        [["dispatch", ""], fullBlob],
        [["tools", "list", "--verbose"], fullBlob],
        [["tools", "schema", "Read"], fullBlob],
        [["tools", "search", "notebook"], fullBlob]
      ]
      for (const [args, blob] of cases) {
        expect(startedFrom(args, cwd), args.join(" ")).toContain(`${blob} -- ${args.join(" ")}`)
      }
      // The light blob runs nothing else: were the launcher to send it another command, it would say so.
      const [, node] = fs.readFileSync(path.join(bundle, "snapshot.node"), "utf8").trim().split(" ")
      const blob = path.join(bundle, "snapshot-light.blob")
      const other = spawnSync(node!, ["--liftoff-only", "--snapshot-blob", blob, "--", "tools", "schema", "Read"], {
        encoding: "utf8",
        cwd
      })
      expect(other.status).toBe(1)
      expect(other.stderr).toContain("the light snapshot runs only `tools list` and `dispatch FILE`")
      // The print blob runs a line its front refuses from the full snapshot: the same answer, the same exit.
      const printBlob = path.join(bundle, "snapshot-print.blob")
      const fullPath = path.join(bundle, "snapshot.blob")
      for (
        const args of [["tools", "search", "notebook"], ["-p", "hi", "--output-format", "xml"], [
          "-p",
          "hi",
          "--max-turns",
          "0"
        ]]
      ) {
        const from = (file: string) => {
          const ran = spawnSync(node!, ["--liftoff-only", "--snapshot-blob", file, "--", ...args], {
            encoding: "utf8",
            cwd,
            input: ""
          })
          return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr }
        }
        const viaPrint = from(printBlob)
        expect(viaPrint, args.join(" ")).toEqual(from(fullPath))
        expect(viaPrint.status, args.join(" ")).toBe(args[0] === "tools" ? 0 : 2)
      }
    }))

  it.effect("falls back to bin/switchyard.js when the snapshot belongs to another Node binary", () =>
    withProject(async (cwd) => {
      // A copy of the launcher beside the real script and bundle, whose record names another binary.
      const copy = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-launcher-"))
      try {
        fs.mkdirSync(path.join(copy, "bin"))
        fs.mkdirSync(path.join(copy, "bundle"))
        fs.copyFileSync(bin, path.join(copy, "bin", "switchyard"))
        fs.symlinkSync(path.join(root, "packages/cli/bin/switchyard.js"), path.join(copy, "bin", "switchyard.js"))
        fs.symlinkSync(path.join(bundle, "snapshot.blob"), path.join(copy, "bundle", "snapshot.blob"))
        const [, node] = fs.readFileSync(path.join(bundle, "snapshot.node"), "utf8").trim().split(" ")
        fs.writeFileSync(path.join(copy, "bundle", "snapshot.node"), `1:1 ${node}\n`)
        const launcher = path.join(copy, "bin", "switchyard")
        const result = await runCli(["dispatch", "parent.json", "--output-format", "json"], { cwd, bin: launcher })
        expect(result.code, result.stderr).toBe(0)
        expect(toolParent(result.stdout)).not.toContain("--snapshot-blob")
        expect(toolParent(result.stdout)).toContain("switchyard.js")
      } finally {
        fs.rmSync(copy, { recursive: true, force: true })
      }
    }))

  it.effect("prints the help pages without the snapshot (Node's own starts faster) and runs the rest from it", () =>
    withProject(async (cwd) => {
      // A copy of the launcher whose snapshot is not one: what reads it fails, what does not, answers.
      const copy = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-launcher-"))
      try {
        fs.mkdirSync(path.join(copy, "bin"))
        fs.mkdirSync(path.join(copy, "bundle"))
        fs.copyFileSync(bin, path.join(copy, "bin", "switchyard"))
        fs.symlinkSync(path.join(root, "packages/cli/bin/switchyard.js"), path.join(copy, "bin", "switchyard.js"))
        fs.writeFileSync(path.join(copy, "bundle", "snapshot.blob"), "not a snapshot")
        fs.copyFileSync(path.join(bundle, "snapshot.node"), path.join(copy, "bundle", "snapshot.node"))
        const launcher = path.join(copy, "bin", "switchyard")
        for (const args of [["--help"], ["--version"], ["tools", "list", "--help"], ["dispatch", "-h"]]) {
          const pages = await runCli(args, { cwd, bin: launcher })
          const real = await runCli(args, { cwd })
          expect({ args, code: pages.code, stdout: pages.stdout, stderr: pages.stderr })
            .toEqual({ args, code: 0, stdout: real.stdout, stderr: "" })
        }
        for (const args of [["tools", "list"], ["dispatch", "read.json"], ["dispatch", "read.json", "--help"]]) {
          const started = await runCli(args, { cwd, bin: launcher })
          expect({ args, code: started.code }).not.toEqual({ args, code: 0 })
          expect(started.stderr).toContain("snapshot")
        }
      } finally {
        fs.rmSync(copy, { recursive: true, force: true })
      }
    }))

  it("bundles a script of ASCII only: one other character makes V8 hold all its source at two bytes each", () => {
    // 2.3 MB of source lives in the snapshot's heap; a single curly quote in a regular expression once
    // doubled it (and the blob grew by 2.9 MB, paid on every start).
    for (const name of ["snapshot.cjs", "snapshot-light.cjs", "snapshot-print.cjs"]) {
      const script = fs.readFileSync(path.join(bundle, name), "latin1")
      const offending = [...script.matchAll(/[^\x00-\x7f]+/g)].slice(0, 3).map((match) =>
        JSON.stringify(script.slice(Math.max(0, match.index - 40), match.index + 20))
      )
      expect({ name, offending }).toEqual({ name, offending: [] })
    }
  })
})

describe.skipIf(!built)("randomness in processes started from the snapshot", () => {
  it.scoped("each -p run gets its own session id (randomUUID's batch is not the build's)", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-snapshot-home-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(home, { recursive: true, force: true })))
      const env = { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
      const ids: Array<unknown> = []
      for (let i = 0; i < 3; i++) {
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello." } }] }))
        const result = yield* Effect.promise(() => runCli(["-p", "hi", "--output-format", "json"], { cwd: home, env }))
        expect(result.code, result.stderr).toBe(0)
        ids.push((JSON.parse(result.stdout) as { readonly session_id: unknown }).session_id)
      }
      expect(new Set(ids).size).toBe(3)
    }))

  it.scoped("each -p PROMPT run from the print snapshot gets its own session id too", () =>
    Effect.gen(function*() {
      const server = yield* Server.start()
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-snapshot-home-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(home, { recursive: true, force: true })))
      const env = { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.url, SWITCHYARD_HOME: home }
      expect(startedFrom(["-p", "hi"], home)).toContain("/bundle/snapshot-print.blob -- -p hi")
      for (let i = 0; i < 3; i++) {
        server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello." } }] }))
        const result = yield* Effect.promise(() => runCli(["-p", "hi"], { cwd: home, env }))
        expect({ code: result.code, stdout: result.stdout }, result.stderr).toEqual({ code: 0, stdout: "Hello.\n" })
      }
      const listed = yield* Effect.promise(() => runCli(["sessions", "--json"], { cwd: home, env }))
      const ids = (JSON.parse(listed.stdout) as ReadonlyArray<{ readonly id: string }>).map((session) => session.id)
      expect(new Set(ids).size).toBe(3)
    }))
})
