/**
 * Memory files, as Claude Code reads and sends them: `CLAUDE.md` and
 * `CLAUDE.local.md` (and `.claude/CLAUDE.md`) in every directory from the
 * repository root down to the working directory (outside a repository: the
 * working directory and its parents, `/` excepted), the user's
 * `~/.claude/CLAUDE.md` (`$CLAUDE_CONFIG_DIR/CLAUDE.md` when set) and
 * Switchyard's `$SWITCHYARD_HOME/CLAUDE.md`; `@path` in a file imports
 * another (relative to the file, `~/` for home, up to five levels, each file
 * once). They reach the model as Claude Code sends them: one
 * `<system-reminder>` text block at the start of the first user message of
 * every request, never recorded in the transcript.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Messages from "@switchyard/core/Messages"
import type * as PermissionContext from "@switchyard/core/PermissionContext"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as Settings from "@switchyard/core/Settings"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/**
 * Whose a memory file is: the project's (checked in), the user's private
 * notes for the project (`CLAUDE.local.md`), or the user's for every project.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = "project" | "local" | "user"

/**
 * @since 0.1.0
 * @category models
 */
export interface File {
  readonly path: string
  readonly kind: Kind
  readonly content: string
  /** The file whose `@path` imported this one. */
  readonly importedBy?: string | undefined
}

/**
 * Claude Code's words for each kind, after the path.
 *
 * @since 0.1.0
 * @category constants
 */
export const descriptions: Readonly<Record<Kind, string>> = {
  project: "project instructions, checked into the codebase",
  local: "user's private project instructions, not checked in",
  user: "user's private global instructions for all projects"
}

/**
 * The instruction before the files (Claude Code's).
 *
 * @since 0.1.0
 * @category constants
 */
export const instruction = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. " +
  "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written."

/**
 * How deep `@path` imports go.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxImportDepth = 5

/**
 * Where memory files live for a working directory.
 *
 * @since 0.1.0
 * @category models
 */
export interface Locations {
  /** The user's files, in order: `~/.claude/CLAUDE.md`, `$SWITCHYARD_HOME/CLAUDE.md`. */
  readonly user: ReadonlyArray<string>
  /** The project directories, the outermost first. */
  readonly directories: ReadonlyArray<string>
}

/**
 * The user's Claude Code directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
 *
 * @since 0.1.0
 * @category paths
 */
export const claudeDirectory = (home: string): Effect.Effect<string, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const configured = yield* Config.option(Config.nonEmptyString("CLAUDE_CONFIG_DIR")).pipe(
      Effect.orElseSucceed(() => Option.none<string>())
    )
    return Option.getOrElse(configured, () => path.join(home, ".claude"))
  })

/**
 * The directories and user files to read for `cwd`.
 *
 * @since 0.1.0
 * @category paths
 */
export const locations = (cwd: string): Effect.Effect<Locations, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const home = yield* Settings.homeDirectory
    const state = yield* Settings.stateDirectory(home)
    const chain: Array<string> = []
    let repository: string | undefined
    for (let dir = path.resolve(cwd);; dir = path.dirname(dir)) {
      chain.push(dir)
      if (yield* fs.exists(path.join(dir, ".git")).pipe(Effect.orElseSucceed(() => false))) {
        repository = dir
        break
      }
      if (path.dirname(dir) === dir) break
    }
    // Outside a repository: every parent but the root.
    const directories = (repository === undefined ? chain.filter((dir) => path.dirname(dir) !== dir) : chain).reverse()
    const user = [path.join(yield* claudeDirectory(home), "CLAUDE.md"), path.join(state, "CLAUDE.md")]
    return { user: [...new Set(user)], directories }
  })

const readText = (path: string): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(path)
    return info.type === "File" ? Option.some(yield* fs.readFileString(path)) : Option.none<string>()
  }).pipe(Effect.orElseSucceed(() => Option.none<string>()))

/**
 * The `@path` mentions of a memory file, outside code blocks and code spans
 * (`@` at the start or after whitespace; `\ ` escapes a space).
 *
 * @since 0.1.0
 * @category parsing
 */
export const importsOf = (content: string): ReadonlyArray<string> => {
  const prose = content.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "")
  return [...prose.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)].map((m) => m[1]!.replace(/\\ /g, " "))
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  /** The session's rules: a memory file or import their Read deny rules cover is not read. */
  readonly permissions?: PermissionContext.PermissionContext | undefined
  /** Told each file left out so. */
  readonly onWithheld?: ((path: string) => void) | undefined
}

const readDenied = (cwd: string, home: string, permissions: PermissionContext.PermissionContext | undefined) =>
  Effect.gen(function*() {
    if (permissions === undefined) return undefined
    const env = PermissionRules.makeEnvironment({
      cwd,
      home,
      additionalDirectories: permissions.additionalDirectories,
      path: yield* Path.Path,
      fileSystem: yield* FileSystem.FileSystem,
      realPaths: "kernel"
    })
    return PermissionRules.readDenied(permissions, "Read", env)
  })

