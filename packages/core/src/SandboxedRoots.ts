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
import * as Digest from "./Digest.js"

/** What a start needs: writable root → when a command could first write there; file → digests confirmed. */
interface Store {
  readonly roots: Readonly<Record<string, number>>
  readonly confirmed: Readonly<Record<string, ReadonlyArray<string>>>
}

/** One entry, one file, made once and never rewritten: two processes recording at once lose nothing. */
const Entry = Schema.Union(
  Schema.Struct({ root: Schema.String, since: Schema.Number }),
  Schema.Struct({ file: Schema.String, digest: Schema.String })
)
const decodeEntry = Schema.decodeUnknownOption(Schema.parseJson(Entry))

/**
 * The store's directory in the state directory: a file per recorded root and per confirmed content.
 *
 * @since 0.1.0
 * @category paths
 */
export const storePath = (stateDir: string, path: Path.Path): string => path.join(stateDir, "sandboxed-roots")

const readStore = (stateDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = storePath(stateDir, path)
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    const texts = yield* Effect.forEach(
      names.filter((name) => name.endsWith(".json")),
      (name) => fs.readFileString(path.join(dir, name)).pipe(Effect.orElseSucceed(() => "")),
      { concurrency: 16 }
    )
    const roots: Record<string, number> = {}
    const confirmed: Record<string, Array<string>> = {}
    for (const text of texts) {
      const entry = decodeEntry(text)
      if (Option.isNone(entry)) continue
      const value = entry.value
      if ("root" in value) roots[value.root] = Math.min(roots[value.root] ?? Infinity, value.since)
      else confirmed[value.file] = [...(confirmed[value.file] ?? []), value.digest]
    }
    return { roots, confirmed } satisfies Store
  })

/** Write an entry under a name of its own; one already there (the same root or content) stays as it is. */
const writeEntry = (stateDir: string, key: string, entry: typeof Entry.Type) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = storePath(stateDir, path)
    const name = `${"root" in entry ? "root" : "confirmed"}-${Digest.sha256(key).slice(0, 32)}.json`
    yield* fs.makeDirectory(dir, { recursive: true })
    // Written under a temporary name, then linked in place: a reader never sees half an entry, the first wins.
    const temporary = path.join(dir, `.${name}.${process.pid}.${Date.now()}.tmp`)
    yield* fs.writeFileString(temporary, `${JSON.stringify(entry)}\n`)
    yield* fs.link(temporary, path.join(dir, name)).pipe(
      Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "AlreadyExists", () => Effect.void),
      Effect.ensuring(fs.remove(temporary).pipe(Effect.ignore))
    )
  })

/** A root as spelled and as its real path (links followed), both recorded and both compared. */
const spellings = (dir: string, path: Path.Path): ReadonlyArray<string> => {
  const resolved = path.resolve(dir)
  let real = resolved
  try {
    real = nodeFs.realpathSync(resolved)
  } catch {
    // Not there (yet): as spelled.
  }
  return real === resolved ? [resolved] : [resolved, real]
}

/**
 * Record that sandboxed commands may write below `roots` from now on (each
 * as spelled and as its real path); a root already recorded keeps its first
 * time. Failing to write is the caller's to report (the command still runs).
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
    const missing = [...new Set(roots.flatMap((root) => spellings(root, path)))]
      .filter((root) => store.roots[root] === undefined)
    yield* Effect.forEach(missing, (root) => writeEntry(stateDir, root, { root, since: now }), { discard: true })
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
    // `..x` right below the root is inside it; only `..` and `../…` lead out.
    const below = relative !== "" && relative !== ".." && !relative.startsWith(`..${path.sep}`) &&
      !path.isAbsolute(relative)
    if (below && (since === undefined || time < since)) since = time
  }
  return since
}

/**
 * When anything on the way from the root to the file last changed: the file,
 * and each directory or link from the one below the root down to it (as
 * spelled and along its real path), followed and not. A link made, a hard
 * link added or a directory moved into place after the root was recorded
 * may lead to older content the command did not write but chose; each of
 * those changes an inode's `ctime` on the way. (A directory's `ctime` also
 * moves when an entry in it is added, so a nested project where commands
 * worked is asked about once per content.)
 */
