/**
 * Real paths for permission checks and footprints: what a path denotes once
 * symbolic links are followed, resolved component by component as the
 * kernel does (path_resolution(7)) — `LINK/../x` follows LINK first and then
 * climbs from its target, never `..` removed lexically first. So a link
 * inside the working directory to a denied file, a denied directory or a
 * place outside is judged by its target, whatever `..` follows it.
 *
 * A path that does not exist yet (a file about to be written) is judged by
 * its deepest existing ancestor's real path plus the rest; a dangling link by
 * its target, resolved the same way.
 *
 * Lookups go through a `Lookup`: the kernel's own `realpath(3)` on the disk
 * (one system call, what a decision with many rules can afford), or a
 * `FileSystem` (an overlay's view). Either is memoised for the life of one
 * decision or call (`cached`), since the same directories are resolved for
 * every path a call names.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as NodeFs from "node:fs"
import type * as PermissionRules from "../PermissionRules.js"

/** Links followed by hand (dangling ones) before giving up, as the kernel's `ELOOP` limit. */
const MAX_LINKS = 40

/** How paths are looked up: only ever asked about absolute paths without `.` or `..` components. */
export interface Lookup {
  /** The real path of an existing path; fails when it does not exist (or is a dangling link). */
  readonly realPath: (p: string) => Effect.Effect<string, unknown>
  /** A symbolic link's target as written; fails when `p` is not a link. */
  readonly readLink: (p: string) => Effect.Effect<string, unknown>
  /** The same answers at once (`undefined`: none), when the lookup can give them so (the kernel's). */
  readonly sync?: SyncLookup | undefined
}

/** A lookup that answers synchronously. */
export interface SyncLookup {
  readonly realPath: (p: string) => string | undefined
  readonly readLink: (p: string) => string | undefined
  /** What is at `p`, its last component not followed (`lstat`). */
  readonly entry: (p: string) => "missing" | "link" | "present"
}

/** Through a `FileSystem` (an overlay's view, or any other). */
export const fromFileSystem = (fs: FileSystem.FileSystem): Lookup => ({
  realPath: (p) => fs.realPath(p),
  readLink: (p) => fs.readLink(p)
})

/** Why a lookup found nothing: the path is not there (or not a link); no stack, it is the common case. */
const absent = Effect.fail("absent")

const fromSync = (sync: SyncLookup): Lookup => ({
  realPath: (p) =>
    Effect.suspend(() => {
      const real = sync.realPath(p)
      return real === undefined ? absent : Effect.succeed(real)
    }),
  readLink: (p) =>
    Effect.suspend(() => {
      const target = sync.readLink(p)
      return target === undefined ? absent : Effect.succeed(target)
    }),
  sync
})

/**
 * The kernel's: `realpath(3)` and `readlink(2)` on the disk, synchronously.
 * The walk asks `entry` (`lstat`, no exception for what is missing) before
 * `realPath`, so a missing path costs an `lstat` a level and no exception.
 */
export const kernel: Lookup = fromSync({
  realPath: (p) => {
    try {
      return NodeFs.realpathSync.native(p)
    } catch {
      return undefined
    }
  },
  readLink: (p) => {
    const info = NodeFs.lstatSync(p, { throwIfNoEntry: false })
    if (info === undefined || !info.isSymbolicLink()) return undefined
    try {
      return NodeFs.readlinkSync(p)
    } catch {
      return undefined
    }
  },
  entry: (p) => {
    try {
      const info = NodeFs.lstatSync(p, { throwIfNoEntry: false })
      return info === undefined ? "missing" : info.isSymbolicLink() ? "link" : "present"
    } catch {
      // ENOTDIR (a file in the way) and the like: nothing is there.
      return "missing"
    }
  }
})

