/**
 * `@file` mentions in the interactive prompt, as Claude Code has them: Tab
 * completes the path after an `@` (files and directories under the working
 * directory), and a sent prompt carries the content of every file it
 * mentions — what a Read of the file would have given, as Claude Code
 * attaches it — so the model need not ask for it.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Messages from "@switchyard/core/Messages"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The paths a prompt mentions with `@` (at the start or after whitespace;
 * `@server:uri` MCP mentions are not files and are left alone).
 *
 * @since 0.1.0
 * @category parsing
 */
export const mentions = (prompt: string): ReadonlyArray<string> =>
  [...prompt.matchAll(/(?:^|\s)@([^\s]+)/g)].map((m) => m[1]!).filter((p) => !/^[\w-]+:/.test(p))

/**
 * The longest common prefix of some names.
 *
 * @since 0.1.0
 * @category completion
 */
export const commonPrefix = (names: ReadonlyArray<string>): string =>
  names.reduce((prefix, name) => {
    let i = 0
    while (i < prefix.length && i < name.length && prefix[i] === name[i]) i++
    return prefix.slice(0, i)
  }, names[0] ?? "")

/**
 * Complete the `@path` the line ends with, relative to `cwd`: one candidate
 * is completed (a directory with its `/`), several to their common prefix
 * and listed. `undefined` when the line does not end in a mention or nothing
 * matches. Hidden entries are offered only when the typed name starts with
 * a dot.
 *
 * @since 0.1.0
 * @category completion
 */
export const complete = (
  line: string,
  cwd: string
): { line: string; candidates: ReadonlyArray<string> } | undefined => {
  const match = /(?:^|\s)@([^\s]*)$/.exec(line)
  if (match === null) return undefined
  const typed = match[1]!
  const slash = typed.lastIndexOf("/")
  const dirPart = typed.slice(0, slash + 1)
  const namePart = typed.slice(slash + 1)
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(path.resolve(cwd, dirPart === "" ? "." : dirPart), { withFileTypes: true })
  } catch {
    return undefined
  }
  const names = entries
    .filter((entry) => entry.name.startsWith(namePart) && (namePart.startsWith(".") || !entry.name.startsWith(".")))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort()
  if (names.length === 0) return undefined
  const completed = names.length === 1 ? names[0]! : commonPrefix(names)
  return {
    line: `${line.slice(0, line.length - typed.length)}${dirPart}${completed}`,
    candidates: names.length === 1 ? [] : names.map((name) => `@${dirPart}${name}`)
  }
}

/** The largest file a mention attaches, in characters (Read's default limit of output). */
const MAX_CHARS = 100_000

/**
 * The blocks a prompt carries for its mentions: per mentioned file (that
 * exists and is a file), Claude Code's two reminders — the Read call and its
 * result, the lines numbered as Read numbers them.
 *
 * @since 0.1.0
 * @category attachments
 */
export const attachments = (
  prompt: string,
  cwd: string
): Effect.Effect<ReadonlyArray<Messages.ContentBlock>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const files = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    const blocks: Array<Messages.ContentBlock> = []
    for (const mention of [...new Set(mentions(prompt))]) {
      const absolute = paths.resolve(cwd, mention)
      const info = yield* Effect.option(files.stat(absolute))
      if (info._tag === "None" || info.value.type !== "File") continue
      const content = yield* Effect.option(files.readFileString(absolute))
      if (content._tag === "None") continue
      const text = content.value.length > MAX_CHARS ? `${content.value.slice(0, MAX_CHARS)}\n… (cut)` : content.value
      const numbered = text.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n")
      blocks.push(
        Messages.text(
          "<system-reminder>\nCalled the Read tool with the following input: " +
            `${JSON.stringify({ file_path: absolute })}\n</system-reminder>`
        ),
        Messages.text(`<system-reminder>\nResult of calling the Read tool:\n${numbered}\n</system-reminder>`)
      )
    }
    return blocks
  })
