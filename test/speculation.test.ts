/**
 * SPEC §4.12 speculation through the library: the built-in tools over the
 * overlay, a replayed suggestion, every row of the permission table,
 * accept / reject / conflicts / accept-while-running / pipelining, and the
 * isolation invariant (a rejected speculation leaves the real tree
 * byte-identical whatever paths its tools tried).
 */
import type { ReplayModel } from "@switchyard/core"
import { Messages, Speculation, SuggestionGenerator } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as NFS from "node:fs"
import * as NPath from "node:path"
import {
  tempDir,
  snapshot,
  treeHash,
  project,
  use,
  say,
  turn,
  environment,
  startIn,
  speculate,
  resultText
} from "./support/speculation.js"

describe("Speculation (SPEC §4.12)", () => {
  describe("the permission table, first matching row", () => {
    it.scopedLive("a deny rule denies with an error result, and the speculation goes on", () =>
      Effect.gen(function*() {
        const { outcome, results } = yield* speculate(
          {
            turns: [turn(use("t1", "Bash", { command: "rm notes.txt" })), turn(say("I could not remove it."))]
          },
          "bypassPermissions",
          { rules: [["Bash(rm *)", "deny"]] }
        )
        expect(outcome.boundary.type).toBe("complete")
        expect(results.get("t1")?.is_error).toBe(true)
        expect(resultText(results.get("t1"))).toContain("denied by the rule")
        expect(outcome.writtenPaths).toEqual([])
      }))

    it.scopedLive("a write tool whose real path is outside cwd is denied, and the speculation goes on", () =>
      Effect.gen(function*() {
        const outside = tempDir("spec-outside-")
        const { cwd, outcome, results } = yield* speculate({
          turns: [
            turn(use("t1", "Write", { file_path: NPath.join(outside, "x.txt"), content: "x" })),
            turn(use("t2", "Write", { file_path: "../escape.txt", content: "x" })),
            turn(say("Both were refused."))
          ]
        }, "acceptEdits")
        expect(outcome.boundary.type).toBe("complete")
        expect(results.get("t1")?.is_error).toBe(true)
        expect(resultText(results.get("t1"))).toContain("outside the working directory")
        expect(results.get("t2")?.is_error).toBe(true)
        expect(NFS.readdirSync(outside)).toEqual([])
        expect(NFS.existsSync(NPath.join(NPath.dirname(cwd), "escape.txt"))).toBe(false)
      }))

    for (const mode of ["acceptEdits", "bypassPermissions", "auto"] as const) {
      it.scopedLive(`a write tool in mode ${mode} runs into the overlay; later reads and searches see it; accept applies exactly the written paths`, () =>
        Effect.gen(function*() {
          const { cwd, outcome, results, speculation } = yield* speculate({
            turns: [
              turn(use("r1", "Read", { file_path: "greet.ts" })),
              turn(
                use("e1", "Edit", { file_path: "greet.ts", old_string: "\"hello\"", new_string: "\"hello, overlay\"" }),
                use("w1", "Write", { file_path: "src/extra.ts", content: "export const extra = 1\n" })
              ),
              turn(
                use("r2", "Read", { file_path: "greet.ts" }),
                use("g1", "Grep", { pattern: "overlay", output_mode: "files_with_matches" }),
                use("g2", "Glob", { pattern: "src/*.ts" })
              ),
              turn(say("Done."))
            ]
          }, mode)
          expect(outcome.boundary.type).toBe("complete")
          for (const id of ["r1", "e1", "w1", "r2", "g1", "g2"]) {
            expect([id, results.get(id)?.is_error ?? false]).toEqual([id, false])
          }
          expect(resultText(results.get("r2"))).toContain("hello, overlay")
          expect(resultText(results.get("g1"))).toContain("greet.ts")
          expect(resultText(results.get("g2"))).toContain(NPath.join(cwd, "src", "extra.ts"))
          expect(outcome.writtenPaths).toEqual(["greet.ts", "src/extra.ts"])
          const before = snapshot(cwd)
          const accepted = yield* speculation.accept
          expect(accepted.applied).toEqual(["greet.ts", "src/extra.ts"])
          expect(accepted.conflicts).toEqual([])
          const after = snapshot(cwd)
          const changed = Object.keys({ ...before, ...after }).filter((p) => before[p] !== after[p]).sort()
          expect(changed).toEqual(["greet.ts", "src/extra.ts"])
          expect(after["greet.ts"]).toContain("hello, overlay")
          expect(accepted.timeSavedMs).toBeGreaterThanOrEqual(0)
          // The injected messages: the prompt, each tool turn with its results, the final answer.
          expect(accepted.messages.map((m) => m.role)).toEqual([
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
          ])
          expect(yield* SubscriptionRef.get(speculation.state)).toEqual(Speculation.State.Idle())
        }))
    }

    for (const mode of ["default", "plan", "dontAsk"] as const) {
      it.scopedLive(`a write tool in mode ${mode} is boundary edit`, () =>
        Effect.gen(function*() {
          const { cwd, outcome, speculation } = yield* speculate({
            turns: [turn(use("w1", "Write", { file_path: "new.txt", content: "x" })), turn(say("unreachable"))]
          }, mode)
          // The input as hooks and rules see it: the path made absolute.
          expect(outcome.boundary).toMatchObject({
            type: "edit",
            toolName: "Write",
            input: { file_path: NPath.join(cwd, "new.txt"), content: "x" }
          })
          expect(outcome.writtenPaths).toEqual([])
          expect((yield* SubscriptionRef.get(speculation.state))._tag).toBe("Boundary")
        }))
    }

    it.scopedLive("an explicit ask rule is boundary permission (even for a safe read tool)", () =>
      Effect.gen(function*() {
        const { outcome } = yield* speculate(
          {
            turns: [turn(use("g1", "Grep", { pattern: "milk" })), turn(say("unreachable"))]
          },
          "bypassPermissions",
          { rules: [["Grep", "ask"]] }
        )
        expect(outcome.boundary).toMatchObject({ type: "permission", toolName: "Grep" })
      }))

    it.scopedLive("read-only Bash runs while the overlay is empty", () =>
      Effect.gen(function*() {
        const { outcome, results } = yield* speculate({
          turns: [turn(use("b1", "Bash", { command: "cat notes.txt" })), turn(say("It says milk."))]
        }, "default")
        expect(outcome.boundary.type).toBe("complete")
        expect(resultText(results.get("b1"))).toContain("remember the milk")
      }))

    it.scopedLive("read-only Bash after the overlay has writes is boundary bash", () =>
      Effect.gen(function*() {
        const { outcome } = yield* speculate({
          turns: [
            turn(use("w1", "Write", { file_path: "fresh.txt", content: "new\n" })),
            turn(use("b1", "Bash", { command: "cat notes.txt" })),
            turn(say("unreachable"))
          ]
        }, "acceptEdits")
        expect(outcome.boundary).toMatchObject({ type: "bash", toolName: "Bash", input: { command: "cat notes.txt" } })
        expect(outcome.writtenPaths).toEqual(["fresh.txt"])
      }))

    it.scopedLive("any other Bash command is boundary bash, in every mode", () =>
      Effect.gen(function*() {
        for (const mode of ["default", "bypassPermissions"] as const) {
          const { cwd, outcome } = yield* speculate({
            turns: [turn(use("b1", "Bash", { command: "touch made-by-bash" })), turn(say("unreachable"))]
          }, mode)
          expect(outcome.boundary).toMatchObject({ type: "bash", toolName: "Bash" })
          expect(NFS.existsSync(NPath.join(cwd, "made-by-bash"))).toBe(false)
        }
      }))

    it.scopedLive("any other tool is boundary denied_tool", () =>
      Effect.gen(function*() {
        const { outcome } = yield* speculate({
          turns: [
            turn(use("f1", "WebFetch", { url: "http://127.0.0.1:9/", prompt: "read it" })),
            turn(say("unreachable"))
          ]
        }, "bypassPermissions")
        expect(outcome.boundary).toMatchObject({ type: "denied_tool", toolName: "WebFetch" })
      }))

    it.scopedLive("after 20 turns it stops with boundary max_turns", () =>
      Effect.gen(function*() {
        const turns = Array.from({ length: 21 }, (_, i) => turn(use(`r${i}`, "Read", { file_path: "notes.txt" })))
        const { outcome } = yield* speculate({ turns }, "default")
        expect(outcome.boundary.type).toBe("max_turns")
      }))
  })

  it.scopedLive("accept of a speculation that stopped at a boundary injects only the work before it", () =>
    Effect.gen(function*() {
      const { speculation } = yield* speculate({
        turns: [
          turn(
            { block: { type: "thinking" as const, thinking: "plan it", signature: "sig" } },
            use("r1", "Read", { file_path: "notes.txt" })
          ),
          turn(say("Now I write."), use("w1", "Write", { file_path: "x.txt", content: "x" })),
          turn(say("unreachable"))
        ]
      } as ReplayModel.Transcript, "default")
      const accepted = yield* speculation.accept
      expect(accepted.boundary?.type).toBe("edit")
      const blocks = accepted.messages.flatMap((m) => Messages.blocks(m).map((b) => `${m.role}:${b.type}`))
      // No thinking, no boundary call or its result, no trailing assistant message.
      expect(blocks).toEqual(["user:text", "assistant:tool_use", "user:tool_result"])
      expect(accepted.applied).toEqual([])
    }))

  it.scopedLive("a conflict at accept keeps both versions", () =>
    Effect.gen(function*() {
      const { cwd, speculation } = yield* speculate({
        turns: [
          turn(use("r1", "Read", { file_path: "notes.txt" })),
          turn(
            use("w1", "Write", { file_path: "notes.txt", content: "speculative\n" }),
            use("w2", "Write", { file_path: "shopping.txt", content: "new\n" })
          ),
          turn(say("Done."))
        ]
      }, "acceptEdits")
      NFS.writeFileSync(NPath.join(cwd, "notes.txt"), "the user's own edit\n")
      const accepted = yield* speculation.accept
      expect(accepted.conflicts.map((c) => c.path)).toEqual(["notes.txt"])
      expect(accepted.applied).toEqual(["shopping.txt"])
      expect(NFS.readFileSync(NPath.join(cwd, "notes.txt"), "utf8")).toBe("the user's own edit\n")
      expect(NFS.readFileSync(NPath.join(cwd, "notes.txt.speculated"), "utf8")).toBe("speculative\n")
    }))

  it.scopedLive("accept while it still runs interrupts it and injects only complete work", () =>
    Effect.gen(function*() {
      const cwd = project()
      const firstResults = yield* Deferred.make<void>()
      const transcript: ReplayModel.Transcript = {
        turns: [
          turn(use("w1", "Write", { file_path: "done.txt", content: "finished\n" })),
          { blocks: [{ block: { type: "text", text: "still thinking" }, delayMs: 600_000 }] }
        ]
      }
      const accepted = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "acceptEdits", {
          onEvent: (event) => (event._tag === "ToolResults" ? Deferred.succeed(firstResults, undefined) : Effect.void)
        })
        yield* Deferred.await(firstResults)
        expect((yield* SubscriptionRef.get(speculation.state))._tag).toBe("Running")
        return yield* speculation.accept
      }).pipe(Effect.provide(environment(transcript)))
      expect(accepted.boundary).toBeUndefined()
      expect(accepted.applied).toEqual(["done.txt"])
      expect(NFS.readFileSync(NPath.join(cwd, "done.txt"), "utf8")).toBe("finished\n")
      expect(accepted.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
      expect(accepted.next).toEqual(Option.none())
    }))

  it.scopedLive("pipelining: the next suggestion is ready right after completion and is promoted on accept", () =>
    Effect.gen(function*() {
      const cwd = project()
      const transcript: ReplayModel.Transcript = {
        turns: [
          turn(use("w1", "Write", { file_path: "step1.txt", content: "one\n" })),
          turn(say("Step one done.")),
          {
            expect: { user_text_includes: "now step two" },
            blocks: [use("r1", "Read", { file_path: "step1.txt" }).block].map((block) => ({ block }))
          },
          turn(say("Step two done."))
        ],
        suggestions: ["now step two"]
      }
      const generator = yield* SuggestionGenerator.fromList(transcript.suggestions ?? [])
      const result = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "acceptEdits", { generator })
        expect((yield* speculation.await).boundary.type).toBe("complete")
        expect(yield* speculation.nextSuggestion).toEqual(Option.some("now step two"))
        const accepted = yield* speculation.accept
        expect(Option.isSome(accepted.next)).toBe(true)
        const next = Option.getOrThrow(accepted.next)
        expect(next.suggestion).toBe("now step two")
        const outcome = yield* next.await
        const messages = yield* next.messages
        const read = messages.flatMap(Messages.blocks).find((b) => b.type === "tool_result")
        return { outcome, read }
      }).pipe(Effect.provide(environment(transcript)))
      expect(result.outcome.boundary.type).toBe("complete")
      // The promoted speculation ran on the tree the accept had just written.
      expect(result.read?.type === "tool_result" ? Messages.contentText(result.read.content) : "").toContain("one")
    }))

  it.scopedLive("accept while the next suggestion is still being asked for: accepted, with no next speculation", () =>
    Effect.gen(function*() {
      const cwd = project()
      const transcript: ReplayModel.Transcript = {
        turns: [turn(use("w1", "Write", { file_path: "step1.txt", content: "one\n" })), turn(say("Step one done."))]
      }
      const asked = yield* Deferred.make<void>()
      // The model call for the next suggestion is in flight when the user accepts.
      const generator: SuggestionGenerator.Service = {
        next: () => Effect.zipRight(Deferred.succeed(asked, undefined), Effect.never)
      }
      const accepted = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "acceptEdits", { generator })
        expect((yield* speculation.await).boundary.type).toBe("complete")
        yield* Deferred.await(asked)
        return yield* speculation.accept
      }).pipe(Effect.provide(environment(transcript)))
      expect(Option.isNone(accepted.next)).toBe(true)
      expect(accepted.applied).toEqual(["step1.txt"])
      expect(NFS.readFileSync(NPath.join(cwd, "step1.txt"), "utf8")).toBe("one\n")
    }))

  it.scopedLive("reject deletes the overlay and leaves the real tree untouched", () =>
    Effect.gen(function*() {
      const { before, cwd, speculation } = yield* speculate({
        turns: [turn(use("w1", "Write", { file_path: "notes.txt", content: "gone\n" })), turn(say("Done."))]
      }, "acceptEdits")
      expect(NFS.existsSync(speculation.overlay.directory)).toBe(true)
      yield* speculation.reject
      expect(NFS.existsSync(speculation.overlay.directory)).toBe(false)
      expect(treeHash(cwd)).toBe(before)
    }))

  const Target = FastCheck.constantFrom(
    "notes.txt",
    "src/main.ts",
    "src/new/deep.txt",
    "../escape.txt",
    "./src/../../escape2.txt",
    "link-out/x.txt",
    "link-file",
    "ABSOLUTE_OUTSIDE"
  )
  const Call = FastCheck.oneof(
    FastCheck.record({ tool: FastCheck.constant("Write" as const), path: Target }),
    FastCheck.record({ tool: FastCheck.constant("Edit" as const), path: Target }),
    FastCheck.record({ tool: FastCheck.constant("NotebookEdit" as const), path: Target }),
    FastCheck.record({ tool: FastCheck.constant("Read" as const), path: Target }),
    FastCheck.record({ tool: FastCheck.constant("Bash" as const), path: Target })
  )

  it.scopedLive.prop(
    "isolation: after reject the real tree and the outside are byte-identical, whatever paths the tools tried",
    [FastCheck.array(Call, { minLength: 1, maxLength: 6 })],
    ([calls]) =>
      Effect.gen(function*() {
        const cwd = project()
        const outside = tempDir("spec-iso-outside-")
        NFS.writeFileSync(NPath.join(outside, "target.txt"), "outside\n")
        NFS.symlinkSync(outside, NPath.join(cwd, "link-out"))
        NFS.symlinkSync(NPath.join(outside, "target.txt"), NPath.join(cwd, "link-file"))
        const resolve = (p: string) => (p === "ABSOLUTE_OUTSIDE" ? NPath.join(outside, "target.txt") : p)
        const turns = calls.map((call, i) => {
          const file = resolve(call.path)
          const id = `c${i}`
          switch (call.tool) {
            case "Write":
              return turn(use(id, "Write", { file_path: file, content: `written ${i}\n` }))
            case "Edit":
              return turn(use(id, "Edit", { file_path: file, old_string: "e", new_string: "E", replace_all: true }))
            case "NotebookEdit":
              return turn(use(id, "NotebookEdit", { notebook_path: file, new_source: "x", cell_id: "0" }))
            case "Read":
              return turn(use(id, "Read", { file_path: file }))
            case "Bash":
              return turn(use(id, "Bash", { command: `cat ${file}` }))
          }
        })
        const transcript: ReplayModel.Transcript = { turns: [...turns, turn(say("Done."))] }
        const before = treeHash(cwd)
        const outsideBefore = treeHash(outside)
        yield* Effect.scoped(Effect.gen(function*() {
          const speculation = yield* startIn(cwd, transcript, "bypassPermissions")
          yield* Effect.either(speculation.await)
          yield* speculation.reject
        })).pipe(Effect.provide(environment(transcript)))
        expect(treeHash(cwd)).toBe(before)
        expect(treeHash(outside)).toBe(outsideBefore)
        return true
      }),
    { timeout: 240_000, fastCheck: { numRuns: 25 } }
  )
})