/** A lookup that answers each path once (the life of one decision or call). */
export const cached = (lookup: Lookup): Lookup => {
  const sync = lookup.sync
  if (sync !== undefined) {
    const real = new Map<string, string | undefined>()
    const links = new Map<string, string | undefined>()
    const memo = (table: Map<string, string | undefined>, f: (p: string) => string | undefined) => (p: string) => {
      if (table.has(p)) return table.get(p)
      const answer = f(p)
      table.set(p, answer)
      return answer
    }
    const entries = new Map<string, "missing" | "link" | "present">()
    const entry = (p: string) => {
      const known = entries.get(p)
      if (known !== undefined) return known
      const answer = sync.entry(p)
      entries.set(p, answer)
      return answer
    }
    return fromSync({ realPath: memo(real, sync.realPath), readLink: memo(links, sync.readLink), entry })
  }
  const real = new Map<string, Exit.Exit<string, unknown>>()
  const links = new Map<string, Exit.Exit<string, unknown>>()
  const memo =
    (table: Map<string, Exit.Exit<string, unknown>>, f: (p: string) => Effect.Effect<string, unknown>) =>
    (p: string): Effect.Effect<string, unknown> => {
      const known = table.get(p)
      if (known !== undefined) return known
      return Effect.flatten(Effect.tap(Effect.exit(f(p)), (exit) => Effect.sync(() => void table.set(p, exit))))
    }
  return { realPath: memo(real, lookup.realPath), readLink: memo(links, lookup.readLink) }
}

/** The components of a path, `.` and empty ones dropped (`..` kept). */
const componentsOf = (p: string): Array<string> => p.split("/").filter((part) => part !== "" && part !== ".")

/**
 * The real path of a `..`-free absolute path; for a missing path, its
 * deepest existing ancestor's real path joined with the rest; a dangling
 * link is followed to its target. A link loop resolves to the path as given
 * (opening it fails).
 */
const resolveDotFree = (lookup: Lookup, path: Path.Path, absolute: string, links: number): Effect.Effect<string> =>
  lookup.realPath(absolute).pipe(
    Effect.catchAll(() =>
      links >= MAX_LINKS
        ? Effect.succeed(absolute)
        : lookup.readLink(absolute).pipe(
          // A dangling link: what writing through it would create (its target, from the link's real directory).
          Effect.flatMap((target) =>
            Effect.flatMap(
              resolveDotFree(lookup, path, path.dirname(absolute), links + 1),
              (directory) => resolveIn(lookup, path, directory, target, links + 1)
            )
          ),
          Effect.catchAll(() => {
            const parent = path.dirname(absolute)
            if (parent === absolute) return Effect.succeed(absolute)
            return Effect.map(resolveDotFree(lookup, path, parent, links), (real) =>
              path.join(real, path.basename(absolute)))
          })
        )
    )
  )

/** Resolve `target` (absolute, or relative to the real directory `from`) as the kernel would. */
const resolveIn = (
  lookup: Lookup,
  path: Path.Path,
  from: string,
  target: string,
  links: number
): Effect.Effect<string> => walk(lookup, path, target.startsWith("/") ? "/" : from, componentsOf(target), links)

/**
 * The kernel's walk: components in order from a real directory; before each
 * `..` the path so far is resolved (its links followed), so `..` climbs from
 * where the links led.
 */
const walk = (
  lookup: Lookup,
  path: Path.Path,
  start: string,
  components: ReadonlyArray<string>,
  links: number
): Effect.Effect<string> =>
  Effect.gen(function*() {
    let current = start
    let resolved = true
    for (let i = 0; i < components.length; i++) {
      const part = components[i]!
      if (part === "..") {
        if (!resolved) current = yield* resolveDotFree(lookup, path, current, links)
        current = path.dirname(current)
        resolved = true
        continue
      }
      current = current === "/" ? `/${part}` : `${current}/${part}`
      resolved = false
    }
    return resolved ? current : yield* resolveDotFree(lookup, path, current, links)
  })

// The same walk, for a lookup that answers at once: no Effect per step (a decision resolves a few paths
// against many rules, and this is its cost).
const resolveDotFreeSync = (sync: SyncLookup, path: Path.Path, absolute: string, links: number): string => {
  // `lstat` a level (no exception for what is missing) up to what is there, then its real path.
  const rest: Array<string> = []
  for (let current = absolute;;) {
    const entry = sync.entry(current)
    const real = entry === "missing" ? undefined : sync.realPath(current)
    if (real !== undefined) return rest.length === 0 ? real : path.join(real, ...rest)
    if (entry === "present") {
      // There, but its real path cannot be had (a permission on the way): as written.
      return absolute
    }
    if (entry === "link") {
      if (links >= MAX_LINKS) return absolute
      const target = sync.readLink(current)
      if (target === undefined) return absolute
      // A dangling link: what writing through it would create.
      const directory = resolveDotFreeSync(sync, path, path.dirname(current), links + 1)
      const followed = walkSync(sync, path, target.startsWith("/") ? "/" : directory, componentsOf(target), links + 1)
      return path.join(followed, ...rest)
    }
    const parent = path.dirname(current)
    if (parent === current) return absolute
    rest.unshift(path.basename(current))
    current = parent
  }
}

