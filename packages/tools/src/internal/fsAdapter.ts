/**
 * The directory-walking part of `node:fs` that `tinyglobby` (through `fdir`)
 * uses — `readdir` with file types, `stat`, `realpath` — implemented over the
 * `@effect/platform` `FileSystem` service, so that Glob sees whatever
 * filesystem the program provides (a speculation overlay included).
 *
 * The `FileSystem` service has no `lstat`: entries are `stat`ed (which
 * follows links), and a directory is told apart from a link to one by
 * `readLink` succeeding. A link to a file counts as a file (its path, not its
 * target's, is reported). Every entry's mtime is kept, so Glob can sort its
 * results without statting them again.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { GlobOptions } from "tinyglobby"

/** What `fdir` reads of a `Dirent`. */
interface DirentLike {
  readonly name: string
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

/** What `fdir` reads of a `Stats`. */
interface StatsLike {
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

type Callback<A> = (error: NodeJS.ErrnoException | null, value: A) => void

const ENTRY_CONCURRENCY = 16

/** @internal */
export interface Adapter {
  readonly fs: NonNullable<GlobOptions["fs"]>
  /** mtimes (ms) of every entry seen, by absolute path. */
  readonly mtimes: Map<string, number>
  /** Interrupt the calls still running (the glob was interrupted or gave up); nothing outlives the search. */
  readonly close: Effect.Effect<void>
}

const toErrno = (error: unknown): NodeJS.ErrnoException => {
  const wrapped: NodeJS.ErrnoException = new Error(error instanceof Error ? error.message : String(error))
  wrapped.code = "EIO"
  return wrapped
}

const join = (directory: string, name: string) => (directory.endsWith("/") ? directory + name : `${directory}/${name}`)

const statsOf = (type: FileSystem.File.Type, link: boolean): StatsLike => ({
  isFile: () => !link && type === "File",
  isDirectory: () => !link && type === "Directory",
  isSymbolicLink: () => link
})

/**
 * An `fs` for `tinyglobby`'s asynchronous `glob`, running each call on
 * `runtime` (which must hold the `FileSystem`).
 *
 * @internal
 */
export const make = (runtime: Runtime.Runtime<FileSystem.FileSystem>): Adapter => {
  const mtimes = new Map<string, number>()
  const running = new Set<() => void>()
  let closed = false
  const run = <A>(effect: Effect.Effect<A, unknown, FileSystem.FileSystem>, callback: Callback<A | undefined>) => {
    if (closed) return callback(toErrno("the search was stopped"), undefined)
    let done = false
    let cancel: (() => void) | undefined
    const interrupt = Runtime.runCallback(runtime)(effect, {
      onExit: (exit) => {
        done = true
        if (cancel !== undefined) running.delete(cancel)
        if (closed) return
        if (Exit.isSuccess(exit)) callback(null, exit.value)
        else callback(toErrno(Option.getOrUndefined(Exit.causeOption(exit))), undefined)
      }
    })
    // The effect may have finished synchronously; only a running one needs stopping.
    if (!done) {
      cancel = () => interrupt()
      running.add(cancel)
    }
  }

  const entry = (fs: FileSystem.FileSystem, directory: string, name: string) =>
    Effect.gen(function*() {
      const path = join(directory, name)
      const info = yield* Effect.option(fs.stat(path))
      if (Option.isSome(info) && Option.isSome(info.value.mtime)) mtimes.set(path, info.value.mtime.value.getTime())
      const type: FileSystem.File.Type = Option.isSome(info) ? info.value.type : "Unknown"
      // Only a directory needs telling apart from a link to one (fdir resolves those and detects cycles);
      // a failed readLink builds an error, too costly to pay for every file.
      const link = type === "Directory" || Option.isNone(info) ? yield* Effect.isSuccess(fs.readLink(path)) : false
      const dirent: DirentLike = { name, ...statsOf(type, link) }
      return dirent
    })

  const readdir = (path: string, _options: unknown, callback: Callback<Array<DirentLike> | undefined>) =>
    run(
      Effect.flatMap(FileSystem.FileSystem, (fs) =>
        Effect.flatMap(fs.readDirectory(path), (names) =>
          Effect.forEach(names, (name) =>
            entry(fs, path, name), { concurrency: ENTRY_CONCURRENCY }))),
      callback
    )

  const stat = (path: string, callback: Callback<StatsLike | undefined>) =>
    run(
      Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.map(fs.stat(path), (info) => statsOf(info.type, false))),
      callback
    )

  const realpath = (path: string, callback: Callback<string | undefined>) =>
    run(Effect.flatMap(FileSystem.FileSystem, (fs) => fs.realPath(path)), callback)

  // Only the asynchronous functions are used by `glob` (not `globSync`); their Node signatures are overloaded,
  // which a structural implementation cannot spell, hence the cast.
  const adapter = { readdir, stat, realpath } as unknown as NonNullable<GlobOptions["fs"]>
  const close = Effect.sync(() => {
    closed = true
    for (const cancel of running) cancel()
    running.clear()
  })
  return { fs: adapter, mtimes, close }
}
