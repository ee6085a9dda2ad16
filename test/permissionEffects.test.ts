/**
 * The effect oracle for the permission layer (issue 9): generated calls go
 * through the real CLI (`switchyard dispatch` as a child process) against a
 * fixture project — a git repository with `.env`, `secrets/`, a directory
 * outside it and links into all of them, deny rules in Claude Code's
 * `.claude/settings.json` — and each is judged by what happened: the files on
 * disk, whether a result holds a secret or a denied path, and the request log
 * of a local HTTP server. Never by the decision alone.
 *
 * The generators (fast-check) build link chains with generated names,
 * globbed spellings of the denied names and fetch URLs. The seed is random
 * per run and printed with every failure; `ORACLE_SEED` replays one.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const seed = Number(process.env["ORACLE_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const replay = `(replay with ORACLE_SEED=${seed})`

/** Each case is a few CLI processes on a shared machine. */
const TIMEOUT = 240_000

const SECRETS = ["env-secret-7f3a", "key-secret-91c2", "deep-secret-44d0", "outside-secret-0b9e"]

interface Fixture {
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly state: string
}

const makeFixture = (settings: Record<string, unknown>): Fixture => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-oracle-")))
  const project = path.join(root, "project")
  const outside = path.join(root, "outside")
  const state = path.join(root, "state")
  const files: Record<string, string> = {
    ".env": `TOKEN=${SECRETS[0]}\n`,
    "secrets/key.txt": `${SECRETS[1]}\n`,
    "secrets/deep/more.txt": `${SECRETS[2]}\n`,
    "src/a.ts": "export const visible = 1\n",
    ".claude/settings.json": JSON.stringify(settings)
  }
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(project, name)), { recursive: true })
    fs.writeFileSync(path.join(project, name), content)
  }
  fs.mkdirSync(outside)
  fs.mkdirSync(state)
  fs.writeFileSync(path.join(outside, "data.txt"), `${SECRETS[3]}\n`)
  spawnSync("git", ["init", "-q"], { cwd: project })
  fs.symlinkSync("../.env", path.join(project, "src", "env-link"))
  fs.symlinkSync(path.join(project, "secrets"), path.join(project, "src", "secrets-link"))
  fs.symlinkSync(outside, path.join(project, "out"))
  fs.symlinkSync(path.join(project, ".git"), path.join(project, "src", "git-link"))
  return { root, project, outside, state }
}

const DENY = { permissions: { deny: ["Read(./.env)", "Read(./secrets/**)"] } }

/** Every file below a directory (links not followed) with its content, to compare before and after. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isSymbolicLink()) out[full] = `-> ${fs.readlinkSync(full)}`
      else out[full] = fs.readFileSync(full, "utf8")
    }
  }
  walk(dir)
  return out
}

interface Result {
  readonly id: string
  readonly status: string
  readonly content: string
}

const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })

const dispatch = async (
  fixture: Fixture,
  calls: ReadonlyArray<ReturnType<typeof use>>,
  args: ReadonlyArray<string> = []
) => {
  const result = await runCli(["dispatch", "-", "--cwd", fixture.project, "--output-format", "stream-json", ...args], {
    input: JSON.stringify(calls),
    env: { SWITCHYARD_HOME: fixture.state },
    timeoutMs: 60_000
  })
  const results = jsonLines(result).filter((line) => line["type"] === "result").map((line): Result => ({
    id: String(line["tool_use_id"]),
    status: String(line["status"]),
    content: typeof line["content"] === "string" ? line["content"] : JSON.stringify(line["content"])
  }))
  expect(results.length, `${replay}\n${result.stderr}`).toBe(calls.length)
  return { results, stderr: result.stderr }
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

const linkName = FastCheck.stringMatching(/^[a-z][a-z0-9_.-]{0,10}$/).filter((name) => name !== "." && name !== "..")

/** A chain of links (absolute or relative) ending at a denied target; the path to read through it. */
interface LinkChain {
  readonly names: ReadonlyArray<string>
  readonly relative: boolean
  readonly target: ".env" | "secrets" | "secrets/key.txt" | "secrets/deep"
}

const linkChain: FastCheck.Arbitrary<LinkChain> = FastCheck.record({
  names: FastCheck.uniqueArray(linkName, { minLength: 1, maxLength: 3 }),
  relative: FastCheck.boolean(),
  target: FastCheck.constantFrom(
    ".env" as const,
    "secrets" as const,
    "secrets/key.txt" as const,
    "secrets/deep" as const
  )
})

