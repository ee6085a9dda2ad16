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
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.flatMap(Path.Path, (path) => RealPath.resolve(fs, path, absolute))
  )

/** The canonical absolute path of a tool's file argument. */
export const file = (
  filePath: string,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(Path.Path, (path) => canonical(Files.resolvePath(path, context.cwd, filePath)))

/**
 * The directories a path climbs out of with `..` (each resolved): what the
 * path means depends on them, so a call naming it reads them.
 */
export const traversed = (
  filePath: string,
  context: ToolUseContext.ToolUseContext
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const parts = Files.resolvePath(path, context.cwd, filePath).split("/")
    const out: Array<string> = []
    for (let i = 1; i < parts.length; i++) {
      if (parts[i] === "..") out.push(yield* canonical(parts.slice(0, i).join("/") || "/"))
    }
    return out
  })

/** A path argument: what it names, and the directories it climbed out of to get there. */
const named = (filePath: string, context: ToolUseContext.ToolUseContext) =>
  Effect.zip(file(filePath, context), traversed(filePath, context))

/**
 * A footprint with what its paths are on the disk now (SPEC §4.13): a file
 * with other hard links is also keyed by device and inode, so its names meet,
 * and touches `*` in its mode, since any directory may hold another of its
 * names. A footprint without such a file is returned as it is.
 */
export const identified = (
  footprint: Footprint.Footprint
): Effect.Effect<Footprint.Footprint, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (footprint.complete === false) return footprint
    const fs = yield* FileSystem.FileSystem
    const added = { reads: [] as Array<Footprint.Resource>, writes: [] as Array<Footprint.Resource> }
    const look = (resource: Footprint.Resource, mode: "reads" | "writes") =>
      Effect.gen(function*() {
        if (!resource.startsWith("/") || resource.endsWith("/**")) return
        const info = yield* Effect.option(fs.stat(resource))
        if (info._tag === "None") return
        const { dev, ino, nlink, type } = info.value
        if (type !== "File" || ino._tag === "None" || nlink._tag === "None" || nlink.value < 2) return
        added[mode].push(Footprint.inode(dev, ino.value), Footprint.everything)
      })
    yield* Effect.forEach(footprint.reads ?? [], (r) => look(r, "reads"), { discard: true })
    yield* Effect.forEach(footprint.writes ?? [], (w) => look(w, "writes"), { discard: true })
    if (added.reads.length === 0 && added.writes.length === 0) return footprint
    return {
      reads: [...new Set([...(footprint.reads ?? []), ...added.reads])],
      writes: [...new Set([...(footprint.writes ?? []), ...added.writes])]
    }
  })

/** `identified`, when a `FileSystem` is in context (the Bash tool runs on a `CommandExecutor` alone). */
export const identifiedWhereKnown = (footprint: Footprint.Footprint): Effect.Effect<Footprint.Footprint> =>
  Effect.flatMap(
    Effect.serviceOption(FileSystem.FileSystem),
    (fs) =>
      fs._tag === "None"
        ? Effect.succeed(footprint)
        : Effect.provideService(identified(footprint), FileSystem.FileSystem, fs.value)
  )

/** A call that reads one file. */
export const readsFile = (filePath: string, context: ToolUseContext.ToolUseContext) =>
  Effect.flatMap(named(filePath, context), ([resource, climbed]) => identified({ reads: [resource, ...climbed] }))

/** A call that reads and rewrites one file. */
export const editsFile = (filePath: string, context: ToolUseContext.ToolUseContext) =>
  Effect.flatMap(
    named(filePath, context),
    ([resource, climbed]) => identified({ reads: [resource, ...climbed], writes: [resource] })
  )

/** A search (Glob, Grep): it reads its search root's subtree. */
export const searches = (given: string | undefined, context: ToolUseContext.ToolUseContext) =>
  Effect.flatMap(
    named(Files.givenSearchPath(given) ?? context.cwd, context),
    ([root, climbed]) => identified({ reads: [Footprint.subtree(root), ...climbed] })
  )
