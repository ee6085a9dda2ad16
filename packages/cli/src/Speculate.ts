/**
 * `switchyard speculate PROMPT [--accept] [--replay TRANSCRIPT]`: run a prompt
 * as a speculation (SPEC §4.12) — the agent works in a copy-on-write overlay
 * of the working tree and stops at the first call it cannot take back — and
 * report where it stopped, what it would change (a unified diff) and the time
 * accepting saves. Without `--accept` the overlay is discarded: a safe
 * preview. With `--accept` it is applied.
 *
 * JSON output (fixed names, read by external checks):
 * `{"type":"speculation","boundary":{"type",…},"written_paths":[…],"accepted":bool,"conflicts":[…],"time_saved_ms":n,"messages":[…]}`.
 * Exit 0 whenever the speculation ran, 2 for bad usage, 1 when it could not run.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Messages from "@switchyard/core/Messages"
import type * as OverlayFileSystem from "@switchyard/core/OverlayFileSystem"
import * as ReplayModel from "@switchyard/core/ReplayModel"
import * as Speculation from "@switchyard/core/Speculation"
import * as SuggestionGenerator from "@switchyard/core/SuggestionGenerator"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import { createTwoFilesPatch } from "diff"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as CliError from "./CliError.js"
import * as ModelLayer from "./ModelLayer.js"
import * as Output from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as StreamJson from "./StreamJson.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  readonly prompt: string
  readonly accept: boolean
  readonly replay: string | undefined
  readonly outputFormat: "text" | "json"
  readonly model: string | undefined
}

/**
 * One line saying where a speculation stopped.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeBoundary = (boundary: Speculation.Boundary): string => {
  switch (boundary.type) {
    case "complete":
      return "complete: the model finished the task"
    case "max_turns":
      return `max_turns: stopped after ${Speculation.MAX_TURNS} turns`
    case "error":
      return `error: ${boundary.detail ?? "the loop failed"}`
    default: {
      const what = boundary.type === "edit"
        ? "an edit needs approval in this permission mode"
        : boundary.type === "bash"
        ? "a shell command cannot run in the overlay"
        : boundary.type === "permission"
        ? "an ask rule needs the user"
        : "the tool cannot run during speculation"
      return `${boundary.type}: ${boundary.toolName ?? "a tool"} ${summariseInput(boundary.input)}— ${what}`
    }
  }
}

const summariseInput = (input: unknown): string => {
  if (typeof input !== "object" || input === null) return ""
  const record = input as Record<string, unknown>
  for (const key of ["command", "file_path", "notebook_path", "url", "pattern", "path"]) {
    const value = record[key]
    if (typeof value === "string") return `(${value.length > 80 ? `${value.slice(0, 77)}...` : value}) `
  }
  return ""
}

/**
 * A unified diff of the overlay against the real tree.
 *
 * @since 0.1.0
 * @category formatting
 */
export const diffOverlay = (overlay: OverlayFileSystem.Overlay) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const patches: Array<string> = []
    for (const change of yield* overlay.changes) {
      const before = change.kind === "created"
        ? ""
        : yield* fs.readFileString(change.absolutePath).pipe(Effect.orElseSucceed(() => ""))
      const after = change.content === undefined
        ? ""
        : yield* fs.readFileString(change.content).pipe(Effect.orElseSucceed(() => ""))
      patches.push(
        createTwoFilesPatch(
          change.kind === "created" ? "/dev/null" : `a/${change.path}`,
          change.kind === "deleted" ? "/dev/null" : `b/${change.path}`,
          before,
          after,
          undefined,
          undefined,
          { context: 3 }
        ).replace(/^=+\n/m, "")
      )
    }
    return patches.join("")
  })

const elapsed = (state: Speculation.State): number =>
  state._tag === "Complete" || state._tag === "Boundary" ? Math.max(0, state.endedAt - state.startedAt) : 0

const modelFor = (options: Options) =>
  Effect.gen(function*() {
    if (options.replay === undefined) {
      const model = yield* ModelLayer.layer(options.model)
      const generator = SuggestionGenerator.SuggestionGenerator.pipe(Effect.provide(ModelLayer.suggestionGenerator))
      return { model, generator }
    }
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(options.replay).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* Effect.fail(CliError.badInput(`Transcript not found: ${options.replay}`))
    }
    const transcript = yield* ReplayModel.load(options.replay).pipe(
      Effect.mapError((error) => CliError.badInput(`Invalid transcript ${error.path}: ${error.message}`))
    )
    return {
      model: ReplayModel.layer(transcript),
      generator: SuggestionGenerator.fromList(transcript.suggestions ?? [])
    }
  })

