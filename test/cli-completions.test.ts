/**
 * `switchyard completions bash|zsh|fish` (issue 13): the scripts are run in
 * the real shells. bash: the completion function is called with COMP_WORDS
 * and COMP_CWORD set, and COMPREPLY read back; fish: `complete -C`; zsh: a
 * real interactive zsh in tmux, TAB pressed and the screen read. Tool names
 * for `tools schema` come from `switchyard tools list` (a project's deny rule
 * hides a tool), or the built-in names when switchyard cannot be run.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bin, root, runCli } from "./support/cli.js"
import * as System from "./support/system.js"

const temp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** A `switchyard` on PATH that runs the built binary, as `npm link` would. */
const shimDirectory = (() => {
  const dir = temp("switchyard-shim-")
  fs.writeFileSync(path.join(dir, "switchyard"), `#!/bin/sh\nexec '${bin}' "$@"\n`, {
    mode: 0o755
  })
  return dir
})()

const shellEnv = {
  ...process.env,
  PATH: `${shimDirectory}:${process.env["PATH"]}`,
  SWITCHYARD_HOME: path.join(root, ".switchyard-test", "home"),
  NO_COLOR: "1"
}

const script = async (shell: string) => {
  const result = await runCli(["completions", shell])
  expect(result.code).toBe(0)
  const file = path.join(temp("switchyard-completions-"), `switchyard.${shell}`)
  fs.writeFileSync(file, result.stdout)
  return { text: result.stdout, file }
}

