/**
 * Footprints of the file tools (SPEC §4.13): the path a call touches, made
 * absolute and canonical — symlinks resolved on the longest prefix that
 * exists, so two paths naming the same file conflict, and a file that does
 * not exist yet is named under its canonical parent.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Footprint from "@switchyard/core/Footprint"
import * as RealPath from "@switchyard/core/RealPath"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Files from "./files.js"

/** `absolute` with symlinks resolved as the kernel resolves them, where the path exists (`RealPath.resolve`). */
export const canonical = (absolute: string): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.flatMap(Path.Path, (path) => RealPath.resolve(fs, path, absolute)))

/** The canonical absolute path of a tool's file argument. */
export const file = (
  filePath: string,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(Path.Path, (path) => canonical(Files.resolvePath(path, context.cwd, filePath)))

/** A call that reads one file. */
export const readsFile = (filePath: string, context: ToolUseContext.ToolUseContext) =>
  Effect.map(file(filePath, context), (resource): Footprint.Footprint => ({ reads: [resource] }))

/** A call that reads and rewrites one file. */
export const editsFile = (filePath: string, context: ToolUseContext.ToolUseContext) =>
  Effect.map(file(filePath, context), (resource): Footprint.Footprint => ({ reads: [resource], writes: [resource] }))

/** A search (Glob, Grep): it reads its search root's subtree. */
export const searches = (given: string | undefined, context: ToolUseContext.ToolUseContext) =>
  Effect.flatMap(Path.Path, (path) =>
    Effect.map(
      canonical(Files.resolvePath(path, context.cwd, Files.givenSearchPath(given) ?? context.cwd)),
      (root): Footprint.Footprint => ({ reads: [Footprint.subtree(root)] })
    ))
