import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect, layer } from "@effect/vitest"
import * as RealPath from "@switchyard/core/RealPath"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

layer(NodeContext.layer)("RealPath.reachesProcess", (it) => {
  describe("paths that mean something else in the process that opens them", () => {
    it.effect("as written, through a link, through a chain of links, and through /dev/fd", () =>
      Effect.gen(function*() {
        const fileSystem = yield* FileSystem.FileSystem
        const paths = yield* Path.Path
        const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-reaches-")))
        fs.symlinkSync("/proc/self/cwd", path.join(dir, "here"))
        fs.symlinkSync("here", path.join(dir, "chain"))
        fs.symlinkSync("/proc/1/root", path.join(dir, "init"))
        fs.mkdirSync(path.join(dir, "d"))
        fs.symlinkSync("../d", path.join(dir, "plain"))
        const reaches = (p: string) => RealPath.reachesProcess(fileSystem, paths, p)
        for (
          const p of [
            "/proc/self/cwd/.env",
            "/proc/thread-self/root/etc/passwd",
            "/proc/self/../self/cwd",
            `${dir}/here/.env`,
            `${dir}/chain/x`,
            `${dir}/init/etc`,
            `${dir}/d/../here/.env`,
            "/dev/fd/3"
          ]
        ) expect(yield* reaches(p), p).toBe(true)
        // Ordinary paths and links, and the standard streams (nothing to resolve there).
        for (
          const p of [
            `${dir}/plain/x`,
            `${dir}/d`,
            "/etc/hostname",
            "/dev/stdin",
            "/dev/stderr",
            "/dev/fd/1",
            "/proc/cpuinfo"
          ]
        ) {
          expect(yield* reaches(p), p).toBe(false)
        }
        // A loop of links fails closed.
        fs.symlinkSync("loop-b", path.join(dir, "loop-a"))
        fs.symlinkSync("loop-a", path.join(dir, "loop-b"))
        expect(yield* reaches(`${dir}/loop-a/x`)).toBe(true)
      }))
  })
})
