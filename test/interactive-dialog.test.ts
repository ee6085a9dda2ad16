/**
 * The permission dialog and the transcript's durations, on the terminal UI
 * with in-memory streams (issue 13): the numbered choices, choice 2 only when
 * a rule could allow the call, keys that arrived before the dialog opened
 * discarded, arrows split from typed text, and call durations without the
 * time spent waiting for the user.
 */
import { describe, expect, it } from "@effect/vitest"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Messages from "@switchyard/core/Messages"
import type * as PermissionChain from "@switchyard/core/PermissionChain"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Render from "@switchyard/cli/Render"
import * as TerminalUi from "@switchyard/cli/TerminalUi"
import { PassThrough } from "node:stream"

const makeUi = () => {
  const input = new PassThrough() as PassThrough & NodeJS.ReadStream
  const chunks: Array<string> = []
  const out = new PassThrough() as PassThrough & NodeJS.WriteStream
  const write = out.write.bind(out)
  const listeners: Array<(text: string) => void> = []
  out.write = ((chunk: string | Uint8Array) => {
    const text = String(chunk)
    chunks.push(text)
    for (const listen of listeners) listen(text)
    return write(chunk)
  }) as typeof out.write
  const ui = new TerminalUi.TerminalUi(input, out)
  ui.open()
  return { ui, input, screen: () => chunks.join(""), onWrite: (f: (text: string) => void) => listeners.push(f) }
}

const question = (suggestions: ReadonlyArray<string>): PermissionChain.Question => ({
  tool: { name: "Bash", isDestructive: () => false } as unknown as PermissionChain.Question["tool"],
  toolUseId: "toolu_1",
  input: { command: "rm -rf build" },
  context: ToolUseContext.make({ cwd: "/tmp" }),
  message: "`rm -rf build` needs approval",
  suggestions
})

const nextTick = () => new Promise((resolve) => setImmediate(resolve))

describe("the permission dialog", () => {
  it("offers 1 yes, 2 don't ask again for the exact rule, 3 no; the number answers", async () => {
    const { input, screen, ui } = makeUi()
    const answer = ui.ask(question(["Bash(rm -rf build)"]))
    await nextTick()
    await nextTick()
    expect(screen()).toMatch(
      /1\. Yes\n[\s\S]*2\. Yes, and don't ask again for Bash\(rm -rf build\)\n[\s\S]*3\. No, and tell the model what to do instead/
    )
    input.write("2")
    expect(await answer).toEqual({ answer: "always", persist: true })
    ui.close()
  })

  it("without a rule that could allow the call there is no choice 2", async () => {
    const { input, screen, ui } = makeUi()
    const answer = ui.ask(question([]))
    await nextTick()
    await nextTick()
    expect(screen()).not.toContain("don't ask again")
    expect(screen()).toMatch(/1\. Yes\n[\s\S]*2\. No, and tell the model/)
    input.write("2")
    await nextTick()
    expect(screen()).toContain("What should the model do instead?")
    input.write("use make clean\r")
    expect(await answer).toEqual({ answer: "no", feedback: "use make clean" })
    ui.close()
  })

  it("keys typed before the dialog opened are discarded; letters never answer; arrows and Enter do", async () => {
    const { input, onWrite, screen, ui } = makeUi()
    let typedAhead = false
    // Typed ahead: arrives in the same turn of the event loop as the dialog opens.
    onWrite((text) => {
      if (!typedAhead && text.includes("3. No")) {
        typedAhead = true
        input.write("1")
      }
    })
    const answer = ui.ask(question(["Bash(rm -rf build)"]))
    let settled = false
    void answer.then(() => (settled = true))
    await nextTick()
    await nextTick()
    await nextTick()
    expect(typedAhead).toBe(true)
    expect(settled).toBe(false)
    input.write("banana")
    await nextTick()
    expect(settled).toBe(false)
    input.write("\x1b[B\x1b[B\x1b[A")
    await nextTick()
    expect(screen()).toMatch(/❯ 2\. Yes, and don't ask again/)
    input.write("\r")
    expect(await answer).toEqual({ answer: "always", persist: true })
    ui.close()
  })

  it("splits escape sequences from typed text", () => {
    expect(TerminalUi.splitKeys("ab\x1b[B\x1bOAc\x1b")).toEqual(["a", "b", "\x1b[B", "\x1bOA", "c", "\x1b"])
  })
})

describe("transcript durations", () => {
  it("a call's duration leaves out the time spent waiting for the user", () => {
    let text = ""
    const printer = new Render.TranscriptPrinter((t) => (text += t))
    const tool = (event: DispatchEvent.DispatchEvent) => printer.handle(QueryLoop.LoopEvent.Tool({ turn: 1, event }))
    printer.handle(
      QueryLoop.LoopEvent.ToolUse({ turn: 1, block: Messages.toolUse("t1", "Bash", { command: "ls" }), at: 0 })
    )
    tool(DispatchEvent.Started({ toolUseId: "t1", name: "Bash", input: {}, at: 0 }))
    tool(DispatchEvent.PermissionRequested({ toolUseId: "t1", name: "Bash", input: {}, message: "ask", at: 100 }))
    tool(
      DispatchEvent.PermissionDecided({
        toolUseId: "t1",
        name: "Bash",
        behavior: "allow",
        source: "user",
        reason: "yes",
        at: 60_100
      })
    )
    tool(DispatchEvent.Result({
      toolUseId: "t1",
      name: "Bash",
      status: "success",
      block: Messages.toolResult("t1", "a\nb"),
      startedAt: 0,
      endedAt: 60_350
    }))
    expect(text).toMatch(/Bash\(ls\) ✓ 350 ms · 2 lines/)
  })
})
