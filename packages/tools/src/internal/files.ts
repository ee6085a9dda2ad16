/**
 * What the file tools share: path resolution against the call's cwd, one
 * tagged error for every file problem, content hashes, binary detection, the
 * read-before-write and stale-read checks, and atomic writes.
 *
 * Every access goes through the `@effect/platform` `FileSystem` and `Path`
 * services, so a speculation overlay can be swapped in underneath.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Path from "@effect/platform/Path"
import * as Digest from "@switchyard/core/Digest"
import * as EditDistance from "@switchyard/core/EditDistance"
import * as OverlayFileSystem from "@switchyard/core/OverlayFileSystem"
import * as PermissionRules from "@switchyard/core/PermissionRules"
import * as RealPath from "@switchyard/core/RealPath"
import * as Settings from "@switchyard/core/Settings"
import * as Tool from "@switchyard/core/Tool"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as os from "node:os"

/** @internal */
export const FileErrorReason = Schema.Literal(
  "NotFound",
  "IsDirectory",
  "NotADirectory",
  "PermissionDenied",
  "Binary",
  "TooLarge",
  "NotRead",
  "Stale",
  "AlreadyExists",
  "NoMatch",
  "Ambiguous",
  "NoChange",
  "InvalidNotebook",
  "CellNotFound",
  "InvalidInput",
  "Io"
)

/** @internal */
export type FileErrorReason = Schema.Schema.Type<typeof FileErrorReason>

/**
 * A file tool could not do what it was asked. The message is what the model
 * reads; the fields say which tool, which parameter and which path.
 *
 * @internal
 */
export class FileToolError extends Schema.TaggedError<FileToolError>()("FileToolError", {
  tool: Schema.String,
  parameter: Schema.String,
  path: Schema.String,
  reason: FileErrorReason,
  message: Schema.String
}) {}

/**
 * `validateInput` must fail with core's `ToolError`; the message stays the same.
 *
 * @internal
 */
export const toToolError = (error: FileToolError): Tool.ToolError => new Tool.ToolError({ message: error.message })

/** @internal */
export interface Target {
  readonly tool: string
  readonly parameter: string
  readonly path: string
}

/** @internal */
export const fail = (target: Target, reason: FileErrorReason, message: string): FileToolError =>
  new FileToolError({ ...target, reason, message })

/**
 * An absolute path: absolute input as is, `~` against the home directory,
 * anything else against the call's working directory — joined, with `..`
 * kept: only the kernel knows what `LINK/..` is (see `kernelPath`).
 *
 * @internal
 */
export const resolvePath = (_path: Path.Path, cwd: string, filePath: string): string =>
  RealPath.join(cwd, os.homedir(), filePath)

/**
 * The path a file tool opens for `filePath`: absolute, and spelled without
 * `..` the way the kernel resolves it (a link before a `..` followed first),
 * so what the permission check judged is what is opened, and one file has
 * one name in the read state.
 *
 * @internal
 */
export const kernelPath = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  cwd: string,
  filePath: string
): Effect.Effect<string> => RealPath.normalize(fs, path, resolvePath(path, cwd, filePath))

/**
 * The optional `path` of a search tool, with the values models send for "none"
 * (`""`, `"undefined"`, `"null"`) treated as absent.
 */
export const givenSearchPath = (path: string | undefined): string | undefined =>
  path === undefined || path === "" || path === "undefined" || path === "null" ? undefined : path

/** Where a search tool (Glob, Grep) searches: its `path`, else the working directory (see `kernelPath`). */
export const resolveSearchPath = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  cwd: string,
  given: string | undefined
): Effect.Effect<string> => kernelPath(fs, path, cwd, givenSearchPath(given) ?? cwd)

/**
 * What a search tool (Glob, Grep) leaves out of its results: the paths its
 * Read deny rules cover, as written or through links. `undefined` when no such
 * rule exists.
 *
 * @internal
 */
