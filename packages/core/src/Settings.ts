/**
 * Settings files (SPEC §4.5) in Claude Code's `settings.json` format, so a
 * user can point `--settings` at their `.claude/settings.json`.
 *
 * Files, lowest precedence first: `$SWITCHYARD_HOME/settings.json` (default
 * `~/.switchyard/settings.json`, user), `<cwd>/.claude/settings.json` and
 * `<cwd>/.switchyard/settings.json` (project), `<cwd>/.claude/settings.local.json`
 * and `<cwd>/.switchyard/settings.local.json` (local), then each
 * `--settings FILE` in order. A missing file is skipped; `sources` on the
 * result lists the files that were read. A file that is not JSON, or a key of
 * the wrong type, is reported as a `SettingsIssue` naming the path and the
 * field, and everything else still loads: decoding goes key by key and rule
 * by rule.
 *
 * Failing closed: a deny or ask rule that cannot be read (a file that is not
 * JSON, `deny` as a string, an unbalanced rule) becomes an ask rule for every
 * tool it names (every tool rules are written for, when it names none), and
 * the issue says so. A lowercase tool name is reported (names are
 * case-sensitive). A `defaultMode: bypassPermissions` from a project or local
 * file takes effect only once the user confirmed it through the
 * `ModeConfirmation` port (remembered per project and file content under the
 * state directory); without one it is ignored, with an issue.
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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SandboxedRoots from "./SandboxedRoots.js"
import * as Digest from "./Digest.js"
import * as Footprint from "./Footprint.js"
import * as Hooks from "./Hooks.js"
import * as SandboxSettings from "./internal/sandboxSettings.js"
import * as internal from "./internal/settingsDecode.js"
import * as StateDirectory from "./internal/stateDirectory.js"
import * as PermissionContext from "./PermissionContext.js"
import * as Sandbox from "./Sandbox.js"

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
    scheduling: Schema.optional(Footprint.Scheduling),
    sandbox: Schema.optional(Sandbox.SandboxSettingsJson),
    enableAllProjectMcpServers: Schema.optional(Schema.Boolean),
    enabledMcpjsonServers: Schema.optional(Schema.Array(Schema.String)),
    disabledMcpjsonServers: Schema.optional(Schema.Array(Schema.String))
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
  /** The `sandbox` key's valid parts, as written (a project's own files cannot widen the sandbox). */
  readonly sandbox?: Sandbox.FileSettings | undefined
  /** The SHA-256 of the file's text (hex), when it was read from disk. */
  readonly digest?: string | undefined
  /**
   * `enableAllProjectMcpServers`, `enabledMcpjsonServers`,
   * `disabledMcpjsonServers` as this file sets them; `disabled` is `"all"`
   * when that list could not be read (fail closed). Which files may approve
   * a project's servers is the MCP layer's decision (a project's shared
   * settings may not).
   */
  readonly mcpApproval?: McpApproval | undefined
}

/**
 * Claude Code's keys for approving a project's `.mcp.json` servers, as one
 * file sets them.
 *
 * @since 0.1.0
 * @category models
 */
export type McpApproval = internal.DecodedMcpApproval

/**
 * The merged settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** The files that were read, lowest precedence first. */
  readonly files: ReadonlyArray<SettingsFile>
  /** Every file that exists and was read (valid or not), lowest precedence first: what to tell the user. */
  readonly sources: ReadonlyArray<Source>
  readonly issues: ReadonlyArray<SettingsIssue>
  /** Mode (`defaultMode`, else `default`), every rule and the absolute additional directories. */
  readonly permissions: PermissionContext.PermissionContext
  readonly hooks: Hooks.HooksSettings
  readonly env: Readonly<Record<string, string>>
  /** Every top-level key, the highest-precedence file's value winning. */
  readonly values: Readonly<Record<string, unknown>>
  /** The `sandbox` keys merged (lists concatenate), with Claude Code's defaults. */
  readonly sandbox: Sandbox.SandboxSettings
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
  /**
   * Which of the user, project and local files to read (Claude Code's
   * `--setting-sources`; default all three). `extraFiles` are always read.
   */
  readonly settingSources?: ReadonlyArray<"user" | "project" | "local"> | undefined
}

