/**
 * Issue 20 item 3, the built-in tools' own calls: what a call touched,
 * observed, is inside what its footprint declared (SPEC §5: footprints are
 * sound). The in-process tools go through the platform `FileSystem`, so a
 * recording layer under them is the observation: every path a method was
 * given, as a read (stat, read, list, realPath, readLink, access) or a write
 * (everything else). Glob and Grep run their built-in engines here (ripgrep
 * reads the disk past the layer; the Bash oracle with strace covers child
 * processes). Calls are generated over a real tree with a link to a
 * directory, a hard-linked file, `LINK/..` spellings, absolute and `..` Glob
 * patterns, missing files and directories.
 *
 * A write tool's temp file (`.<name>.<hex>.tmp` beside the target, renamed
 * over it) is the target's own write: no other call can name it.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import {
  DispatchEvent,
  Execution,
  Footprint,
  Messages,
  PermissionContext,
  Registry,
  Results,
  ToolUseContext
} from "@switchyard/core"
import * as Edit from "@switchyard/tools/Edit"
import * as Glob from "@switchyard/tools/Glob"
import * as Grep from "@switchyard/tools/Grep"
import * as NotebookEdit from "@switchyard/tools/NotebookEdit"
import * as Read from "@switchyard/tools/Read"
import * as Write from "@switchyard/tools/Write"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

interface Access {
  readonly mode: "read" | "write"
  readonly method: string
  readonly path: string
}

/** The platform FileSystem with every path it is given recorded while `recording.on`. */
const recordingLayer = (log: Array<Access>, recording: { on: boolean }) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (base) => {
      const note = (mode: Access["mode"], method: string, ...paths: ReadonlyArray<string>) => {
        if (recording.on) { for (const path of paths) log.push({ mode, method, path }) }
      }
      return FileSystem.make({
        access: (p, o) => (note("read", "access", p), base.access(p, o)),
        copy: (a, b, o) => (note("read", "copy", a), note("write", "copy", b), base.copy(a, b, o)),
        copyFile: (a, b) => (note("read", "copyFile", a), note("write", "copyFile", b), base.copyFile(a, b)),
        chmod: (p, m) => (note("write", "chmod", p), base.chmod(p, m)),
        chown: (p, u, g) => (note("write", "chown", p), base.chown(p, u, g)),
        link: (a, b) => (note("read", "link", a), note("write", "link", b), base.link(a, b)),
        makeDirectory: (p, o) => (note("write", "makeDirectory", p), base.makeDirectory(p, o)),
        makeTempDirectory: (o) => base.makeTempDirectory(o),
        makeTempDirectoryScoped: (o) => base.makeTempDirectoryScoped(o),
        makeTempFile: (o) => base.makeTempFile(o),
        makeTempFileScoped: (o) => base.makeTempFileScoped(o),
        open: (p, o) => (note(o?.flag === undefined || o.flag === "r" ? "read" : "write", "open", p), base.open(p, o)),
        readDirectory: (p, o) => (note("read", "readDirectory", p), base.readDirectory(p, o)),
        readFile: (p) => (note("read", "readFile", p), base.readFile(p)),
        readLink: (p) => (note("read", "readLink", p), base.readLink(p)),
        realPath: (p) => (note("read", "realPath", p), base.realPath(p)),
        remove: (p, o) => (note("write", "remove", p), base.remove(p, o)),
        rename: (a, b) => (note("write", "rename", a, b), base.rename(a, b)),
        stat: (p) => (note("read", "stat", p), base.stat(p)),
        symlink: (t, p) => (note("write", "symlink", p), base.symlink(t, p)),
        truncate: (p, l) => (note("write", "truncate", p), base.truncate(p, l)),
        utimes: (p, a, m) => (note("write", "utimes", p), base.utimes(p, a, m)),
        watch: (p, o) => base.watch(p, o),
        writeFile: (p, d, o) => (note("write", "writeFile", p), base.writeFile(p, d, o))
      })
    })
  )

const makeTree = () => {
  const root = NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), "observed-footprints-")))
  const write = (rel: string, content: string) => {
    NFS.mkdirSync(NPath.dirname(NPath.join(root, rel)), { recursive: true })
    NFS.writeFileSync(NPath.join(root, rel), content)
  }
  write("a.txt", "alpha beta\n")
  write("s/x.txt", "alpha x\n")
  write("s/deep/y.txt", "gamma\n")
  write(
    "n.ipynb",
    JSON.stringify({
      cells: [{ cell_type: "code", source: ["print(1)\n"], metadata: {}, outputs: [] }],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5
    })
  )
  NFS.symlinkSync("s", NPath.join(root, "l"))
  NFS.linkSync(NPath.join(root, "a.txt"), NPath.join(root, "s", "hard.txt"))
  return root
}

