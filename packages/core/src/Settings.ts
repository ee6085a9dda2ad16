/**
 * Settings files (SPEC §4.5) in Claude Code's `settings.json` format, so a
 * user can point `--settings` at their `.claude/settings.json`.
 *
 * Files, lowest precedence first: `$SWITCHYARD_HOME/settings.json` (default
 * `~/.switchyard/settings.json`, user), `<cwd>/.switchyard/settings.json`
 * (project), `<cwd>/.switchyard/settings.local.json` (local), then each
 * `--settings FILE` in order. A missing file is skipped. A file that is not
 * JSON, or a key of the wrong type, is reported as a `SettingsIssue` naming
 * the path and the field, and everything else still loads: decoding goes key
 * by key and rule by rule.
 *
 * Merging: the rule lists (`allow`, `ask`, `deny`), `additionalDirectories`
 * and the hooks of each event concatenate, so a deny anywhere stands; scalar
 * keys (`defaultMode`, `model`, …) come from the highest-precedence file that
 * sets them; `env` merges per variable. Unknown keys never make a file
 * invalid and are kept in `values`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Footprint from "./Footprint.js"
import * as Hooks from "./Hooks.js"
import * as internal from "./internal/settingsDecode.js"
import * as PermissionContext from "./PermissionContext.js"

/**
 * The shape of a settings file, for reference and for embedders that want to
 * validate one whole; `load` decodes the same fields key by key.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SettingsJson = Schema.Struct(
  {
    permissions: Schema.optional(Schema.Struct(
      {
        allow: Schema.optional(Schema.Array(Schema.String)),
        ask: Schema.optional(Schema.Array(Schema.String)),
        deny: Schema.optional(Schema.Array(Schema.String)),
        defaultMode: Schema.optional(PermissionContext.PermissionMode),
        additionalDirectories: Schema.optional(Schema.Array(Schema.String))
      },
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    )),
    hooks: Schema.optional(Hooks.HooksSettings),
    env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
    model: Schema.optional(Schema.String),
    scheduling: Schema.optional(Footprint.Scheduling)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Scope = "user" | "project" | "local" | "flag"

/**
 * A settings file to read, and the directory its `/x` path rules are
 * relative to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly path: string
  readonly scope: Scope
  readonly root: string
}

/**
 * A problem with a settings file: the file, the field (`permissions.allow[2]`,
 * `(file)` for unreadable or non-JSON files) and what is wrong. The rest of the
 * file still loads.
 *
 * @since 0.1.0
 * @category errors
 */
export class SettingsIssue extends Schema.TaggedError<SettingsIssue>()("SettingsIssue", {
  path: Schema.String,
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * One line for the user: `path: field: message`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatIssue = (issue: SettingsIssue): string => `${issue.path}: ${issue.field}: ${issue.message}`

/**
 * Writing a settings file failed; nothing was changed.
 *
 * @since 0.1.0
 * @category errors
 */
export class SettingsWriteError extends Schema.TaggedError<SettingsWriteError>()("SettingsWriteError", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * The decoded, valid parts of one file.
 *
 * @since 0.1.0
 * @category models
 */
export interface SettingsFile {
  readonly source: Source
  readonly rules: ReadonlyArray<PermissionContext.PermissionRule>
  readonly defaultMode: PermissionContext.PermissionMode | undefined
  /** As written (relative entries resolve against the file's root when merged). */
  readonly additionalDirectories: ReadonlyArray<string>
  readonly hooks: Hooks.HooksSettings
  readonly env: Readonly<Record<string, string>>
  /** Every top-level key as read (`model`, `statusLine`, …). */
  readonly values: Readonly<Record<string, unknown>>
}

/**
 * The merged settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** The files that were read, lowest precedence first. */
  readonly files: ReadonlyArray<SettingsFile>
  readonly issues: ReadonlyArray<SettingsIssue>
  /** Mode (`defaultMode`, else `default`), every rule and the absolute additional directories. */
  readonly permissions: PermissionContext.PermissionContext
  readonly hooks: Hooks.HooksSettings
  readonly env: Readonly<Record<string, string>>
  /** Every top-level key, the highest-precedence file's value winning. */
  readonly values: Readonly<Record<string, unknown>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  /** The project directory: `.switchyard/` settings are read from here. */
  readonly cwd: string
  /** The home directory for `~` (default `$HOME`). */
  readonly home?: string
  /** Where the user settings file lives (default `$SWITCHYARD_HOME`, else `~/.switchyard`). */
  readonly stateDir?: string
  /** `--settings FILE` paths, lowest precedence first; relative paths resolve against `cwd`. */
  readonly extraFiles?: ReadonlyArray<string>
}

/**
 * The home directory: `$HOME`, else `$USERPROFILE`.
 *
 * @since 0.1.0
 * @category config
 */
export const homeDirectory: Effect.Effect<string> = Config.string("HOME").pipe(
  Config.orElse(() => Config.string("USERPROFILE")),
  Effect.orElseSucceed(() => "/")
)

/**
 * The state directory: `$SWITCHYARD_HOME`, else `~/.switchyard`.
 *
 * @since 0.1.0
 * @category config
 */
export const stateDirectory = (home: string): Effect.Effect<string, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    return yield* Config.string("SWITCHYARD_HOME").pipe(Effect.orElseSucceed(() => path.join(home, ".switchyard")))
  })