const lastChange = (candidate: Candidate, roots: ReadonlyArray<string>, path: Path.Path): number | undefined => {
  const file = nodeFs.statSync(candidate.path, { throwIfNoEntry: false })
  if (file === undefined) return undefined
  let latest = file.ctimeMs
  for (const spelled of spellings(candidate.path, path)) {
    for (const root of roots) {
      const relative = path.relative(root, spelled)
      if (relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
        continue
      }
      const parts = relative.split(path.sep)
      for (let i = 1; i <= parts.length; i++) {
        const step = path.join(root, ...parts.slice(0, i))
        for (
          const info of [
            nodeFs.lstatSync(step, { throwIfNoEntry: false }),
            nodeFs.statSync(step, { throwIfNoEntry: false })
          ]
        ) {
          if (info !== undefined) latest = Math.max(latest, info.ctimeMs)
        }
      }
    }
  }
  // A settings file in a project's `.claude/` or `.switchyard/` runs what lies beside it (Claude Code's
  // `$CLAUDE_PROJECT_DIR/.claude/hooks/…`): the whole directory's newest change counts as the file's.
  const config = path.relative(candidate.dir, candidate.path).split(path.sep)[0]
  if (config === ".claude" || config === ".switchyard") {
    latest = Math.max(latest, newestInside(path.join(candidate.dir, config), path))
  }
  return latest
}

/** How much of a configuration directory is looked at; past it, it counts as changed now (fail closed). */
const CONFIG_ENTRIES = 2_000

/** The newest `ctime` of a directory and everything in it (links not followed). */
const newestInside = (dir: string, path: Path.Path): number => {
  let newest = 0
  let seen = 0
  const visit = (current: string): boolean => {
    const info = nodeFs.lstatSync(current, { throwIfNoEntry: false })
    if (info === undefined) return true
    newest = Math.max(newest, info.ctimeMs)
    if (++seen > CONFIG_ENTRIES) return false
    if (!info.isDirectory()) return true
    for (const name of nodeFs.readdirSync(current)) if (!visit(path.join(current, name))) return false
    return true
  }
  return visit(dir) ? newest : Date.now()
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

/** The recorded roots strictly above `dir`, as spelled or along its real path. */
const rootsAbove = (store: Store, dir: string, path: Path.Path): ReadonlyArray<string> =>
  Object.keys(store.roots).filter((root) =>
    spellings(dir, path).some((spelled) => writableSince({ [root]: 0 }, spelled, path) !== undefined)
  )

/** The root below which a command may have written `candidate` as it is now; undefined when it counts. */
const suspect = (store: Store, candidate: Candidate, path: Path.Path): string | undefined => {
  const roots = rootsAbove(store, candidate.dir, path)
  if (roots.length === 0) return undefined
  const since = Math.min(...roots.map((root) => store.roots[root]!))
  const changedAt = lastChange(candidate, roots, path)
  if (changedAt === undefined || changedAt < since) return undefined
  if ((store.confirmed[candidate.path] ?? []).includes(candidate.digest)) return undefined
  return roots[0]
}

const confirm = (stateDir: string, candidate: Candidate) =>
  writeEntry(stateDir, `${candidate.path}\u0000${candidate.digest}`, { file: candidate.path, digest: candidate.digest })

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
    if (rootsAbove(store, candidate.dir, path).length === 0) return
    if ((store.confirmed[candidate.path] ?? []).includes(candidate.digest)) return
    yield* confirm(stateDir, candidate)
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
    const refused: Array<{ path: string; reason: string }> = []
    for (const candidate of candidates) {
      const root = suspect(store, candidate, path)
      if (root === undefined) continue
      const answer = Option.isNone(confirmation)
        ? undefined
        : yield* confirmation.value.confirm({ file: candidate.path, root })
      if (answer === true) {
        yield* confirm(stateDir, candidate).pipe(Effect.ignore)
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
    return { refused }
  })