/** Build a chain in its own directory; returns the path that reaches the denied target and a file below it. */
const buildChain = (fixture: Fixture, chain: LinkChain, index: number) => {
  const dir = path.join(fixture.project, "src", `gen-${index}`)
  fs.mkdirSync(dir, { recursive: true })
  let previous = path.join(fixture.project, chain.target)
  for (const [i, name] of chain.names.entries()) {
    const at = path.join(dir, `${name}-${i}`)
    fs.symlinkSync(chain.relative ? path.relative(dir, previous) : previous, at)
    previous = at
  }
  const file = chain.target === "secrets"
    ? path.join(previous, "key.txt")
    : chain.target === "secrets/deep"
    ? path.join(previous, "more.txt")
    : previous
  return { entry: previous, file }
}

/** A spelling of a denied name with glob or brace characters. */
const globbed = FastCheck.constantFrom(".env", "secrets/key.txt", "secrets/deep/more.txt").chain((name) =>
  FastCheck.array(FastCheck.nat({ max: name.length - 1 }), { minLength: 1, maxLength: 3 }).chain((positions) =>
    FastCheck.constantFrom("?", "*", "[]", "{}").map((kind) => {
      const chars = [...name]
      for (const at of positions) {
        const char = chars[at]!
        if (char === "/") continue
        chars[at] = kind === "?" ? "?" : kind === "*" ? "*" : kind === "[]" ? `[${char}]` : `{${char},x}`
      }
      return chars.join("")
    })
  )
)

const samples = <A>(arbitrary: FastCheck.Arbitrary<A>, count: number, offset: number) =>
  FastCheck.sample(arbitrary, { numRuns: count, seed: seed + offset })

const leaks = (text: string) => SECRETS.filter((secret) => text.includes(secret))