export const readDeniedFilter = (
  toolName: string,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<
  ((absolutePath: string) => Effect.Effect<boolean>) | undefined,
  never,
  FileSystem.FileSystem | Path.Path
> => Effect.map(permissionEnvironment(context), (env) => PermissionRules.readDenied(context.permissions, toolName, env))

/**
 * The same rules as gitignore patterns relative to a search directory, for
 * ripgrep's `--glob !…` (those that can be written so).
 *
 * @internal
 */
export const readDeniedGlobs = (
  toolName: string,
  context: ToolUseContext.ToolUseContext,
  directory: string
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.map(
    permissionEnvironment(context),
    (env) => PermissionRules.readDeniedPatterns(context.permissions, toolName, env, directory)
  )

const permissionEnvironment = (context: ToolUseContext.ToolUseContext) =>
  Effect.gen(function*() {
    // On the disk links are followed by the kernel; under an overlay, through its view.
    const overlay = yield* OverlayFileSystem.OverlayStatus
    return PermissionRules.makeEnvironment({
      cwd: context.cwd,
      home: yield* Settings.homeDirectory,
      additionalDirectories: context.permissions.additionalDirectories,
      path: yield* Path.Path,
      fileSystem: yield* FileSystem.FileSystem,
      realPaths: overlay.active ? "fileSystem" : "kernel"
    })
  })

/**
 * The items whose path no deny rule covers, in their order.
 *
 * @internal
 */
export const withoutDenied = <A>(
  items: ReadonlyArray<A>,
  pathOf: (item: A) => string,
  denied: ((absolutePath: string) => Effect.Effect<boolean>) | undefined
): Effect.Effect<ReadonlyArray<A>> =>
  denied === undefined
    ? Effect.succeed(items)
    : Effect.filter(items, (item) => Effect.map(denied(pathOf(item)), (covered) => !covered), { concurrency: 16 })

/** The observable input of a search tool: its `path` made absolute (the working directory when absent). */
export const backfillSearchPath = <I extends { readonly path?: string | undefined }>(
  input: I,
  context: { readonly cwd: string }
): I => ({ ...input, path: toAbsolute(context.cwd, givenSearchPath(input.path) ?? context.cwd) })

/**
 * The absolute form of a path for the observable input. Pure (no `Path`
 * service in `backfillObservableInput`); POSIX rules. `..` is kept: the
 * permission check resolves it as the kernel does, after the links before it.
 *
 * @internal
 */
export const toAbsolute = (cwd: string, value: string): string => {
  const parts = RealPath.join(cwd, os.homedir(), value).split("/").filter((part) => part !== "" && part !== ".")
  return `/${parts.join("/")}`
}

/**
 * `backfillObservableInput` for a path field: hooks and permission rules see
 * the absolute path; `call` keeps what the model wrote.
 *
 * @internal
 */
export const absolutize =
  <K extends string>(key: K) =>
  <I extends { readonly [P in K]: string }>(input: I, context: ToolUseContext.ToolUseContext): I => ({
    ...input,
    [key]: toAbsolute(context.cwd, input[key])
  })

/** @internal */
export const sha256 = Digest.sha256

/** @internal */
export const mtimeMs = (info: FileSystem.File.Info): number =>
  Option.match(info.mtime, { onNone: () => 0, onSome: (date) => date.getTime() })

const describePlatformError = (target: Target, error: PlatformError.PlatformError, verb: string): FileToolError => {
  if (error._tag === "SystemError") {
    switch (error.reason) {
      case "NotFound":
        return fail(target, "NotFound", `File does not exist: ${target.path}`)
      case "PermissionDenied":
        return fail(target, "PermissionDenied", `Permission denied: cannot ${verb} ${target.path}`)
      case "BadResource":
        // ENOTDIR (a parent is a file), EISDIR or ELOOP.
        return fail(
          target,
          "NotADirectory",
          `Cannot ${verb} ${target.path}: ${error.description ?? "not a regular file or a parent is not a directory"}`
        )
      default:
        break
    }
  }
  return fail(target, "Io", `Cannot ${verb} ${target.path}: ${error.message}`)
}

/**
 * Map a platform error on `target` to the tool's error.
 *
 * @internal
 */
export const mapPlatformError = (target: Target, verb: string) => (error: PlatformError.PlatformError) =>
  describePlatformError(target, error, verb)

/**
 * Stat a path; `None` when it does not exist.
 *
 * @internal
 */
export const statOption = (
  fs: FileSystem.FileSystem,
  target: Target
): Effect.Effect<Option.Option<FileSystem.File.Info>, FileToolError> =>
  fs.stat(target.path).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed(Option.none())
    ),
    Effect.mapError(mapPlatformError(target, "access"))
  )