const walkSync = (
  sync: SyncLookup,
  path: Path.Path,
  start: string,
  components: ReadonlyArray<string>,
  links: number
): string => {
  let current = start
  let resolved = true
  for (const part of components) {
    if (part === "..") {
      if (!resolved) current = resolveDotFreeSync(sync, path, current, links)
      current = path.dirname(current)
      resolved = true
      continue
    }
    current = current === "/" ? `/${part}` : `${current}/${part}`
    resolved = false
  }
  return resolved ? current : resolveDotFreeSync(sync, path, current, links)
}

/**
 * What an absolute path denotes, resolved as the kernel does (see the
 * module's doc).
 *
 * @internal
 */
export const resolve = (lookup: Lookup, path: Path.Path, absolute: string): Effect.Effect<string> =>
  lookup.sync !== undefined
    ? Effect.succeed(walkSync(lookup.sync, path, "/", componentsOf(absolute), 0))
    : walk(lookup, path, "/", componentsOf(absolute), 0)

/**
 * The path the kernel opens for `absolute`, spelled without `.` or `..`:
 * unchanged (lexically cleaned) when it has no `..`; otherwise every prefix
 * before a `..` is resolved first, so `LINK/../x` names the file next to
 * LINK's target. Links in the last stretch are kept as written.
 *
 * @internal
 */
export const normalize = (lookup: Lookup, path: Path.Path, absolute: string): Effect.Effect<string> => {
  const components = componentsOf(absolute)
  const last = components.lastIndexOf("..")
  if (last === -1) return Effect.succeed(`/${components.join("/")}`)
  if (lookup.sync !== undefined) {
    return Effect.succeed(
      path.join(walkSync(lookup.sync, path, "/", components.slice(0, last + 1), 0), ...components.slice(last + 1))
    )
  }
  return Effect.map(
    walk(lookup, path, "/", components.slice(0, last + 1), 0),
    (prefix) => path.join(prefix, ...components.slice(last + 1))
  )
}

/** The absolute path as written with `..` and `.` removed lexically: the "as written" form rules also see. */
const lexicalOf = (path: Path.Path, absolute: string): string => path.resolve(absolute)

const isWithin = (path: Path.Path, dir: string, candidate: string): string | undefined => {
  if (candidate === dir) return ""
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
  return candidate.startsWith(prefix) ? candidate.slice(prefix.length) : undefined
}

/**
 * Resolve a path and spell its real path through the directories given.
 *
 * @internal
 */
export const resolvePath = (
  lookup: Lookup,
  path: Path.Path,
  absolute: string,
  directories: ReadonlyArray<string>,
  /** Real paths of `directories` already known (kept across decisions by the caller). */
  known?: Map<string, string>
): Effect.Effect<PermissionRules.ResolvedPath> => {
  const spell = (real: string, realDirectories: ReadonlyArray<string>): PermissionRules.ResolvedPath => {
    // The real path first, then each other spelling once, in the directories' order.
    const forms = [real]
    directories.forEach((dir, i) => {
      const realDir = realDirectories[i]!
      if (realDir === dir) return
      const rest = isWithin(path, realDir, real)
      if (rest === undefined) return
      const form = rest === "" ? dir : path.join(dir, rest)
      if (!forms.includes(form)) forms.push(form)
    })
    return { lexical: lexicalOf(path, absolute), real: forms }
  }
  const sync = lookup.sync
  if (sync !== undefined) {
    const resolveOne = (p: string) => walkSync(sync, path, "/", componentsOf(p), 0)
    const resolveDirectory = (dir: string) => {
      const cached = known?.get(dir)
      if (cached !== undefined) return cached
      const real = resolveOne(dir)
      known?.set(dir, real)
      return real
    }
    return Effect.succeed(spell(resolveOne(absolute), directories.map(resolveDirectory)))
  }
  return Effect.gen(function*() {
    const real = yield* resolve(lookup, path, absolute)
    const realDirectories: Array<string> = []
    for (const dir of directories) realDirectories.push(yield* resolve(lookup, path, dir))
    return spell(real, realDirectories)
  })
}

