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
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Files from "./files.js"

/**
 * `absolute` with symlinks resolved where the path exists. A `..` climbs from
 * the real path of what precedes it, as the kernel walks a path (`LINK/..`
 * is the parent of the link's target; the platform's `realPath` normalises
 * lexically first): each piece before a `..` is resolved on its own.
 */
export const canonical = (absolute: string): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const segments = absolute.split("/")
    const climb = segments.lastIndexOf("..")
    if (climb === -1) return yield* canonicalWithoutClimbs(absolute)
    let real = "/"
    let start = 1
    for (let i = 1; i <= climb; i++) {
      if (segments[i] !== "..") continue
      const before = segments.slice(start, i).filter((segment) => segment.length > 0 && segment !== ".")
      if (before.length > 0) real = yield* canonicalWithoutClimbs(path.join(real, ...before))
      real = path.dirname(real)
      start = i + 1
    }
    const rest = segments.slice(climb + 1).filter((segment) => segment.length > 0)
    return rest.length === 0 ? real : yield* canonicalWithoutClimbs(path.join(real, ...rest))
  })

const canonicalWithoutClimbs = (absolute: string): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const missing: Array<string> = []
    let current = absolute
    for (;;) {
      const real = yield* Effect.option(fs.realPath(current))
      if (real._tag === "Some") return missing.length === 0 ? real.value : path.join(real.value, ...missing.reverse())
      const parent = path.dirname(current)
      if (parent === current) return absolute
      missing.push(path.basename(current))
      current = parent
    }
  })

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
      canonical(Files.resolveSearchPath(path, context.cwd, given)),
      (root): Footprint.Footprint => ({ reads: [Footprint.subtree(root)] })
    ))
