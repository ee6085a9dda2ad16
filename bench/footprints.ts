/**
 * Issue 15: footprint scheduling and failure isolation, side by side with the
 * chapter's greedy schedule.
 * - 8 edits of 8 files plus 8 reads of them, 50 ms each: wall time and the
 *   ratio to each schedule's ideal (greedy: the 8 edits one by one, then the
 *   reads together; footprints: every edit at once, each read after its edit).
 * - 6 parallel calls (writing different files), one failing early: calls
 *   completed under `bash` (the chapter's cascade) vs `dependents`.
 */
import type { Execution } from "@switchyard/core"
import { Messages, Permissions, Results, StreamingExecutor, Tool, ToolUseContext } from "@switchyard/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { fmt, record, timeEffect } from "./harness.js"

const SUITE = "footprints"
const MS = 50

const Input = Schema.Struct({ file: Schema.String, ms: Schema.Number, fail: Schema.optional(Schema.Boolean) })

const edit = Tool.make("Edit", {
  description: "edits one file",
  input: Input,
  footprint: (input) => ({ reads: [input.file], writes: [input.file] }),
  call: (input) => Effect.as(Effect.sleep(input.ms), "edited")
})
const read = Tool.make("Read", {
  description: "reads one file",
  input: Input,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  footprint: (input) => ({ reads: [input.file] }),
  call: (input) => Effect.as(Effect.sleep(input.ms), "read")
})
const bash = Tool.make("Bash", {
  description: "writes one file, or fails",
  input: Input,
  footprint: (input) => ({ writes: [input.file] }),
  call: (input) =>
    input.fail === true
      ? Effect.zipRight(Effect.sleep(input.ms), Effect.fail(new Tool.ToolError({ message: "Exit code 1" })))
      : Effect.as(Effect.sleep(input.ms), "ok")
})

const env = Effect.map(
  Ref.make(ToolUseContext.make({ cwd: "/repo", sessionId: "bench" })),
  (context): Execution.Environment => ({ tools: [edit, read, bash], pool: [edit, read, bash], context })
)

const runAll = (calls: ReadonlyArray<Messages.ToolUseBlock>, options: StreamingExecutor.Options) =>
  Effect.flatMap(env, (e) => Stream.runCollect(StreamingExecutor.runAll(calls, e, { concurrency: 10, ...options })))
    .pipe(
      Effect.provide(Results.layerMemory),
      Effect.provideService(Permissions.PermissionPolicy, Permissions.allowAll)
    )

export const run = async () => {
  console.log(`\n## ${SUITE}`)
  const files = Array.from({ length: 8 }, (_, i) => `/repo/src/f${i}.ts`)
  const turn = [
    ...files.map((file, i) => Messages.toolUse(`e${i}`, "Edit", { file, ms: MS })),
    ...files.map((file, i) => Messages.toolUse(`r${i}`, "Read", { file, ms: MS }))
  ]
  const greedyIdeal = 8 * MS + MS
  const footprintIdeal = 2 * MS
  const greedy = await timeEffect(runAll(turn, { scheduling: "greedy" }), { samples: 5, warmup: 1 })
  const footprints = await timeEffect(runAll(turn, { scheduling: "footprints" }), { samples: 5, warmup: 1 })
  record(
    SUITE,
    "8 edits + 8 reads × 50 ms, greedy (ms)",
    fmt(greedy, 1),
    `ideal ${greedyIdeal} ms, ${fmt(greedy / greedyIdeal)}× ideal`
  )
  record(
    SUITE,
    "8 edits + 8 reads × 50 ms, footprints (ms)",
    fmt(footprints, 1),
    `ideal ${footprintIdeal} ms, ${fmt(footprints / footprintIdeal)}× ideal; ${
      fmt(greedy / footprints)
    }× faster than greedy`
  )

  const six = Array.from(
    { length: 6 },
    (_, i) => Messages.toolUse(`b${i}`, "Bash", { file: `/repo/out${i}.txt`, ms: i === 1 ? 10 : 200, fail: i === 1 })
  )
  const completed = async (siblingCancellation: StreamingExecutor.SiblingCancellation) => {
    const events = await Effect.runPromise(runAll(six, { scheduling: "footprints", siblingCancellation }))
    return Array.from(events).filter((e) => e._tag === "Result" && e.status === "success").length
  }
  const underBash = await completed("bash")
  const underDependents = await completed("dependents")
  record(
    SUITE,
    "6 parallel calls, one fails: completed under bash",
    `${underBash} of 6`,
    "the chapter cancels every sibling"
  )
  record(
    SUITE,
    "6 parallel calls, one fails: completed under dependents",
    `${underDependents} of 6`,
    "only calls that conflict with the failed one are cancelled"
  )
}