/**
 * Kernel names that mean something else in every process: `/proc/self/cwd` is
 * the directory of the process that opens it, `/proc/<pid>/…` another
 * process's. A path judged here for a command that runs in another process
 * (a Bash line) cannot be resolved here through them. Its standard streams
 * (`/proc/self/fd/0`–`2`, what `/dev/stdin` and `/dev/stderr` lead to) are not
 * places.
 */
const PROCESS_RELATIVE = /^\/proc\/+(?:self|thread-self|[0-9]+)(?:\/|$)/
const STANDARD_STREAM = /^\/proc\/+(?:self|thread-self)\/+fd\/+[0-2]\/*$/

/**
 * Whether a path reaches a process-relative name: written so
 * (`/proc/self/cwd/x`, `/x/../proc/self`), or through a symbolic link on the
 * way whose target is one (`l -> /proc/self/cwd`, `/dev/fd/3`), each link's
 * target followed to the kernel's limit (past it: fail closed).
 *
 * @internal
 */
export const reachesProcess = (lookup: Lookup, path: Path.Path, absolute: string): Effect.Effect<boolean> =>
  lookup.sync !== undefined
    ? Effect.sync(() => reachesProcessSync(lookup.sync!, path, absolute, 0))
    : reachesProcessWith(lookup, path, absolute, 0)

/** Whether the path as written is process-relative: `true`, `false`, or `undefined` (its links decide). */
const reachedDirectly = (path: Path.Path, absolute: string): boolean | undefined => {
  const normal = path.normalize(absolute)
  // A standard stream ends the walk (`/proc/self` is itself a link, to `/proc/<pid>`).
  if (STANDARD_STREAM.test(normal)) return false
  return PROCESS_RELATIVE.test(normal) ? true : undefined
}

/** The path after the link at `components[0..i)`, whose target is `target`. */
const followed = (path: Path.Path, components: ReadonlyArray<string>, i: number, target: string): string => {
  const prefix = components.slice(0, i).join("/")
  const rest = components.slice(i).join("/")
  const base = path.isAbsolute(target) ? target : `${path.dirname(prefix)}/${target}`
  return rest.length > 0 ? `${base}/${rest}` : base
}

const reachesProcessSync = (sync: SyncLookup, path: Path.Path, absolute: string, links: number): boolean => {
  const direct = reachedDirectly(path, absolute)
  if (direct !== undefined) return direct
  if (links >= MAX_LINKS) return true
  const components = absolute.split("/")
  for (let i = 2; i <= components.length; i++) {
    const name = components[i - 1]
    if (name === "" || name === "." || name === "..") continue
    const target = sync.readLink(components.slice(0, i).join("/"))
    if (target === undefined) continue
    return reachesProcessSync(sync, path, followed(path, components, i, target), links + 1)
  }
  return false
}

const reachesProcessWith = (lookup: Lookup, path: Path.Path, absolute: string, links: number): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const direct = reachedDirectly(path, absolute)
    if (direct !== undefined) return direct
    if (links >= MAX_LINKS) return true
    const components = absolute.split("/")
    for (let i = 2; i <= components.length; i++) {
      const name = components[i - 1]
      if (name === "" || name === "." || name === "..") continue
      const target = yield* Effect.option(lookup.readLink(components.slice(0, i).join("/")))
      if (target._tag === "None") continue
      return yield* reachesProcessWith(lookup, path, followed(path, components, i, target.value), links + 1)
    }
    return false
  })

/**
 * A resolver that follows no links (no filesystem at hand): the path is what
 * it denotes.
 *
 * @internal
 */
export const lexicalOnly = (absolute: string, path: Path.Path): PermissionRules.ResolvedPath => {
  const lexical = lexicalOf(path, absolute)
  return { lexical, real: [lexical] }
}
