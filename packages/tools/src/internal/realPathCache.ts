/**
 * A `FileSystem` for a search tool's read-deny filter, whose `realPath`
 * answers each path once per call. The filter resolves every match and, for
 * each, the working directories and the home directory, whose real paths do
 * not change within one call.
 *
 * When the matches came from the disk itself (Glob's rg engine, used only
 * without an overlay), a path is resolved by the kernel's `realpath(3)`
 * (`fs.realpathSync.native`, one system call), not by the platform's
 * `realPath` (Node's JavaScript `fs.realpath`, an `lstat` per path
 * component, which made a deny rule cost a Glob of a large tree seconds).
 *
 * @internal
 */
import * as PlatformError from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as fs from "node:fs"

const reasonOf = (code: string | undefined): PlatformError.SystemErrorReason => {
  switch (code) {
    case "ENOENT":
      return "NotFound"
    case "EACCES":
    case "EPERM":
      return "PermissionDenied"
    case "ENOTDIR":
    case "ELOOP":
    case "ENAMETOOLONG":
      return "BadResource"
    default:
      return "Unknown"
  }
}

const nativeRealPath = (path: string): Effect.Effect<string, PlatformError.PlatformError> =>
  Effect.try({
    try: () => fs.realpathSync.native(path),
    catch: (cause) =>
      new PlatformError.SystemError({
        reason: reasonOf((cause as NodeJS.ErrnoException).code),
        module: "FileSystem",
        method: "realPath",
        pathOrDescriptor: path,
        description: cause instanceof Error ? cause.message : String(cause)
      })
  })

/** @internal */
export const make = (
  fileSystem: FileSystem.FileSystem,
  options: { readonly onDisk: boolean }
): FileSystem.FileSystem => {
  const resolve = options.onDisk ? nativeRealPath : fileSystem.realPath
  const known = new Map<string, Exit.Exit<string, PlatformError.PlatformError>>()
  const realPath = (path: string): Effect.Effect<string, PlatformError.PlatformError> => {
    const cached = known.get(path)
    if (cached !== undefined) return cached
    return Effect.flatten(
      Effect.tap(Effect.exit(resolve(path)), (exit) => Effect.sync(() => void known.set(path, exit)))
    )
  }
  return { ...fileSystem, realPath }
}
