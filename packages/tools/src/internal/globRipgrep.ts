/**
 * Glob's ripgrep engine: `rg --files` lists the tree (without `.gitignore`,
 * hidden files included, links followed) much faster than a walk through the
 * `FileSystem` service, and `tinyglobby` then matches the listing, walking an
 * in-memory tree made of it, so both engines match with the same code and
 * give the same answer. A plain pattern is also passed to rg as `--glob` to
 * shorten the listing (rg's globs match a superset of what picomatch matches
 * for those patterns; the exact match is still tinyglobby's).
 *
 * It declines (`Unsupported`) what it cannot answer alike: patterns that
 * climb out of the search directory, and trees with a link loop (the walk
 * descends into a loop once, rg not at all).
 *
 * @internal
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { glob, type GlobOptions } from "tinyglobby"

/**
 * Why the ripgrep engine did not answer: Glob then walks the tree instead.
 *
 * @internal
 */
export type RipgrepFailure =
  | { readonly _tag: "NotInstalled" }
  | { readonly _tag: "Unsupported"; readonly reason: string }
  | { readonly _tag: "Failed"; readonly message: string }

/** Patterns rg's `--glob` matches at least as widely as picomatch: no extglobs, classes, escapes or negation. */
const PLAIN = /^[A-Za-z0-9._\-/*?{},]+$/

/**
 * Whether this engine can answer a (relative) pattern exactly.
 *
 * @internal
 */
export const supports = (pattern: string): boolean =>
  pattern !== "" && !pattern.startsWith("/") && !pattern.split("/").includes("..")

/**
 * The rg command line for listing under the working directory.
 *
 * @internal
 */
export const args = (pattern: string): ReadonlyArray<string> => {
  const out = ["--no-config", "--files", "--no-ignore", "--hidden", "--follow", "--null"]
  // A trailing `**` also matches its directory's name as a file in picomatch (`src/**` matches a file `src`), not in rg.
  if (PLAIN.test(pattern) && !pattern.startsWith("!") && !pattern.startsWith("./") && !pattern.endsWith("**")) {
    out.push("--glob", pattern)
  }
  out.push("--", ".")
  return out
}

type Callback<A> = (error: NodeJS.ErrnoException | null, value: A) => void

const notFound = (path: string): NodeJS.ErrnoException => {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: ${path}`)
  error.code = "ENOENT"
  return error
}

/** A read-only `fs` for tinyglobby over a list of files (paths relative to `root`). */
const listingFs = (root: string, files: ReadonlyArray<string>): NonNullable<GlobOptions["fs"]> => {
  const directories = new Map<string, Map<string, boolean>>([[root, new Map()]])
  for (const file of files) {
    const parts = file.split("/")
    let directory = root
    for (const [i, name] of parts.entries()) {
      const isDirectory = i < parts.length - 1
      directories.get(directory)!.set(name, isDirectory)
      if (!isDirectory) break
      const child = `${directory === "/" ? "" : directory}/${name}`
      if (!directories.has(child)) directories.set(child, new Map())
      directory = child
    }
  }
  const key = (path: string) => (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path)
  const kindOf = (path: string): "directory" | "file" | undefined => {
    const p = key(path)
    if (directories.has(p)) return "directory"
    const slash = p.lastIndexOf("/")
    const parent = directories.get(slash <= 0 ? "/" : p.slice(0, slash))
    return parent?.get(p.slice(slash + 1)) === false ? "file" : undefined
  }
  const stats = (kind: "directory" | "file") => ({
    isFile: () => kind === "file",
    isDirectory: () => kind === "directory",
    isSymbolicLink: () => false
  })
  const readdir = (path: string, _options: unknown, callback: Callback<unknown>) => {
    const entries = directories.get(key(path))
    if (entries === undefined) return queueMicrotask(() => callback(notFound(path), undefined))
    const dirents = [...entries].map(([name, isDirectory]) => ({ name, ...stats(isDirectory ? "directory" : "file") }))
    queueMicrotask(() => callback(null, dirents))
  }
  const stat = (path: string, callback: Callback<unknown>) => {
    const kind = kindOf(path)
    queueMicrotask(() => (kind === undefined ? callback(notFound(path), undefined) : callback(null, stats(kind))))
  }
  const realpath = (path: string, callback: Callback<string>) => queueMicrotask(() => callback(null, path))
  // Only the asynchronous functions are used by `glob`; their Node signatures are overloaded, hence the cast.
  return { readdir, stat, realpath } as unknown as NonNullable<GlobOptions["fs"]>
}

const isNotInstalled = (error: PlatformError.PlatformError) =>
  error._tag === "SystemError" && error.module === "Command" && error.method === "spawn" && error.reason === "NotFound"

/**
 * The absolute paths under `cwd` matching the relative `pattern`, as the walk
 * would find them (in no particular order). Interrupting the fiber kills rg.
 *
 * @internal
 */
export const search = (
  pattern: string,
  cwd: string
): Effect.Effect<ReadonlyArray<string>, RipgrepFailure, CommandExecutor.CommandExecutor> =>
  Effect.scoped(
    Effect.gen(function*() {
      if (!supports(pattern)) return yield* Effect.fail<RipgrepFailure>({ _tag: "Unsupported", reason: "pattern" })
      const process = yield* Command.start(Command.make("rg", ...args(pattern)).pipe(Command.workingDirectory(cwd)))
      const [listing, errors, exitCode] = yield* Effect.all([
        process.stdout.pipe(Stream.decodeText(), Stream.mkString),
        process.stderr.pipe(Stream.decodeText(), Stream.mkString),
        process.exitCode
      ], { concurrency: "unbounded" })
      if (errors.includes("File system loop found")) {
        return yield* Effect.fail<RipgrepFailure>({ _tag: "Unsupported", reason: "link loop" })
      }
      // 1 is "nothing listed"; 2 with a listing is unreadable entries, which the walk skips too.
      if (exitCode === 2 && listing === "" && !/\(os error \d+\)/.test(errors)) {
        return yield* Effect.fail<RipgrepFailure>({ _tag: "Failed", message: errors.trim() })
      }
      const files = listing.split("\0").filter((file) => file !== "").map((file) => file.replace(/^\.\//, ""))
      return yield* Effect.tryPromise({
        try: (signal) =>
          glob(pattern, {
            cwd,
            absolute: true,
            onlyFiles: true,
            expandDirectories: false,
            fs: listingFs(cwd, files),
            signal
          }),
        catch: (cause): RipgrepFailure => ({ _tag: "Failed", message: cause instanceof Error ? cause.message : String(cause) })
      })
    })
  ).pipe(
    Effect.catchTag("SystemError", (error): Effect.Effect<never, RipgrepFailure> =>
      Effect.fail(isNotInstalled(error) ? { _tag: "NotInstalled" } : { _tag: "Failed", message: error.message })),
    Effect.catchTag("BadArgument", (error) => Effect.fail<RipgrepFailure>({ _tag: "Failed", message: error.message }))
  )