/** @internal */
export const requireRegularFile = (
  target: Target,
  info: FileSystem.File.Info
): Effect.Effect<FileSystem.File.Info, FileToolError> => {
  if (info.type === "Directory") {
    return Effect.fail(
      fail(target, "IsDirectory", `${target.path} is a directory, not a file. Use Glob or Bash \`ls\` to list it.`)
    )
  }
  if (info.type !== "File") {
    return Effect.fail(fail(target, "Io", `${target.path} is not a regular file (it is a ${info.type}).`))
  }
  return Effect.succeed(info)
}

/**
 * Names in the same directory that look like the missing one (different
 * case, another extension, a typo), for the "does not exist" message.
 */
const similarNames = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  missing: string
): Effect.Effect<ReadonlyArray<string>> =>
  fs.readDirectory(path.dirname(missing)).pipe(
    Effect.map((names) => {
      const base = path.basename(missing)
      const lower = base.toLowerCase()
      const stem = stemOf(lower)
      return names
        .filter((name) => {
          const candidate = name.toLowerCase()
          return candidate === lower || stemOf(candidate) === stem || editDistance(candidate, lower) <= 2
        })
        .slice(0, 3)
        .map((name) => path.join(path.dirname(missing), name))
    }),
    Effect.orElseSucceed((): ReadonlyArray<string> => [])
  )

const stemOf = (name: string): string => {
  const dot = name.lastIndexOf(".")
  return dot > 0 ? name.slice(0, dot) : name
}

// Names more than two letters longer or shorter are never within two edits.
const editDistance = (a: string, b: string): number =>
  Math.abs(a.length - b.length) > 2 ? 3 : EditDistance.levenshtein(a, b)

/**
 * "File does not exist: <path>" plus close names, when there are any.
 *
 * @internal
 */
export const notFound = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  target: Target
): Effect.Effect<FileToolError> =>
  Effect.map(similarNames(fs, path, target.path), (similar) =>
    fail(
      target,
      "NotFound",
      similar.length === 0
        ? `File does not exist: ${target.path}`
        : `File does not exist: ${target.path}\nDid you mean ${similar.join(" or ")}?`
    ))

const BINARY_EXTENSIONS = new Set([
  "7z",
  "a",
  "avi",
  "bin",
  "bmp",
  "bz2",
  "class",
  "dat",
  "db",
  "deb",
  "dll",
  "dmg",
  "doc",
  "docx",
  "dylib",
  "eot",
  "exe",
  "flac",
  "gz",
  "ico",
  "iso",
  "jar",
  "lib",
  "mkv",
  "mov",
  "mp3",
  "mp4",
  "node",
  "o",
  "obj",
  "odt",
  "ogg",
  "otf",
  "pdf",
  "ppt",
  "pptx",
  "psd",
  "pyc",
  "pyo",
  "rar",
  "rpm",
  "so",
  "sqlite",
  "sqlite3",
  "tar",
  "tgz",
  "tif",
  "tiff",
  "ttf",
  "wasm",
  "wav",
  "webm",
  "woff",
  "woff2",
  "xls",
  "xlsx",
  "xz",
  "zip",
  "zst"
])

/** @internal */
export const extensionOf = (filePath: string): string => {
  const slash = filePath.lastIndexOf("/")
  const dot = filePath.lastIndexOf(".")
  return dot > slash + 1 ? filePath.slice(dot + 1).toLowerCase() : ""
}

/** How many bytes the content sniff looks at. */
const SNIFF_BYTES = 8192

/**
 * Whether a file is binary: a known binary extension, or a NUL byte / mostly
 * control characters in its first 8 KiB.
 *
 * @internal
 */
export const isBinary = (filePath: string, bytes: Uint8Array): boolean => {
  if (BINARY_EXTENSIONS.has(extensionOf(filePath))) return true
  const end = Math.min(bytes.length, SNIFF_BYTES)
  let control = 0
  for (let i = 0; i < end; i++) {
    const byte = bytes[i]!
    if (byte === 0) return true
    // Tab, LF, VT, FF, CR and ESC (ANSI colours) appear in text files.
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 11 && byte !== 12 && byte !== 13 && byte !== 27) control++
  }
  return end > 0 && control / end > 0.1
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
const encoder = new TextEncoder()

