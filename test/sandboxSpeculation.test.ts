/**
 * Speculation's Bash in the sandbox (issue 18 item 4, SPEC §4.12): a
 * read-only command runs in the sandbox with the working tree read-only,
 * whatever `sandbox.enabled` says, so even a command the classifier wrongly
 * calls read-only cannot change the real tree; without a working sandbox
 * speculation stops at every Bash call (fail closed). Judged by the real
 * tree's bytes and the results the model saw.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Messages, Registry, ShellAnalysis, Speculation, Tool } from "@switchyard/core"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as BackgroundShells from "@switchyard/tools/BackgroundShells"
import * as Bash from "@switchyard/tools/Bash"
import * as Read from "@switchyard/tools/Read"
import * as Sandbox from "@switchyard/tools/Sandbox"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { contextFor, environment, project, say, speculate, state, treeHash, turn, use } from "./support/speculation.js"

const probed = await Effect.runPromise(Sandbox.probe())
if (!probed.available) {
  console.log(`skipped: the sandbox tests need bubblewrap (Debian package bubblewrap): ${probed.reason}`)
}
const suite = probed.available ? describe : describe.skip

/** A classifier that calls every command read-only: a wrong prediction, which only the sandbox can catch. */
const credulous: ShellAnalysis.Service = {
  split: (command) => Effect.succeed([command]),
  isReadOnly: () => Effect.succeed(true),
  analyze: () => Effect.succeed(Option.none())
}

const credulousTools = Layer.mergeAll(
  Tool.layer(Bash.Bash).pipe(Layer.provide(Layer.succeed(ShellAnalysis.ShellAnalysis, credulous))),
  Read.layer
).pipe(
  Layer.provideMerge(BackgroundShells.layer),
  Layer.provideMerge(Registry.layer()),
  Layer.provide(FetchHttpClient.layer)
)

const resultsOf = (messages: ReadonlyArray<Messages.Message>) =>
  messages.flatMap(Messages.blocks).filter((block): block is Messages.ToolResultBlock => block.type === "tool_result")

suite("Speculation's Bash runs in the sandbox with the working tree read-only", () => {
  it.scopedLive("writes a wrong classifier let through fail, and the real tree stays byte-identical", () =>
    Effect.gen(function*() {
      const cwd = project()
      const before = treeHash(cwd)
      const outside = NPath.join(state, `outside-${Date.now()}.txt`)
      const commands = [
        "echo changed > notes.txt",
        "rm -f greet.ts",
        "mkdir -p made && touch made/x",
        `node -e 'require("fs").writeFileSync("src/main.ts", "")'`,
        `touch ${outside}`,
        "echo tmp > $TMPDIR/scratch && cat $TMPDIR/scratch"
      ]
      // One call per turn: a failed Bash call would cancel its siblings.
      const transcript = {
        turns: [...commands.map((command, i) => turn(use(`b${i}`, "Bash", { command }))), turn(say("Done."))]
      }
      const outcome = yield* Effect.gen(function*() {
        // bypassPermissions: the rules let everything a read-only prediction covers through.
        const speculation = yield* Speculation.start("Do the task", contextFor(cwd, "bypassPermissions"), {
          tools: credulousTools,
          directory: NPath.join(state, `overlay-${Math.random().toString(36).slice(2)}`)
        })
        const outcome = yield* speculation.await
        const results = resultsOf(yield* speculation.messages)
        yield* speculation.reject
        return { outcome, results }
      }).pipe(Effect.provide(environment(transcript)))
      // Every call ran (the checker allowed them), in the sandbox: the writes failed, the temp directory worked.
      expect(outcome.outcome.boundary.type).toBe("complete")
      const texts = outcome.results.map((block) => Messages.contentText(block.content))
      expect(texts.slice(0, 5).every((text) => text.includes("Read-only file system") || text.includes("read-only")))
        .toBe(true)
      expect(texts[5]).toBe("tmp")
      expect(treeHash(cwd)).toBe(before)
      expect(NFS.existsSync(outside)).toBe(false)
    }))

  it.scopedLive("a read-only command still runs to its real result, with sandbox.enabled off", () =>
    Effect.gen(function*() {
      const { outcome, results } = yield* speculate(
        { turns: [turn(use("b", "Bash", { command: "cat notes.txt && ls src" })), turn(say("Done."))] },
        "default"
      )
      expect(outcome.boundary.type).toBe("complete")
      expect(Messages.contentText(results.get("b")!.content)).toBe("remember the milk\nmain.ts")
    }))
})

describe("Speculation without a working sandbox (fail closed)", () => {
  it.scopedLive("every Bash call is boundary bash, read-only ones included, and nothing runs", () =>
    Effect.gen(function*() {
      const cwd = project()
      const marker = NPath.join(state, `ran-${Date.now()}`)
      const missing = Layer.succeed(SandboxPort.Sandbox, SandboxPort.unavailable("bubblewrap is not installed"))
      const { outcome, results } = yield* speculate(
        { turns: [turn(use("b", "Bash", { command: `ls; touch ${marker}` })), turn(say("Done."))] },
        "bypassPermissions",
        { cwd, sandbox: missing }
      )
      expect(outcome.boundary).toMatchObject({ type: "bash", toolName: "Bash" })
      expect(NFS.existsSync(marker)).toBe(false)
      const readOnly = yield* speculate(
        { turns: [turn(use("r", "Bash", { command: "cat notes.txt" })), turn(say("Done."))] },
        "default",
        { cwd, sandbox: missing }
      )
      expect(readOnly.outcome.boundary).toMatchObject({ type: "bash", input: { command: "cat notes.txt" } })
      expect(Messages.contentText(readOnly.results.get("r")!.content)).not.toContain("remember the milk")
      expect(results.size).toBe(1)
    }))
})