/**
 * Read the memory files for `cwd`, each once, imports after the file that
 * names them; none that the Read deny rules of `options.permissions` cover.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (
  cwd: string,
  options: LoadOptions = {}
): Effect.Effect<ReadonlyArray<File>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const home = yield* Settings.homeDirectory
    const where = yield* locations(cwd)
    const denied = yield* readDenied(cwd, home, options.permissions)
    const seen = new Set<string>()
    const files: Array<File> = []
    const visit = (
      file: string,
      kind: Kind,
      depth: number,
      importedBy?: string
    ): Effect.Effect<void, never, FileSystem.FileSystem> =>
      Effect.gen(function*() {
        const absolute = path.resolve(file)
        if (seen.has(absolute)) return
        // What a Read deny rule keeps from the Read tool, an import does not hand the model either.
        if (denied !== undefined && (yield* denied(absolute))) {
          seen.add(absolute)
          options.onWithheld?.(absolute)
          return
        }
        const content = yield* readText(absolute)
        if (content._tag === "None") return
        seen.add(absolute)
        files.push({
          path: absolute,
          kind,
          content: content.value,
          ...(importedBy === undefined ? {} : { importedBy })
        })
        if (depth >= maxImportDepth) return
        for (const mention of importsOf(content.value)) {
          const target = mention.startsWith("~/")
            ? path.join(home, mention.slice(2))
            : path.resolve(path.dirname(absolute), mention)
          yield* visit(target, kind, depth + 1, absolute)
        }
      })
    for (const file of where.user) yield* visit(file, "user", 0)
    for (const dir of where.directories) {
      yield* visit(path.join(dir, "CLAUDE.md"), "project", 0)
      yield* visit(path.join(dir, ".claude", "CLAUDE.md"), "project", 0)
      yield* visit(path.join(dir, "CLAUDE.local.md"), "local", 0)
    }
    return files
  })

/**
 * The text block the model gets (Claude Code's user context), or
 * `undefined` without memory files.
 *
 * @since 0.1.0
 * @category formatting
 */
export const reminder = (files: ReadonlyArray<File>, today: Date = new Date()): string | undefined => {
  const shown = files.filter((file) => file.content.trim() !== "")
  if (shown.length === 0) return undefined
  const memories = shown.map((file) => `Contents of ${file.path} (${descriptions[file.kind]}):\n\n${file.content}`)
  return [
    "<system-reminder>",
    "As you answer the user's questions, you can use the following context:",
    "# claudeMd",
    `${instruction}\n\n${memories.join("\n\n")}`,
    "# currentDate",
    `Today's date is ${today.toISOString().slice(0, 10)}.`,
    "",
    "      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context " +
    "unless it is highly relevant to your task.",
    "</system-reminder>"
  ].join("\n")
}

/**
 * Where `#` notes and `/memory` go: the project's `CLAUDE.md`, its
 * `CLAUDE.local.md`, the user's `CLAUDE.md`.
 *
 * @since 0.1.0
 * @category paths
 */
export const targets = (
  cwd: string
): Effect.Effect<ReadonlyArray<{ readonly kind: Kind; readonly path: string }>, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const home = yield* Settings.homeDirectory
    return [
      { kind: "project", path: path.join(cwd, "CLAUDE.md") },
      { kind: "local", path: path.join(cwd, "CLAUDE.local.md") },
      { kind: "user", path: path.join(yield* claudeDirectory(home), "CLAUDE.md") }
    ]
  })

/**
 * Add a note to a memory file as Claude Code's `#` does: a `- ` line at the
 * end (the file and its directory are made when missing).
 *
 * @since 0.1.0
 * @category writing
 */
export const addNote = (file: string, note: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    const before = yield* fs.readFileString(file).pipe(Effect.orElseSucceed(() => ""))
    const separator = before === "" || before.endsWith("\n") ? "" : "\n"
    // Whole or not at all: a temporary file renamed over the old one.
    const temp = `${file}.${process.pid}.tmp`
    yield* fs.writeFileString(temp, `${before}${separator}- ${note.trim()}\n`)
    yield* fs.rename(temp, file)
  })

/**
 * A session's memory: the files read at the start, read again after
 * `/memory` or `#` changed one, and the user context every request gets.
 *
 * @since 0.1.0
 * @category models
 */
export interface Memory {
  readonly files: Effect.Effect<ReadonlyArray<File>>
  readonly reload: Effect.Effect<void>
  /** For `QueryLoop.Options.userContext`: the reminder block, or nothing without memory files. */
  readonly userContext: Effect.Effect<ReadonlyArray<Messages.ContentBlock>>
}

/**
 * Read the memory of `cwd`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  cwd: string,
  options: LoadOptions = {}
): Effect.Effect<Memory, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const current = yield* Ref.make(yield* load(cwd, options))
    return {
      files: Ref.get(current),
      reload: Effect.flatMap(Effect.provide(load(cwd, options), platform), (files) => Ref.set(current, files)),
      userContext: Effect.map(Ref.get(current), (files) => {
        const text = reminder(files)
        return text === undefined ? [] : [Messages.text(text)]
      })
    }
  })
