/**
 * Path resolution in the overlay's view (SPEC §4.12): every path is resolved
 * to its real-tree path component by component (`..`, relative paths, the
 * base's symlinks, symlinked parents), consulting the table at each step, so
 * the table is keyed by real paths and a write can be judged by where it
 * lands.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createHash } from "node:crypto"
import * as Table from "./overlayTable.js"

/** What every part of one overlay shares: the base, its table and its directories. */
export interface Site {
  readonly base: FileSystem.FileSystem
  readonly path: Path.Path
  readonly table: Table.Table
  /** The real working directory. */
  readonly cwd: string
  /** The overlay's own directory. */
  readonly directory: string
  /** Where the overlay's file contents live. */
  readonly filesDirectory: string
  /** Where temp files and directories made through the overlay go (passed straight to the base). */
  readonly scratch: string
}

const MAX_SYMLINK_HOPS = 40

export const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex")

export const systemError = (
  reason: PlatformError.SystemErrorReason,
  method: string,
  path: string,
  description: string
): PlatformError.PlatformError =>
  new PlatformError.SystemError({ reason, module: "FileSystem", method, pathOrDescriptor: path, description })

export const notFound = (method: string, path: string) =>
  systemError("NotFound", method, path, "No such file or directory")

export const unsupported = (method: string, path: string) =>
  new PlatformError.BadArgument({
    module: "FileSystem",
    method,
    description: `${method} is not supported during speculation (${path})`
  })

/** What a path is in the overlay's view. */
export type Kind = "file" | "directory" | "missing"

/** The path resolution of one overlay. */
export interface Paths {
  /** Absolute against the working directory, `..` and `.` removed. */
  readonly lexical: (p: string) => string
  readonly isScratch: (p: string) => boolean
  /** Resolve component by component in the overlay's view, following the base's symlinks. */
  readonly walk: (abs: string, followLast: boolean) => Effect.Effect<string, PlatformError.PlatformError>
  readonly resolveRead: (p: string) => Effect.Effect<Table.View, PlatformError.PlatformError>
  readonly resolveNoFollow: (p: string) => Effect.Effect<Table.View, PlatformError.PlatformError>
  /** What a view is, links followed. */
  readonly kindOf: (view: Table.View) => Effect.Effect<Kind>
  readonly kindAt: (p: string) => Effect.Effect<Kind>
  /** The target of the link at a real path (not followed), if it is one: an overlay link or the base's. */
  readonly linkAt: (p: string) => Effect.Effect<string | undefined>
  /** The real path a write to `p` lands on, refused outside cwd. */
  readonly writeTarget: (
    p: string,
    method: string,
    followLast?: boolean
  ) => Effect.Effect<string, PlatformError.PlatformError>
  /** What the base holds at a real path now. */
  readonly baseState: (p: string) => Effect.Effect<Table.BaseState>
}

