/**
 * The copy-on-write overlay behind `OverlayFileSystem`: an in-memory table of
 * what the overlay changed (files whose content lives in the overlay
 * directory, whiteouts, new directories) over a base `FileSystem`.
 *
 * Every path is first resolved to its real-tree path (`..`, relative paths,
 * symlinks in the base, symlinked parents), so the table is keyed by real
 * paths and `realPath` answers in the real tree. Writes must land inside the
 * real working directory.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { createHash, randomBytes } from "node:crypto"

/** A path the overlay changed. New directories are always opaque: the base's children under them are hidden. */
export type Entry =
  | { readonly _tag: "File"; readonly content: string }
  | { readonly _tag: "Directory" }
  | { readonly _tag: "Whiteout" }

/** What the base held at a path when the overlay first touched it: a hash, a directory, or nothing. */
export type BaseState = string | typeof DIRECTORY | null

/** The base state of a directory. */
export const DIRECTORY = "<directory>" as const

/** Where a path points in the overlay's view. */
export type View =
  | { readonly _tag: "Missing"; readonly path: string; readonly notDirectory?: boolean }
  | { readonly _tag: "OverlayFile"; readonly path: string; readonly content: string }
  | { readonly _tag: "OverlayDirectory"; readonly path: string }
  | { readonly _tag: "Base"; readonly path: string }

/** One net change against the base. */
export interface Change {
  /** Relative to the real working directory. */
  readonly path: string
  readonly absolutePath: string
  readonly kind: "created" | "modified" | "deleted"
  /** The base file's hash when the overlay copied it (`undefined`: there was none). */
  readonly baseHash: string | undefined
  /** The overlay's version, for created and modified files. */
  readonly content: string | undefined
}

/** A path accept did not overwrite. */
export interface Conflict {
  readonly path: string
  readonly reason: "changed" | "outside" | "failed"
  readonly message: string
  /** Where the speculative version was kept, relative to cwd. */
  readonly kept: string | undefined
}

export interface ApplyResult {
  readonly applied: ReadonlyArray<string>
  readonly conflicts: ReadonlyArray<Conflict>
}

const MAX_SYMLINK_HOPS = 40

/** Files judged and written at once by `apply`: distinct paths, so only the syscall latency is shared. */
const APPLY_CONCURRENCY = 16

export const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex")

const systemError = (
  reason: PlatformError.SystemErrorReason,
  method: string,
  path: string,
  description: string
): PlatformError.PlatformError =>
  new PlatformError.SystemError({ reason, module: "FileSystem", method, pathOrDescriptor: path, description })

const notFound = (method: string, path: string) => systemError("NotFound", method, path, "No such file or directory")

