/**
 * The interactive session of `switchyard run` in a terminal: a prompt line,
 * the assistant's text as it streams, one line per tool call and result, a
 * live status line for running tools (spinner, name, elapsed time, last output
 * line), permission questions answered with y / n / a(lways), and ESC or
 * Ctrl-C interrupting the turn (SPEC §4.9). Ctrl-D or `/exit` leaves.
 *
 * stdin is read in raw mode by one listener that hands each key to whoever is
 * listening now: the line editor, the running turn, or a permission question.
 *
 * @since 0.1.0
 */
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import type * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import { paint } from "./Output.js"
import * as Render from "./Render.js"
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
    // An escape sequence (arrow keys) is one key; a lone ESC is ESC.
    if (text.startsWith(ESC) && text.length > 1) return this.handler(text)
    for (const key of text) this.handler(key)
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

  /** Ask a permission question; questions from parallel calls wait their turn. */
  ask(question: PermissionChain.Question): Promise<PermissionChain.PromptAnswer> {
    const previousHandler = () => this.handler
    const turn = this.questionLock.then(() =>
      new Promise<PermissionChain.PromptAnswer>((resolve) => {
        const restore = previousHandler()
        this.stopStatus()
        this.asking = true
        const label = Render.callLabel(question.tool.name, question.input, 60)
        this.line(`${paint("yellow", "?")} ${paint("bold", label)} ${paint("gray", `— ${question.message}`)}`)
        const always = question.suggestions.length > 0 ? ` (adds ${question.suggestions.join(", ")})` : ""
        this.print(`  Allow? ${paint("bold", "y")}es / ${paint("bold", "n")}o / ${paint("bold", "a")}lways${paint("gray", always)} `)
        this.handler = (key) => {
          const k = key.toLowerCase()
          const answer: PermissionChain.PromptAnswer | undefined = k === "y"
            ? { answer: "yes" }
            : k === "n" || key === ESC || key === CTRL_C
            ? { answer: "no" }
            : k === "a"
            ? { answer: "always", persist: true }
            : undefined
          if (answer === undefined) return
          this.print(`${answer.answer}\n`)
          this.asking = false
          if (this.running.size > 0) this.startStatus()
          this.handler = restore
          resolve(answer)
        }
      })
    )
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
 * The read-eval loop: prompt, run the turn with live output, repeat.
 *
 * @since 0.1.0
 * @category running
 */
export const repl = (
  ui: TerminalUi,
  context: ToolUseContext.ToolUseContext,
  options: QueryLoop.Options,
  banner: string,
  suggestions?: SuggestionUi.Controller | undefined
): Effect.Effect<void, never, QueryLoop.Requirements> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    let session = yield* QueryLoop.makeSession(context, options)
    const runTurn = (current: QueryLoop.Session, prompt: string) =>
      Effect.gen(function*() {
        ui.listenForInterrupt(() => {
          ui.line(paint("yellow", "⏹ interrupting…"))
          Runtime.runFork(runtime)(current.interrupt("user_interrupt"))
        })
        let stopped: QueryLoop.StopReason | undefined
        yield* current.run(prompt).pipe(Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event._tag === "Stopped") stopped = event.reason
            ui.handle(event)
          })
        ))
        if (suggestions !== undefined) yield* suggestions.afterTurn(current, stopped)
      })
    ui.line(banner)
    while (true) {
      const text = yield* Effect.promise(() => ui.readLine(paint("bold", "> "), suggestions?.hint()))
      if (text === SuggestionUi.ACCEPTED && suggestions !== undefined) {
        yield* suggestions.accept(session, (prompt) => runTurn(session, prompt))
        continue
      }
      if (text === undefined || text.trim() === "/exit" || text.trim() === "/quit") break
      const prompt = text.trim()
      if (prompt === "") continue
      if (prompt === "/help") {
        ui.line("Type a request and press Enter. ESC or Ctrl-C interrupts a running turn; /clear starts over; /exit or Ctrl-D leaves.")
        continue
      }
      if (prompt === "/clear") {
        session = yield* QueryLoop.makeSession({ ...context, messages: [] }, options)
        ui.line(paint("gray", "(new conversation)"))
        continue
      }
      yield* runTurn(session, prompt)
    }
  })
