/**
 * The copy-on-write overlay behind `OverlayFileSystem` (SPEC §4.12), made of
 * four parts: the table of what it changed (`overlayTable`), path resolution
 * in its view (`overlayPaths`), the `FileSystem` adapter (`overlayAdapter`)
 * and the net changes with `apply` (`overlayApply`).
 *
 * Every path is first resolved to its real-tree path (`..`, relative paths,
 * symlinks in the base, symlinked parents), so the table is keyed by real
 * paths and `realPath` answers in the real tree. Writes must land inside the
 * real working directory.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Adapter from "./overlayAdapter.js"
import * as Apply from "./overlayApply.js"
import * as Paths from "./overlayPaths.js"
import * as Table from "./overlayTable.js"

export type Change = Apply.Change
export type Conflict = Apply.Conflict
export type ApplyResult = Apply.ApplyResult

export interface Internals {
  readonly fileSystem: FileSystem.FileSystem
  readonly cwd: string
  readonly directory: string
  readonly hasWrites: () => boolean
  readonly isWritable: (path: string) => Effect.Effect<boolean>
  readonly changes: Effect.Effect<ReadonlyArray<Change>, PlatformError.PlatformError>
  readonly apply: Effect.Effect<ApplyResult, PlatformError.PlatformError>
  readonly discard: Effect.Effect<void>
}

export const make = (
  base: FileSystem.FileSystem,
  path: Path.Path,
  options: { readonly cwd: string; readonly directory: string }
): Effect.Effect<Internals, PlatformError.PlatformError> =>
  Effect.gen(function*() {
    const cwd = yield* base.realPath(path.resolve(options.cwd))
    const directory = path.resolve(options.directory)
    const site: Paths.Site = {
      base,
      path,
      table: new Table.Table(path, cwd),
      cwd,
      directory,
      filesDirectory: path.join(directory, "files"),
      scratch: path.join(directory, "tmp")
    }
    yield* base.makeDirectory(site.filesDirectory, { recursive: true })
    yield* base.makeDirectory(site.scratch, { recursive: true })
    const lock = yield* Effect.makeSemaphore(1)
    const serial = <A, E, R>(effect: Effect.Effect<A, E, R>) => lock.withPermits(1)(effect)
    const paths = Paths.make(site)
    const { fileSystem } = Adapter.make(site, paths, serial)
    const { apply, changes, discard } = Apply.make(site, paths, serial)
    return {
      fileSystem,
      cwd,
      directory,
      hasWrites: () => site.table.size > 0,
      isWritable: (p: string) => paths.writeTarget(p, "write").pipe(Effect.as(true), Effect.orElseSucceed(() => false)),
      changes,
      apply,
      discard
    }
  })

/** Make an overlay whose directory is removed when the scope closes. */
export const makeScoped = (
  base: FileSystem.FileSystem,
  path: Path.Path,
  options: { readonly cwd: string; readonly directory: string }
): Effect.Effect<Internals, PlatformError.PlatformError, Scope.Scope> =>
  Effect.acquireRelease(make(base, path, options), (overlay) => overlay.discard)
