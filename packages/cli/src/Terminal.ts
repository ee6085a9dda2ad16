/**
 * The interactive session of `switchyard run` in a terminal: a prompt line,
 * the assistant's text as it streams, one line per tool call and result, a
 * live status line for running tools (spinner, name, elapsed time, last output
 * line), permission questions as numbered choices (Claude Code's 1 yes, 2 yes
 * and don't ask again, 3 no and say what to do instead), slash commands, and
 * ESC or Ctrl-C interrupting the turn (SPEC §4.9). Ctrl-D or `/exit` leaves.
 *
 * stdin is read in raw mode by one listener that hands each key to whoever is
 * listening now: the line editor, the running turn, or a permission question.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import type * as Messages from "@switchyard/core/Messages"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as Cost from "./Cost.js"
import { paint } from "./Output.js"
import * as Render from "./Render.js"
import * as Run from "./Run.js"
import type { Prepared } from "./Runtime.js"
import type * as Sessions from "./Sessions.js"
import * as McpSlash from "./McpSlash.js"
import * as SlashCommands from "./SlashCommands.js"
import * as SuggestionUi from "./SuggestionUi.js"

const ESC = "\x1b"
const CTRL_C = "\x03"
const CTRL_D = "\x04"
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

interface Running {
  readonly label: string
  readonly startedAt: number
  lastLine: string
}

/**
 * The keys in a chunk of terminal input: an escape sequence (an arrow key:
 * `ESC [ B`, `ESC O A`, `ESC [ 1 ; 5 C`) is one key, a lone ESC is ESC, any
 * other character is a key of its own.
 *
 * @since 0.1.0
 * @category parsing
 */
