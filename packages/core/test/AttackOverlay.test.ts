/**
 * Adversarial review of accept's conflict handling (issue 12: "the
 * speculative version is kept beside it, so neither is lost"): the name it is
 * kept under may already be taken — by a file of the user's, or by a file the
 * speculation itself writes. Judged by the bytes on disk after apply.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { OverlayFileSystem } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as NFS from "node:fs"
import * as os from "node:os"
import * as NPath from "node:path"

const tempDir = (prefix: string) => NFS.realpathSync(NFS.mkdtempSync(NPath.join(os.tmpdir(), prefix)))

describe("attack: accept never loses a file while keeping a conflicting version", () => {
  it.effect.prop(
    "taken .speculated names (the user's files, the speculation's own) survive apply; the speculative version is kept too",
    [FastCheck.record({ userTaken: FastCheck.nat({ max: 2 }), speculationWritesKeptName: FastCheck.boolean() })],
    ([{ speculationWritesKeptName, userTaken }]) =>
      Effect.scoped(Effect.gen(function*() {
        const root = tempDir("attack-overlay-")
        NFS.writeFileSync(NPath.join(root, "a"), "original")
        const users: Record<string, string> = {}
        for (let i = 0; i < userTaken; i++) {
          const name = i === 0 ? "a.speculated" : `a.speculated.${i}`
          users[name] = `the user's ${name}`
          NFS.writeFileSync(NPath.join(root, name), users[name]!)
        }
        const overlay = yield* OverlayFileSystem.make({
          cwd: root,
          directory: NPath.join(tempDir("attack-overlay-state-"), "o")
        })
        yield* overlay.fileSystem.writeFileString(NPath.join(root, "a"), "speculative")
        const own = `a.speculated.${userTaken === 0 ? "" : userTaken}`.replace(/\.$/, "")
        if (speculationWritesKeptName && !(own in users)) {
          yield* overlay.fileSystem.writeFileString(NPath.join(root, own), "the speculation's own file")
        }
        NFS.writeFileSync(NPath.join(root, "a"), "the user's edit")
        const result = yield* overlay.apply
        expect(NFS.readFileSync(NPath.join(root, "a"), "utf8")).toBe("the user's edit")
        for (const [name, content] of Object.entries(users)) {
          expect(NFS.readFileSync(NPath.join(root, name), "utf8"), name).toBe(content)
        }
        if (speculationWritesKeptName && !(own in users)) {
          expect(NFS.readFileSync(NPath.join(root, own), "utf8")).toBe("the speculation's own file")
        }
        const kept = result.conflicts.find((conflict) => conflict.path === "a")?.kept
        expect(kept).toBeDefined()
        expect(NFS.readFileSync(NPath.join(root, kept!), "utf8")).toBe("speculative")
      })).pipe(Effect.provide(NodeContext.layer)),
    { fastCheck: { numRuns: 12 } }
  )
})