/**
 * UTF-8 text; a byte-order mark is kept so that writing back preserves it.
 *
 * @internal
 */
export const decode = (bytes: Uint8Array): string => decoder.decode(bytes)

/** @internal */
export const encode = (text: string): Uint8Array => encoder.encode(text)

/**
 * The state Read records and Write/Edit compare against.
 *
 * @internal
 */
export const fileState = (
  info: FileSystem.File.Info,
  bytes: Uint8Array | string,
  partial: boolean
): ToolUseContext.FileState => ({ mtimeMs: mtimeMs(info), hash: sha256(bytes), partial })

const NOT_READ_MESSAGE = "File has not been read yet. Read it first before writing to it."

/**
 * An existing file that a write tool is about to change, checked against what
 * Read recorded: it must have been read (in full when `requireFullRead`), and
 * be unchanged since. Unchanged means the same mtime, or — when the mtime
 * moved (a `touch`, a formatter that rewrote the same bytes) — the same
 * content hash. With `compareContent` the hash is always compared, so a
 * change within the same millisecond is caught too (the caller reads the
 * bytes anyway).
 *
 * @internal
 */
export const checkUnchangedSinceRead = (
  fs: FileSystem.FileSystem,
  target: Target,
  context: ToolUseContext.ToolUseContext,
  info: FileSystem.File.Info,
  options: { readonly requireFullRead: boolean; readonly bytes?: Uint8Array | undefined }
): Effect.Effect<void, FileToolError> =>
  Effect.gen(function*() {
    const recorded = context.fileState.get(target.path)
    if (recorded === undefined) return yield* Effect.fail(fail(target, "NotRead", NOT_READ_MESSAGE))
    if (options.requireFullRead && recorded.partial) {
      return yield* Effect.fail(
        fail(
          target,
          "NotRead",
          `${target.path} was only read in part. Read the whole file (Read with a larger limit) before overwriting it.`
        )
      )
    }
    if (options.bytes === undefined && mtimeMs(info) === recorded.mtimeMs) return
    const bytes = options.bytes ??
      (yield* fs.readFile(target.path).pipe(Effect.mapError(mapPlatformError(target, "read"))))
    if (sha256(bytes) !== recorded.hash) {
      return yield* Effect.fail(
        fail(
          target,
          "Stale",
          `File has been modified since read, either by the user or by a linter: ${target.path}. ` +
            "Read it again before attempting to write it."
        )
      )
    }
  })

/**
 * Write a file atomically: the bytes go to a temporary file in the same
 * directory, which is then renamed over the target, so a reader sees the old
 * or the new content and never half of it. Parent directories are created; an
 * existing file keeps its permissions, and a symlink keeps pointing at the
 * file it pointed at (the target is written, not the link replaced).
 *
 * Returns the state to record for the new content.
 *
 * @internal
 */
export const writeAtomic = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  target: Target,
  bytes: Uint8Array
): Effect.Effect<ToolUseContext.FileState, FileToolError> =>
  Effect.gen(function*() {
    const existing = yield* statOption(fs, target)
    const destination = Option.isSome(existing)
      ? yield* fs.realPath(target.path).pipe(Effect.orElseSucceed(() => target.path))
      : target.path
    const directory = path.dirname(destination)
    yield* fs.makeDirectory(directory, { recursive: true }).pipe(
      Effect.mapError(mapPlatformError({ ...target, path: directory }, "create directory"))
    )
    const temporary = path.join(directory, `.${path.basename(destination)}.${randomBytes(6).toString("hex")}.tmp`)
    const write = Effect.gen(function*() {
      yield* fs.writeFile(temporary, bytes)
      if (Option.isSome(existing)) yield* fs.chmod(temporary, existing.value.mode & 0o7777)
      yield* fs.rename(temporary, destination)
    }).pipe(
      Effect.tapError(() => Effect.ignore(fs.remove(temporary))),
      Effect.mapError(mapPlatformError(target, "write"))
    )
    yield* write
    const info = yield* fs.stat(destination).pipe(Effect.mapError(mapPlatformError(target, "stat")))
    return fileState(info, bytes, false)
  })
