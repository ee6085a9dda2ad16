/**
 * The demo's summary figures (issue 13): the one-after-another baseline
 * counts a call cancelled by a sibling's failure at its full length.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Demo from "@switchyard/cli/Demo"
import * as Timeline from "@switchyard/cli/Timeline"
import * as fs from "node:fs"
import * as path from "node:path"

const run = (id: string, startedAt: number, endedAt: number, extra: Partial<Timeline.Run> = {}): Timeline.Run => ({
  toolUseId: id,
  name: "Bash",
  label: id,
  status: "success",
  startedAt,
  endedAt,
  ...extra
})

describe("demo baseline", () => {
  it("savings add a cut-short run's full duration, never less than it ran", () => {
    const runs = [
      run("a", 0, 100),
      run("slow", 0, 40, { status: "cancelled", fullDurationMs: 5000 }),
      run("b", 0, 40, { status: "error" })
    ]
    expect(Timeline.savings(runs).serialMs).toBe(100 + 5000 + 40)
    expect(Timeline.savings(runs).busyMs).toBe(100)
    expect(Timeline.fullDuration(run("x", 0, 300, { fullDurationMs: 100 }))).toBe(300)
    expect(Timeline.savings([run("a", 0, 100), run("b", 100, 150)]).serialMs).toBe(150)
  })

  it("the script's durations: a Bash call that starts with sleep N takes N seconds", () => {
    expect(Demo.scriptedDurationMs({ name: "Bash", input: { command: "sleep 5 && ls test" } })).toBe(5000)
    expect(Demo.scriptedDurationMs({ name: "Bash", input: { command: "sleep 0.5; ls" } })).toBe(500)
    expect(Demo.scriptedDurationMs({ name: "Bash", input: { command: "cat CHANGELOG.md" } })).toBeUndefined()
    expect(Demo.scriptedDurationMs({ name: "Bash", input: { command: "sleeper 5" } })).toBeUndefined()
    expect(Demo.scriptedDurationMs({ name: "Read", input: { command: "sleep 5" } })).toBeUndefined()
    // The bundled session's slow call is the one the summary relies on.
    const session = fs.readFileSync(path.join(Demo.assetsDirectory, "session.json"), "utf8")
    expect(session).toContain("\"command\": \"sleep 5 && ls test\"")
  })
})
