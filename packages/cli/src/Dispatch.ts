/**
 * `switchyard dispatch [FILE|-]`: run `tool_use` blocks through the whole
 * pipeline without a model. All calls are fed at once to a streaming
 * executor, which schedules them as the greedy partition would, with sibling
 * cancellation (SPEC §4.8).
 *
 * `--output-format stream-json` prints one JSON object per line. These field
 * names are a contract (external checks read them): every line has `type` and
 * `tool_use_id`; `started` {name, at}; `progress` {at, data}; `result`
 * {name, status, is_error, content, startedAt, endedAt}; times are
 * milliseconds since the dispatch began. Extra types: `permission_requested`,
 * `permission_decided`, `hook` (`StreamJson.dispatchEventLine`).
 *
 * Exit code 0 when every call succeeded, 1 when any failed or was denied, 2 on
 * bad input.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as Execution from "@switchyard/core/Execution"
import * as Interruption from "@switchyard/core/Interruption"
import * as Messages from "@switchyard/core/Messages"
import * as StreamingExecutor from "@switchyard/core/StreamingExecutor"
import * as Clock from "effect/Clock"
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as CliError from "./CliError.js"
import * as UserInterrupt from "./internal/userInterrupt.js"
import * as Output from "./Output.js"
import * as Render from "./Render.js"
import * as Runtime from "./Runtime.js"
import * as StreamJson from "./StreamJson.js"
import * as Timeline from "./Timeline.js"

/**
 * What `dispatch` accepts: an array of `tool_use` blocks, or an assistant
 * message (its `tool_use` blocks are taken, other blocks ignored).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DispatchInput = Schema.Union(
  Schema.Array(Messages.ToolUseBlock),
  Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.Array(Schema.Unknown) })
)

/**
 * Parse and decode the input text into tool calls.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseInput = (
  text: string,
  source: string
): Either.Either<ReadonlyArray<Messages.ToolUseBlock>, CliError.CliError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(
      CliError.badInput(`${source} is not valid JSON (${error instanceof Error ? error.message : String(error)})`)
    )
  }
  // Report against the shape the input is trying to be: an array, or a message.
  const decoded = Array.isArray(json)
    ? Schema.decodeUnknownEither(Schema.Array(Messages.ToolUseBlock))(json)
    : Schema.decodeUnknownEither(DispatchInput)(json)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    return Either.left(
      CliError.badInput(
        `${source}: expected a JSON array of tool_use blocks or an assistant message${where}` +
          (issue === undefined
            ? ""
            : ` (${issue.message.length > 120 ? `${issue.message.slice(0, 119)}…` : issue.message})`)
      )
    )
  }
  const value = decoded.right
  let calls: ReadonlyArray<Messages.ToolUseBlock>
  if (Array.isArray(value)) {
    calls = value as ReadonlyArray<Messages.ToolUseBlock>
  } else {
    const message = value as { readonly content: ReadonlyArray<unknown> }
    const uses: Array<Messages.ToolUseBlock> = []
    for (const [i, block] of message.content.entries()) {
      if (typeof block !== "object" || block === null || (block as { type?: unknown }).type !== "tool_use") continue
      const use = Schema.decodeUnknownEither(Messages.ToolUseBlock)(block)
      if (Either.isLeft(use)) {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(use.left)[0]
        return Either.left(
          CliError.badInput(
            `${source}: content[${i}] is not a valid tool_use block (${issue?.path.join(".")}: ${issue?.message})`
          )
        )
      }
      uses.push(use.right)
    }
    calls = uses
  }
  if (calls.length === 0) return Either.left(CliError.badInput(`${source} has no tool_use blocks`))
  const seen = new Set<string>()
  for (const call of calls) {
    if (seen.has(call.id)) return Either.left(CliError.badInput(`${source}: duplicate tool_use id ${call.id}`))
    seen.add(call.id)
  }
  return Either.right(calls)
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Runtime.CommonOptions {
  /** A path, `-` for stdin, or undefined (stdin when it is not a terminal). */
  readonly file: string | undefined
  readonly outputFormat: "text" | "json" | "stream-json"
}

const readInput = (
  file: string | undefined
): Effect.Effect<{ text: string; source: string }, CliError.CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (file === undefined || file === "-") {
      if (file === undefined && process.stdin.isTTY) {
        return yield* Effect.fail(
          CliError.badInput("dispatch needs tool calls: give a JSON file, or pipe them in with `-`")
        )
      }
      const text = yield* Effect.promise(() => Output.readStdin())
      return { text, source: "stdin" }
    }
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError(() => CliError.badInput(`Cannot read ${file}: no such file or not readable`))
    )
    return { text, source: file }
  })