describe("permission effects through the CLI", () => {
  it(
    "reads through generated link chains, globbed names and searches return no denied content, in every mode",
    async () => {
      const fixture = makeFixture(DENY)
      const chains = samples(linkChain, 12, 1).map((chain, i) => buildChain(fixture, chain, i))
      const names = samples(globbed, 8, 2)
      const calls = [
        use("env-link", "Read", { file_path: "src/env-link" }),
        use("secrets-link", "Read", { file_path: "src/secrets-link/key.txt" }),
        ...chains.flatMap(({ entry, file }, i) => [
          use(`chain-read-${i}`, "Read", { file_path: file }),
          use(`chain-grep-${i}`, "Grep", { pattern: "secret", path: entry, output_mode: "content" })
        ]),
        ...names.map((name, i) => use(`glob-${i}`, "Read", { file_path: name })),
        use("grep-tree", "Grep", { pattern: "secret|TOKEN", output_mode: "content" }),
        use("grep-hidden", "Grep", { pattern: "secret", glob: "**/.env", output_mode: "content" }),
        use("glob-tree", "Glob", { pattern: "**/*" })
      ]
      for (const mode of ["bypassPermissions", "default", "acceptEdits", "plan"]) {
        const { results } = await dispatch(fixture, calls, ["--permission-mode", mode])
        for (const result of results) {
          expect(leaks(result.content), `${replay} ${mode} ${result.id}: ${result.content}`).toEqual([])
        }
        // Glob names no path whose target is denied.
        const listed = results.find((result) => result.id === "glob-tree")!.content.split("\n").filter((line) =>
          line.startsWith("/")
        )
        for (const file of listed) {
          const real = fs.realpathSync(file)
          expect(real === path.join(fixture.project, ".env") || real.startsWith(path.join(fixture.project, "secrets")))
            .toBe(false)
        }
        // The oracle sees what is allowed: the visible file is found.
        expect(results.find((result) => result.id === "grep-tree")?.content ?? "").not.toContain("TOKEN")
      }
      const control = await dispatch(fixture, [use("visible", "Read", { file_path: "src/a.ts" })])
      expect(control.results[0]?.content).toContain("visible")
    },
    TIMEOUT
  )

  it("writes and edits through links to denied, protected or outside places change nothing there", async () => {
    const fixture = makeFixture(DENY)
    const chains = samples(linkChain, 10, 3).map((chain, i) => buildChain(fixture, chain, i))
    const before = {
      project: snapshot(path.join(fixture.project, "secrets")),
      env: fs.readFileSync(path.join(fixture.project, ".env"), "utf8")
    }
    const denied = [
      use("edit-env-link", "Edit", { file_path: "src/env-link", old_string: "TOKEN", new_string: "HACKED" }),
      use("write-env-link", "Write", { file_path: "src/env-link", content: "HACKED\n" }),
      use("write-secrets-link", "Write", { file_path: "src/secrets-link/planted.txt", content: "HACKED\n" }),
      ...chains.map(({ entry }, i) =>
        use(`chain-write-${i}`, "Write", {
          file_path: fs.statSync(entry).isDirectory() ? path.join(entry, `planted-${i}.txt`) : entry,
          content: "HACKED\n"
        })
      )
    ]
    // Even with every prompt off, deny rules hold.
    const bypass = await dispatch(fixture, denied, ["--permission-mode", "bypassPermissions"])
    expect(bypass.results.every((result) => result.status !== "success"), replay).toBe(true)
    expect(snapshot(path.join(fixture.project, "secrets")), replay).toEqual(before.project)
    expect(fs.readFileSync(path.join(fixture.project, ".env"), "utf8"), replay).toBe(before.env)

    // acceptEdits writes inside the project only, and never into .git.
    const outsideBefore = snapshot(fixture.outside)
    const gitBefore = snapshot(path.join(fixture.project, ".git"))
    const names = samples(linkName, 6, 4)
    const escaping = [
      ...names.map((name, i) => use(`out-${i}`, "Write", { file_path: `out/${name}-${i}.txt`, content: "HACKED\n" })),
      use("git-hook", "Write", { file_path: "src/git-link/hooks/post-checkout", content: "#!/bin/sh\necho HACKED\n" }),
      use("git-config", "Write", { file_path: "src/git-link/config", content: "[core]\nHACKED\n" })
    ]
    const accept = await dispatch(fixture, escaping, ["--permission-mode", "acceptEdits"])
    expect(accept.results.every((result) => result.status !== "success"), replay).toBe(true)
    expect(snapshot(fixture.outside), replay).toEqual(outsideBefore)
    expect(snapshot(path.join(fixture.project, ".git")), replay).toEqual(gitBefore)

    // The oracle sees what is allowed: a write inside the project lands.
    const inside = await dispatch(fixture, [use("inside", "Write", { file_path: "src/new.ts", content: "ok\n" })], [
      "--permission-mode",
      "acceptEdits"
    ])
    expect(inside.results[0]?.status).toBe("success")
    expect(fs.readFileSync(path.join(fixture.project, "src", "new.ts"), "utf8")).toBe("ok\n")
  }, TIMEOUT)

  it("WebFetch to a host no rule allows sends nothing in default and plan mode", async () => {
    const requests: Array<string> = []
    const server = Http.createServer((request, response) => {
      requests.push(request.url ?? "")
      response.writeHead(200, { "content-type": "text/plain" })
      response.end("fetched")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const fixture = makeFixture(DENY)
      const payload = FastCheck.tuple(
        FastCheck.stringMatching(/^[a-z0-9/_-]{0,20}$/),
        FastCheck.stringMatching(/^[A-Za-z0-9=&_-]{0,30}$/)
      )
      const urls = samples(payload, 8, 5).map(([pathname, query]) => `http://127.0.0.1:${port}/${pathname}?${query}`)
      const calls = urls.map((url, i) => use(`fetch-${i}`, "WebFetch", { url, prompt: "summarise" }))
      for (const mode of ["default", "plan", "acceptEdits", "dontAsk"]) {
        await dispatch(fixture, calls, ["--permission-mode", mode])
        expect(requests, `${replay} ${mode}`).toEqual([])
      }
      // An allow rule for the host, or bypassPermissions, lets them through: the log sees them.
      await dispatch(fixture, calls.slice(0, 2), ["--allowed-tools", "WebFetch(domain:127.0.0.1)"])
      expect(requests).toHaveLength(2)
      await dispatch(fixture, calls.slice(0, 1), ["--permission-mode", "bypassPermissions"])
      expect(requests).toHaveLength(3)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  }, TIMEOUT)

  it("a project's bypassPermissions is ignored without a terminal; a broken deny rule fails closed", async () => {
    const fixture = makeFixture(DENY)
    fs.mkdirSync(path.join(fixture.project, ".switchyard"))
    fs.writeFileSync(
      path.join(fixture.project, ".switchyard", "settings.json"),
      JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } })
    )
    const planted = await dispatch(fixture, [use("w", "Write", { file_path: "src/planted.ts", content: "x\n" })])
    expect(fs.existsSync(path.join(fixture.project, "src", "planted.ts"))).toBe(false)
    expect(planted.stderr).toContain("bypassPermissions from a project settings file")

    // `deny` written as a string: Read fails closed (asks, so is denied without a terminal), even in bypass mode.
    fs.writeFileSync(
      path.join(fixture.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: "Read(./.env)" } })
    )
    const broken = await dispatch(fixture, [use("r", "Read", { file_path: ".env" })], [
      "--permission-mode",
      "bypassPermissions"
    ])
    expect(leaks(broken.results[0]!.content)).toEqual([])
    expect(broken.stderr).toContain("every Read call asks")
  }, TIMEOUT)
})
