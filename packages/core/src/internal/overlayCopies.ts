/**
 * The overlay's copies and links (SPEC §4.12): `copyFile`, `chmod`, `symlink`
 * and `copy`, with the Node FileSystem's semantics — modes carried, links
 * copied as links, `fs.cp`'s rules for what is overwritten.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import type { Serial, Views, Writes } from "./overlayAdapter.js"
import type * as Paths from "./overlayPaths.js"
import { notFound, systemError } from "./overlayPaths.js"

export interface Copies {
  readonly copyFile: FileSystem.FileSystem["copyFile"]
  readonly chmod: FileSystem.FileSystem["chmod"]
  readonly symlink: FileSystem.FileSystem["symlink"]
  readonly copy: FileSystem.FileSystem["copy"]
}

export const make = (site: Paths.Site, paths: Paths.Paths, serial: Serial, views: Views, writes: Writes): Copies => {
  const { base, path, table } = site
  const { kindAt, kindOf, lexical, linkAt, resolveRead, walk, writeTarget } = paths
  const { entryKind, listNames, readTarget } = views
  const { fileOnly, makeDirectory, remove, requireParentDirectory, touch, writeFile } = writes

  /** The source's bytes, then its mode, as the base's `copyFile` gives the destination. */
  const copyFile: FileSystem.FileSystem["copyFile"] = (from, to) =>
    Effect.gen(function*() {
      const view = yield* resolveRead(from)
      if ((yield* kindOf(view)) === "directory") {
        // libuv opens the destination (links followed), truncates it and gives it the source's mode
        // before the read of a directory fails, and then unlinks the destination's path: the Node
        // FileSystem empties the file there and removes the name.
        const landing = yield* walk(lexical(to), true)
        const kind = yield* kindAt(landing)
        if (kind === "file" || (kind === "missing" && (yield* kindAt(path.dirname(landing))) === "directory")) {
          const mode = (yield* base.stat(yield* readTarget(view, "copyFile", from))).mode & 0o7777
          yield* writeFile(to, new Uint8Array())
          yield* chmod(to, mode)
          yield* remove(to)
        }
        return yield* systemError("BadResource", "copyFile", from, "Is a directory")
      }
      const target = yield* readTarget(view, "copyFile", from)
      const data = yield* base.readFile(target)
      const mode = (yield* base.stat(target)).mode & 0o7777
      yield* writeFile(to, data)
      yield* chmod(to, mode)
    })

  const chmod: FileSystem.FileSystem["chmod"] = (p, mode) =>
    Effect.asVoid(fileOnly("chmod", p, (content) => base.chmod(content, mode)))

  const symlink: FileSystem.FileSystem["symlink"] = (target, p) =>
    serial(Effect.gen(function*() {
      const at = yield* writeTarget(p, "symlink", false)
      if ((yield* entryKind(at)) !== "missing") return yield* systemError("AlreadyExists", "symlink", p, "File exists")
      yield* requireParentDirectory(at, "symlink")
      yield* touch(at)
      table.setEntry(at, { _tag: "Link", target })
    }))

  /**
   * The Node FileSystem's `copy` (`fs.cp` with `recursive`, `force` =
   * `overwrite`): a directory is merged into an existing one; an existing
   * file is left as it is unless `overwrite`; a link is copied as a link (its
   * target made absolute); a file gets the source's mode; copying onto itself,
   * into itself, a directory onto a file or a file onto a directory fails.
   */
  const copy: FileSystem.FileSystem["copy"] = (from, to, options) =>
    Effect.gen(function*() {
      const source = yield* walk(lexical(from), false)
      yield* copyEntry(source, lexical(to), options?.overwrite === true, true)
    })

  const copyEntry = (
    source: string,
    destination: string,
    overwrite: boolean,
    top: boolean
  ): Effect.Effect<void, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const kind = yield* entryKind(source)
      if (kind === "missing") return yield* notFound("copy", source)
      const landing = yield* walk(destination, false)
      const existing = yield* entryKind(landing)
      if (existing !== "missing") {
        if (landing === source) return yield* copyError(destination, "src and dest cannot be the same")
        if (kind === "directory" && existing !== "directory") {
          return yield* copyError(destination, "cannot overwrite non-directory with directory")
        }
        if (kind !== "directory" && existing === "directory") {
          return yield* copyError(destination, "cannot overwrite directory with non-directory")
        }
      }
      if (kind === "directory" && (landing === source || landing.startsWith(source + "/"))) {
        return yield* copyError(destination, "cannot copy a directory into itself")
      }
      // Once the paths are checked, a missing parent of the destination is made.
      const parent = path.dirname(destination)
      if (top && (yield* kindAt(yield* walk(parent, true))) === "missing") {
        yield* makeDirectory(parent, { recursive: true })
      }
      switch (kind) {
        case "directory": {
          if (existing === "missing") yield* makeDirectory(destination)
          for (const name of yield* listNames(table.lookup(source), "copy", source)) {
            yield* copyEntry(path.join(source, name), path.join(destination, name), overwrite, false)
          }
          return
        }
        case "file": {
          if (existing !== "missing") {
            if (!overwrite) return
            yield* remove(destination)
          }
          return yield* copyFile(source, destination)
        }
        case "link": {
          const written = (yield* linkAt(source))!
          const target = path.isAbsolute(written) ? written : path.resolve(path.dirname(source), written)
          if (existing === "missing") return yield* symlink(target, destination)
          const current = yield* linkAt(landing)
          if (current === undefined) return yield* systemError("AlreadyExists", "copy", destination, "File exists")
          const resolved = path.isAbsolute(current) ? current : path.resolve(path.dirname(destination), current)
          if (isWithin(target, resolved)) {
            return yield* copyError(destination, "cannot copy a link to a subdirectory of itself")
          }
          // Node stats the source through its link here: a dangling one fails.
          const pointsAt = yield* kindAt(source)
          if (pointsAt === "missing") {
            return yield* notFound("copy", source)
          }
          if (pointsAt === "directory" && isWithin(resolved, target)) {
            return yield* copyError(
              destination,
              "cannot overwrite a link to a directory with a link to its subdirectory"
            )
          }
          yield* remove(destination)
          return yield* symlink(target, destination)
        }
      }
    })

  /** Whether `inner` is `outer` or under it, component by component (Node's `isSrcSubdir`). */
  const isWithin = (outer: string, inner: string): boolean => {
    const a = outer.split("/").filter((x) => x.length > 0)
    const b = inner.split("/").filter((x) => x.length > 0)
    return a.every((part, i) => b[i] === part)
  }

  const copyError = (p: string, description: string) => systemError("BadResource", "copy", p, description)

  return { copyFile, chmod, symlink, copy }
}
