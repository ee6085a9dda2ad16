/**
 * The overlay as `@effect/platform`'s `FileSystem` (SPEC §4.12): reads fall
 * through to the base until a path is written; the first write copies the
 * original into the overlay directory (copy-up); removals become whiteouts;
 * new directories are opaque entries; temp files go to the overlay's scratch
 * directory. Every method resolves its path with `overlayPaths` first.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Copies from "./overlayCopies.js"
import type * as Paths from "./overlayPaths.js"
import { notFound, systemError, unsupported } from "./overlayPaths.js"
import * as Table from "./overlayTable.js"

type Kind = Paths.Kind

/** One entry of a listed tree; a link's target as written. */
export interface TreeItem {
  readonly rel: string
  readonly kind: Kind | "link"
  readonly target: string | undefined
}

/** The adapter. */
export interface Adapter {
  readonly fileSystem: FileSystem.FileSystem
}

/** Runs the writes one at a time, so each sees the table as the one before left it. */
export type Serial = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** How the overlay's view reads: listings and what a path is. */
export interface Views {
  /** What an entry is, its last component not followed: a link is a link. */
  readonly entryKind: (p: string) => Effect.Effect<Kind | "link">
  readonly listNames: (
    view: Table.View,
    method: string,
    p: string
  ) => Effect.Effect<Array<string>, PlatformError.PlatformError>
  readonly listTree: (root: string) => Effect.Effect<Array<TreeItem>, PlatformError.PlatformError>
  readonly readDirectory: FileSystem.FileSystem["readDirectory"]
  /** The file the base reads for a view: the base's own, the overlay's copy, or a stand-in directory. */
  readonly readTarget: (
    view: Table.View,
    method: string,
    p: string
  ) => Effect.Effect<string, PlatformError.PlatformError>
}

const makeViews = (site: Paths.Site, paths: Paths.Paths): Views => {
  const { base, filesDirectory, path, table } = site
  const { kindAt, kindOf, linkAt, resolveRead } = paths
  // The overlay's own directory stands in for new directories when they are statted.
  const directoryStandIn = filesDirectory

  const listNames = (
    view: Table.View,
    method: string,
    p: string
  ): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const kind = yield* kindOf(view)
      if (kind === "missing") return yield* notFound(method, p)
      if (kind === "file") return yield* systemError("BadResource", method, p, "Not a directory")
      const names = new Set<string>(view._tag === "Base" ? yield* base.readDirectory(view.path) : [])
      for (const name of table.children.get(view.path) ?? []) {
        const entry = table.entries.get(path.join(view.path, name))
        if (entry === undefined || entry._tag === "Whiteout") names.delete(name)
        else names.add(name)
      }
      return [...names]
    })

  /** What an entry is, its last component not followed: a link is a link. */
  const entryKind = (p: string): Effect.Effect<Kind | "link"> =>
    Effect.flatMap(linkAt(p), (target) => (target !== undefined ? Effect.succeed("link" as const) : kindAt(p)))

  /** Every path under a directory (relative), with its kind, in the overlay's view; links are not descended. */
  const listTree = (root: string): Effect.Effect<Array<TreeItem>, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const out: Array<TreeItem> = []
      const visit = (dir: string, rel: string): Effect.Effect<void, PlatformError.PlatformError> =>
        Effect.gen(function*() {
          for (const name of yield* listNames(table.lookup(dir), "readDirectory", dir)) {
            const child = path.join(dir, name)
            const childRel = rel === "" ? name : `${rel}/${name}`
            const target = yield* linkAt(child)
            if (target !== undefined) {
              out.push({ rel: childRel, kind: "link", target })
              continue
            }
            const kind = yield* kindAt(child)
            out.push({ rel: childRel, kind, target: undefined })
            if (kind === "directory") yield* visit(child, childRel)
          }
        })
      yield* visit(root, "")
      return out
    })

  const readDirectory: FileSystem.FileSystem["readDirectory"] = (p, options) =>
    Effect.gen(function*() {
      const view = yield* resolveRead(p)
      if (view._tag === "Base" && table.size === 0) return yield* base.readDirectory(view.path, options)
      if (options?.recursive !== true) return yield* listNames(view, "readDirectory", p)
      if ((yield* kindOf(view)) !== "directory") return yield* listNames(view, "readDirectory", p)
      return (yield* listTree(view.path)).map((item) => item.rel)
    })

  const readTarget = (
    view: Table.View,
    method: string,
    p: string
  ): Effect.Effect<string, PlatformError.PlatformError> => {
    switch (view._tag) {
      case "Missing":
        return Effect.fail(
          view.notDirectory === true ? systemError("BadResource", method, p, "Not a directory") : notFound(method, p)
        )
      case "OverlayFile":
        return Effect.succeed(view.content)
      case "OverlayDirectory":
        return Effect.succeed(directoryStandIn)
      case "OverlayLink":
        // Reads follow links (`walk`): a link left here was not followed, so it leads nowhere.
        return Effect.fail(notFound(method, p))
      case "Base":
        return Effect.succeed(view.path)
    }
  }

  return { entryKind, listNames, listTree, readDirectory, readTarget }
}