/**
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    if (options.prompt.trim() === "") return yield* Effect.fail(CliError.badInput("speculate needs a prompt"))
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const { generator, model } = yield* modelFor(options)
    const json = options.outputFormat === "json"
    yield* Effect.scoped(Effect.gen(function*() {
      const speculation = yield* Speculation.start(options.prompt, Runtime.toolUseContext(prepared), {
        tools: Runtime.toolsLayer(prepared),
        generator: yield* generator,
        promote: false
      }).pipe(
        Effect.mapError((error) => CliError.failure(`Could not start the speculation: ${error.message}`))
      )
      const outcome = yield* speculation.await.pipe(
        Effect.mapError((error) => CliError.failure(`The speculation failed: ${error.message}`))
      )
      if (outcome.boundary.type === "error") {
        return yield* Effect.fail(
          CliError.failure(`The speculation could not run: ${outcome.boundary.detail ?? "the loop failed"}`)
        )
      }
      const completed = outcome.boundary.type === "complete"
      const diff = json ? "" : yield* diffOverlay(speculation.overlay)
      const preview = {
        messages: Speculation.cleanMessages(yield* speculation.messages, completed),
        timeSavedMs: elapsed(yield* SubscriptionRef.get(speculation.state))
      }
      const next = json ? Option.none<string>() : yield* speculation.nextSuggestion
      let accepted: Speculation.Accepted | undefined
      if (options.accept) {
        accepted = yield* speculation.accept.pipe(
          Effect.mapError((error) => CliError.failure(`Applying the speculation failed: ${error.message}`))
        )
      } else {
        yield* speculation.reject
      }
      const messages: ReadonlyArray<Messages.Message> = accepted?.messages ?? preview.messages
      const timeSavedMs = accepted?.timeSavedMs ?? preview.timeSavedMs
      const conflicts = accepted?.conflicts ?? []
      if (json) {
        return yield* Output.line(JSON.stringify(StreamJson.speculationReport({
          boundary: outcome.boundary,
          writtenPaths: outcome.writtenPaths,
          accepted: accepted !== undefined,
          conflicts: conflicts.map((conflict) => conflict.path),
          timeSavedMs,
          messages
        })))
      }
      yield* Output.line(`${Output.paint("bold", "Speculation")} ${describeBoundary(outcome.boundary)}`)
      yield* Output.line(diff === "" ? Output.paint("gray", "No files changed.") : diff.trimEnd())
      if (accepted !== undefined) {
        yield* Output.line(
          `Accepted: ${accepted.applied.length} file(s) written to ${prepared.cwd}` +
            (conflicts.length > 0 ? `; ${conflicts.length} conflict(s)` : "")
        )
        for (const conflict of conflicts) {
          yield* Output.line(`  ${Output.paint("yellow", "conflict")} ${conflict.message}`)
        }
      } else {
        yield* Output.line(Output.paint("gray", "Preview only: nothing was written (pass --accept to apply it)."))
      }
      yield* Output.line(`Time saved: ${timeSavedMs} ms`)
      if (Option.isSome(next)) yield* Output.line(Output.paint("gray", `Next suggestion: ${next.value}`))
    })).pipe(Effect.provide(Runtime.speculationEnvironment(model, Runtime.sandboxLayer(prepared))))
  })

/**
 * The demo's speculation step: start the suggested follow-up of a replayed
 * session, run `meanwhile` (the demo prints its summary), then accept and
 * show how long accepting took against the work it saved.
 *
 * @since 0.1.0
 * @category running
 */
export const demoStep = <E, R>(options: {
  readonly context: ToolUseContext.ToolUseContext
  readonly transcript: ReplayModel.Transcript
  readonly meanwhile: Effect.Effect<void, E, R>
}) =>
  Effect.scoped(Effect.gen(function*() {
    const generator = yield* SuggestionGenerator.fromList(options.transcript.suggestions ?? [])
    const suggestion = yield* generator.next(options.context.messages)
    if (Option.isNone(suggestion)) return yield* options.meanwhile
    const speculation = yield* Speculation.start(suggestion.value, options.context, {
      tools: Runtime.builtinToolsLayer,
      promote: false
    })
    yield* Output.line(
      Output.paint(
        "gray",
        `\nSuggested next: "${suggestion.value}" — speculating in an overlay while the summary prints…`
      )
    )
    yield* options.meanwhile
    const outcome = yield* speculation.await
    const acceptedAt = yield* Clock.currentTimeMillis
    const accepted = yield* speculation.accept
    const shownAt = yield* Clock.currentTimeMillis
    yield* Output.line(`\n${Output.paint("bold", "Speculation")} ${describeBoundary(outcome.boundary)}`)
    for (const message of accepted.messages) {
      if (message.role !== "assistant" || typeof message.content === "string") continue
      for (const block of message.content) if (block.type === "text") yield* Output.line(`  ${block.text}`)
    }
    yield* Output.line(
      `  Accepted in ${shownAt - acceptedAt} ms: ${accepted.applied.join(", ") || "no files"} written; ` +
        `${Output.paint("green", `${accepted.timeSavedMs} ms of agent work saved`)} (it ran while you read).`
    )
  })).pipe(Effect.provide(Runtime.speculationEnvironment(ReplayModel.layer(options.transcript))))
