/**
 * SPEC §4.12: the copy-on-write overlay, against a real temp directory.
 *
 * The model test runs the same random operations on the overlay (over one
 * copy of a tree) and on the plain Node FileSystem (over another copy), and
 * requires the same answers, the same final view, an untouched base, and —
 * after `apply` — a base equal to the plain copy.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { OverlayFileSystem } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import { createHash } from "node:crypto"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

const NAMES = ["a", "b", "d", "d/x", "d/y", "d/e", "d/e/z", "f", "f/w", "a.tmp", "l", "d/l"] as const
const Name = FastCheck.constantFrom(...NAMES)
const Content = FastCheck.constantFrom("one", "two", "three\n", "")
/** Link targets, relative to the link's directory; some dangle. */
const LinkTarget = FastCheck.constantFrom("a", "d", "x", "e", "nope", "d/e")
const Mode = FastCheck.constantFrom(0o755, 0o600, 0o644, 0o700)

const Op = FastCheck.oneof(
  FastCheck.record({ op: FastCheck.constant("write" as const), path: Name, content: Content }),
  FastCheck.record({ op: FastCheck.constant("atomicWrite" as const), path: Name, content: Content }),
  FastCheck.record({ op: FastCheck.constant("read" as const), path: Name }),
  FastCheck.record({ op: FastCheck.constant("remove" as const), path: Name, recursive: FastCheck.boolean() }),
  FastCheck.record({ op: FastCheck.constant("rename" as const), path: Name, to: Name }),
  FastCheck.record({ op: FastCheck.constant("makeDirectory" as const), path: Name, recursive: FastCheck.boolean() }),
  FastCheck.record({
    op: FastCheck.constant("readDirectory" as const),
    path: FastCheck.constantFrom(".", "d", "d/e", "f")
  }),
  FastCheck.record({ op: FastCheck.constant("stat" as const), path: Name }),
  FastCheck.record({ op: FastCheck.constant("exists" as const), path: Name }),
  FastCheck.record({ op: FastCheck.constant("realPath" as const), path: Name }),
  FastCheck.record({ op: FastCheck.constant("chmodFile" as const), path: Name, mode: Mode }),
  FastCheck.record({ op: FastCheck.constant("copyFile" as const), path: Name, to: Name }),
  FastCheck.record({ op: FastCheck.constant("copy" as const), path: Name, to: Name, overwrite: FastCheck.boolean() }),
  FastCheck.record({ op: FastCheck.constant("symlink" as const), path: Name, target: LinkTarget }),
  FastCheck.record({ op: FastCheck.constant("readLink" as const), path: Name })
)
type Op = typeof Op extends FastCheck.Arbitrary<infer O> ? O : never

/** The starting tree: files at the top and in nested directories, an executable, links to a file and a directory. */
const seed = (root: string) => {
  NFS.writeFileSync(NPath.join(root, "a"), "alpha")
  NFS.chmodSync(NPath.join(root, "a"), 0o755)
  NFS.mkdirSync(NPath.join(root, "d", "e"), { recursive: true })
  NFS.writeFileSync(NPath.join(root, "d", "x"), "ex")
  NFS.writeFileSync(NPath.join(root, "d", "e", "z"), "zed")
  NFS.symlinkSync("a", NPath.join(root, "l"))
  NFS.symlinkSync("e", NPath.join(root, "d", "l"))
}

const tempDir = (prefix: string) => NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), prefix)))

/** A file's entry in a snapshot: its content and its permission bits. */
const fileEntry = (content: string, mode: number) => `${content}|${(mode & 0o7777).toString(8)}`

/** A link's entry: its target, an absolute one under the root spelled from the root (the copies differ there). */
const linkEntry = (root: string, target: string) =>
  `<link:${target === root || target.startsWith(`${root}/`) ? `<root>${target.slice(root.length)}` : target}>`

/** Every path under root with its content and mode (files), its target (links) or a marker (directories), sorted. */
const snapshot = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (dir: string, rel: string) => {
    for (const name of NFS.readdirSync(dir).sort()) {
      const abs = NPath.join(dir, name)
      const childRel = rel === "" ? name : `${rel}/${name}`
      const info = NFS.lstatSync(abs)
      if (info.isSymbolicLink()) {
        out[childRel] = linkEntry(root, NFS.readlinkSync(abs))
      } else if (info.isDirectory()) {
        out[childRel] = "<dir>"
        visit(abs, childRel)
      } else out[childRel] = fileEntry(NFS.readFileSync(abs, "utf8"), info.mode)
    }
  }
  visit(root, "")
  return out
}