export const make = (site: Site): Paths => {
  const { base, cwd, directory, path, scratch, table } = site

  const isScratch = (p: string) => p === scratch || p.startsWith(scratch + "/")

  const walk = (abs: string, followLast: boolean): Effect.Effect<string, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      let pending = abs.split("/").filter((part) => part.length > 0)
      let current = "/"
      let hops = 0
      // Fast path: a parent the overlay never touched is resolved by the base in one call.
      const parent = path.dirname(abs)
      if (parent !== abs && !table.lexicallyAffected(parent)) {
        const real = yield* Effect.either(base.realPath(parent))
        if (Either.isRight(real) && table.lookup(real.right)._tag === "Base") {
          current = real.right
          pending = [path.basename(abs)]
        }
      }
      while (pending.length > 0) {
        const part = pending[0]!
        pending = pending.slice(1)
        if (part === ".") continue
        if (part === "..") {
          current = path.dirname(current)
          continue
        }
        const next = path.join(current, part)
        const view = table.lookup(next)
        if (view._tag === "Missing") return path.join(next, ...pending)
        const follows = pending.length > 0 || followLast
        if ((view._tag !== "Base" && view._tag !== "OverlayLink") || !follows) {
          current = next
          continue
        }
        let linkTarget: string
        if (view._tag === "OverlayLink") {
          linkTarget = view.target
        } else {
          const link = yield* Effect.either(base.readLink(next))
          if (Either.isLeft(link)) {
            if (link.left._tag === "SystemError" && link.left.reason === "NotFound") return path.join(next, ...pending)
            current = next
            continue
          }
          linkTarget = link.right
        }
        if (++hops > MAX_SYMLINK_HOPS) {
          return yield* systemError("Unknown", "realPath", abs, "Too many levels of symbolic links")
        }
        const target = path.resolve(current, linkTarget)
        pending = [...target.split("/").filter((x) => x.length > 0), ...pending]
        current = "/"
      }
      return current
    })

  const lexical = (p: string) => path.resolve(cwd, p)

  const resolveRead = (p: string): Effect.Effect<Table.View, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const abs = lexical(p)
      if (table.size === 0 || isScratch(abs)) return { _tag: "Base", path: abs }
      if (!table.lexicallyAffected(abs)) {
        const real = yield* Effect.either(base.realPath(abs))
        if (Either.isRight(real)) return table.lookup(real.right)
      }
      return table.lookup(yield* walk(abs, true))
    })

  const resolveNoFollow = (p: string): Effect.Effect<Table.View, PlatformError.PlatformError> =>
    Effect.map(walk(lexical(p), false), (real) => table.lookup(real))

  const kindOf = (view: Table.View): Effect.Effect<Kind> => {
    switch (view._tag) {
      case "Missing":
        return Effect.succeed("missing")
      case "OverlayFile":
        return Effect.succeed("file")
      case "OverlayDirectory":
        return Effect.succeed("directory")
      case "OverlayLink":
        return walk(view.path, true).pipe(
          Effect.flatMap((target) => kindAt(target)),
          Effect.orElseSucceed((): Kind => "missing")
        )
      case "Base":
        // A link of the base is followed through the overlay's view, not the disk's: its target may have been
        // renamed or removed in the overlay (a dangling link here though the disk still has the file).
        return base.readLink(view.path).pipe(
          Effect.matchEffect({
            onFailure: () =>
              base.stat(view.path).pipe(
                Effect.map((info): Kind => (info.type === "Directory" ? "directory" : "file")),
                Effect.orElseSucceed((): Kind => "missing")
              ),
            onSuccess: () =>
              walk(view.path, true).pipe(
                Effect.flatMap((target) => (target === view.path ? Effect.succeed<Kind>("missing") : kindAt(target))),
                Effect.orElseSucceed((): Kind => "missing")
              )
          })
        )
    }
  }
  const kindAt = (p: string): Effect.Effect<Kind> => Effect.flatMap(Effect.sync(() => table.lookup(p)), kindOf)

  const linkAt = (p: string): Effect.Effect<string | undefined> =>
    Effect.suspend(() => {
      const view = table.lookup(p)
      if (view._tag === "OverlayLink") return Effect.succeed(view.target)
      if (view._tag !== "Base") return Effect.succeed(undefined)
      return base.readLink(p).pipe(Effect.orElseSucceed(() => undefined))
    })

  const writeTarget = (p: string, method: string, followLast = true) =>
    Effect.gen(function*() {
      const target = yield* walk(lexical(p), followLast)
      if (!table.isInside(target) || target === cwd || isScratch(target) || target.startsWith(directory + "/")) {
        return yield* systemError(
          "PermissionDenied",
          method,
          p,
          `speculation refuses to write outside the working directory ${cwd} (the path resolves to ${target})`
        )
      }
      return target
    })

  const baseState = (p: string): Effect.Effect<Table.BaseState> =>
    base.readLink(p).pipe(
      Effect.map((target) => Table.BaseState.Link({ target })),
      Effect.catchAll(() =>
        base.stat(p).pipe(
          Effect.flatMap((info) =>
            info.type === "Directory"
              ? Effect.succeed(Table.directory)
              : Effect.map(
                base.readFile(p),
                (data) => Table.BaseState.File({ hash: sha256(data), mode: info.mode & 0o7777 })
              )
          ),
          Effect.orElseSucceed(() => Table.missing)
        )
      )
    )

  return { lexical, isScratch, walk, resolveRead, resolveNoFollow, kindOf, kindAt, linkAt, writeTarget, baseState }
}
