/**
 * The overlay's net changes and `apply` (SPEC §4.12): what differs from the
 * base now, and copying it into the real tree — each file through a temp file
 * and a rename, deletions first — without overwriting a file that changed
 * under the overlay (a conflict keeps the speculative version beside it).
 *
 * @internal
 */
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { randomBytes } from "node:crypto"
import type * as Paths from "./overlayPaths.js"
import { sha256 } from "./overlayPaths.js"
import * as PathRules from "./pathRules.js"
import * as Table from "./overlayTable.js"

/**
 * One net change against the base: a file or a symbolic link created,
 * modified (its bytes, its mode, or what a link points at) or deleted.
 */
export interface Change {
  /** Relative to the real working directory. */
  readonly path: string
  readonly absolutePath: string
  readonly kind: "created" | "modified" | "deleted"
  /** The base file's hash when the overlay copied it (`undefined`: there was none). */
  readonly baseHash: string | undefined
  /** The overlay's version of a created or modified file: the overlay file holding it. */
  readonly content: string | undefined
  /** The overlay's version of a created or modified link: its target, as written. */
  readonly link: string | undefined
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

/** A change with the base state it was judged against and the state it leaves. */
interface Pending extends Change {
  readonly before: Table.BaseState
  readonly after: Table.BaseState
}

/** Files judged and written at once by `apply`: distinct paths, so only the syscall latency is shared. */
const APPLY_CONCURRENCY = 16

export interface Applier {
  readonly changes: Effect.Effect<ReadonlyArray<Change>, PlatformError.PlatformError>
  readonly apply: Effect.Effect<ApplyResult, PlatformError.PlatformError>
  readonly discard: Effect.Effect<void>
}

export const make = (
  site: Paths.Site,
  paths: Paths.Paths,
  serial: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Applier => {
  const { base, cwd, directory, path, table } = site
  const { baseState } = paths

  interface Final {
    readonly state: Table.BaseState
    readonly content: string | undefined
  }

  const finalState = (p: string): Effect.Effect<Final, PlatformError.PlatformError> => {
    const view = table.lookup(p)
    switch (view._tag) {
      case "Missing":
        return Effect.succeed({ state: Table.missing, content: undefined })
      case "OverlayDirectory":
        return Effect.succeed({ state: Table.directory, content: undefined })
      case "OverlayLink":
        return Effect.succeed({ state: Table.BaseState.Link({ target: view.target }), content: undefined })
      case "OverlayFile":
        return Effect.zipWith(base.readFile(view.content), base.stat(view.content), (data, info) => ({
          state: Table.BaseState.File({ hash: sha256(data), mode: info.mode & 0o7777 }),
          content: view.content
        }))
      case "Base":
        return Effect.map(baseState(p), (state) => ({ state, content: undefined }))
    }
  }

  const changes = Effect.gen(function*() {
    const out: Array<Pending> = []
    const finals = yield* Effect.forEach(
      [...table.touched],
      ([p, before]) => Effect.map(finalState(p), (after) => [p, before, after] as const),
      { concurrency: APPLY_CONCURRENCY }
    )
    for (const [p, before, after] of finals) {
      if (Table.sameState(after.state, before)) continue
      // Directories made or removed on the way are not written paths; the files and links in them are.
      const was = Table.isLeaf(before)
      const is = Table.isLeaf(after.state)
      if (!was && !is) continue
      out.push({
        path: path.relative(cwd, p),
        absolutePath: p,
        kind: !was ? "created" : !is ? "deleted" : "modified",
        baseHash: Table.hashOf(before),
        content: after.state._tag === "File" ? after.content : undefined,
        link: after.state._tag === "Link" ? after.state.target : undefined,
        before,
        after: after.state
      })
    }
    out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    return out
  })

  /** Whether a path below cwd is (inside) a `.git`, `.claude`, `.switchyard` or `.mcp.json`. */
  const isProtected = (p: string) => PathRules.hasProtectedSegment(path.relative(cwd, p), path.sep)

  /**
   * Whether a real-tree path still resolves inside cwd now (accept re-checks: the tree may have changed), and
   * to a protected path only where the overlay wrote one: a directory replaced meanwhile by a link to
   * `.git/hooks` must not turn `src/pre-commit` into a hook.
   */
  const resolvesInside = (p: string): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      let existing = p
      let rest: Array<string> = []
      while (true) {
        const real = yield* Effect.either(base.realPath(existing))
        if (Either.isRight(real)) {
          const resolved = path.join(real.right, ...rest)
          return table.isInside(resolved) && resolved !== cwd && (isProtected(p) || !isProtected(resolved))
        }
        const parent = path.dirname(existing)
        if (parent === existing) return false
        rest = [path.basename(existing), ...rest]
        existing = parent
      }
    })