export const splitKeys = (text: string): ReadonlyArray<string> => {
  const keys: Array<string> = []
  const sequence = /^\x1b(?:\[[0-9;?]*[@-~]|O[@-~])/
  for (let i = 0; i < text.length;) {
    const match = text[i] === ESC ? sequence.exec(text.slice(i)) : null
    const key = match !== null ? match[0] : String.fromCodePoint(text.codePointAt(i)!)
    keys.push(key)
    i += key.length
  }
  return keys
}

/**
 * The terminal: key routing, the status line and the transcript printer.
 *
 * @since 0.1.0
 * @category models
 */
export class TerminalUi {
  private handler: (key: string) => void = () => {}
  private readonly running = new Map<string, Running>()
  private statusShown = false
  private atLineStart = true
  private frame = 0
  private timer: ReturnType<typeof setInterval> | undefined
  private questionLock: Promise<void> = Promise.resolve()
  /** While a question waits for its answer, the status line stays away. */
  private asking = false
  readonly printer: Render.TranscriptPrinter
  private readonly out: NodeJS.WriteStream

  constructor(private readonly input: NodeJS.ReadStream = process.stdin, out: NodeJS.WriteStream = process.stdout) {
    this.out = out
    this.printer = new Render.TranscriptPrinter((text) => this.print(text))
  }

  /** Start reading keys. */
  open() {
    this.input.setRawMode?.(true)
    this.input.setEncoding("utf8")
    this.input.on("data", this.onData)
    this.input.resume()
  }

  /** Give the terminal back. */
  close() {
    this.stopStatus()
    this.input.off("data", this.onData)
    this.input.setRawMode?.(false)
    this.input.pause()
  }

  private readonly onData = (data: string | Buffer) => {
    const text = typeof data === "string" ? data : data.toString("utf8")
    for (const key of splitKeys(text)) this.handler(key)
  }

  /** Transcript text, printed above the status line. */
  print(text: string) {
    this.clearStatus()
    this.out.write(text)
    this.atLineStart = text.endsWith("\n")
    this.drawStatus()
  }

  line(text: string) {
    if (!this.atLineStart) this.print("\n")
    this.print(`${text}\n`)
  }

  private clearStatus() {
    if (this.statusShown) {
      this.out.write("\r\x1b[2K")
      this.statusShown = false
    }
  }

  private drawStatus() {
    if (this.running.size === 0 || this.timer === undefined || this.asking) return
    if (!this.atLineStart) {
      this.out.write("\n")
      this.atLineStart = true
    }
    const now = Date.now()
    const parts = [...this.running.values()].map((r) => {
      const tail = r.lastLine === "" ? "" : paint("gray", ` ${r.lastLine.slice(0, 40)}`)
      return `${r.label} ${paint("gray", `${((now - r.startedAt) / 1000).toFixed(1)}s`)}${tail}`
    })
    const width = this.out.columns ?? 100
    const text = `${paint("cyan", SPINNER[this.frame % SPINNER.length]!)} ${parts.join("  ")}  ${paint("gray", "(esc to interrupt)")}`
    this.out.write(text.length > width + 40 ? `${text.slice(0, width + 30)}…` : text)
    this.statusShown = true
  }

  private startStatus() {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => {
      this.frame++
      this.clearStatus()
      this.drawStatus()
    }, 100)
  }

  private stopStatus() {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.clearStatus()
  }

  /** Show a loop event: transcript lines plus the live status of running tools. */
  handle(event: QueryLoop.LoopEvent) {
    if (event._tag === "ToolUse") {
      this.running.set(event.block.id, {
        label: Render.callLabel(event.block.name, event.block.input, 40),
        startedAt: Date.now(),
        lastLine: ""
      })
      this.startStatus()
    }
    if (event._tag === "Tool") {
      const inner = event.event
      if (DispatchEvent.isProgress(inner)) {
        const running = this.running.get(inner.toolUseId)
        const data = inner.data as { readonly output?: unknown } | undefined
        const text = typeof data?.output === "string" ? data.output : typeof inner.data === "string" ? inner.data : ""
        const last = text.split("\n").filter((l) => l.trim() !== "").at(-1)
        if (running !== undefined && last !== undefined) running.lastLine = last.trim()
        return
      }
      if (DispatchEvent.isResult(inner)) this.running.delete(inner.toolUseId)
    }
    this.printer.handle(event)
    if (event._tag === "Stopped" || this.running.size === 0) this.stopStatus()
  }

  /** Read one line with simple editing. `undefined` on Ctrl-D (or Ctrl-C twice) at an empty prompt. */
  readLine(promptText: string, suggestion?: SuggestionUi.Hint): Promise<string | undefined> {
    return new Promise((resolve) => {
      let buffer = ""
      let ctrlC = false
      this.out.write(promptText)
      suggestion?.show(this.out, promptText)
      this.handler = (key) => {
        if (suggestion?.visible === true) {
          // Tab or Enter on the empty line accepts the suggestion; anything else dismisses it.
          if (key === "\t" || key === "\r" || key === "\n") {
            suggestion.accept()
            this.atLineStart = true
            this.handler = () => {}
            return resolve(SuggestionUi.ACCEPTED)
          }
          suggestion.dismiss()
        }
        if (key === "\r" || key === "\n") {
          this.out.write("\n")
          this.atLineStart = true
          this.handler = () => {}
          return resolve(buffer)
        }
        if (key === CTRL_D && buffer === "") {
          this.out.write("\n")
          this.handler = () => {}
          return resolve(undefined)
        }
        if (key === CTRL_C) {
          if (buffer === "" && ctrlC) {
            this.out.write("\n")
            this.handler = () => {}
            return resolve(undefined)
          }
          ctrlC = buffer === ""
          buffer = ""
          this.out.write(`\r\x1b[2K${promptText}${ctrlC ? paint("gray", "(Ctrl-C again to exit)") : ""}`)
          return
        }
        ctrlC = false
        if (key === "\x7f" || key === "\b") {
          if (buffer.length > 0) {
            buffer = buffer.slice(0, -1)
            this.out.write("\b \b")
          }
          return
        }
        if (key.startsWith(ESC) || key < " ") return
        buffer += key
        this.out.write(key)
      }
    })
  }

  /** While a turn runs: ESC or Ctrl-C interrupts it. */
  listenForInterrupt(onInterrupt: () => void) {
    this.handler = (key) => {
      if (key === ESC || key === CTRL_C) onInterrupt()
    }
  }

  /** A notice (an API retry): on its own line above the status line. */
  notice(text: string) {
    this.line(paint("yellow", `⟳ ${text}`))
  }

  /**
   * A numbered choice: a digit picks at once, arrows move and Enter picks,
   * ESC gives `undefined`. Keys that arrived before the choice was shown
   * (typed ahead while the turn ran) are discarded.
   */
  select<A>(title: string, choices: ReadonlyArray<{ readonly label: string; readonly value: A }>): Promise<A | undefined> {
    return new Promise((resolve) => {
      let selected = 0
      let accepting = false
      const render = (first: boolean) => {
        if (!first) this.out.write(`\x1b[${choices.length}A`)
        choices.forEach((choice, i) => {
          const marker = i === selected ? paint("cyan", "❯") : " "
          const label = i === selected ? paint("bold", choice.label) : choice.label
          this.out.write(`\r\x1b[2K${marker} ${i + 1}. ${label}\n`)
        })
      }
      this.line(title)
      render(true)
      this.atLineStart = true
      const done = (value: A | undefined) => {
        this.handler = () => {}
        resolve(value)
      }
      this.handler = (key) => {
        if (!accepting) return
        if (key === ESC || key === CTRL_C) return done(undefined)
        if (key === "\x1b[A" || key === "\x1bOA") {
          selected = (selected + choices.length - 1) % choices.length
          return render(false)
        }
        if (key === "\x1b[B" || key === "\x1bOB") {
          selected = (selected + 1) % choices.length
          return render(false)
        }
        if (key === "\r" || key === "\n") return done(choices[selected]!.value)
        const n = Number.parseInt(key, 10)
        if (key.length === 1 && n >= 1 && n <= choices.length) {
          selected = n - 1
          render(false)
          return done(choices[n - 1]!.value)
        }
      }
      // Input already read from the terminal is handled before this runs.
      setImmediate(() => (accepting = true))
    })
  }

  /**
   * Ask a permission question, as Claude Code does: 1 yes, 2 yes and don't
   * ask again for the exact rule (only when a rule could allow the call),
   * 3 no and tell the model what to do instead. Questions from parallel
   * calls wait their turn.
   */
  ask(question: PermissionChain.Question): Promise<PermissionChain.PromptAnswer> {
    const previousHandler = () => this.handler
    const turn = this.questionLock.then(async () => {
      const restore = previousHandler()
      this.stopStatus()
      this.asking = true
      const label = Render.callLabel(question.tool.name, question.input, 60)
      const rules = question.suggestions.join(", ")
      const choices: Array<{ label: string; value: "yes" | "always" | "no" }> = [
        { label: "Yes", value: "yes" },
        ...(question.suggestions.length > 0
          ? [{ label: `Yes, and don't ask again for ${rules}`, value: "always" as const }]
          : []),
        { label: "No, and tell the model what to do instead (esc)", value: "no" }
      ]
      // An MCP server's destructiveHint (or a tool's own isDestructive) is shown with the question.
      const destructive = question.tool.isDestructive(question.input, question.context) === true
        ? ` ${paint("red", "[destructive]")}`
        : ""
      const title = `${paint("yellow", "?")} ${paint("bold", label)}${destructive} ${paint("gray", `— ${question.message}`)}`
      const picked = await this.select(title, choices)
      let answer: PermissionChain.PromptAnswer
      if (picked === "yes") answer = { answer: "yes" }
      else if (picked === "always") answer = { answer: "always", persist: true }
      else {
        const feedback = picked === "no" ? await this.readLine(paint("gray", "  What should the model do instead? (Enter to skip) ")) : ""
        answer = feedback === undefined || feedback.trim() === "" ? { answer: "no" } : { answer: "no", feedback: feedback.trim() }
      }
      this.asking = false
      if (this.running.size > 0) this.startStatus()
      this.handler = restore
      return answer
    })
    this.questionLock = turn.then(() => undefined)
    return turn
  }
}

