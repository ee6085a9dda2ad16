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
import * as Option from "effect/Option"
import * as Paths from "./overlayPaths.js"
import { notFound, systemError, unsupported } from "./overlayPaths.js"
import * as Table from "./overlayTable.js"

type Kind = Paths.Kind

/** The adapter and the listings `apply` shares with it. */
export interface Adapter {
  readonly fileSystem: FileSystem.FileSystem
}

/**
 * The `FileSystem` of one overlay. `serial` runs the writes one at a time, so
 * each sees the table as the one before left it.
 */
export const make = (
  site: Paths.Site,
  paths: Paths.Paths,
  serial: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Adapter => {
  const { base, cwd, filesDirectory, path, scratch, table } = site
  const { baseState, isScratch, kindAt, kindOf, lexical, resolveNoFollow, resolveRead, walk, writeTarget } = paths
  let nextContent = 0
  // The overlay's own directory stands in for new directories when they are statted.
  const directoryStandIn = filesDirectory

  const touch = (p: string) =>
    table.touched.has(p) ? Effect.void : Effect.map(baseState(p), (state) => void (table.recordTouch(p, state)))
  /** An untouched path shows the base as it is: a missing one needs no look. */
  const touchMissing = (p: string) => Effect.sync(() => void (table.recordTouch(p, Table.missing)))

  const freshContent = () => path.join(filesDirectory, String(nextContent++))

  const requireParentDirectory = (p: string, method: string) =>
    Effect.flatMap(kindAt(path.dirname(p)), (kind) => (kind === "directory" ? Effect.void : Effect.fail(notFound(method, p))))

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
      const content = kind === "file" && append
        ? yield* copyUp(target, "writeFile")
        : Option.match(Option.fromNullable(table.entries.get(target)), {
          onNone: freshContent,
          onSome: (entry) => (entry._tag === "File" ? entry.content : freshContent())
        })
      yield* base.writeFile(content, data, append ? { flag: "a" } : {})
      table.setEntry(target, { _tag: "File", content })
      if (options?.mode !== undefined) table.modes.set(target, options.mode)
    }))
  }

  const listNames = (view: Table.View, method: string, p: string): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
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

  /** Every path under a directory (relative), with its kind, in the overlay's view. */
  const listTree = (root: string): Effect.Effect<Array<{ readonly rel: string; readonly kind: Kind }>, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const out: Array<{ rel: string; kind: Kind }> = []
      const visit = (dir: string, rel: string): Effect.Effect<void, PlatformError.PlatformError> =>
        Effect.gen(function*() {
          for (const name of yield* listNames(table.lookup(dir), "readDirectory", dir)) {
            const child = path.join(dir, name)
            const childRel = rel === "" ? name : `${rel}/${name}`
            const kind = yield* kindAt(child)
            out.push({ rel: childRel, kind })
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

  const readTarget = (view: Table.View, method: string, p: string): Effect.Effect<string, PlatformError.PlatformError> => {
    switch (view._tag) {
      case "Missing":
        return Effect.fail(
          view.notDirectory === true ? systemError("BadResource", method, p, "Not a directory") : notFound(method, p)
        )
      case "OverlayFile":
        return Effect.succeed(view.content)
      case "OverlayDirectory":
        return Effect.succeed(directoryStandIn)
      case "Base":
        return Effect.succeed(view.path)
    }
  }

  const remove: FileSystem.FileSystem["remove"] = (p, options) => {
    if (isScratch(lexical(p))) return base.remove(lexical(p), options)
    return serial(Effect.gen(function*() {
      const target = yield* writeTarget(p, "remove", false)
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
        if (item.kind === "file") yield* touch(path.join(target, item.rel))
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
        if (parentKind === "file") return yield* systemError("BadResource", "makeDirectory", original, "Not a directory")
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
      yield* make(yield* writeTarget(p, "makeDirectory"), p)
    }))
  }

  const rename: FileSystem.FileSystem["rename"] = (from, to) =>
    serial(Effect.gen(function*() {
      const source = yield* writeTarget(from, "rename", false)
      const destination = yield* writeTarget(to, "rename", false)
      const kind = yield* kindAt(source)
      if (kind === "missing") return yield* notFound("rename", from)
      if (source === destination) return
      const destinationKind = yield* kindAt(destination)
      if (destinationKind === "missing") yield* requireParentDirectory(destination, "rename")
      if (kind === "file") {
        if (destinationKind === "directory") return yield* systemError("BadResource", "rename", to, "Is a directory")
        const content = yield* copyUp(source, "rename")
        yield* touch(destination)
        const mode = table.modes.get(source)
        table.hideSubtree(source)
        if (destinationKind !== "missing") table.hideSubtree(destination)
        table.setEntry(destination, { _tag: "File", content })
        if (mode !== undefined) table.modes.set(destination, mode)
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
      const contents = new Map<string, string>()
      for (const item of tree) {
        if (item.kind !== "file") continue
        contents.set(item.rel, yield* copyUp(path.join(source, item.rel), "rename"))
        yield* touch(path.join(destination, item.rel))
      }
      yield* touch(source)
      yield* touch(destination)
      table.hideSubtree(source)
      if (destinationKind !== "missing") table.hideSubtree(destination)
      table.setEntry(destination, { _tag: "Directory" })
      for (const item of tree) {
        const target = path.join(destination, item.rel)
        const content = contents.get(item.rel)
        table.setEntry(target, content === undefined ? { _tag: "Directory" } : { _tag: "File", content })
      }
    }))

  const open: FileSystem.FileSystem["open"] = (p, options) => {
    const flag = options?.flag ?? "r"
    if (isScratch(lexical(p))) return base.open(lexical(p), options)
    if (flag === "r") {
      return Effect.flatMap(resolveRead(p), (view) =>
        Effect.flatMap(readTarget(view, "open", p), (target) => base.open(target, options)))
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
          yield* base.writeFile(content, new Uint8Array())
          table.setEntry(target, { _tag: "File", content })
          return content
        }
        if (flag.includes("x")) return yield* systemError("AlreadyExists", "open", p, "File exists")
        return yield* copyUp(target, "open")
      })),
      (content) => base.open(content, options)
    )
  }

  const fileOnly = (method: string, p: string, use: (content: string) => Effect.Effect<void, PlatformError.PlatformError>) =>
    serial(Effect.gen(function*() {
      const target = yield* writeTarget(p, method)
      const kind = yield* kindAt(target)
      if (kind === "directory") return yield* unsupported(method, p)
      yield* use(yield* copyUp(target, method))
      return target
    }))

  const copyFile: FileSystem.FileSystem["copyFile"] = (from, to) =>
    Effect.flatMap(Effect.flatMap(resolveRead(from), (view) =>
      Effect.flatMap(readTarget(view, "copyFile", from), base.readFile)), (data) => writeFile(to, data))

  const copy: FileSystem.FileSystem["copy"] = (from, to) =>
    Effect.gen(function*() {
      const view = yield* resolveRead(from)
      const kind = yield* kindOf(view)
      if (kind === "missing") return yield* notFound("copy", from)
      if (kind === "file") return yield* copyFile(from, to)
      yield* makeDirectory(to, { recursive: true })
      for (const item of yield* listTree(view.path)) {
        const target = path.join(lexical(to), item.rel)
        if (item.kind === "directory") yield* makeDirectory(target, { recursive: true })
        else yield* copyFile(path.join(view.path, item.rel), target)
      }
    })

  const scratchOptions = <O extends { readonly directory?: string | undefined }>(options: O | undefined): O =>
    ({ ...options, directory: scratch }) as O

  const fileSystem = FileSystem.make({
    access: (p, options) =>
      Effect.flatMap(resolveRead(p), (view) =>
        Effect.flatMap(readTarget(view, "access", p), (target) => base.access(target, options))),
    copy,
    copyFile,
    chmod: (p, mode) => Effect.asVoid(fileOnly("chmod", p, (content) => base.chmod(content, mode)).pipe(
      Effect.tap((target) => Effect.sync(() => table.modes.set(target, mode)))
    )),
    chown: (p) => Effect.fail(unsupported("chown", p)),
    link: (from) => Effect.fail(unsupported("link", from)),
    symlink: (_target, p) => Effect.fail(unsupported("symlink", p)),
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