const File = FastCheck.constantFrom(
  "a.txt",
  "s/x.txt",
  "s/hard.txt",
  "l/x.txt",
  "l/../a.txt",
  "l/deep/../x.txt",
  "missing.txt",
  "s/new/z.txt"
)
const Call = FastCheck.oneof(
  FastCheck.record({ tool: FastCheck.constant("Read" as const), file: File }),
  FastCheck.record({ tool: FastCheck.constant("Write" as const), file: File }),
  FastCheck.record({
    tool: FastCheck.constant("Edit" as const),
    file: File,
    old: FastCheck.constantFrom("alpha", "absent")
  }),
  FastCheck.record({
    tool: FastCheck.constant("NotebookEdit" as const),
    file: FastCheck.constantFrom("n.ipynb", "missing.ipynb")
  }),
  FastCheck.record({
    tool: FastCheck.constant("Glob" as const),
    pattern: FastCheck.constantFrom("**/*.txt", "s/*", "<root>/s/**/*.txt", "../<base>/l/*", "*.ipynb"),
    path: FastCheck.constantFrom(undefined, "s", "l")
  }),
  FastCheck.record({
    tool: FastCheck.constant("Grep" as const),
    pattern: FastCheck.constantFrom("alpha", "gamma"),
    path: FastCheck.constantFrom(undefined, "s", "l", "a.txt", "l/../s")
  })
)
type Call = typeof Call extends FastCheck.Arbitrary<infer A> ? A : never

const inputOf = (root: string, call: Call): Record<string, unknown> => {
  switch (call.tool) {
    case "Read":
      return { file_path: call.file }
    case "Write":
      return { file_path: call.file, content: "written alpha\n" }
    case "Edit":
      return { file_path: call.file, old_string: call.old, new_string: "omega" }
    case "NotebookEdit":
      return { notebook_path: call.file, cell_number: 0, new_source: "print(2)\n" }
    case "Glob":
      return {
        pattern: call.pattern.replace("<root>", root).replace("<base>", NPath.basename(root)),
        ...(call.path === undefined ? {} : { path: call.path })
      }
    case "Grep":
      return { pattern: call.pattern, ...(call.path === undefined ? {} : { path: call.path }) }
  }
}

/** The absolute path a method was given, `..` resolved the way the kernel does (the tree's one link is `l`). */
const canonical = (p: string): string => {
  let existing = NPath.resolve(p)
  const rest: Array<string> = []
  while (!NFS.existsSync(existing) && existing !== "/") {
    rest.unshift(NPath.basename(existing))
    existing = NPath.dirname(existing)
  }
  return NPath.join(NFS.realpathSync(existing), ...rest)
}

/** The declared resource that covers an access, if one does. */
const covered = (declared: Footprint.Footprint, access: Access): boolean => {
  const target = canonical(access.path)
  const writes = declared.writes ?? []
  const touched = access.mode === "read" ? [...(declared.reads ?? []), ...writes] : writes
  if (touched.some((resource) => Footprint.overlaps(resource, target))) return true
  // A write tool's own temp file beside its target.
  const temp = /^\.(.+)\.[0-9a-f]+\.tmp$/.exec(NPath.basename(target))
  return access.mode === "write" && temp !== null &&
    writes.some((resource) => Footprint.overlaps(resource, NPath.join(NPath.dirname(target), temp[1]!)))
}

describe("observed ⊆ declared for the built-in tools' own calls (SPEC §4.13, §5)", () => {
  it.scopedLive.prop(
    "every path a Read, Write, Edit, NotebookEdit, Glob or Grep call touches is in its footprint",
    [FastCheck.array(Call, { minLength: 1, maxLength: 6 })],
    ([calls]) =>
      Effect.gen(function*() {
        const root = makeTree()
        const log: Array<Access> = []
        const recording = { on: false }
        const tools = Layer.mergeAll(Read.layer, Write.layer, Edit.layer, NotebookEdit.layer, Glob.layer, Grep.layer)
          .pipe(
            Layer.provideMerge(Registry.layer()),
            Layer.provideMerge(Results.layerMemory),
            Layer.provideMerge(Layer.mergeAll(
              Layer.succeed(Glob.GlobEngine, "walk"),
              Layer.succeed(Grep.GrepEngine, "builtin")
            )),
            Layer.provide(recordingLayer(log, recording)),
            Layer.provideMerge(NodeContext.layer)
          )
        yield* Effect.gen(function*() {
          const context = yield* Ref.make(ToolUseContext.make({
            cwd: root,
            permissions: { ...PermissionContext.empty, mode: "bypassPermissions" }
          }))
          const env = yield* Execution.makeEnvironment(context)
          for (const [i, call] of calls.entries()) {
            const tool = env.tools.find((t) => t.name === call.tool)!
            const input = inputOf(root, call)
            const declared = tool.footprint!(input, yield* Ref.get(context))
            const footprint = Footprint.trusted(Effect.isEffect(declared) ? yield* declared : declared)
            log.length = 0
            recording.on = true
            const events = yield* Stream.runCollect(
              Execution.runToolUse(Messages.toolUse(`t${i}`, call.tool, input), env)
            )
            recording.on = false
            const result = Chunk.toArray(events).filter(DispatchEvent.isResult)[0]!
            const outside = log.filter((access) => !covered(footprint, access))
            expect(
              outside,
              `${call.tool} ${JSON.stringify(input)} → ${result.status}: declared ${JSON.stringify(footprint)}`
            ).toEqual([])
          }
        }).pipe(Effect.provide(tools))
        NFS.rmSync(root, { recursive: true, force: true })
        return true
      }),
    { timeout: 120_000, fastCheck: { numRuns: 40 } }
  )
})