/** Files and links are what `apply` writes; directories are made on the way. */
const isFile = (entry: string | undefined) => entry !== undefined && entry !== "<dir>"

const treeHash = (root: string) => createHash("sha256").update(JSON.stringify(snapshot(root))).digest("hex")

/** The same snapshot through a FileSystem service. */
const snapshotThrough = (fs: FileSystem.FileSystem, root: string) =>
  Effect.gen(function*() {
    const out: Record<string, string> = {}
    const visit = (dir: string, rel: string): Effect.Effect<void, unknown> =>
      Effect.gen(function*() {
        for (const name of (yield* fs.readDirectory(dir)).sort()) {
          const abs = NPath.join(dir, name)
          const childRel = rel === "" ? name : `${rel}/${name}`
          const link = yield* Effect.either(fs.readLink(abs))
          if (Either.isRight(link)) {
            out[childRel] = linkEntry(root, link.right)
            continue
          }
          const info = yield* fs.stat(abs)
          if (info.type === "Directory") {
            out[childRel] = "<dir>"
            yield* visit(abs, childRel)
          } else out[childRel] = fileEntry(yield* fs.readFileString(abs), info.mode)
        }
      })
    yield* visit(root, "")
    return out
  })

/** Run one op; the answer, with paths made relative to the root, and failures as a bare marker. */
const runOp = (fs: FileSystem.FileSystem, root: string, op: Op) => {
  const at = (p: string) => NPath.join(root, p)
  const effect: Effect.Effect<unknown, unknown> = (() => {
    switch (op.op) {
      case "write":
        return fs.writeFileString(at(op.path), op.content)
      case "atomicWrite":
        return Effect.zipRight(
          fs.writeFileString(at(op.path) + ".part", op.content),
          fs.rename(at(op.path) + ".part", at(op.path))
        )
      case "read":
        return fs.readFileString(at(op.path))
      case "remove":
        return fs.remove(at(op.path), { recursive: op.recursive })
      case "rename":
        return fs.rename(at(op.path), at(op.to))
      case "makeDirectory":
        return Effect.asVoid(fs.makeDirectory(at(op.path), { recursive: op.recursive }))
      case "readDirectory":
        return Effect.map(fs.readDirectory(at(op.path)), (names) => names.sort())
      case "stat":
        return Effect.map(fs.stat(at(op.path)), (info) => ({
          type: info.type,
          size: Number(info.size),
          mode: (info.mode & 0o7777).toString(8)
        }))
      case "exists":
        return fs.exists(at(op.path))
      case "realPath":
        return Effect.map(fs.realPath(at(op.path)), (p) => NPath.relative(root, p))
      case "chmodFile":
        // Modes of files (directories keep theirs: the overlay does not model them).
        return Effect.flatMap(
          fs.stat(at(op.path)),
          (info) => info.type === "File" ? fs.chmod(at(op.path), op.mode) : Effect.succeed("not a file")
        )
      case "copyFile":
        return fs.copyFile(at(op.path), at(op.to))
      case "copy":
        return fs.copy(at(op.path), at(op.to), { overwrite: op.overwrite })
      case "symlink":
        return fs.symlink(op.target, at(op.path))
      case "readLink":
        return Effect.map(fs.readLink(at(op.path)), (target) => linkEntry(root, target))
    }
  })()
  return Effect.map(
    Effect.either(effect),
    Either.match({ onLeft: () => "<failed>", onRight: (value) => value ?? null })
  )
}

const withOverlay = <A, E>(
  root: string,
  use: (overlay: OverlayFileSystem.Overlay) => Effect.Effect<A, E, FileSystem.FileSystem>
) =>
  Effect.scoped(Effect.gen(function*() {
    const state = tempDir("overlay-state-")
    const overlay = yield* OverlayFileSystem.make({ cwd: root, directory: NPath.join(state, "overlay") })
    return yield* use(overlay)
  })).pipe(Effect.provide(NodeContext.layer))

