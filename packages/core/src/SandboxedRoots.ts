/**
 * Where sandboxed commands could write, and since when; and the project
 * settings files that may therefore be theirs (DESIGN §4.5).
 *
 * The sandbox keeps a writable root's own `.claude/`, `.switchyard/` and
 * `.mcp.json` read-only, but it cannot refuse a name that does not exist
 * yet deeper down: a sandboxed command may create
 * `packages/app/.claude/settings.local.json` with a hook, and a session the
 * user later starts in `packages/app` would run that hook outside any
 * sandbox. So the sandbox records each writable root the first time a
 * command may write there (in the state directory, which is read-only
 * inside it), and a project or local settings file in a directory below such
 * a root whose inode changed since then (`ctime`, which no unprivileged
 * process can set back) counts only once the user confirms its content; a
 * confirmation is remembered by digest. Without a terminal to ask, the file
 * is left out with a warning that names it.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as nodeFs from "node:fs"

const Store = Schema.Struct({
  /** Writable root → when a sandboxed command could first write there (ms since the epoch). */
  roots: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** Settings file → digests of the contents the user confirmed. */
  confirmed: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }), {
    default: () => ({})
  })
})
type Store = typeof Store.Type

/**
 * The store's path in the state directory.
 *
 * @since 0.1.0
 * @category paths
 */
export const storePath = (stateDir: string, path: Path.Path): string => path.join(stateDir, "sandboxed-roots.json")

const readStore = (stateDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return yield* fs.readFileString(storePath(stateDir, path)).pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(Store))),
      Effect.orElseSucceed((): Store => ({ roots: {}, confirmed: {} }))
    )
  })

const writeStore = (stateDir: string, store: Store) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = storePath(stateDir, path)
    const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
    yield* fs.makeDirectory(stateDir, { recursive: true })
    yield* fs.writeFileString(temporary, `${JSON.stringify(store, null, 2)}\n`)
    yield* fs.rename(temporary, file)
  })

/**
 * Record that sandboxed commands may write below `roots` from now on; a
 * root already recorded keeps its first time. Failing to write is reported
 * by the caller's `onError` and otherwise ignored (the command still runs).
 *
 * @since 0.1.0
 * @category recording
 */
export const record = (
  stateDir: string,
  roots: ReadonlyArray<string>,
  now: number = Date.now()
): Effect.Effect<void, string, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const store = yield* readStore(stateDir)
    const missing = roots.map((root) => path.resolve(root)).filter((root) => store.roots[root] === undefined)
    if (missing.length === 0) return
    const added = Object.fromEntries(missing.map((root) => [root, now]))
    yield* writeStore(stateDir, { ...store, roots: { ...store.roots, ...added } })
  }).pipe(Effect.mapError((error) => `cannot record the sandbox's writable roots: ${error.message}`))

/**
 * The earliest time a sandboxed command could write into `dir` from a root
 * strictly above it (a root's own top is protected by the sandbox itself).
 *
 * @since 0.1.0
 * @category queries
 */
export const writableSince = (
  roots: Readonly<Record<string, number>>,
  dir: string,
  path: Path.Path
): number | undefined => {
  const target = path.resolve(dir)
  let since: number | undefined
  for (const [root, time] of Object.entries(roots)) {
    const relative = path.relative(root, target)
    const below = relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
    if (below && (since === undefined || time < since)) since = time
  }
  return since
}

/**
 * When the file, or a link or directory that leads to it from the directory
 * it configures, last changed: a link made (or a directory moved into
 * place) after the root was recorded may lead to older content the command
 * did not write but chose, so each path component's inode counts, followed
 * and not (a rename and a new hard link change the inode's `ctime` too).
 */
const lastChange = (candidate: Candidate, path: Path.Path): number | undefined => {
  const file = nodeFs.statSync(candidate.path, { throwIfNoEntry: false })
  if (file === undefined) return undefined
  let latest = file.ctimeMs
  const relative = path.relative(candidate.dir, candidate.path).split(path.sep)
  for (let i = 1; i <= relative.length; i++) {
    const step = path.join(candidate.dir, ...relative.slice(0, i))
    for (
      const info of [
        nodeFs.lstatSync(step, { throwIfNoEntry: false }),
        nodeFs.statSync(step, { throwIfNoEntry: false })
      ]
    ) {
      if (info !== undefined) latest = Math.max(latest, info.ctimeMs)
    }
  }
  return latest
}

/**
 * What the user is asked about a settings file a sandboxed command may have
 * written.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfirmationRequest {
  readonly file: string
  /** The writable root above it. */
  readonly root: string
}

