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
import * as Speculate from "./Speculate.js"
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
export const run = (options: Options) => {
  let cleanup: Effect.Effect<void> = Effect.void
  return Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const transcript = yield* ReplayModel.load(path.join(assetsDirectory, "session.json")).pipe(
      Effect.mapError((error) => CliError.failure(`The bundled demo session is broken: ${error.message}`))
    )
    const root = yield* fs.makeTempDirectory({ prefix: "switchyard-demo-" }).pipe(
      Effect.mapError((error) => CliError.failure(`Cannot create a temporary directory: ${error.message}`))
    )
    cleanup = options.keep ? Effect.void : fs.remove(root, { recursive: true }).pipe(Effect.ignore)
    const cwd = path.join(root, "tiny-shop")
    yield* fs.copy(path.join(assetsDirectory, "project"), cwd).pipe(
      Effect.mapError((error) => CliError.failure(`Cannot copy the demo project: ${error.message}`))
    )
    const text = options.outputFormat === "text"
    if (text) {
      yield* Output.line(
        Output.paint("bold", "Switchyard demo") + Output.paint("gray", ` — a replayed session in ${cwd}`)
      )
      yield* Output.line(Output.paint("gray", "Tools really run; the model is a recording. No network, no API key.\n"))
    }
    const settings = Settings.merge([], { home: root, path, issues: [] })
    // The demo shows the chapter's schedule: parallel batches and sibling cancellation.
    const prepared: Runtime.Prepared = {
      cwd,
      settings,
      permissions: demoPermissions(cwd),
      warnings: [],
      scheduling: "greedy"
    }
    const t0 = yield* Clock.currentTimeMillis
    const outcome = yield* LoopRunner.runOnce(
      transcript.turns[0]?.expect?.user_text_includes ?? "Fix the failing test",
      ToolUseContext.make({ cwd, permissions: prepared.permissions }),
      text ? "transcript" : options.outputFormat,
      { scheduling: prepared.scheduling }
    ).pipe(
      Effect.provide(
        Runtime.layer(prepared, {
          model: ReplayModel.layer(transcript),
          prompt: Runtime.noPrompt("the demo does not ask")
        })
      )
    )
    const wall = (yield* Clock.currentTimeMillis) - t0
    if (text) {
      // The speculation step: the suggested follow-up runs in an overlay while the summary prints.
      const followUp = yield* ReplayModel.load(path.join(assetsDirectory, "speculation.json")).pipe(
        Effect.mapError((error) => CliError.failure(`The bundled demo follow-up is broken: ${error.message}`))
      )
      yield* Speculate.demoStep({
        context: ToolUseContext.make({ cwd, permissions: prepared.permissions }),
        transcript: followUp,
        meanwhile: summary(outcome, wall, options.keep ? cwd : undefined)
      }).pipe(Effect.catchAll((error) => Output.warn(`The speculation step failed: ${error.message}`)))
    }
    yield* LoopRunner.failUnlessEnded(outcome)
  }).pipe(Effect.ensuring(Effect.suspend(() => cleanup)))
}

/**
 * How long a call of the demo's script takes run to the end, when the script
 * says: a Bash command that starts with `sleep N` (the slow listing,
 * `sleep 5 && ls test`) takes at least N seconds.
 *
 * @since 0.1.0
 * @category measuring
 */
export const scriptedDurationMs = (block: { readonly name: string; readonly input: unknown }): number | undefined => {
  if (block.name !== "Bash" || typeof block.input !== "object" || block.input === null) return undefined
  const command = (block.input as { readonly command?: unknown }).command
  const sleep = typeof command === "string" ? /^\s*sleep\s+(\d+(?:\.\d+)?)(?:\s|;|&|$)/.exec(command) : null
  return sleep === null ? undefined : Number(sleep[1]) * 1000
}

/**
 * Per turn: when the response ended, when the turn ended, and the tool runs.
 * The baseline is what a runtime that waits for the whole response and then
 * runs the calls one after another would wait after the response.
 *
 * @since 0.1.0
 * @category measuring
 */
export const turnTimings = (outcome: LoopRunner.Outcome) => {
  const calls = new Map(
    outcome.events.flatMap((e) => (e._tag === "ToolUse" ? [[e.block.id, e.block] as const] : []))
  )
  // A call cancelled by a sibling's failure ran shorter than it would have: the one-after-another
  // baseline counts its scripted duration.
  const order = [...calls.keys()]
  const runs = [...outcome.printer.runs].sort((a, b) => order.indexOf(a.toolUseId) - order.indexOf(b.toolUseId)).map(
    (run) => {
      const block = calls.get(run.toolUseId)
      const full = run.status === "cancelled" && block !== undefined ? scriptedDurationMs(block) : undefined
      return full === undefined ? run : { ...run, fullDurationMs: full }
    }
  )
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
        groups.some((g) => g.runs.length > 1)
          ? `${groups.filter((g) => g.runs.length > 1).reduce((n, g) => n + g.runs.length, 0)} ran in parallel`
          : undefined,
        `waited ${Timeline.formatMs(t.waitedMs)} after the response (one after another: ${
          Timeline.formatMs(t.baselineMs)
        })`
      ].filter((n): n is string => n !== undefined)
      yield* Output.line(Output.paint("gray", `          ${notes.join("; ")}`))
      const cancelled = t.runs.filter((r) => r.status === "cancelled")
      const failed = t.runs.filter((r) => r.status === "error")
      if (cancelled.length > 0 && failed.length > 0) {
        yield* Output.line(
          Output.paint(
            "yellow",
            `          ${failed.map((r) => r.label).join(", ")} failed → cancelled ${
              cancelled.map((r) => r.label).join(", ")
            }`
          )
        )
      }
    }
    const waited = turns.reduce((n, t) => n + t.waitedMs, 0)
    const baseline = turns.reduce((n, t) => n + t.baselineMs, 0)
    const calls = turns.reduce((n, t) => n + t.runs.length, 0)
    yield* Output.line(
      `  ${calls} tool calls in ${
        outcome.stopped?.turns ?? turns.length
      } model turns (${turns.length} with tool calls). After the model finished, turns waited ${
        Timeline.formatMs(waited)
      } for tools; ` +
        `waiting for whole responses and running calls one after another would wait ${Timeline.formatMs(baseline)} → ` +
        `${Output.paint("green", `${Timeline.formatMs(Math.max(0, baseline - waited))} saved`)} (whole run ${
          Timeline.formatMs(wallMs)
        }).`
    )
    if (keptAt !== undefined) yield* Output.line(Output.paint("gray", `  The edited project is kept at ${keptAt}`))
  })