/** COMPREPLY for a command line whose last word is being completed, from bash itself. */
const bashComplete = (
  file: string,
  words: ReadonlyArray<string>,
  cwd = root,
  env: Record<string, string> = {}
): Array<string> => {
  const program = [
    `source ${JSON.stringify(file)}`,
    "complete -p switchyard >/dev/null || exit 3",
    `COMP_WORDS=(${words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ")})`,
    `COMP_CWORD=${words.length - 1}`,
    "COMPREPLY=()",
    "_switchyard",
    "printf '%s\\n' \"${COMPREPLY[@]}\""
  ].join("\n")
  const result = spawnSync("bash", ["--norc", "--noprofile", "-c", program], {
    cwd,
    env: { ...shellEnv, ...env },
    encoding: "utf8"
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.split("\n").filter((l) => l !== "")
}

/** What fish offers for a command line, by `complete -C`. */
const fishComplete = (file: string, line: string, cwd = root, env: Record<string, string> = {}): Array<string> => {
  const result = spawnSync("fish", [
    "--no-config",
    "-c",
    `source ${JSON.stringify(file)}; complete -C ${JSON.stringify(line)}`
  ], {
    cwd,
    env: { ...shellEnv, ...env },
    encoding: "utf8"
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.split("\n").filter((l) => l !== "").map((l) => l.split("\t")[0]!)
}

/** The options `switchyard <path> --help` lists, every spelling. */
const helpOptions = async (commandPath: ReadonlyArray<string>) => {
  const help = (await runCli([...commandPath, "--help"])).stdout
  const section = help.slice(help.indexOf("Options:"))
  const spelled = [...section.matchAll(/^ {2}((?:-\w, )?--[\w-]+)/gm)].flatMap((m) => m[1]!.split(", "))
  const also = [...section.matchAll(/also (--[\w-]+)/g)].map((m) => m[1]!)
  return [...spelled, ...also]
}

const projectDenying = (tool: string) => {
  const dir = temp("switchyard-completion-project-")
  fs.mkdirSync(path.join(dir, ".claude"))
  fs.writeFileSync(path.join(dir, ".claude", "settings.json"), JSON.stringify({ permissions: { deny: [tool] } }))
  return dir
}

/** A state dir with two sessions recorded for a project directory (as Sessions.ts lays them out). */
const recordedSessions = () => {
  const home = temp("switchyard-completion-home-")
  const project = fs.realpathSync(temp("switchyard-completion-sessions-"))
  const dir = path.join(home, "projects", project.replace(/[^A-Za-z0-9_-]/g, "-"))
  fs.mkdirSync(dir, { recursive: true })
  for (const id of ["alpha-older", "zulu-newer"]) fs.writeFileSync(path.join(dir, `${id}.jsonl`), "{}\n")
  fs.utimesSync(path.join(dir, "alpha-older.jsonl"), new Date(2020, 0, 1), new Date(2020, 0, 1))
  return { home, project }
}

const commandPaths = [
  ["run"],
  ["dispatch"],
  ["tools", "list"],
  ["tools", "search"],
  ["tools", "schema"],
  ["replay"],
  ["mcp", "list"],
  ["speculate"],
  ["demo"]
]

describe("shell completions", () => {
  it("completions SHELL and --completions SHELL print the same script; a bad shell is one usage line", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const a = await runCli(["completions", shell])
      const b = await runCli(["--completions", shell])
      expect(a.code).toBe(0)
      expect(a.stdout).toBe(b.stdout)
      expect(a.stdout).toContain(shell === "zsh" ? "#compdef switchyard" : "switchyard")
    }
    const bad = await runCli(["completions", "tcsh"])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim().split("\n")).toHaveLength(1)
    expect(bad.stderr).toMatch(/^switchyard: SHELL .*bash, zsh, fish/)
    const misspelt = await runCli(["completions", "zhs"])
    expect(misspelt.stderr).toContain("did you mean zsh?")
    const help = await runCli(["completions", "--help"])
    expect(help.stdout).toContain("Usage: switchyard completions SHELL")
  })

  describe("bash", () => {
    it("is registered with complete, and completes commands, subcommands and option names", async () => {
      const { file } = await script("bash")
      const registered = spawnSync("bash", ["--norc", "-c", `source ${JSON.stringify(file)}; complete -p switchyard`], {
        encoding: "utf8"
      })
      expect(registered.stdout.trim()).toBe("complete -F _switchyard switchyard")
      expect(bashComplete(file, ["switchyard", ""])).toEqual(
        expect.arrayContaining(["run", "dispatch", "tools", "replay", "mcp", "speculate", "demo", "completions"])
      )
      expect(bashComplete(file, ["switchyard", "tools", ""])).toEqual(["list", "search", "schema"])
      expect(bashComplete(file, ["switchyard", "--pri"])).toEqual(["--print"])
      expect(bashComplete(file, ["switchyard", "dispatch", "--out"])).toEqual(["--output-format"])
      expect(bashComplete(file, ["switchyard", "demo", "--"]).sort()).toEqual([
        "--help",
        "--keep",
        "--output-format",
        "--verbose"
      ])
    })

    it("offers exactly the options each command's --help lists (the table is the one source)", async () => {
      const { file } = await script("bash")
      for (const commandPath of commandPaths) {
        const offered = bashComplete(file, ["switchyard", ...commandPath, "-"])
        expect(offered.sort(), commandPath.join(" ")).toEqual([...new Set(await helpOptions(commandPath))].sort())
      }
    }, 60_000)

    it("completes option values one by one: formats, modes, models, files, directories", async () => {
      const { file } = await script("bash")
      expect(bashComplete(file, ["switchyard", "--output-format", ""])).toEqual(["text", "json", "stream-json"])
      expect(bashComplete(file, ["switchyard", "run", "-p", "--output-format", "s"])).toEqual(["stream-json"])
      // speculate has no stream-json
      expect(bashComplete(file, ["switchyard", "speculate", "--output-format", ""])).toEqual(["text", "json"])
      // --opt=VALUE: bash splits the word at "=", or keeps it whole
      expect(bashComplete(file, ["switchyard", "dispatch", "--output-format", "=", "j"])).toEqual(["json"])
      expect(bashComplete(file, ["switchyard", "dispatch", "--output-format=st"])).toEqual([
        "--output-format=stream-json"
      ])
      expect(bashComplete(file, ["switchyard", "--permission-mode", ""])).toEqual([
        "default",
        "acceptEdits",
        "plan",
        "bypassPermissions",
        "dontAsk",
        "auto"
      ])
      expect(bashComplete(file, ["switchyard", "tools", "list", "--scheduling", ""])).toEqual(["greedy", "footprints"])
      expect(bashComplete(file, ["switchyard", "run", "--model", "claude-s"])).toEqual(
        expect.arrayContaining(["claude-sonnet-5-5", "claude-sonnet-4-5"])
      )
      expect(bashComplete(file, ["switchyard", "--input-format", ""])).toEqual(["text", "stream-json"])
      const dir = temp("switchyard-completion-files-")
      fs.writeFileSync(path.join(dir, "settings.json"), "{}")
      fs.mkdirSync(path.join(dir, "sub"))
      expect(bashComplete(file, ["switchyard", "--settings", "se"], dir)).toEqual(["settings.json"])
      expect(bashComplete(file, ["switchyard", "dispatch", "--cwd", ""], dir)).toEqual(["sub"])
      expect(bashComplete(file, ["switchyard", "dispatch", ""], dir).sort()).toEqual(["settings.json", "sub"])
      expect(bashComplete(file, ["switchyard", "replay", "--max-turns", "1", "se"], dir)).toEqual(["settings.json"])
      // A value already given: the next word is an option or an argument again.
      expect(bashComplete(file, ["switchyard", "--output-format", "json", "--verb"])).toEqual(["--verbose"])
      // A prompt gets nothing (no file names pretending to be a prompt).
      expect(bashComplete(file, ["switchyard", "run", "fix the", ""], dir)).toEqual([])
      expect(bashComplete(file, ["switchyard", "completions", ""])).toEqual(["bash", "zsh", "fish", "sh"])
    })

    it("--resume completes the ids of the sessions recorded in this directory, the newest first", async () => {
      const { file } = await script("bash")
      const { home, project } = recordedSessions()
      const env = { SWITCHYARD_HOME: home }
      expect(bashComplete(file, ["switchyard", "-r", ""], project, env)).toEqual(["zulu-newer", "alpha-older"])
      expect(bashComplete(file, ["switchyard", "run", "--resume", "a"], project, env)).toEqual(["alpha-older"])
      // Its value is optional: an option can follow it.
      expect(bashComplete(file, ["switchyard", "--resume", "--max-t"], project, env)).toEqual(["--max-turns"])
      expect(bashComplete(file, ["switchyard", "-r", ""], temp("switchyard-no-sessions-"), env)).toEqual([])
    })

    it("tools schema completes tool names from `switchyard tools list`, or the built-in names", async () => {
      const { file } = await script("bash")
      const project = projectDenying("WebFetch")
      const names = bashComplete(file, ["switchyard", "tools", "schema", ""], project)
      expect(names).toEqual(expect.arrayContaining(["Read", "Bash", "Edit", "TaskStop"]))
      // What `tools list` lists here: the project's deny rule hides WebFetch, so it was asked.
      expect(names).not.toContain("WebFetch")
      expect(bashComplete(file, ["switchyard", "--cwd", "/tmp", "tools", "schema", "Gr"])).toEqual(["Grep"])
      expect(bashComplete(file, ["switchyard", "tools", "schema", "Read", ""])).toEqual([])
      // switchyard cannot be run: the built-in names.
      const fallback = bashComplete(file, [path.join(project, "no-such-switchyard"), "tools", "schema", ""], project)
      expect(fallback).toContain("WebFetch")
      expect(fallback).toContain("MultiEdit")
    })
  })

  describe.skipIf(!System.has("fish"))("fish", () => {
    it("parses, and completes commands, option values and tool names", async () => {
      const { file } = await script("fish")
      expect(spawnSync("fish", ["--no-execute", file]).status).toBe(0)
      expect(fishComplete(file, "switchyard ")).toEqual(
        expect.arrayContaining(["run", "dispatch", "tools", "replay", "demo", "completions"])
      )
      expect(fishComplete(file, "switchyard tools ").sort()).toEqual(["list", "schema", "search"])
      expect(fishComplete(file, "switchyard --output-format ").sort()).toEqual(["json", "stream-json", "text"])
      expect(fishComplete(file, "switchyard speculate --output-format ").sort()).toEqual(["json", "text"])
      expect(fishComplete(file, "switchyard run --permission-mode ")).toContain("bypassPermissions")
      expect(fishComplete(file, "switchyard --model claude-h").sort()).toEqual(["claude-haiku-4-5", "claude-haiku-5-5"])
      // Claude Code's aliases are offered too.
      expect(fishComplete(file, "switchyard --model op")).toEqual(expect.arrayContaining(["opus", "opus[1m]"]))
      expect(fishComplete(file, "switchyard tools list --j")).toEqual(["--json"])
      const project = projectDenying("WebFetch")
      const names = fishComplete(file, "switchyard tools schema ", project)
      expect(names).toEqual(expect.arrayContaining(["Read", "Grep", "TaskOutput"]))
      expect(names).not.toContain("WebFetch")
      expect(fishComplete(file, "switchyard --cwd /tmp tools schema Gr")).toEqual(["Grep"])
      const { home, project: withSessions } = recordedSessions()
      expect(fishComplete(file, "switchyard -r ", withSessions, { SWITCHYARD_HOME: home }).sort()).toEqual([
        "alpha-older",
        "zulu-newer"
      ])
      expect(fishComplete(file, "switchyard run --resume z", withSessions, { SWITCHYARD_HOME: home })).toEqual([
        "zulu-newer"
      ])
    })
  })

  describe.skipIf(!System.has("zsh") || !System.has("tmux"))("zsh", () => {
    it("parses (zsh -n), and in an interactive zsh TAB completes option values, tool names and sessions", async () => {
      const { file } = await script("zsh")
      expect(spawnSync("zsh", ["-n", file]).status).toBe(0)
      const fpathDir = temp("switchyard-zsh-fpath-")
      fs.copyFileSync(file, path.join(fpathDir, "_switchyard"))
      const zdotdir = temp("switchyard-zdotdir-")
      fs.writeFileSync(
        path.join(zdotdir, ".zshrc"),
        `fpath=(${fpathDir} $fpath)\nautoload -Uz compinit && compinit -u -D\nPS1='%% '\n`
      )
      const { home, project } = recordedSessions()
      fs.mkdirSync(path.join(project, ".claude"))
      fs.writeFileSync(
        path.join(project, ".claude", "settings.json"),
        JSON.stringify({ permissions: { deny: ["WebFetch"] } })
      )
      const socket = `switchyard-zsh-${process.pid}`
      const tmux = (...args: ReadonlyArray<string>) =>
        execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" })
      const env = Object.entries({ ZDOTDIR: zdotdir, PATH: shellEnv.PATH, SWITCHYARD_HOME: home, NO_COLOR: "1" })
        .map(([k, v]) => `${k}='${v}'`)
        .join(" ")
      tmux("new-session", "-d", "-s", "z", "-x", "200", "-y", "40", "-c", project, `env ${env} zsh -i`)
      const screenShows = async (pattern: RegExp) => {
        let shown = ""
        for (let i = 0; i < 150; i++) {
          shown = tmux("capture-pane", "-p", "-t", "z")
          if (pattern.test(shown)) return shown
          await new Promise((r) => setTimeout(r, 100))
        }
        throw new Error(`zsh did not show ${pattern}:\n${shown}`)
      }
      const complete = async (line: string, pattern: RegExp) => {
        tmux("send-keys", "-t", "z", "C-c")
        tmux("send-keys", "-t", "z", "clear", "Enter")
        await screenShows(/^%\s*$/m)
        tmux("send-keys", "-t", "z", "-l", line)
        tmux("send-keys", "-t", "z", "Tab")
        return screenShows(pattern)
      }
      try {
        await screenShows(/^%\s*$/m)
        expect(await complete("switchyard --output-format ", /json +stream-json +text/)).toBeTruthy()
        expect(await complete("switchyard speculate --output-format ", /json +text/)).not.toContain("stream-json")
        expect(await complete("switchyard tools ", /list +-- /)).toContain("schema")
        const tools = await complete("switchyard tools schema ", /Read/)
        expect(tools).toMatch(/TaskStop/)
        expect(tools).not.toMatch(/WebFetch/)
        expect(await complete("switchyard --permission-mode=a", /acceptEdits +auto/)).toBeTruthy()
        expect(await complete("switchyard --resume ", /zulu-newer +alpha-older/)).toBeTruthy()
      } finally {
        spawnSync("tmux", ["-L", socket, "kill-server"])
      }
    }, 60_000)
  })
})
