/**
 * `switchyard demo`: the offline main job. Copies a small bundled project to a
 * temporary directory and replays a bundled session against it with the real
 * tools: parallel reads and a grep while the model is still streaming, two
 * edits, the tests, and a failing Bash call that cancels its running sibling.
 * Ends with a summary of what ran in parallel and the time saved against
 * running every call one after another. No network, no API key.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as PermissionContext from "@switchyard/core/PermissionContext"
import * as ReplayModel from "@switchyard/core/ReplayModel"
import * as Settings from "@switchyard/core/Settings"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import * as CliError from "./CliError.js"
import * as LoopRunner from "./LoopRunner.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as Timeline from "./Timeline.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly keep: boolean
  readonly outputFormat: "text" | "json" | "stream-json"
}

/**
 * Where the bundled demo lives (works from `src` and `dist`).
 *
 * @since 0.1.0
 * @category constants
 */
export const assetsDirectory = fileURLToPath(new URL("../assets/demo/", import.meta.url))

/** The demo's permissions: edits are accepted, and the test command is allowed by a rule. */
const demoPermissions = (cwd: string): PermissionContext.PermissionContext => ({
  mode: "acceptEdits",
  rules: [PermissionContext.parseRule("Bash(node test/cart.test.js)", "allow", "demo", cwd)!],
  additionalDirectories: []
})

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const transcript = yield* ReplayModel.load(path.join(assetsDirectory, "session.json")).pipe(
      Effect.mapError((error) => CliError.failure(`The bundled demo session is broken: ${error.message}`))
    )
    const root = yield* fs.makeTempDirectory({ prefix: "switchyard-demo-" }).pipe(
      Effect.mapError((error) => CliError.failure(`Cannot create a temporary directory: ${error.message}`))
    )
    const cwd = path.join(root, "tiny-shop")
    yield* fs.copy(path.join(assetsDirectory, "project"), cwd).pipe(
      Effect.mapError((error) => CliError.failure(`Cannot copy the demo project: ${error.message}`))
    )
    const text = options.outputFormat === "text"
    if (text) {
      yield* Output.line(Output.paint("bold", "Switchyard demo") + Output.paint("gray", ` — a replayed session in ${cwd}`))
      yield* Output.line(Output.paint("gray", "Tools really run; the model is a recording. No network, no API key.\n"))
    }
    const settings = Settings.merge([], { home: root, path, issues: [] })
    const prepared: Runtime.Prepared = { cwd, settings, permissions: demoPermissions(cwd), warnings: [] }
    const t0 = yield* Clock.currentTimeMillis
    const outcome = yield* LoopRunner.runOnce(
      transcript.turns[0]?.expect?.user_text_includes ?? "Fix the failing test",
      ToolUseContext.make({ cwd, permissions: prepared.permissions }),
      text ? "transcript" : options.outputFormat
    ).pipe(
      Effect.provide(
        Runtime.layer(prepared, { model: ReplayModel.layer(transcript), prompt: Runtime.noPrompt("the demo does not ask") })
      ),
      Effect.ensuring(options.keep ? Effect.void : fs.remove(root, { recursive: true }).pipe(Effect.ignore))
    )
    const wall = (yield* Clock.currentTimeMillis) - t0
    if (text) yield* summary(outcome, wall, options.keep ? cwd : undefined)
    yield* LoopRunner.failUnlessEnded(outcome, !text)
  })

/**
 * Per turn: when the response ended, when the turn ended, and the tool runs.
 * The baseline is what a runtime that waits for the whole response and then
 * runs the calls one after another would wait after the response.
 *
 * @since 0.1.0
 * @category measuring
 */
export const turnTimings = (outcome: LoopRunner.Outcome) => {
  const runs = outcome.printer.runs
  return outcome.events.flatMap((event) => {
    if (event._tag !== "ResponseEnded") return []
    const ended = outcome.events.find((e) => e._tag === "TurnEnded" && e.turn === event.turn)
    const inTurn = runs.filter((r) => r.turn === event.turn)
    if (ended?._tag !== "TurnEnded" || inTurn.length === 0) return []
    const serialMs = Timeline.savings(inTurn).serialMs
    const waitedMs = Math.max(0, ended.at - event.at)
    return [{
      turn: event.turn,
      runs: inTurn,
      startedWhileStreaming: inTurn.filter((r) => r.startedAt < event.at).length,
      waitedMs,
      baselineMs: serialMs,
      savedMs: Math.max(0, serialMs - waitedMs)
    }]
  })
}

const summary = (outcome: LoopRunner.Outcome, wallMs: number, keptAt: string | undefined) =>
  Effect.gen(function*() {
    const turns = turnTimings(outcome)
    yield* Output.line(`\n${Output.paint("bold", "Summary")}`)
    for (const t of turns) {
      const groups = Timeline.groups(t.runs)
      const parts = groups.map((g) =>
        g.runs.length > 1
          ? `[${g.runs.map((r) => r.label).join(" ∥ ")}]`
          : g.runs[0]!.label
      )
      yield* Output.line(`  turn ${t.turn}: ${parts.join(" → ")}`)
      const notes = [
        `${t.startedWhileStreaming} of ${t.runs.length} started while the response was still streaming`,
        groups.some((g) => g.runs.length > 1) ? `${groups.filter((g) => g.runs.length > 1).reduce((n, g) => n + g.runs.length, 0)} ran in parallel` : undefined,
        `waited ${Timeline.formatMs(t.waitedMs)} after the response (one after another: ${Timeline.formatMs(t.baselineMs)})`
      ].filter((n): n is string => n !== undefined)
      yield* Output.line(Output.paint("gray", `          ${notes.join("; ")}`))
      const cancelled = t.runs.filter((r) => r.status === "cancelled")
      const failed = t.runs.filter((r) => r.status === "error")
      if (cancelled.length > 0 && failed.length > 0) {
        yield* Output.line(
          Output.paint("yellow", `          ${failed.map((r) => r.label).join(", ")} failed → cancelled ${cancelled.map((r) => r.label).join(", ")}`)
        )
      }
    }
    const waited = turns.reduce((n, t) => n + t.waitedMs, 0)
    const baseline = turns.reduce((n, t) => n + t.baselineMs, 0)
    const calls = turns.reduce((n, t) => n + t.runs.length, 0)
    yield* Output.line(
      `  ${calls} tool calls in ${outcome.stopped?.turns ?? turns.length} model turns (${turns.length} with tool calls). After the model finished, turns waited ${Timeline.formatMs(waited)} for tools; ` +
        `waiting for whole responses and running calls one after another would wait ${Timeline.formatMs(baseline)} → ` +
        `${Output.paint("green", `${Timeline.formatMs(Math.max(0, baseline - waited))} saved`)} (whole run ${Timeline.formatMs(wallMs)}).`
    )
    if (keptAt !== undefined) yield* Output.line(Output.paint("gray", `  The edited project is kept at ${keptAt}`))
  })