  const madeDirectories = new Set<string>()
  /** Write the overlay's version of a file (its bytes and mode) or a link at `target`: a temp name, then a rename. */
  const atomicWrite = (target: string, version: Pick<Pending, "content" | "link" | "after">) =>
    Effect.gen(function*() {
      const dir = path.dirname(target)
      if (!madeDirectories.has(dir)) {
        yield* base.makeDirectory(dir, { recursive: true })
        madeDirectories.add(dir)
      }
      const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.speculation.tmp`)
      if (version.link !== undefined) yield* base.symlink(version.link, temp)
      else yield* base.copyFile(version.content!, temp)
      yield* Effect.gen(function*() {
        if (version.after._tag === "File") yield* base.chmod(temp, version.after.mode)
        yield* base.rename(temp, target)
      }).pipe(Effect.onError(() => Effect.ignore(base.remove(temp))))
    })

  /**
   * Where a conflicting speculative version is kept: `<path>.speculated`, or `.speculated.1`, … when
   * that name is taken — by a file of the real tree or by a path the overlay writes — so that
   * keeping one version never overwrites another file.
   */
  const keptName = (target: string): Effect.Effect<string | undefined> =>
    Effect.gen(function*() {
      for (let i = 0; i < 100; i++) {
        const candidate = `${target}.speculated${i === 0 ? "" : `.${i}`}`
        if (table.touched.has(candidate) || table.entries.has(candidate)) continue
        if (yield* base.exists(candidate).pipe(Effect.orElseSucceed(() => true))) continue
        const link = yield* Effect.either(base.readLink(candidate))
        if (Either.isRight(link)) continue
        return (yield* resolvesInside(candidate)) ? candidate : undefined
      }
      return undefined
    })

  /**
   * What the base holds at `p` now, as the overlay saw it: below a link or a file the overlay replaced
   * (by a directory of its own) the base had nothing, whatever the link leads to.
   */
  const currentState = (p: string): Effect.Effect<Table.BaseState> =>
    Effect.gen(function*() {
      for (let q = path.dirname(p); table.isInside(q) && q !== cwd; q = path.dirname(q)) {
        const before = table.touched.get(q)
        if (before !== undefined && Table.isLeaf(before) && Table.sameState(yield* baseState(q), before)) {
          return Table.missing
        }
      }
      return yield* baseState(p)
    })

  const apply = serial(Effect.gen(function*() {
    const applied: Array<string> = []
    const conflicts: Array<Conflict> = []
    // Judge every change against the real tree as it is now, before anything is written: what fails
    // here fails before the real tree was touched.
    const pending: Array<Pending> = []
    const keeps: Array<readonly [Pending, string]> = []
    yield* Effect.forEach(yield* changes, (change) =>
      Effect.gen(function*() {
        const target = change.absolutePath
        // A link is written (or removed) where it is, not where it points: its directory must resolve inside.
        const parent = path.dirname(target)
        const inside = change.link !== undefined || change.before._tag === "Link"
          ? parent === cwd || (yield* resolvesInside(parent))
          : yield* resolvesInside(target)
        if (!inside) {
          conflicts.push({
            path: change.path,
            reason: "outside",
            message: `${change.path} now resolves outside the working directory; it was not written`,
            kept: undefined
          })
          return
        }
        if (Table.sameState(yield* currentState(target), change.before)) {
          pending.push(change)
          return
        }
        const keep = change.kind === "deleted" ? undefined : yield* keptName(target)
        if (keep !== undefined) keeps.push([change, keep])
        else {
          conflicts.push({
            path: change.path,
            reason: "changed",
            message: `${change.path} changed since the speculation read it; it was left as it is`,
            kept: undefined
          })
        }
      }), { concurrency: APPLY_CONCURRENCY, discard: true })
    // From here on nothing fails: each write that does not happen is a conflict of its own.
    yield* Effect.forEach(keeps, ([change, keep]) =>
      Effect.map(Effect.either(atomicWrite(keep, change)), (written) => {
        const kept = Either.isRight(written) ? path.relative(cwd, keep) : undefined
        conflicts.push({
          path: change.path,
          reason: "changed",
          message: kept === undefined
            ? `${change.path} changed since the speculation read it; it was left as it is (keeping the ` +
              `speculative version failed: ${(written as Either.Left<PlatformError.PlatformError, void>).left.message})`
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
    const deletions = pending.filter((change) => change.kind === "deleted")
    deletions.sort((a, b) => b.absolutePath.length - a.absolutePath.length)
    for (const change of deletions) {
      yield* attempt(change, base.remove(change.absolutePath, { recursive: change.before._tag === "Directory" }))
    }
    // A base directory the overlay removed is gone from the view, and so is every base directory
    // under one it removed and made again (new directories are opaque): each such directory left
    // holding only directories is removed, deepest first.
    const removed = new Set<string>()
    for (const [p, state] of table.touched) {
      if (state._tag !== "Directory") continue
      if (table.lookup(p)._tag !== "OverlayDirectory") removed.add(p)
      const below = yield* Effect.either(base.readDirectory(p, { recursive: true }))
      if (Either.isLeft(below)) continue
      for (const rel of below.right) {
        const q = path.join(p, rel)
        const view = table.lookup(q)._tag
        if (view === "OverlayDirectory" || view === "Base" || view === "OverlayFile" || view === "OverlayLink") continue
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
      if (change.kind === "deleted") return Effect.void
      return attempt(change, atomicWrite(change.absolutePath, change))
    }, { concurrency: APPLY_CONCURRENCY, discard: true })
    for (const [p, entry] of table.entries) {
      if (entry._tag !== "Directory" || table.lookup(p)._tag !== "OverlayDirectory") continue
      if (yield* resolvesInside(p)) yield* Effect.ignore(base.makeDirectory(p, { recursive: true }))
    }
    applied.sort()
    conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    yield* discard
    return { applied, conflicts }
  }))

  const discard = Effect.ignore(base.remove(directory, { recursive: true, force: true })).pipe(
    Effect.zipRight(Effect.sync(() => table.clear()))
  )

  return { changes, apply, discard }
}