/**
 * The home directory: `$HOME`, else `$USERPROFILE`, else `/`.
 *
 * @since 0.1.0
 * @category config
 */
export const homeDirectory: Effect.Effect<string> = StateDirectory.homeDirectory

/**
 * The state directory of a home directory: `$SWITCHYARD_HOME`, else
 * `<home>/.switchyard` (`Results.stateDirectory` is the same for the
 * process's home directory).
 *
 * @since 0.1.0
 * @category config
 */
export const stateDirectory: (home: string) => Effect.Effect<string> = StateDirectory.stateDirectoryOf

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
    const defaults: ReadonlyArray<Source> = [
      // User rules are for every project: their `/x` paths are relative to the project at hand.
      { path: path.join(stateDir, "settings.json"), scope: "user", root: cwd },
      // Claude Code's project files, so its deny rules and hooks apply here too.
      { path: path.join(cwd, ".claude", "settings.json"), scope: "project", root: cwd },
      { path: path.join(cwd, ".switchyard", "settings.json"), scope: "project", root: cwd },
      { path: path.join(cwd, ".claude", "settings.local.json"), scope: "local", root: cwd },
      { path: localSettingsPath(cwd, path), scope: "local", root: cwd }
    ]
    const wanted = (source: Source) =>
      options.settingSources === undefined || options.settingSources.some((scope) => scope === source.scope)
    // A file also given with `--settings` is read once, at the flag's precedence.
    return [
      ...defaults.filter((source) => wanted(source) && !extra.some((flag) => flag.path === source.path)),
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
    // Its deny and ask rules cannot be read: the tools they name ask until the file is fixed.
    const named = internal.namedToolsInText(text)
    const guards = named === undefined ? [] : internal.failClosed(named, "(file)", source)
    const mcpApproval = internal.mcpApprovalInText(text)
    const issue = new SettingsIssue({
      path: source.path,
      field: "(file)",
      message: `invalid JSON: ${message}${internal.failClosedNote(guards)}` +
        (mcpApproval === undefined
          ? ""
          : "; until it is fixed, no server of a project's .mcp.json is started (fail closed)")
    })
    if (guards.length === 0 && mcpApproval === undefined) return { file: undefined, issues: [issue] }
    return {
      file: {
        source,
        rules: guards,
        defaultMode: undefined,
        additionalDirectories: [],
        hooks: {},
        env: {},
        values: {},
        mcpApproval
      },
      issues: [issue]
    }
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
      values: decoded.values,
      sandbox: decoded.sandbox,
      mcpApproval: decoded.mcpApproval
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
  {
    readonly file: SettingsFile | undefined
    readonly issues: ReadonlyArray<SettingsIssue>
    /** Whether the file exists (and so was read, or tried). */
    readonly exists: boolean
  },
  never,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(source.path).pipe(Effect.orElseSucceed(() => true))
    if (!exists) return { file: undefined, issues: [], exists }
    return yield* fs.readFileString(source.path).pipe(
      Effect.map((text) => {
        const digest = Digest.sha256(text)
        const decoded = decode(source, text)
        return { ...decoded, file: decoded.file === undefined ? undefined : { ...decoded.file, digest }, exists }
      }),
      Effect.catchAll((error) =>
        Effect.succeed({
          file: undefined,
          issues: [new SettingsIssue({ path: source.path, field: "(file)", message: `cannot read: ${error.message}` })],
          exists
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
  options: {
    readonly home: string
    readonly path: Path.Path
    readonly issues?: ReadonlyArray<SettingsIssue>
    /** The files read (default: those of `files`). */
    readonly sources?: ReadonlyArray<Source>
  }
): Settings => {
  const { home, path } = options
  const rules: Array<PermissionContext.PermissionRule> = []
  const directories: Array<string> = []
  const hooks: Partial<Record<Hooks.HookEvent, Array<Schema.Schema.Type<typeof Hooks.HookMatcher>>>> = {}
  const env: Record<string, string> = {}
  const values: Record<string, unknown> = {}
  let mode: PermissionContext.PermissionMode | undefined
  for (const file of files) {
    // One push per rule: spreading a list of 150 000 rules into `push` overflows the stack.
    for (const rule of file.rules) rules.push(rule)
    for (const dir of file.additionalDirectories) {
      const expanded = dir === "~" ? home : dir.startsWith("~/") ? path.join(home, dir.slice(2)) : dir
      directories.push(path.resolve(file.source.root, expanded))
    }
    for (const event of Hooks.HookEvent.literals) {
      const matchers = file.hooks[event]
      if (matchers !== undefined && matchers.length > 0) {
        for (const matcher of matchers) (hooks[event] ??= []).push(matcher)
      }
    }
    Object.assign(env, file.env)
    Object.assign(values, file.values)
    if (file.defaultMode !== undefined) mode = file.defaultMode
  }
  return {
    files,
    sources: options.sources ?? files.map((file) => file.source),
    issues: options.issues ?? [],
    permissions: {
      mode: mode ?? "default",
      rules,
      additionalDirectories: Array.from(new Set(directories))
    },
    hooks,
    env,
    values,
    sandbox: SandboxSettings.merge(
      files.map((file) => ({ sandbox: file.sandbox, path: file.source.path, root: file.source.root })),
      home,
      path,
      Sandbox.defaultSettings
    )
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
    const stateDir = options.stateDir ?? (yield* stateDirectory(home))
    const files = read.flatMap(({ file }) => (file === undefined ? [] : [file]))
    // A project's own files that a sandboxed command may have written count only once confirmed.
    const judged = yield* SandboxedRoots.judge(
      stateDir,
      files.flatMap((file) =>
        (file.source.scope === "project" || file.source.scope === "local") && file.digest !== undefined
          ? [{ path: file.source.path, dir: file.source.root, digest: file.digest }]
          : []
      )
    )
    const refused = new Map(judged.refused.map((r) => [r.path, r.reason]))
    const confirmed = yield* confirmModes(files.filter((file) => !refused.has(file.source.path)), stateDir)
    return merge(confirmed.files, {
      home,
      path,
      issues: [
        ...read.flatMap(({ issues }) => issues),
        ...[...refused].map(([file, reason]) => new SettingsIssue({ path: file, field: "(file)", message: reason })),
        ...confirmed.issues
      ],
      sources: read.flatMap(({ exists }, index) => (exists ? [list[index]!] : []))
    })
  })

/**
 * What the user is asked before a project's settings may switch permission
 * checks off.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModeConfirmationRequest {
  /** The project the file belongs to. */
  readonly projectDir: string
  /** The settings file that sets the mode. */
  readonly file: string
  readonly mode: "bypassPermissions"
}

/**
 * The port through which a project settings file's `defaultMode:
 * bypassPermissions` is confirmed (the CLI asks in a terminal). `true`: the
 * user confirmed it. Without this service nobody can confirm, and the mode is
 * ignored.
 *
 * @since 0.1.0
 * @category services
 */
export class ModeConfirmation extends Context.Tag("@switchyard/core/Settings/ModeConfirmation")<
  ModeConfirmation,
  { readonly confirm: (request: ModeConfirmationRequest) => Effect.Effect<boolean> }
>() {}

/** Where confirmed project modes are remembered: project directory → digests of the files confirmed. */
const TrustedModes = Schema.Struct({
  bypassPermissions: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
})

const trustedModesPath = (stateDir: string, path: Path.Path) => path.join(stateDir, "trusted-modes.json")

/**
 * Keep a project or local file's `defaultMode: bypassPermissions` only when
 * the user confirmed that file's content for that project, now or before.
 */
const confirmModes = (
  files: ReadonlyArray<SettingsFile>,
  stateDir: string
): Effect.Effect<
  { readonly files: ReadonlyArray<SettingsFile>; readonly issues: ReadonlyArray<SettingsIssue> },
  never,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    const needsConfirmation = (file: SettingsFile) =>
      file.defaultMode === "bypassPermissions" && (file.source.scope === "project" || file.source.scope === "local")
    if (!files.some(needsConfirmation)) return { files, issues: [] }
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const storePath = trustedModesPath(stateDir, path)
    const store = yield* fs.readFileString(storePath).pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(TrustedModes))),
      Effect.orElseSucceed((): typeof TrustedModes.Type => ({ bypassPermissions: {} }))
    )
    const trusted: Record<string, Array<string>> = {}
    for (const [dir, digests] of Object.entries(store.bypassPermissions)) trusted[dir] = [...digests]
    const confirmation = yield* Effect.serviceOption(ModeConfirmation)
    const issues: Array<SettingsIssue> = []
    let changed = false
    const out: Array<SettingsFile> = []
    for (const file of files) {
      if (!needsConfirmation(file)) {
        out.push(file)
        continue
      }
      const projectDir = file.source.root
      const digest = file.digest ?? ""
      if (digest !== "" && (trusted[projectDir] ?? []).includes(digest)) {
        out.push(file)
        continue
      }
      const answer = Option.isNone(confirmation)
        ? undefined
        : yield* confirmation.value.confirm({ projectDir, file: file.source.path, mode: "bypassPermissions" })
      if (answer === true) {
        if (digest !== "") {
          trusted[projectDir] = [...(trusted[projectDir] ?? []), digest]
          changed = true
        }
        out.push(file)
        continue
      }
      out.push({ ...file, defaultMode: undefined })
      issues.push(
        new SettingsIssue({
          path: file.source.path,
          field: "permissions.defaultMode",
          message: answer === false
            ? "bypassPermissions from a project settings file was not confirmed, so it is ignored"
            : "bypassPermissions from a project settings file takes effect only after you confirm it once in a " +
              "terminal; no terminal to ask, so it is ignored (pass --permission-mode bypassPermissions to use it)"
        })
      )
    }
    if (changed) {
      const text = `${JSON.stringify({ bypassPermissions: trusted }, null, 2)}\n`
      const written = yield* fs.makeDirectory(stateDir, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(storePath, text)),
        Effect.either
      )
      if (written._tag === "Left") {
        issues.push(
          new SettingsIssue({
            path: storePath,
            field: "(file)",
            message: `cannot remember the confirmation: ${written.left.message}; it will be asked again`
          })
        )
      }
    }
    return { files: out, issues }
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
    // A file that counted (SandboxedRoots) still counts with the rule added; one that did not stays in question.
    const stateDir = yield* stateDirectory(yield* homeDirectory)
    const projectDir = path.resolve(options.projectDir)
    const counted = !exists || (yield* SandboxedRoots.counts(stateDir, {
      path: file,
      dir: projectDir,
      digest: Digest.sha256(yield* fs.readFileString(file).pipe(Effect.orElseSucceed(() => "")))
    }))
    const text = `${JSON.stringify(next, null, 2)}\n`
    const temp = path.join(dir, `.settings.local.json.${crypto.randomUUID()}.tmp`)
    yield* fs.writeFileString(temp, text).pipe(
      Effect.zipRight(fs.rename(temp, file)),
      Effect.mapError((error) => fail(error.message)),
      Effect.tapError(() => fs.remove(temp).pipe(Effect.ignore))
    )
    if (counted) {
      yield* SandboxedRoots.confirmWritten(stateDir, { path: file, dir: projectDir, digest: Digest.sha256(text) })
    }
    return file
  })