/**
 * The permission prompt backed by the terminal.
 *
 * @since 0.1.0
 * @category layers
 */
export const promptLayer = (ui: TerminalUi): Layer.Layer<PermissionChain.PermissionPrompt> =>
  Layer.succeed(PermissionChain.PermissionPrompt, {
    ask: (question) => Effect.promise(() => ui.ask(question))
  })

/**
 * Pick one of the recent sessions (`--resume` without an id, `/resume`).
 *
 * @since 0.1.0
 * @category prompts
 */
export const pickSession = (ui: TerminalUi, sessions: ReadonlyArray<Sessions.Summary>): Effect.Effect<string | undefined> =>
  Effect.promise(() =>
    ui.select(
      paint("bold", "Resume which session?"),
      sessions.slice(0, 9).map((s) => ({
        label: `${new Date(s.modifiedAt).toLocaleString()}  ${paint("gray", `${s.messages} messages`)}  ${
          s.firstPrompt.length > 60 ? `${s.firstPrompt.slice(0, 59)}…` : s.firstPrompt
        }`,
        value: s.id
      }))
    )
  )

/**
 * @since 0.1.0
 * @category models
 */
export interface ReplOptions {
  readonly prepared: Prepared
  readonly model: string
  readonly loopOptions: QueryLoop.Options
  /** Sent as the first message (`switchyard "prompt"` in a terminal). */
  readonly firstPrompt: string | undefined
  readonly start: Run.Start | undefined
}