/** How the overlay's view is written: copy-up, and each method that changes a path. */
export interface Writes {
  readonly touch: (p: string) => Effect.Effect<void>
  readonly requireParentDirectory: (p: string, method: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly writeFile: FileSystem.FileSystem["writeFile"]
  readonly remove: FileSystem.FileSystem["remove"]
  readonly makeDirectory: FileSystem.FileSystem["makeDirectory"]
  readonly rename: FileSystem.FileSystem["rename"]
  readonly open: FileSystem.FileSystem["open"]
  /** Change an existing file's overlay copy (copied up first); a directory is refused. */
  readonly fileOnly: (
    method: string,
    p: string,
    use: (content: string) => Effect.Effect<void, PlatformError.PlatformError>
  ) => Effect.Effect<string, PlatformError.PlatformError>
}

const makeWrites = (site: Paths.Site, paths: Paths.Paths, serial: Serial, views: Views): Writes => {
  const { base, cwd, filesDirectory, path, table } = site
  const { baseState, isScratch, kindAt, kindOf, lexical, linkAt, resolveRead, walk, writeTarget } = paths
  const { entryKind, listNames, listTree, readTarget } = views
  let nextContent = 0

  const touch = (p: string) =>
    table.touched.has(p) ? Effect.void : Effect.map(baseState(p), (state) => void (table.recordTouch(p, state)))
  /** An untouched path shows the base as it is: a missing one needs no look. */
  const touchMissing = (p: string) => Effect.sync(() => void (table.recordTouch(p, Table.missing)))

  const freshContent = () => path.join(filesDirectory, String(nextContent++))

  const requireParentDirectory = (p: string, method: string) =>
    Effect.flatMap(
      kindAt(path.dirname(p)),
      (kind) => (kind === "directory" ? Effect.void : Effect.fail(notFound(method, p)))
    )

  /** The overlay file for `p`, holding the current content (copied from the base on first write). */
  const copyUp = (p: string, method: string): Effect.Effect<string, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const view = table.lookup(p)
      if (view._tag === "OverlayFile") return view.content
      const kind = yield* kindOf(view)
      if (kind === "directory") return yield* systemError("BadResource", method, p, "Is a directory")
      if (kind === "missing") return yield* notFound(method, p)
      yield* touch(p)
      const content = freshContent()
      yield* base.copyFile(view.path, content)
      table.setEntry(p, { _tag: "File", content })
      return content
    })

  const writeFile: FileSystem.FileSystem["writeFile"] = (p, data, options) => {
    if (isScratch(lexical(p))) return base.writeFile(lexical(p), data, options)
    return serial(Effect.gen(function*() {
      const target = yield* writeTarget(p, "writeFile")
      const kind = yield* kindAt(target)
      if (kind === "directory") return yield* systemError("BadResource", "writeFile", p, "Is a directory")
      if (kind === "file" && options?.flag?.includes("x") === true) {
        return yield* systemError("AlreadyExists", "writeFile", p, "File exists")
      }
      if (kind === "missing") yield* requireParentDirectory(target, "writeFile")
      yield* (kind === "missing" ? touchMissing(target) : touch(target))
      const append = options?.flag?.startsWith("a") === true
      if (kind === "file" && append) {
        const content = yield* copyUp(target, "writeFile")
        return yield* base.writeFile(content, data, { flag: "a" })
      }
      const entry = table.entries.get(target)
      if (entry?._tag === "File") return yield* base.writeFile(entry.content, data)
      const content = freshContent()
      // A new file gets `mode` (less the umask, as the base applies it); an existing one keeps its own.
      yield* base.writeFile(
        content,
        data,
        kind === "missing" && options?.mode !== undefined ? { mode: options.mode } : {}
      )
      if (kind === "file") yield* base.chmod(content, (yield* base.stat(target)).mode & 0o7777)
      table.setEntry(target, { _tag: "File", content })
    }))
  }

  const remove: FileSystem.FileSystem["remove"] = (p, options) => {
    if (isScratch(lexical(p))) return base.remove(lexical(p), options)
    return serial(Effect.gen(function*() {
      const target = yield* writeTarget(p, "remove", false)
      // A link is removed, not what it points at.
      if ((yield* linkAt(target)) !== undefined) {
        yield* touch(target)
        table.hideSubtree(target)
        return
      }
      const kind = yield* kindAt(target)
      if (kind === "missing") {
        if (options?.force === true) return
        return yield* notFound("remove", p)
      }
      if (kind === "file") {
        yield* touch(target)
        table.hideSubtree(target)
        return
      }
      if (options?.recursive !== true) {
        return yield* systemError("BadResource", "remove", p, "Is a directory (pass recursive to remove it)")
      }
      for (const item of yield* listTree(target)) {
        if (item.kind === "file" || item.kind === "link") yield* touch(path.join(target, item.rel))
      }
      yield* touch(target)
      table.hideSubtree(target)
    }))
  }

  const makeDirectory: FileSystem.FileSystem["makeDirectory"] = (p, options) => {
    if (isScratch(lexical(p))) return base.makeDirectory(lexical(p), options)
    const make = (target: string, original: string): Effect.Effect<void, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        const kind = yield* kindAt(target)
        if (kind === "directory") {
          if (options?.recursive === true) return
          return yield* systemError("AlreadyExists", "makeDirectory", original, "File exists")
        }
        if (kind === "file") return yield* systemError("AlreadyExists", "makeDirectory", original, "File exists")
        const parent = path.dirname(target)
        const parentKind = yield* kindAt(parent)
        if (parentKind === "file") {
          return yield* systemError("BadResource", "makeDirectory", original, "Not a directory")
        }
        if (parentKind === "missing") {
          if (options?.recursive !== true) return yield* notFound("makeDirectory", original)
          if (!table.isInside(parent) || parent === cwd) return yield* notFound("makeDirectory", original)
          yield* make(parent, original)
        }
        yield* touch(target)
        table.setEntry(target, { _tag: "Directory" })
      })
    return serial(Effect.gen(function*() {
      // An existing directory (cwd itself, an ancestor) needs no write: `recursive` succeeds anywhere.
      if (options?.recursive === true && (yield* kindAt(yield* walk(lexical(p), true))) === "directory") return
      if (options?.recursive === true) {
        // `mkdir -p` does not make what a dangling link on the way points at.
        for (let q = path.dirname(lexical(p)); table.isInside(q) && q !== cwd; q = path.dirname(q)) {
          const at = yield* walk(q, false)
          if ((yield* linkAt(at)) !== undefined && (yield* kindAt(yield* walk(q, true))) === "missing") {
            return yield* systemError("AlreadyExists", "makeDirectory", p, `File exists (${q} is a dangling link)`)
          }
        }
      }
      // mkdir does not follow a link in the last place: the name is taken.
      const target = yield* writeTarget(p, "makeDirectory", false)
      if ((yield* linkAt(target)) !== undefined) {
        return yield* systemError("AlreadyExists", "makeDirectory", p, "File exists")
      }
      yield* make(target, p)
    }))
  }

  const rename: FileSystem.FileSystem["rename"] = (from, to) =>
    serial(Effect.gen(function*() {
      const source = yield* writeTarget(from, "rename", false)
      const destination = yield* writeTarget(to, "rename", false)
      const kind = yield* entryKind(source)
      if (kind === "missing") return yield* notFound("rename", from)
      if (source === destination) return
      // A link at the destination is replaced like a file.
      const destinationKind = (yield* entryKind(destination)) === "link" ? "file" : yield* kindAt(destination)
      if (destinationKind === "missing") yield* requireParentDirectory(destination, "rename")
      if (kind === "file" || kind === "link") {
        if (destinationKind === "directory") return yield* systemError("BadResource", "rename", to, "Is a directory")
        // A renamed link stays a link; a file keeps its content and mode.
        const entry: Table.Entry = kind === "link"
          ? { _tag: "Link", target: (yield* linkAt(source))! }
          : { _tag: "File", content: yield* copyUp(source, "rename") }
        yield* touch(source)
        yield* touch(destination)
        table.hideSubtree(source)
        if (destinationKind !== "missing") table.hideSubtree(destination)
        table.setEntry(destination, entry)
        return
      }
      if (destination.startsWith(source + "/")) {
        return yield* systemError("BadResource", "rename", to, "Cannot move a directory into itself")
      }
      if (destinationKind === "file") return yield* systemError("BadResource", "rename", to, "Not a directory")
      if (destinationKind === "directory" && (yield* listNames(table.lookup(destination), "rename", to)).length > 0) {
        return yield* systemError("BadResource", "rename", to, "Directory not empty")
      }
      const tree = yield* listTree(source)
      const moved = new Map<string, Table.Entry>()
      for (const item of tree) {
        if (item.kind === "directory") continue
        const from = path.join(source, item.rel)
        yield* touch(from)
        moved.set(
          item.rel,
          item.kind === "link"
            ? { _tag: "Link", target: item.target! }
            : { _tag: "File", content: yield* copyUp(from, "rename") }
        )
        yield* touch(path.join(destination, item.rel))
      }
      yield* touch(source)
      yield* touch(destination)
      table.hideSubtree(source)
      if (destinationKind !== "missing") table.hideSubtree(destination)
      table.setEntry(destination, { _tag: "Directory" })
      for (const item of tree) {
        table.setEntry(path.join(destination, item.rel), moved.get(item.rel) ?? { _tag: "Directory" })
      }
    }))

  const open: FileSystem.FileSystem["open"] = (p, options) => {
    const flag = options?.flag ?? "r"
    if (isScratch(lexical(p))) return base.open(lexical(p), options)
    if (flag === "r") {
      return Effect.flatMap(
        resolveRead(p),
        (view) => Effect.flatMap(readTarget(view, "open", p), (target) => base.open(target, options))
      )
    }
    return Effect.flatMap(
      serial(Effect.gen(function*() {
        const target = yield* writeTarget(p, "open")
        const kind = yield* kindAt(target)
        if (kind === "directory") return yield* systemError("BadResource", "open", p, "Is a directory")
        if (kind === "missing") {
          if (flag.startsWith("r")) return yield* notFound("open", p)
          yield* requireParentDirectory(target, "open")
          yield* touch(target)
          const content = freshContent()
          yield* base.writeFile(content, new Uint8Array(), options?.mode !== undefined ? { mode: options.mode } : {})
          table.setEntry(target, { _tag: "File", content })
          return content
        }
        if (flag.includes("x")) return yield* systemError("AlreadyExists", "open", p, "File exists")
        return yield* copyUp(target, "open")
      })),
      (content) => base.open(content, options)
    )
  }

  const fileOnly = (
    method: string,
    p: string,
    use: (content: string) => Effect.Effect<void, PlatformError.PlatformError>
  ) =>
    serial(Effect.gen(function*() {
      const target = yield* writeTarget(p, method)
      const kind = yield* kindAt(target)
      if (kind === "directory") return yield* unsupported(method, p)
      yield* use(yield* copyUp(target, method))
      return target
    }))

  return { touch, requireParentDirectory, writeFile, remove, makeDirectory, rename, open, fileOnly }
}

