/**
 * A copy-on-write overlay of the working tree (SPEC §4.12), as
 * `@effect/platform`'s `FileSystem`: reads fall through to the base until a
 * path is written; the first write copies the original into the overlay
 * directory; later reads, stats, `exists`, listings and `realPath` see the
 * overlay's view (new files, edits, whiteouts for deletions, renames, new
 * directories). Every path is resolved in the real tree first (`..`,
 * absolute, symlinks, symlinked parents), and a write that lands outside the
 * working directory is refused. It keeps what the Node FileSystem keeps:
 * modes (`chmod`, an overwritten file keeps its own, `copyFile` gives the
 * source's), symbolic links (made, read, renamed and copied as links), and
 * `copy`'s rules (`fs.cp`: no overwrite unless asked, directories merged).
 *
 * The overlay records which paths it changed and, for each, the base file's
 * hash when it was first copied, so `apply` can refuse to overwrite a file
 * that changed under it (a conflict: the speculative version is kept beside
 * it as `<path>.speculated`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/overlay.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@switchyard/core/OverlayFileSystem")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * One file or symbolic link that differs from the base: created, modified
 * (bytes, mode, or a link's target) or deleted.
 *
 * @since 0.1.0
 * @category models
 */
export type Change = internal.Change

/**
 * A path `apply` did not overwrite: the base changed since the overlay
 * copied it (`changed`), it now resolves outside cwd (`outside`), or writing
 * it failed (`failed`).
 *
 * @since 0.1.0
 * @category models
 */
export type Conflict = internal.Conflict

/**
 * @since 0.1.0
 * @category models
 */
export type ApplyResult = internal.ApplyResult

/**
 * @since 0.1.0
 * @category models
 */
export interface Overlay {
  readonly [TypeId]: TypeId
  /** The overlay's view as a `FileSystem`. */
  readonly fileSystem: FileSystem.FileSystem
  /** The working directory, as a real path. */
  readonly cwd: string
  /** Where the overlay keeps its copies. */
  readonly directory: string
  /** Whether anything was written (created, changed, deleted or made) yet. */
  readonly hasWrites: () => boolean
  /** Whether a write to this path would land inside the working directory. */
  readonly isWritable: (path: string) => Effect.Effect<boolean>
  /** The net changes against the base, sorted by path. */
  readonly changes: Effect.Effect<ReadonlyArray<Change>, PlatformError.PlatformError>
  /** The written paths (relative to cwd): created, changed or deleted files. */
  readonly writtenPaths: Effect.Effect<ReadonlyArray<string>, PlatformError.PlatformError>
  /**
   * Copy the changes into the base (each file through a temp file and a
   * rename; deletions applied), then remove the overlay directory.
   */
  readonly apply: Effect.Effect<ApplyResult, PlatformError.PlatformError>
  /** Remove the overlay directory and forget every change. */
  readonly discard: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The working directory: writes must land inside it. */
  readonly cwd: string
  /** The overlay's own directory (created; removed with the scope). */
  readonly directory: string
}

/**
 * Make an overlay over the `FileSystem` in context. Its directory is removed
 * when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Overlay, PlatformError.PlatformError, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const base = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const impl = yield* internal.makeScoped(base, path, options)
    return {
      [TypeId]: TypeId,
      fileSystem: impl.fileSystem,
      cwd: impl.cwd,
      directory: impl.directory,
      hasWrites: impl.hasWrites,
      isWritable: impl.isWritable,
      changes: impl.changes,
      writtenPaths: Effect.map(impl.changes, (changes) => changes.map((change) => change.path)),
      apply: impl.apply,
      discard: impl.discard
    }
  })

/**
 * What tools can ask about the filesystem they run on: whether it is an
 * overlay and whether that overlay has writes (then an external process, such
 * as ripgrep, reading the real tree would miss them).
 *
 * @since 0.1.0
 * @category services
 */
export class OverlayStatus
  extends Context.Reference<OverlayStatus>()("@switchyard/core/OverlayFileSystem/OverlayStatus", {
    defaultValue: (): { readonly active: boolean; readonly hasWrites: () => boolean } => ({
      active: false,
      hasWrites: () => false
    })
  })
{}

/**
 * Whether the filesystem in context is an overlay with writes.
 *
 * @since 0.1.0
 * @category getters
 */
export const hasWrites: Effect.Effect<boolean> = Effect.map(
  OverlayStatus,
  (status) => status.active && status.hasWrites()
)

/**
 * The overlay as the `FileSystem` (and its `OverlayStatus`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (overlay: Overlay): Layer.Layer<FileSystem.FileSystem> =>
  Layer.succeedContext(
    Context.make(FileSystem.FileSystem, overlay.fileSystem).pipe(
      Context.add(OverlayStatus, { active: true, hasWrites: overlay.hasWrites })
    )
  )

/**
 * @since 0.1.0
 * @category guards
 */
export const isOverlay = (u: unknown): u is Overlay => typeof u === "object" && u !== null && TypeId in u