/**
 * The read-eval loop: prompt, run the turn with live output, repeat. Lines
 * starting with `/` are slash commands and never reach the model.
 *
 * @since 0.1.0
 * @category running
 */
export const repl = (
  ui: TerminalUi,
  options: ReplOptions,
  suggestions?: SuggestionUi.Controller | undefined
): Effect.Effect<void, never, QueryLoop.Requirements | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const state: SlashCommands.State = {
      ui,
      prepared: options.prepared,
      model: options.model,
      loopOptions: options.loopOptions,
      conversation: yield* Run.openConversation(options.prepared, options.start, options.loopOptions),
      usage: Cost.zero,
      turns: 0
    }
    const runTurn = (prompt: string | ReadonlyArray<Messages.ContentBlock>) =>
      Effect.gen(function*() {
        const { session, recorder } = state.conversation
        ui.listenForInterrupt(() => {
          ui.line(paint("yellow", "⏹ interrupting…"))
          Runtime.runFork(runtime)(session.interrupt("user_interrupt"))
        })
        const events: Array<QueryLoop.LoopEvent> = []
        let stopped: QueryLoop.StopReason | undefined
        yield* session.run(prompt).pipe(
          Stream.runForEach((event) =>
            Effect.gen(function*() {
              events.push(event)
              if (event._tag === "Stopped") stopped = event.reason
              ui.handle(event)
              yield* recorder.record(event)
            })
          ),
          Effect.ensuring(recorder.sync)
        )
        state.usage = Cost.add(state.usage, Cost.fromEvents(events))
        state.turns += events.filter((e) => e._tag === "TurnStarted").length
        if (suggestions !== undefined) yield* suggestions.afterTurn(session, stopped)
      })
    const cwd = options.prepared.cwd
    ui.line(`${paint("bold", "switchyard")} ${paint("gray", `· ${cwd} · ${options.model} · mode ${options.prepared.permissions.mode} · /help`)}`)
    if (options.start !== undefined) {
      ui.line(paint("gray", `(resumed session ${options.start.id}: ${options.start.messages.length} messages)`))
    }
    let pending = options.firstPrompt
    while (true) {
      const text = pending ?? (yield* Effect.promise(() => ui.readLine(paint("bold", "> "), suggestions?.hint())))
      if (pending !== undefined) ui.line(`${paint("bold", ">")} ${pending}`)
      pending = undefined
      if (text === SuggestionUi.ACCEPTED && suggestions !== undefined) {
        const { session, recorder } = state.conversation
        // The injected work joins the transcript like a turn that ran.
        yield* suggestions.accept(session, runTurn).pipe(Effect.ensuring(recorder.sync))
        continue
      }
      if (text === undefined) break
      const prompt = text.trim()
      if (prompt === "") continue
      // MCP prompts as slash commands and @server:uri mentions (McpSlash.ts).
      const expanded = yield* McpSlash.expand(prompt)
      if (expanded._tag === "Say") {
        ui.line(paint("yellow", expanded.text))
        continue
      }
      if (expanded._tag === "Send") {
        if (suggestions !== undefined) yield* suggestions.reject
        yield* runTurn(expanded.prompt)
        continue
      }
      if (prompt.startsWith("/")) {
        if (suggestions !== undefined) yield* suggestions.reject
        const next = yield* SlashCommands.run(prompt, state)
        if (next === "exit") break
        continue
      }
      yield* runTurn(prompt)
    }
  })