/**
 * The `FileSystem` of one overlay.
 */
export const make = (site: Paths.Site, paths: Paths.Paths, serial: Serial): Adapter => {
  const { base, scratch } = site
  const { lexical, resolveNoFollow, resolveRead } = paths
  const views = makeViews(site, paths)
  const writes = makeWrites(site, paths, serial, views)
  const { copy, copyFile, chmod, symlink } = Copies.make(site, paths, serial, views, writes)
  const { readDirectory, readTarget } = views
  const { makeDirectory, open, remove, rename, writeFile, fileOnly } = writes
  const table = site.table

  const scratchOptions = <O extends { readonly directory?: string | undefined }>(options: O | undefined): O =>
    ({ ...options, directory: scratch }) as O

  const fileSystem = FileSystem.make({
    access: (p, options) =>
      Effect.flatMap(
        resolveRead(p),
        (view) => Effect.flatMap(readTarget(view, "access", p), (target) => base.access(target, options))
      ),
    copy,
    copyFile,
    chmod,
    chown: (p) => Effect.fail(unsupported("chown", p)),
    // A hard link cannot be kept apart from its other names in a copy-on-write view.
    link: (from) => Effect.fail(unsupported("link", from)),
    symlink,
    makeDirectory,
    makeTempDirectory: (options) => base.makeTempDirectory(scratchOptions(options)),
    makeTempDirectoryScoped: (options) => base.makeTempDirectoryScoped(scratchOptions(options)),
    makeTempFile: (options) => base.makeTempFile(scratchOptions(options)),
    makeTempFileScoped: (options) => base.makeTempFileScoped(scratchOptions(options)),
    open,
    readDirectory,
    readFile: (p) =>
      Effect.flatMap(resolveRead(p), (view) => Effect.flatMap(readTarget(view, "readFile", p), base.readFile)),
    readLink: (p) =>
      Effect.gen(function*() {
        if (table.size === 0) return yield* base.readLink(lexical(p))
        const view = yield* resolveNoFollow(p)
        if (view._tag === "Missing") return yield* notFound("readLink", p)
        if (view._tag === "OverlayLink") return view.target
        if (view._tag !== "Base") return yield* systemError("InvalidData", "readLink", p, "Not a symbolic link")
        return yield* base.readLink(view.path)
      }),
    realPath: (p) =>
      Effect.gen(function*() {
        const view = yield* resolveRead(p)
        if (view._tag === "Missing") return yield* readTarget(view, "realPath", p)
        if (view._tag === "Base") return yield* base.realPath(view.path)
        return view.path
      }),
    remove,
    rename,
    stat: (p) => Effect.flatMap(resolveRead(p), (view) => Effect.flatMap(readTarget(view, "stat", p), base.stat)),
    truncate: (p, length) => Effect.asVoid(fileOnly("truncate", p, (content) => base.truncate(content, length))),
    utimes: (p, atime, mtime) => Effect.asVoid(fileOnly("utimes", p, (content) => base.utimes(content, atime, mtime))),
    watch: (p, options) => base.watch(lexical(p), options),
    writeFile
  })

  return { fileSystem }
}