/**
 * The files `load` reads, lowest precedence first.
 *
 * @since 0.1.0
 * @category loading
 */
export const sources = (options: LoadOptions): Effect.Effect<ReadonlyArray<Source>, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(options.cwd)
    const home = options.home ?? (yield* homeDirectory)
    const stateDir = options.stateDir ?? (yield* stateDirectory(home))
    const extra = (options.extraFiles ?? []).map((file): Source => {
      const absolute = path.resolve(cwd, file)
      const dir = path.dirname(absolute)
      const inConfigDir = [".claude", ".switchyard"].includes(path.basename(dir))
      return { path: absolute, scope: "flag", root: inConfigDir ? path.dirname(dir) : dir }
    })
    return [
      // User rules are for every project: their `/x` paths are relative to the project at hand.
      { path: path.join(stateDir, "settings.json"), scope: "user", root: cwd },
      { path: path.join(cwd, ".switchyard", "settings.json"), scope: "project", root: cwd },
      { path: localSettingsPath(cwd, path), scope: "local", root: cwd },
      ...extra
    ]
  })

/**
 * `<projectDir>/.switchyard/settings.local.json`, where "always allow"
 * answers are saved.
 *
 * @since 0.1.0
 * @category loading
 */
export const localSettingsPath = (projectDir: string, path: Path.Path): string =>
  path.join(projectDir, ".switchyard", "settings.local.json")

/**
 * Decode the text of one settings file. Returns the valid parts (none when
 * the text is not a JSON object) and the issues found.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (
  source: Source,
  text: string
): { readonly file: SettingsFile | undefined; readonly issues: ReadonlyArray<SettingsIssue> } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const issue = new SettingsIssue({ path: source.path, field: "(file)", message: `invalid JSON: ${message}` })
    return { file: undefined, issues: [issue] }
  }
  const problems: Array<internal.Problem> = []
  const decoded = internal.decodeSettings(json, source, problems)
  const issues = problems.map((problem) => new SettingsIssue({ path: source.path, ...problem }))
  if (decoded === undefined) return { file: undefined, issues }
  return {
    file: {
      source,
      rules: decoded.permissions.rules,
      defaultMode: decoded.permissions.defaultMode,
      additionalDirectories: decoded.permissions.additionalDirectories,
      hooks: decoded.hooks,
      env: decoded.env,
      values: decoded.values
    },
    issues
  }
}

/**
 * Read and decode one file; a missing file gives neither a file nor issues.
 *
 * @since 0.1.0
 * @category loading
 */
export const readSource = (
  source: Source
): Effect.Effect<
  { readonly file: SettingsFile | undefined; readonly issues: ReadonlyArray<SettingsIssue> },
  never,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(source.path).pipe(Effect.orElseSucceed(() => true))
    if (!exists) return { file: undefined, issues: [] }
    return yield* fs.readFileString(source.path).pipe(
      Effect.map((text) => decode(source, text)),
      Effect.catchAll((error) =>
        Effect.succeed({
          file: undefined,
          issues: [new SettingsIssue({ path: source.path, field: "(file)", message: `cannot read: ${error.message}` })]
        })
      )
    )
  })

/**
 * Merge decoded files, lowest precedence first.
 *
 * @since 0.1.0
 * @category merging
 */