const firstLine = (text: string, max = 100) => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * Run the command; fails with exit code 1 when any call did not succeed.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  options: Options
): Effect.Effect<void, CliError.CliError | CliError.SilentExit, NodeContext.NodeContext> =>
  Effect.gen(function*() {
    const input = yield* readInput(options.file)
    const parsed = parseInput(input.text, input.source)
    if (Either.isLeft(parsed)) return yield* Effect.fail(parsed.left)
    const calls = parsed.right
    const prepared = yield* Runtime.prepare(options)
    for (const warning of prepared.warnings) yield* Output.warn(warning)
    const results = yield* Effect.gen(function*() {
      const env = yield* Execution.makeEnvironment(Runtime.toolUseContext(prepared))
      const t0 = yield* Clock.currentTimeMillis
      const results: Array<DispatchEvent.Result> = []
      // In a terminal, the text report is preceded by live lines as calls start and end.
      const live = options.outputFormat === "text" && process.stdout.isTTY === true
      const labels = new Map(calls.map((c) => [c.id, Render.callLabel(c.name, c.input, 60)]))
      const waits = new Map<string, ReadonlyArray<DispatchEvent.Wait>>()
      // Ctrl-C interrupts the calls, and every one of them is still reported.
      const interruption = yield* Interruption.makeRoot
      yield* StreamingExecutor.runAll(calls, env, { scheduling: prepared.scheduling, interruption }).pipe(
        Stream.runForEach((event) =>
          Effect.gen(function*() {
            if (DispatchEvent.isResult(event)) results.push(event)
            if (event._tag === "Started" && event.waitedFor !== undefined) waits.set(event.toolUseId, event.waitedFor)
            if (options.outputFormat === "stream-json") {
              yield* Output.line(JSON.stringify(StreamJson.dispatchEventLine(event, t0)))
            }
            if (live && event._tag === "Started") {
              yield* Output.line(Output.paint("gray", `  … ${labels.get(event.toolUseId) ?? event.name}`))
            }
            if (live && DispatchEvent.isResult(event)) {
              yield* Output.line(
                `  ${Output.paint("gray", "⎿")} ${labels.get(event.toolUseId) ?? event.name} ${
                  Render.resultLine(event)
                }`
              )
            }
          })
        ),
        UserInterrupt.abortOnSigint(interruption)
      )
      if (options.outputFormat === "json") {
        // In call order, whatever order they finished in.
        const order = new Map(calls.map((c, i) => [c.id, i]))
        const sorted = [...results].sort((a, b) => (order.get(a.toolUseId) ?? 0) - (order.get(b.toolUseId) ?? 0))
        yield* Output.line(JSON.stringify(sorted.map((r) => StreamJson.dispatchEventLine(r, t0)), null, 2))
      } else if (options.outputFormat === "text") {
        if (live) yield* Output.line("")
        yield* report(calls, results, t0, options.verbose, waits)
      }
      return results
    }).pipe(
      Effect.provide(
        Runtime.layer(prepared, {
          prompt: Runtime.noPrompt(
            "dispatch does not ask; allow the call with --allowed-tools, a settings rule, or --permission-mode"
          )
        })
      )
    )
    const failed = results.filter((r) => r.status !== "success").length
    if (failed > 0) {
      // The report lists them: nothing more to print.
      return yield* Effect.fail(
        new CliError.SilentExit({ exitCode: 1, reason: `${failed} of ${results.length} calls did not succeed` })
      )
    }
  })

const report = (
  calls: ReadonlyArray<Messages.ToolUseBlock>,
  results: ReadonlyArray<DispatchEvent.Result>,
  t0: number,
  verbose: boolean,
  waits: ReadonlyMap<string, ReadonlyArray<DispatchEvent.Wait>>
) =>
  Effect.gen(function*() {
    const byId = new Map(results.map((r) => [r.toolUseId, r]))
    // In call order, as Timeline.groups wants them.
    const callIds = new Set(calls.map((call) => call.id))
    const inCallOrder = [
      ...calls.flatMap((call) => byId.get(call.id) ?? []),
      ...results.filter((r) => !callIds.has(r.toolUseId))
    ]
    const runs: Array<Timeline.Run> = inCallOrder.map((r) => ({
      toolUseId: r.toolUseId,
      name: r.name,
      label: r.name,
      status: r.status,
      startedAt: r.startedAt - t0,
      endedAt: r.endedAt - t0
    }))
    const groups = Timeline.groups(runs)
    const groupOf = new Map(groups.flatMap((g, i) => g.runs.map((r) => [r.toolUseId, i + 1] as const)))
    const wall = Math.max(0, ...runs.map((r) => r.endedAt))
    const saved = Timeline.savings(runs)
    yield* Output.line(
      `Dispatched ${calls.length} call${calls.length === 1 ? "" : "s"} in ${Timeline.formatMs(wall)}` +
        (saved.savedMs > 0 ? ` (one after another: ${Timeline.formatMs(saved.serialMs)})` : "")
    )
    for (const call of calls) {
      const result = byId.get(call.id)
      if (result === undefined) continue
      const mark = result.status === "success" ? "✓" : result.status === "denied" ? "⊘" : "✗"
      const content = Messages.contentText(result.block.content)
      // A success shows its first line and how many more there are (all with --verbose);
      // a failure or denial shows what went wrong in full.
      const lines = content.trim() === "" ? [] : content.trimEnd().split("\n")
      const text = result.status === "success" && !verbose
        ? `${firstLine(content)}${lines.length > 1 ? Output.paint("gray", ` (+${lines.length - 1} lines)`) : ""}`
        : content.trimEnd().replace(/\n/g, "\n    ")
      const group = groupOf.get(call.id)
      const together = group === undefined ? 1 : groups[group - 1]!.runs.length
      yield* Output.line(
        `${mark} ${call.name.padEnd(12)} ${call.id.padEnd(22)} ${result.status.padEnd(9)} ` +
          `${Timeline.formatMs(result.endedAt - result.startedAt).padStart(7)}` +
          `${together > 1 ? `  [parallel group ${group}]` : ""}`
      )
      if (text !== "") yield* Output.line(`    ${text}`)
      // Why it did not start at once (footprint scheduling, SPEC §4.13).
      for (const wait of waits.get(call.id) ?? []) {
        yield* Output.line(`    waited for ${wait.toolUseId}: ${wait.reason}`)
      }
    }
  })
