/**
 * The streaming executor's state transitions (SPEC §4.8, §4.13), driven by
 * hand: no fibers, no clock — a driver that records which calls it was asked
 * to start, and completions fed in as the glue would.
 */
import { DispatchEvent, type Footprint, Messages, Tool, ToolCall, ToolUseContext } from "@switchyard/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as State from "../src/internal/executorState.js"

const anyTool = Tool.make("Bash", { description: "", input: Schema.Struct({}), call: () => Effect.succeed("") })

const setup = (options: Partial<State.Config> = {}) => {
  const started: Array<string> = []
  const state = new State.ExecutorState(
    { cap: 10, scheduling: "footprints", siblingCancellation: "dependents", ...options },
    ToolUseContext.make({ cwd: "/r" }),
    { start: (tool) => void started.push(tool.block.id) }
  )
  const add = (id: string, footprint: Footprint.Footprint, declared = true) =>
    state.add(ToolCall.parsed(Messages.toolUse(id, "Bash", {})), {
      tool: anyTool,
      isConcurrencySafe: false,
      footprint,
      declared
    }, 0)
  const tool = (id: string) => state.tools.find((t) => t.block.id === id)!
  const end = (id: string, isError = false) =>
    state.complete(tool(id), {
      _tag: "Outcome",
      result: DispatchEvent.Result({
        toolUseId: id,
        name: "Bash",
        status: isError ? "error" : "success",
        block: Messages.toolResult(id, isError ? "failed" : "ok", isError),
        startedAt: 0,
        endedAt: 1
      }),
      modifiers: [],
      abort: undefined,
      stop: undefined
    }, 1)
  return { state, started, add, tool, end }
}

describe("executor state (SPEC §4.8, §4.13)", () => {
  it("a call starts once the earlier calls it conflicts with have completed", () => {
    const { add, end, started, tool } = setup()
    add("a", { writes: ["/r/a"] })
    add("b", { writes: ["/r/b"] })
    add("a2", { reads: ["/r/a"] })
    expect(started).toEqual(["a", "b"])
    expect(tool("a2").waitedFor).toEqual([{ toolUseId: "a", name: "Bash", reason: "writes /r/a" }])
    end("a")
    expect(started).toEqual(["a", "b", "a2"])
  })

  it("a failed Bash call cancels its data dependents, transitively; a write after its read runs", () => {
    const { add, end, started, tool } = setup()
    add("read", { reads: ["/r/a"] })
    add("overwrite", { writes: ["/r/a"] })
    add("mk", { writes: ["/r/d"] })
    add("inside", { writes: ["/r/d/x"] })
    add("after", { reads: ["/r/d/x"] })
    expect(started).toEqual(["read", "mk"])
    end("read", true)
    expect(started).toEqual(["read", "mk", "overwrite"])
    end("mk", true)
    expect(tool("inside").status).toBe("completed")
    expect(tool("inside").result!.status).toBe("cancelled")
    expect(tool("after").result!.status).toBe("cancelled")
    expect(started).not.toContain("after")
  })

  it("a barrier that ran hands the declared footprints behind it back for resolution, and nothing starts meanwhile", () => {
    const { add, end, started, state, tool } = setup()
    add("ln", { writes: ["*"] }, false)
    add("edit", { writes: ["/r/l/f"] })
    add("read", { reads: ["/x/f"] })
    add("next", { writes: ["*"] }, false)
    add("later", { reads: ["/r/z"] })
    const { resolve } = end("ln")
    // Only the calls up to the next barrier; those behind it are resolved when it has run.
    expect(resolve.map((t) => t.block.id)).toEqual(["edit", "read"])
    expect(started).toEqual(["ln"])
    // Through the new link the edit writes /x/f: the read now waits for it.
    state.resolved(resolve, [{ writes: ["/x/f"] }, { reads: ["/x/f"] }], 2)
    expect(started).toEqual(["ln", "edit"])
    expect(tool("read").waitedFor).toContainEqual({ toolUseId: "edit", name: "Bash", reason: "writes /x/f" })
    end("edit")
    expect(started).toEqual(["ln", "edit", "read"])
  })
})