export const merge = (
  files: ReadonlyArray<SettingsFile>,
  options: { readonly home: string; readonly path: Path.Path; readonly issues?: ReadonlyArray<SettingsIssue> }
): Settings => {
  const { home, path } = options
  const rules: Array<PermissionContext.PermissionRule> = []
  const directories: Array<string> = []
  const hooks: Partial<Record<Hooks.HookEvent, Array<Schema.Schema.Type<typeof Hooks.HookMatcher>>>> = {}
  const env: Record<string, string> = {}
  const values: Record<string, unknown> = {}
  let mode: PermissionContext.PermissionMode | undefined
  for (const file of files) {
    rules.push(...file.rules)
    for (const dir of file.additionalDirectories) {
      const expanded = dir === "~" ? home : dir.startsWith("~/") ? path.join(home, dir.slice(2)) : dir
      directories.push(path.resolve(file.source.root, expanded))
    }
    for (const event of Hooks.HookEvent.literals) {
      const matchers = file.hooks[event]
      if (matchers !== undefined && matchers.length > 0) (hooks[event] ??= []).push(...matchers)
    }
    Object.assign(env, file.env)
    Object.assign(values, file.values)
    if (file.defaultMode !== undefined) mode = file.defaultMode
  }
  return {
    files,
    issues: options.issues ?? [],
    permissions: {
      mode: mode ?? "default",
      rules,
      additionalDirectories: Array.from(new Set(directories))
    },
    hooks,
    env,
    values
  }
}

/**
 * Load and merge every settings file.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (options: LoadOptions): Effect.Effect<Settings, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const home = options.home ?? (yield* homeDirectory)
    const list = yield* sources({ ...options, home })
    const read = yield* Effect.forEach(list, readSource, { concurrency: "unbounded" })
    return merge(
      read.flatMap(({ file }) => (file === undefined ? [] : [file])),
      { home, path, issues: read.flatMap(({ issues }) => issues) }
    )
  })

/**
 * Add rules to `<projectDir>/.switchyard/settings.local.json` ("always
 * allow"), keeping every other key of the file. The file is replaced
 * atomically (a temp file in the same directory, then a rename); the
 * directory is created when missing. Rules already present are not repeated.
 * A file that exists but is not a JSON object is left alone and reported.
 *
 * @since 0.1.0
 * @category writing
 */
export const addRules = (options: {
  readonly projectDir: string
  readonly behavior: PermissionContext.RuleBehavior
  readonly rules: ReadonlyArray<string>
}): Effect.Effect<string, SettingsWriteError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = localSettingsPath(path.resolve(options.projectDir), path)
    const dir = path.dirname(file)
    const fail = (message: string) => new SettingsWriteError({ path: file, message })
    yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError((error) => fail(error.message)))
    const exists = yield* fs.exists(file).pipe(Effect.mapError((error) => fail(error.message)))
    let json: Record<string, unknown> = {}
    if (exists) {
      const text = yield* fs.readFileString(file).pipe(Effect.mapError((error) => fail(error.message)))
      const parsed = yield* Effect.try({
        try: () => (text.trim() === "" ? {} : JSON.parse(text) as unknown),
        catch: (error) =>
          fail(`not valid JSON, not overwriting it: ${error instanceof Error ? error.message : String(error)}`)
      })
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        return yield* fail("does not hold a JSON object, not overwriting it")
      }
      json = parsed as Record<string, unknown>
    }
    const permissions = json["permissions"] ?? {}
    if (typeof permissions !== "object" || permissions === null || Array.isArray(permissions)) {
      return yield* fail("`permissions` is not an object, not overwriting it")
    }
    const current = (permissions as Record<string, unknown>)[options.behavior] ?? []
    if (!Array.isArray(current)) {
      return yield* fail(`\`permissions.${options.behavior}\` is not an array, not overwriting it`)
    }
    const added = Array.from(new Set(options.rules)).filter((rule) => !current.includes(rule))
    const next = { ...json, permissions: { ...permissions, [options.behavior]: [...current, ...added] } }
    const temp = path.join(dir, `.settings.local.json.${crypto.randomUUID()}.tmp`)
    yield* fs.writeFileString(temp, `${JSON.stringify(next, null, 2)}\n`).pipe(
      Effect.zipRight(fs.rename(temp, file)),
      Effect.mapError((error) => fail(error.message)),
      Effect.tapError(() => fs.remove(temp).pipe(Effect.ignore))
    )
    return file
  })