/**
 * The port through which such a file is confirmed (the CLI asks in a
 * terminal). Without it nobody can confirm, and the file is left out.
 *
 * @since 0.1.0
 * @category services
 */
export class Confirmation extends Context.Tag("@switchyard/core/SandboxedRoots/Confirmation")<
  Confirmation,
  { readonly confirm: (request: ConfirmationRequest) => Effect.Effect<boolean> }
>() {}

/**
 * One settings file to judge: its path, the directory it configures and
 * its content's digest.
 *
 * @since 0.1.0
 * @category models
 */
export interface Candidate {
  readonly path: string
  readonly dir: string
  readonly digest: string
}

/** The root below which a command may have written `candidate` as it is now; undefined when it counts. */
const suspect = (store: Store, candidate: Candidate, path: Path.Path): string | undefined => {
  const since = writableSince(store.roots, candidate.dir, path)
  if (since === undefined) return undefined
  const changedAt = lastChange(candidate, path)
  if (changedAt === undefined || changedAt < since) return undefined
  if ((store.confirmed[candidate.path] ?? []).includes(candidate.digest)) return undefined
  return Object.keys(store.roots).find((r) => writableSince({ [r]: 0 }, candidate.dir, path) !== undefined)
}

/**
 * Whether `candidate` counts without asking anyone (for a writer that
 * keeps what it found: see `confirmWritten`).
 *
 * @since 0.1.0
 * @category judging
 */
export const counts = (
  stateDir: string,
  candidate: Candidate
): Effect.Effect<boolean, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const store = yield* readStore(stateDir)
    return suspect(store, candidate, path) === undefined
  })

/**
 * Switchyard itself wrote `candidate` (an "always allow" rule): its new
 * content counts from now on, as the old one did. Only called when the old
 * content counted, so a planted file is not confirmed by adding a rule to it.
 * Nothing is written when no recorded root lies above the file.
 *
 * @since 0.1.0
 * @category judging
 */
export const confirmWritten = (
  stateDir: string,
  candidate: Candidate
): Effect.Effect<void, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const store = yield* readStore(stateDir)
    if (writableSince(store.roots, candidate.dir, path) === undefined) return
    const digests = store.confirmed[candidate.path] ?? []
    if (digests.includes(candidate.digest)) return
    yield* writeStore(stateDir, {
      ...store,
      confirmed: { ...store.confirmed, [candidate.path]: [...digests, candidate.digest] }
    })
  }).pipe(Effect.ignore)

/**
 * Which of `candidates` count: those no sandboxed command could have
 * written since it could first write there, those whose content the user
 * confirmed before, and those the user confirms now. `refused` are the
 * others, each with why.
 *
 * @since 0.1.0
 * @category judging
 */
export const judge = (
  stateDir: string,
  candidates: ReadonlyArray<Candidate>
): Effect.Effect<
  { readonly refused: ReadonlyArray<{ readonly path: string; readonly reason: string }> },
  never,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    if (candidates.length === 0) return { refused: [] }
    const path = yield* Path.Path
    const store = yield* readStore(stateDir)
    if (Object.keys(store.roots).length === 0) return { refused: [] }
    const confirmation = yield* Effect.serviceOption(Confirmation)
    const confirmed: Record<string, Array<string>> = {}
    for (const [file, digests] of Object.entries(store.confirmed)) confirmed[file] = [...digests]
    const refused: Array<{ path: string; reason: string }> = []
    let changed = false
    for (const candidate of candidates) {
      const root = suspect(store, candidate, path)
      if (root === undefined) continue
      const answer = Option.isNone(confirmation)
        ? undefined
        : yield* confirmation.value.confirm({ file: candidate.path, root })
      if (answer === true) {
        confirmed[candidate.path] = [...(confirmed[candidate.path] ?? []), candidate.digest]
        changed = true
        continue
      }
      refused.push({
        path: candidate.path,
        reason: `changed after sandboxed commands could write in ${root}, so a command may have written it; ` +
          (answer === false
            ? "not confirmed, so it is ignored"
            : "it takes effect once you confirm it in a terminal (start switchyard there); until then it is ignored")
      })
    }
    if (changed) {
      // Read again: a sandbox in another process may have recorded a root meanwhile.
      const latest = yield* readStore(stateDir)
      yield* writeStore(stateDir, { roots: { ...store.roots, ...latest.roots }, confirmed }).pipe(Effect.ignore)
    }
    return { refused }
  })
