/**
 * SPEC §4.12, issue 20 item 7: what accepting a speculation hands over to the
 * session — its messages and its context changes (read state, todos) in call
 * order, as one step; a background Bash is a boundary; the time saved counts
 * only the work accept keeps; a failure after the overlay is applied cannot
 * fail accept. Judged by the session's next Edit (the file on disk), the
 * process table and the real tree.
 */
import type { ReplayModel } from "@switchyard/core"
import { DispatchEvent, Execution, Messages, Permissions, Speculation, SuggestionGenerator } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { contextFor, environment, project, say, startIn, state, toolsLayer, turn, use } from "./support/speculation.js"

describe("Speculation handoff (SPEC §4.12)", () => {
  it.scopedLive("accept hands over the read state and todos: the session's next Edit of a file the speculation read succeeds", () =>
    Effect.gen(function*() {
      const cwd = project()
      const todos = [{ content: "Update the notes", status: "in_progress", activeForm: "Updating the notes" }]
      const transcript: ReplayModel.Transcript = {
        turns: [
          turn(use("r1", "Read", { file_path: "notes.txt" }), use("t1", "TodoWrite", { todos })),
          turn(say("I have read the notes."))
        ]
      }
      const session = yield* Ref.make(contextFor(cwd, "acceptEdits"))
      const result = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "acceptEdits")
        expect((yield* speculation.await).boundary.type).toBe("complete")
        const accepted = yield* speculation.acceptInto(session)
        // The session goes on with an Edit of the file only the speculation read.
        const registry = yield* Layer.build(toolsLayer)
        const env = yield* Execution.makeEnvironment(session).pipe(Effect.provide(registry))
        const events = yield* Stream.runCollect(Execution.runToolUse(
          Messages.toolUse("e1", "Edit", {
            file_path: NPath.join(cwd, "notes.txt"),
            old_string: "milk",
            new_string: "bread"
          }),
          env
        )).pipe(
          Effect.provide(registry),
          // The engine's default policy runs only read-only calls; the Edit's own read-state check is what is judged.
          Effect.provideService(Permissions.PermissionPolicy, Permissions.allowAll)
        )
        return { accepted, edit: Chunk.toArray(events).filter(DispatchEvent.isResult)[0]! }
      }).pipe(Effect.provide(environment(transcript)))
      expect(result.accepted.modifiers.length).toBeGreaterThan(0)
      expect(result.edit.status, Messages.contentText(result.edit.block.content)).toBe("success")
      expect(NFS.readFileSync(NPath.join(cwd, "notes.txt"), "utf8")).toBe("remember the bread\n")
      const context = yield* Ref.get(session)
      expect(context.todos).toEqual(todos)
      // The messages came in with the context changes.
      expect(context.messages.flatMap(Messages.blocks).some((b) => b.type === "tool_use" && b.id === "r1")).toBe(true)
    }))

  it.scopedLive("a background Bash is a boundary: no process outlives the speculation", () =>
    Effect.gen(function*() {
      const cwd = project()
      // A read-only command, so only the background row can stop it; a unique duration to find it by.
      const command = "sleep 41.37"
      const transcript: ReplayModel.Transcript = {
        turns: [turn(use("b1", "Bash", { command, run_in_background: true })), turn(say("Started it."))]
      }
      const outcome = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "bypassPermissions")
        const outcome = yield* speculation.await
        yield* speculation.accept
        return outcome
      }).pipe(Effect.provide(environment(transcript)))
      expect(outcome.boundary).toMatchObject({ type: "bash", toolName: "Bash" })
      const processes = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      expect(processes).not.toContain(command)
    }))

  it.scoped("time_saved_ms counts only the work accept keeps, not the time the unfinished turn ran", () =>
    Effect.gen(function*() {
      const cwd = project()
      const firstResults = yield* Deferred.make<void>()
      const transcript: ReplayModel.Transcript = {
        turns: [
          turn(use("r1", "Read", { file_path: "notes.txt" })),
          // Still streaming when the user accepts: this turn is dropped.
          { blocks: [{ block: { type: "text", text: "thinking further" }, delayMs: 600_000 }] }
        ]
      }
      const accepted = yield* Effect.gen(function*() {
        const speculation = yield* startIn(cwd, transcript, "default", {
          onEvent: (event) => (event._tag === "ToolResults" ? Deferred.succeed(firstResults, undefined) : Effect.void)
        })
        yield* Deferred.await(firstResults)
        // The user reads the suggestion for 30 s while the second turn is still coming.
        yield* TestClock.adjust(30_000)
        return yield* speculation.accept
      }).pipe(Effect.provide(environment(transcript)))
      // The Read and its result are kept; they were done at once. The 30 s of the dropped turn are not saved.
      expect(accepted.messages.flatMap(Messages.blocks).map((b) => b.type)).toEqual(["text", "tool_use", "tool_result"])
      expect(accepted.timeSavedMs).toBe(0)
    }))

  it.scopedLive("accept is atomic: a next speculation that cannot start does not fail an accept that applied", () =>
    Effect.gen(function*() {
      const cwd = project()
      const transcript: ReplayModel.Transcript = {
        turns: [turn(use("w1", "Write", { file_path: "made.txt", content: "made\n" })), turn(say("Done."))],
        suggestions: ["and then?"]
      }
      const generator = yield* SuggestionGenerator.fromList(transcript.suggestions ?? [])
      // The tools build once; the promoted speculation's build fails.
      let builds = 0
      const tools = Layer.unwrapEffect(
        Effect.sync(() => builds++ === 0 ? toolsLayer : Layer.fail(new Error("the second build fails")))
      )
      const session = yield* Ref.make(contextFor(cwd, "acceptEdits"))
      const accepted = yield* Effect.gen(function*() {
        const speculation = yield* Speculation.start("Do the task", contextFor(cwd, "acceptEdits"), {
          tools,
          generator,
          directory: NPath.join(state, `overlay-${Math.random().toString(36).slice(2)}`)
        })
        yield* speculation.await
        yield* speculation.nextSuggestion
        return yield* Effect.either(speculation.acceptInto(session))
      }).pipe(Effect.provide(environment(transcript)))
      expect(accepted._tag).toBe("Right")
      if (accepted._tag !== "Right") return
      expect(accepted.right.next).toEqual(Option.none())
      expect(NFS.readFileSync(NPath.join(cwd, "made.txt"), "utf8")).toBe("made\n")
      expect((yield* Ref.get(session)).messages.length).toBe(accepted.right.messages.length)
    }))
})