const unsupported = (method: string, path: string) =>
  new PlatformError.BadArgument({
    module: "FileSystem",
    method,
    description: `${method} is not supported during speculation (${path})`
  })

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
    const filesDirectory = path.join(directory, "files")
    const scratch = path.join(directory, "tmp")
    yield* base.makeDirectory(filesDirectory, { recursive: true })
    yield* base.makeDirectory(scratch, { recursive: true })
    // The overlay's own directory stands in for new directories when they are statted.
    const directoryStandIn = filesDirectory

    const entries = new Map<string, Entry>()
    const children = new Map<string, Set<string>>()
    const touched = new Map<string, BaseState>()
    const modes = new Map<string, number>()
    let nextContent = 0
    const lock = yield* Effect.makeSemaphore(1)
    const serial = <A, E, R>(effect: Effect.Effect<A, E, R>) => lock.withPermits(1)(effect)

    const isInside = (p: string) => p === cwd || p.startsWith(cwd.endsWith("/") ? cwd : cwd + "/")
    const isScratch = (p: string) => p === scratch || p.startsWith(scratch + "/")

    const setEntry = (p: string, entry: Entry) => {
      entries.set(p, entry)
      const parent = path.dirname(p)
      let names = children.get(parent)
      if (names === undefined) children.set(parent, names = new Set())
      names.add(path.basename(p))
    }
    /** Forget everything under `p` and hide it. */
    const hideSubtree = (p: string) => {
      const prefix = p + "/"
      for (const key of [...entries.keys()]) {
        if (key.startsWith(prefix)) entries.delete(key)
      }
      for (const key of [...children.keys()]) {
        if (key === p || key.startsWith(prefix)) children.delete(key)
      }
      setEntry(p, { _tag: "Whiteout" })
    }

    /** The overlay's say about a real path: an entry, hidden by an ancestor, or nothing (the base decides). */
    const lookup = (p: string): View => {
      const own = entries.get(p)
      if (own !== undefined) {
        switch (own._tag) {
          case "File":
            return { _tag: "OverlayFile", path: p, content: own.content }
          case "Directory":
            return { _tag: "OverlayDirectory", path: p }
          case "Whiteout":
            return { _tag: "Missing", path: p }
        }
      }
      if (!isInside(p) || p === cwd) return { _tag: "Base", path: p }
      let ancestor = path.dirname(p)
      while (true) {
        const entry = entries.get(ancestor)
        // Any entry above hides the base below: a whiteout, a file, or a new (opaque) directory.
        if (entry !== undefined) return { _tag: "Missing", path: p, notDirectory: entry._tag === "File" }
        if (ancestor === cwd || ancestor === "/") return { _tag: "Base", path: p }
        ancestor = path.dirname(ancestor)
      }
    }

    /** Whether some prefix of a lexical path has an entry (then the base cannot resolve it alone). */
    const lexicallyAffected = (abs: string): boolean => {
      let current = abs
      while (true) {
        if (entries.has(current)) return true
        const parent = path.dirname(current)
        if (parent === current) return false
        current = parent
      }
    }

    /** Resolve a path component by component in the overlay's view, following the base's symlinks. */
    const walk = (abs: string, followLast: boolean): Effect.Effect<string, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        let pending = abs.split("/").filter((part) => part.length > 0)
        let current = "/"
        let hops = 0
        // Fast path: a parent the overlay never touched is resolved by the base in one call.
        const parent = path.dirname(abs)
        if (parent !== abs && !lexicallyAffected(parent)) {
          const real = yield* Effect.either(base.realPath(parent))
          if (Either.isRight(real) && lookup(real.right)._tag === "Base") {
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
          const view = lookup(next)
          if (view._tag === "Missing") return path.join(next, ...pending)
          if (view._tag !== "Base" || (pending.length === 0 && !followLast)) {
            current = next
            continue
          }
          const link = yield* Effect.either(base.readLink(next))
          if (Either.isLeft(link)) {
            if (link.left._tag === "SystemError" && link.left.reason === "NotFound") return path.join(next, ...pending)
            current = next
            continue
          }
          if (++hops > MAX_SYMLINK_HOPS) {
            return yield* systemError("Unknown", "realPath", abs, "Too many levels of symbolic links")
          }
          const target = path.resolve(current, link.right)
          pending = [...target.split("/").filter((x) => x.length > 0), ...pending]
          current = "/"
        }
        return current
      })

    const lexical = (p: string) => path.resolve(cwd, p)

    const resolveRead = (p: string): Effect.Effect<View, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        const abs = lexical(p)
        if (entries.size === 0 || isScratch(abs)) return { _tag: "Base", path: abs }
        if (!lexicallyAffected(abs)) {
          const real = yield* Effect.either(base.realPath(abs))
          if (Either.isRight(real)) return lookup(real.right)
        }
        return lookup(yield* walk(abs, true))
      })

    const resolveNoFollow = (p: string): Effect.Effect<View, PlatformError.PlatformError> =>
      Effect.map(walk(lexical(p), false), lookup)

    type Kind = "file" | "directory" | "missing"
    const kindOf = (view: View): Effect.Effect<Kind> => {
      switch (view._tag) {
        case "Missing":
          return Effect.succeed("missing")
        case "OverlayFile":
          return Effect.succeed("file")
        case "OverlayDirectory":
          return Effect.succeed("directory")
        case "Base":
          return base.stat(view.path).pipe(
            Effect.map((info): Kind => (info.type === "Directory" ? "directory" : "file")),
            Effect.orElseSucceed((): Kind => "missing")
          )
      }
    }
    const kindAt = (p: string) => Effect.flatMap(Effect.sync(() => lookup(p)), kindOf)

    /** The real path a write to `p` lands on, refused outside cwd. */
    const writeTarget = (p: string, method: string, followLast = true) =>
      Effect.gen(function*() {
        const target = yield* walk(lexical(p), followLast)
        if (!isInside(target) || target === cwd || isScratch(target) || target.startsWith(directory + "/")) {
          return yield* systemError(
            "PermissionDenied",
            method,
            p,
            `speculation refuses to write outside the working directory ${cwd} (the path resolves to ${target})`
          )
        }
        return target
      })

    const baseState = (p: string): Effect.Effect<BaseState> =>
      base.readFile(p).pipe(
        Effect.map(sha256),
        Effect.catchAll(() =>
          base.stat(p).pipe(
            Effect.map((info): BaseState => (info.type === "Directory" ? DIRECTORY : null)),
            Effect.orElseSucceed((): BaseState => null)
          )
        )
      )
    const touch = (p: string) =>
      touched.has(p) ? Effect.void : Effect.map(baseState(p), (state) => void (touched.has(p) || touched.set(p, state)))
    /** An untouched path shows the base as it is: a missing one needs no look. */
    const touchMissing = (p: string) => Effect.sync(() => void (touched.has(p) || touched.set(p, null)))

    const freshContent = () => path.join(filesDirectory, String(nextContent++))

    const requireParentDirectory = (p: string, method: string) =>
      Effect.flatMap(kindAt(path.dirname(p)), (kind) => (kind === "directory" ? Effect.void : Effect.fail(notFound(method, p))))

    /** The overlay file for `p`, holding the current content (copied from the base on first write). */
    const copyUp = (p: string, method: string): Effect.Effect<string, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        const view = lookup(p)
        if (view._tag === "OverlayFile") return view.content
        const kind = yield* kindOf(view)
        if (kind === "directory") return yield* systemError("BadResource", method, p, "Is a directory")
        if (kind === "missing") return yield* notFound(method, p)
        yield* touch(p)
        const content = freshContent()
        yield* base.copyFile(view.path, content)
        setEntry(p, { _tag: "File", content })
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
          : Option.match(Option.fromNullable(entries.get(target)), {
            onNone: freshContent,
            onSome: (entry) => (entry._tag === "File" ? entry.content : freshContent())
          })
        yield* base.writeFile(content, data, append ? { flag: "a" } : {})
        setEntry(target, { _tag: "File", content })
        if (options?.mode !== undefined) modes.set(target, options.mode)
      }))
    }

    const listNames = (view: View, method: string, p: string): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        const kind = yield* kindOf(view)
        if (kind === "missing") return yield* notFound(method, p)
        if (kind === "file") return yield* systemError("BadResource", method, p, "Not a directory")
        const names = new Set<string>(view._tag === "Base" ? yield* base.readDirectory(view.path) : [])
        for (const name of children.get(view.path) ?? []) {
          const entry = entries.get(path.join(view.path, name))
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
            for (const name of yield* listNames(lookup(dir), "readDirectory", dir)) {
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
        if (view._tag === "Base" && entries.size === 0) return yield* base.readDirectory(view.path, options)
        if (options?.recursive !== true) return yield* listNames(view, "readDirectory", p)
        if ((yield* kindOf(view)) !== "directory") return yield* listNames(view, "readDirectory", p)
        return (yield* listTree(view.path)).map((item) => item.rel)
      })

    const readTarget = (view: View, method: string, p: string): Effect.Effect<string, PlatformError.PlatformError> => {
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
          hideSubtree(target)
          return
        }
        if (options?.recursive !== true) {
          return yield* systemError("BadResource", "remove", p, "Is a directory (pass recursive to remove it)")
        }
        for (const item of yield* listTree(target)) {
          if (item.kind === "file") yield* touch(path.join(target, item.rel))
        }
        yield* touch(target)
        hideSubtree(target)
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
            if (!isInside(parent) || parent === cwd) return yield* notFound("makeDirectory", original)
            yield* make(parent, original)
          }
          yield* touch(target)
          setEntry(target, { _tag: "Directory" })
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
          const mode = modes.get(source)
          hideSubtree(source)
          if (destinationKind !== "missing") hideSubtree(destination)
          setEntry(destination, { _tag: "File", content })
          if (mode !== undefined) modes.set(destination, mode)
          return
        }
        if (destination.startsWith(source + "/")) {
          return yield* systemError("BadResource", "rename", to, "Cannot move a directory into itself")
        }
        if (destinationKind === "file") return yield* systemError("BadResource", "rename", to, "Not a directory")
        if (destinationKind === "directory" && (yield* listNames(lookup(destination), "rename", to)).length > 0) {
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
        hideSubtree(source)
        if (destinationKind !== "missing") hideSubtree(destination)
        setEntry(destination, { _tag: "Directory" })
        for (const item of tree) {
          const target = path.join(destination, item.rel)
          const content = contents.get(item.rel)
          setEntry(target, content === undefined ? { _tag: "Directory" } : { _tag: "File", content })
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
            setEntry(target, { _tag: "File", content })
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
        Effect.tap((target) => Effect.sync(() => modes.set(target, mode)))
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
          if (entries.size === 0) return yield* base.readLink(lexical(p))
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

    const finalState = (p: string): Effect.Effect<{ readonly state: BaseState; readonly content: string | undefined }, PlatformError.PlatformError> => {
      const view = lookup(p)
      switch (view._tag) {
        case "Missing":
          return Effect.succeed({ state: null, content: undefined })
        case "OverlayDirectory":
          return Effect.succeed({ state: DIRECTORY, content: undefined })
        case "OverlayFile":
          return Effect.map(base.readFile(view.content), (data) => ({ state: sha256(data), content: view.content }))
        case "Base":
          return Effect.map(baseState(p), (state) => ({ state, content: undefined }))
      }
    }

    const changes = Effect.gen(function*() {
      const out: Array<Change & { readonly before: BaseState }> = []
      const finals = yield* Effect.forEach([...touched], ([p, before]) =>
        Effect.map(finalState(p), (after) => [p, before, after] as const), { concurrency: APPLY_CONCURRENCY })
      for (const [p, before, after] of finals) {
        if (after.state === before) continue
        // Directories made or removed on the way are not written paths; the files in them are.
        const wasFile = before !== null && before !== DIRECTORY
        const isFile = after.state !== null && after.state !== DIRECTORY
        if (!wasFile && !isFile) continue
        out.push({
          path: path.relative(cwd, p),
          absolutePath: p,
          kind: !wasFile ? "created" : !isFile ? "deleted" : "modified",
          baseHash: wasFile ? before : undefined,
          content: isFile ? after.content : undefined,
          before
        })
      }
      out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      return out
    })

    /** Whether a real-tree path still resolves inside cwd now (accept re-checks: the tree may have changed). */
    const resolvesInside = (p: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        let existing = p
        let rest: Array<string> = []
        while (true) {
          const real = yield* Effect.either(base.realPath(existing))
          if (Either.isRight(real)) {
            const resolved = path.join(real.right, ...rest)
            return isInside(resolved) && resolved !== cwd
          }
          const parent = path.dirname(existing)
          if (parent === existing) return false
          rest = [path.basename(existing), ...rest]
          existing = parent
        }
      })

    const madeDirectories = new Set<string>()
    const atomicWrite = (target: string, content: string, mode: number | undefined) =>
      Effect.gen(function*() {
        const dir = path.dirname(target)
        if (!madeDirectories.has(dir)) {
          yield* base.makeDirectory(dir, { recursive: true })
          madeDirectories.add(dir)
        }
        const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.speculation.tmp`)
        yield* base.copyFile(content, temp)
        yield* Effect.gen(function*() {
          if (mode !== undefined) yield* base.chmod(temp, mode)
          yield* base.rename(temp, target)
        }).pipe(Effect.onError(() => Effect.ignore(base.remove(temp))))
      })

    const modeFor = (p: string) =>
      modes.has(p)
        ? Effect.succeed(modes.get(p))
        : base.stat(p).pipe(Effect.map((info) => info.mode & 0o7777), Effect.orElseSucceed(() => undefined))

    /**
     * Where a conflicting speculative version is kept: `<path>.speculated`, or `.speculated.1`, … when
     * that name is taken — by a file of the real tree or by a path the overlay writes — so that
     * keeping one version never overwrites another file.
     */
    const keptName = (target: string): Effect.Effect<string | undefined> =>
      Effect.gen(function*() {
        for (let i = 0; i < 100; i++) {
          const candidate = `${target}.speculated${i === 0 ? "" : `.${i}`}`
          if (touched.has(candidate) || entries.has(candidate)) continue
          if (yield* base.exists(candidate).pipe(Effect.orElseSucceed(() => true))) continue
          const link = yield* Effect.either(base.readLink(candidate))
          if (Either.isRight(link)) continue
          return (yield* resolvesInside(candidate)) ? candidate : undefined
        }
        return undefined
      })

    const apply = serial(Effect.gen(function*() {
      const applied: Array<string> = []
      const conflicts: Array<Conflict> = []
      // Judge every change against the real tree as it is now, before anything is written.
      const pending: Array<Change & { readonly before: BaseState }> = []
      yield* Effect.forEach(yield* changes, (change) =>
        Effect.gen(function*() {
          const target = change.absolutePath
          if (!(yield* resolvesInside(target))) {
            conflicts.push({
              path: change.path,
              reason: "outside",
              message: `${change.path} now resolves outside the working directory; it was not written`,
              kept: undefined
            })
            return
          }
          if ((yield* baseState(target)) === change.before) {
            pending.push(change)
            return
          }
          let kept: string | undefined
          const keep = yield* keptName(target)
          if (change.content !== undefined && keep !== undefined) {
            yield* atomicWrite(keep, change.content, yield* modeFor(target))
            kept = path.relative(cwd, keep)
          }
          conflicts.push({
            path: change.path,
            reason: "changed",
            message: kept === undefined
              ? `${change.path} changed since the speculation read it; it was left as it is`
              : `${change.path} changed since the speculation read it; the speculative version is in ${kept}`,
            kept
          })
        }), { concurrency: APPLY_CONCURRENCY, discard: true })
      const attempt = (change: Change, effect: Effect.Effect<void, PlatformError.PlatformError>) =>
        Effect.map(Effect.either(effect), (result) => {
          if (Either.isRight(result)) applied.push(change.path)
          else conflicts.push({ path: change.path, reason: "failed", message: result.left.message, kept: undefined })
        })
      // Deletions first (deepest first), then directories the overlay removed, then files, then new directories.
      const deletions = pending.filter((change) => change.content === undefined)
      deletions.sort((a, b) => b.absolutePath.length - a.absolutePath.length)
      for (const change of deletions) {
        yield* attempt(change, base.remove(change.absolutePath, { recursive: change.before === DIRECTORY }))
      }
      // A base directory the overlay removed is gone from the view, and so is every base directory
      // under one it removed and made again (new directories are opaque): each such directory left
      // holding only directories is removed, deepest first.
      const removed = new Set<string>()
      for (const [p, state] of touched) {
        if (state !== DIRECTORY) continue
        if (lookup(p)._tag !== "OverlayDirectory") removed.add(p)
        const below = yield* Effect.either(base.readDirectory(p, { recursive: true }))
        if (Either.isLeft(below)) continue
        for (const rel of below.right) {
          const q = path.join(p, rel)
          const view = lookup(q)._tag
          if (view === "OverlayDirectory" || view === "Base" || view === "OverlayFile") continue
          const info = yield* Effect.either(base.stat(q))
          if (Either.isRight(info) && info.right.type === "Directory") removed.add(q)
        }
      }
      for (const p of [...removed].sort((a, b) => b.length - a.length)) {
        if (!(yield* resolvesInside(p))) continue
        const tree = yield* Effect.either(base.readDirectory(p, { recursive: true }))
        if (Either.isLeft(tree)) continue
        const onlyDirectories = yield* Effect.forEach(tree.right, (rel) =>
          base.stat(path.join(p, rel)).pipe(
            Effect.map((info) => info.type === "Directory"),
            Effect.orElseSucceed(() => false)
          ))
        if (onlyDirectories.every((x) => x)) yield* Effect.ignore(base.remove(p, { recursive: true }))
      }
      yield* Effect.forEach(pending, (change) => {
        const content = change.content
        if (content === undefined) return Effect.void
        return attempt(change, Effect.flatMap(modeFor(change.absolutePath), (mode) => atomicWrite(change.absolutePath, content, mode)))
      }, { concurrency: APPLY_CONCURRENCY, discard: true })
      for (const [p, entry] of entries) {
        if (entry._tag !== "Directory" || lookup(p)._tag !== "OverlayDirectory") continue
        if (yield* resolvesInside(p)) yield* Effect.ignore(base.makeDirectory(p, { recursive: true }))
      }
      applied.sort()
      conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      yield* discard
      return { applied, conflicts }
    }))

    const discard = Effect.ignore(base.remove(directory, { recursive: true, force: true })).pipe(
      Effect.zipRight(Effect.sync(() => {
        entries.clear()
        children.clear()
        touched.clear()
        modes.clear()
      }))
    )

    return {
      fileSystem,
      cwd,
      directory,
      hasWrites: () => entries.size > 0,
      isWritable: (p: string) =>
        writeTarget(p, "write").pipe(Effect.as(true), Effect.orElseSucceed(() => false)),
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