describe("OverlayFileSystem (SPEC §4.12)", () => {
  it.effect.prop(
    "behaves like a plain copy of the tree under random operations; apply makes the base equal to it",
    [FastCheck.array(Op, { minLength: 1, maxLength: 25 })],
    ([ops]) =>
      Effect.gen(function*() {
        const base = tempDir("overlay-base-")
        const plain = tempDir("overlay-plain-")
        seed(base)
        seed(plain)
        const before = treeHash(base)
        const nodeFs = yield* Effect.provide(FileSystem.FileSystem, NodeContext.layer)
        yield* withOverlay(base, (overlay) =>
          Effect.gen(function*() {
            for (const op of ops) {
              const expected = yield* runOp(nodeFs, plain, op)
              const actual = yield* runOp(overlay.fileSystem, base, op)
              expect({ op, result: actual }).toEqual({ op, result: expected })
            }
            expect(yield* snapshotThrough(overlay.fileSystem, base)).toEqual(snapshot(plain))
            expect(treeHash(base)).toBe(before)
            // Written paths: exactly the files that differ between the base and the plain copy.
            const original = snapshot(base)
            const final = snapshot(plain)
            const differing = [...new Set([...Object.keys(original), ...Object.keys(final)])]
              .filter((p) => original[p] !== final[p] && (isFile(original[p]) || isFile(final[p])))
              .sort()
            expect(yield* overlay.writtenPaths).toEqual(differing)
            const result = yield* overlay.apply
            expect(result.conflicts).toEqual([])
            expect(snapshot(base)).toEqual(snapshot(plain))
          }))
        NFS.rmSync(base, { recursive: true, force: true })
        NFS.rmSync(plain, { recursive: true, force: true })
        return true
      }),
    {
      timeout: 240_000,
      fastCheck: {
        numRuns: 80,
        // Found by longer runs: a base directory removed and made again must not keep the old
        // one's subdirectories on apply.
        examples: [
          // A base link followed through the overlay: its target renamed there, the link dangles (seed -1770013815).
          [[{ op: "rename", path: "a", to: "a.tmp" }, { op: "copy", path: "l", to: "d/l", overwrite: false }]],
          [[{ op: "remove", path: "d", recursive: true }, { op: "makeDirectory", path: "d/y", recursive: true }]],
          [[{ op: "rename", path: "d", to: "f" }, { op: "makeDirectory", path: "d/x", recursive: true }]],
          // Modes, links and copy (issue 20): libuv's copyFile of a directory empties and unlinks the
          // destination; cp copies a link as a link with an absolute target and fails on a dangling
          // source; mkdir does not follow a dangling link; a path under a replaced link is not the
          // link target's on apply.
          [[{ op: "copyFile", path: "d", to: "a" }, { op: "atomicWrite", path: "f", content: "one" }]],
          [[{ op: "rename", path: "l", to: "b" }, { op: "copyFile", path: "d/l", to: "b" }]],
          [[{ op: "remove", path: "a", recursive: false }, { op: "copyFile", path: "d/e", to: "l" }, {
            op: "read",
            path: "a"
          }]],
          [[{ op: "copy", path: "d", to: "f", overwrite: false }, { op: "read", path: "a" }]],
          [[{ op: "symlink", path: "a.tmp", target: "e" }, { op: "copy", path: "a.tmp", to: "d/l", overwrite: false }]],
          [[{ op: "symlink", path: "f", target: "x" }, { op: "makeDirectory", path: "f/w", recursive: true }]],
          [[{ op: "remove", path: "d/l", recursive: false }, { op: "copy", path: "d/e", to: "d/l", overwrite: false }]],
          [[{ op: "chmodFile", path: "a", mode: 0o600 }, { op: "rename", path: "a", to: "b" }, {
            op: "copyFile",
            path: "b",
            to: "d/y"
          }]],
          [[{ op: "write", path: "a", content: "two" }, { op: "rename", path: "l", to: "d/y" }]]
        ]
      }
    }
  )

  it.effect("modes and links survive the overlay and apply: a 755 file overwritten, chmod, copyFile, a renamed link", () =>
    Effect.gen(function*() {
      const base = tempDir("overlay-modes-")
      seed(base)
      const at = (p: string) => NPath.join(base, p)
      yield* withOverlay(base, (overlay) =>
        Effect.gen(function*() {
          const fs = overlay.fileSystem
          yield* fs.writeFileString(at("a"), "rewritten")
          yield* fs.chmod(at("d/x"), 0o700)
          yield* fs.copyFile(at("a"), at("copied"))
          yield* fs.rename(at("l"), at("moved"))
          // `copy` does not overwrite an existing file unless asked, as the Node FileSystem.
          yield* fs.copy(at("d/x"), at("a"))
          expect(yield* fs.readLink(at("moved"))).toBe("a")
          expect(((yield* fs.stat(at("copied"))).mode & 0o777).toString(8)).toBe("755")
          const result = yield* overlay.apply
          expect(result.conflicts).toEqual([])
        }))
      // Judged on the real tree after apply.
      expect((NFS.statSync(at("a")).mode & 0o777).toString(8)).toBe("755")
      expect(NFS.readFileSync(at("a"), "utf8")).toBe("rewritten")
      expect((NFS.statSync(at("d/x")).mode & 0o777).toString(8)).toBe("700")
      expect((NFS.statSync(at("copied")).mode & 0o777).toString(8)).toBe("755")
      expect(NFS.lstatSync(at("moved")).isSymbolicLink()).toBe(true)
      expect(NFS.readlinkSync(at("moved"))).toBe("a")
      expect(NFS.existsSync(at("l"))).toBe(false)
      NFS.rmSync(base, { recursive: true, force: true })
    }))

  it.effect("reads of unwritten paths fall through; the first write copies the original; the base is untouched", () =>
    Effect.gen(function*() {
      const root = tempDir("overlay-cow-")
      seed(root)
      yield* withOverlay(root, (overlay) =>
        Effect.gen(function*() {
          const fs = overlay.fileSystem
          expect(yield* fs.readFileString(NPath.join(root, "a"))).toBe("alpha")
          yield* fs.writeFileString(NPath.join(root, "a"), "changed", { flag: "a" })
          expect(yield* fs.readFileString(NPath.join(root, "a"))).toBe("alphachanged")
          expect(NFS.readFileSync(NPath.join(root, "a"), "utf8")).toBe("alpha")
          expect(overlay.hasWrites()).toBe(true)
          expect(yield* overlay.writtenPaths).toEqual(["a"])
          // realPath answers in the real tree, never in the overlay directory.
          expect(yield* fs.realPath("a")).toBe(NPath.join(root, "a"))
        }))
    }))

  it.effect("a write that lands outside the working directory is refused, however it is spelled", () =>
    Effect.gen(function*() {
      const root = tempDir("overlay-escape-")
      const outside = tempDir("overlay-outside-")
      seed(root)
      NFS.writeFileSync(NPath.join(outside, "secret"), "keep")
      NFS.symlinkSync(NPath.join(outside, "secret"), NPath.join(root, "link-out"))
      NFS.symlinkSync(outside, NPath.join(root, "dir-out"))
      NFS.symlinkSync("a", NPath.join(root, "link-in"))
      const outsideHash = treeHash(outside)
      yield* withOverlay(root, (overlay) =>
        Effect.gen(function*() {
          const fs = overlay.fileSystem
          for (
            const target of [
              NPath.join(root, "..", NPath.basename(outside), "secret"),
              NPath.join(outside, "new"),
              NPath.join(root, "link-out"),
              NPath.join(root, "dir-out", "new"),
              NPath.join(root, "dir-out", "secret")
            ]
          ) {
            const written = yield* Effect.either(fs.writeFileString(target, "pwned"))
            expect(Either.isLeft(written)).toBe(true)
            if (Either.isLeft(written)) expect(written.left.message).toContain("outside the working directory")
            // Removing the link itself stays inside the tree; removing through it does not.
            if (!target.endsWith("link-out")) expect(Either.isLeft(yield* Effect.either(fs.remove(target)))).toBe(true)
          }
          expect(Either.isLeft(yield* Effect.either(fs.rename(NPath.join(root, "a"), NPath.join(outside, "a"))))).toBe(
            true
          )
          // A link inside the tree to a file inside the tree: the write lands on the target.
          yield* fs.writeFileString(NPath.join(root, "link-in"), "through the link")
          expect(yield* fs.readFileString(NPath.join(root, "a"))).toBe("through the link")
          expect(yield* overlay.writtenPaths).toEqual(["a"])
          yield* overlay.apply
        }))
      expect(treeHash(outside)).toBe(outsideHash)
      expect(NFS.readFileSync(NPath.join(root, "a"), "utf8")).toBe("through the link")
    }))

  it.effect("apply re-checks escapes: a parent replaced by a symlink out of the tree is not written through", () =>
    Effect.gen(function*() {
      const root = tempDir("overlay-accept-escape-")
      const outside = tempDir("overlay-accept-outside-")
      seed(root)
      const outsideHash = treeHash(outside)
      yield* withOverlay(root, (overlay) =>
        Effect.gen(function*() {
          yield* overlay.fileSystem.writeFileString(NPath.join(root, "d", "x"), "speculated")
          // The real tree changes under the overlay: d becomes a link to a directory outside.
          NFS.rmSync(NPath.join(root, "d"), { recursive: true })
          NFS.symlinkSync(outside, NPath.join(root, "d"))
          const result = yield* overlay.apply
          expect(result.applied).toEqual([])
          expect(result.conflicts.map((c) => [c.path, c.reason])).toEqual([["d/x", "outside"]])
        }))
      expect(treeHash(outside)).toBe(outsideHash)
    }))

  it.effect("a file changed in the real tree since the overlay copied it is a conflict: both versions are kept", () =>
    Effect.gen(function*() {
      const root = tempDir("overlay-conflict-")
      seed(root)
      yield* withOverlay(root, (overlay) =>
        Effect.gen(function*() {
          yield* overlay.fileSystem.writeFileString(NPath.join(root, "a"), "speculative")
          yield* overlay.fileSystem.writeFileString(NPath.join(root, "b"), "new file")
          NFS.writeFileSync(NPath.join(root, "a"), "the user's edit")
          const result = yield* overlay.apply
          expect(result.applied).toEqual(["b"])
          expect(result.conflicts).toMatchObject([{ path: "a", reason: "changed", kept: "a.speculated" }])
        }))
      expect(NFS.readFileSync(NPath.join(root, "a"), "utf8")).toBe("the user's edit")
      expect(NFS.readFileSync(NPath.join(root, "a.speculated"), "utf8")).toBe("speculative")
      expect(NFS.readFileSync(NPath.join(root, "b"), "utf8")).toBe("new file")
    }))

  it.effect("closing the scope deletes the overlay directory and leaves the real tree byte-identical", () =>
    Effect.gen(function*() {
      const root = tempDir("overlay-discard-")
      seed(root)
      const before = treeHash(root)
      const state = tempDir("overlay-discard-state-")
      yield* Effect.scoped(Effect.gen(function*() {
        const overlay = yield* OverlayFileSystem.make({ cwd: root, directory: NPath.join(state, "o") })
        yield* overlay.fileSystem.writeFileString(NPath.join(root, "d", "new"), "x")
        yield* overlay.fileSystem.remove(NPath.join(root, "d", "e"), { recursive: true })
        expect(NFS.existsSync(NPath.join(state, "o"))).toBe(true)
      })).pipe(Effect.provide(NodeContext.layer))
      expect(NFS.existsSync(NPath.join(state, "o"))).toBe(false)
      expect(treeHash(root)).toBe(before)
    }))

  it.effect("the overlay status tells tools whether an overlay with writes is active", () =>
    Effect.gen(function*() {
      expect(yield* OverlayFileSystem.hasWrites).toBe(false)
      const root = tempDir("overlay-status-")
      seed(root)
      yield* withOverlay(root, (overlay) =>
        Effect.gen(function*() {
          const check = OverlayFileSystem.hasWrites.pipe(Effect.provide(OverlayFileSystem.layer(overlay)))
          expect(yield* check).toBe(false)
          yield* overlay.fileSystem.writeFileString(NPath.join(root, "n"), "x")
          expect(yield* check).toBe(true)
          const fs = yield* FileSystem.FileSystem.pipe(Effect.provide(OverlayFileSystem.layer(overlay)))
          expect(fs).toBe(overlay.fileSystem)
          const path = yield* Effect.provide(Path.Path, NodeContext.layer)
          expect(path.isAbsolute(overlay.directory)).toBe(true)
        }))
    }))
})
