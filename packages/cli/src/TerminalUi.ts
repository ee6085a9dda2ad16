/**
 * The terminal of the interactive session: one raw-mode key listener that
 * hands each key to whoever listens now (the line editor, the running turn,
 * a permission question), the transcript printed above a live status line
 * for running tools (spinner, name, elapsed time, last output line), the
 * line editor with the dimmed next-prompt suggestion, numbered pickers, the
 * permission dialog (Claude Code's 1 yes, 2 yes and don't ask again, 3 no
 * and say what to do instead) and the permission prompt layer backed by it.
 *
 * @since 0.1.0
 */
import * as PermissionChain from "@switchyard/core/PermissionChain"
import * as DispatchEvent from "@switchyard/core/DispatchEvent"
import type * as QueryLoop from "@switchyard/core/QueryLoop"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { paint } from "./Output.js"
import * as Render from "./Render.js"
import type * as Sessions from "./Sessions.js"

const ESC = "\x1b"
const CTRL_C = "\x03"
const CTRL_D = "\x04"
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/**
 * What reading a line gave: a typed line, the shown suggestion accepted, or
 * the end of input.
 *
 * @since 0.1.0
 * @category models
 */
export type LineInput =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "AcceptSuggestion" }
  | { readonly _tag: "EndOfInput" }

const acceptSuggestion: LineInput = { _tag: "AcceptSuggestion" }
const endOfInput: LineInput = { _tag: "EndOfInput" }

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
    const spinner = paint("cyan", SPINNER[this.frame % SPINNER.length]!)
    const text = `${spinner} ${parts.join("  ")}  ${paint("gray", "(esc to interrupt)")}`
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

  /**
   * Read one line with simple editing: the line, the suggestion accepted
   * (Tab or Enter on the empty line while `suggestion` shows), or the end of
   * input (Ctrl-D, or Ctrl-C twice, at an empty prompt).
   */
  readLine(promptText: string, suggestion?: Hint): Promise<LineInput> {
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
            return resolve(acceptSuggestion)
          }
          suggestion.dismiss()
        }
        if (key === "\r" || key === "\n") {
          this.out.write("\n")
          this.atLineStart = true
          this.handler = () => {}
          return resolve({ _tag: "Line", text: buffer })
        }
        if (key === CTRL_D && buffer === "") {
          this.out.write("\n")
          this.handler = () => {}
          return resolve(endOfInput)
        }
        if (key === CTRL_C) {
          if (buffer === "" && ctrlC) {
            this.out.write("\n")
            this.handler = () => {}
            return resolve(endOfInput)
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
  select<A>(
    title: string,
    choices: ReadonlyArray<{ readonly label: string; readonly value: A }>
  ): Promise<A | undefined> {
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
      const title = `${paint("yellow", "?")} ${paint("bold", label)}${destructive} ` +
        paint("gray", `— ${question.message}`)
      const picked = await this.select(title, choices)
      let answer: PermissionChain.PromptAnswer
      if (picked === "yes") answer = { answer: "yes" }
      else if (picked === "always") answer = { answer: "always", persist: true }
      else {
        const typed = picked === "no"
          ? await this.readLine(paint("gray", "  What should the model do instead? (Enter to skip) "))
          : endOfInput
        const feedback = typed._tag === "Line" ? typed.text.trim() : ""
        answer = feedback === "" ? { answer: "no" } : { answer: "no", feedback }
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
export const pickSession = (
  ui: TerminalUi,
  sessions: ReadonlyArray<Sessions.Summary>
): Effect.Effect<string | undefined> =>
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
 * The dimmed suggestion on the input line, redrawn as its speculation moves.
 *
 * @since 0.1.0
 * @category models
 */
export class Hint {
  private text: string | undefined
  private status = ""
  private out: NodeJS.WriteStream | undefined
  private prompt = ""
  /** The user typed: the suggestion is gone for this prompt. */
  dismissed = false

  constructor(private readonly onDismiss: () => void) {}

  /** Shown and acceptable with Tab or Enter. */
  get visible(): boolean {
    return this.out !== undefined && !this.dismissed && this.text !== undefined
  }

  /** The prompt is on screen: draw the hint after the cursor. */
  show(out: NodeJS.WriteStream, prompt: string) {
    this.out = out
    this.prompt = prompt
    this.draw()
  }

  update(text: string, status: string) {
    this.text = text
    this.status = status
    this.draw()
  }

  private draw() {
    if (!this.visible) return
    // Save the cursor, draw after it, restore: the user types over the hint.
    this.out!.write(`\r\x1b[2K${this.prompt}\x1b7${paint("gray", `${this.text}  ${this.status}`)}\x1b8`)
  }

  /** Tab or Enter: the suggestion becomes the line. */
  accept() {
    this.out?.write(`\x1b[K${this.text ?? ""}\n`)
    this.out = undefined
  }

  /** Anything else typed: clear the hint and reject. */
  dismiss() {
    if (this.dismissed) return
    this.out?.write("\x1b[K")
    this.dismissed = true
    this.out = undefined
    this.onDismiss()
  }
}
