/**
 * The interactive session's slash commands: `/help`, `/clear`, `/exit`,
 * `/model`, `/cost`, `/permissions`, `/resume`, `/mcp`, `/status` (and each
 * MCP server prompt as `/mcp__<server>__<prompt>`, McpSlash.ts). A line starting
 * with `/` never reaches the model; an unknown command says so.
 *
 * Adding a command is one entry in `commands` (a name, a summary and an
 * effect on the session's `State`).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as EditDistance from "@switchyard/core/EditDistance"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as CliError from "./CliError.js"
import * as Conversation from "./Conversation.js"
import * as Cost from "./Cost.js"
import * as McpSlash from "./McpSlash.js"
import { paint } from "./Output.js"
import * as Runtime from "./Runtime.js"
import * as Sessions from "./Sessions.js"
import * as TerminalUi from "./TerminalUi.js"

/**
 * The interactive session, as the commands see and change it.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly ui: TerminalUi.TerminalUi
  readonly prepared: Runtime.Prepared
  model: string
  loopOptions: QueryLoop.Options
  conversation: Conversation.Conversation
  /** Tokens used since the session started (or was cleared). */
  usage: Cost.Usage
  turns: number
}

/**
 * What a command needs to run.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = QueryLoop.Requirements | FileSystem.FileSystem | Path.Path

/**
 * @since 0.1.0
 * @category models
 */
export interface SlashCommand {
  /** Without the slash. */
  readonly name: string
  readonly aliases?: ReadonlyArray<string>
  /** `[NAME]` in `/model [NAME]`. */
  readonly args?: string
  readonly summary: string
  readonly run: (args: string, state: State) => Effect.Effect<"continue" | "exit", never, Requirements>
}

const say = (state: State, text: string) => Effect.as(Effect.sync(() => state.ui.line(text)), "continue" as const)

const reopen = (state: State, start: Conversation.Start | undefined) =>
  Effect.gen(function*() {
    state.conversation = yield* Conversation.open(state.prepared, start, state.loopOptions)
    state.usage = Cost.zero
    state.turns = 0
  })

const costLine = (state: State): string => {
  const u = state.usage
  const cost = Cost.costUsd(state.model, u)
  return [
    `Tokens: ${u.input_tokens} in, ${u.output_tokens} out, ${u.cache_creation_input_tokens} cache write, ${u.cache_read_input_tokens} cache read`,
    `over ${state.turns} model turn${state.turns === 1 ? "" : "s"}.`,
    cost === undefined ? `No price is known for ${state.model}.` : `Cost: $${cost.toFixed(4)} (${state.model} list prices).`
  ].join(" ")
}

/**
 * The built-in commands.
 *
 * @since 0.1.0
 * @category constants
 */
export const commands: Array<SlashCommand> = [
  {
    name: "help",
    summary: "Show the commands and keys",
    run: (_, state) =>
      say(
        state,
        [
          "Type a request and press Enter. ESC or Ctrl-C interrupts a running turn; Ctrl-D leaves.",
          "Permission questions: press the number of a choice, or move with the arrows and press Enter.",
          ...commands.map((c) => `  /${c.name}${c.args === undefined ? "" : ` ${c.args}`}`.padEnd(22) + c.summary)
        ].join("\n")
      )
  },
  {
    name: "clear",
    summary: "Start a new conversation (a new session)",
    run: (_, state) =>
      Effect.gen(function*() {
        yield* reopen(state, undefined)
        const id = (yield* Ref.get(state.conversation.context)).sessionId
        return yield* say(state, paint("gray", `(new conversation, session ${id})`))
      })
  },
  {
    name: "exit",
    aliases: ["quit"],
    summary: "Leave",
    run: () => Effect.succeed("exit" as const)
  },
  {
    name: "model",
    args: "[NAME]",
    summary: "Show the model, or use NAME from the next turn on",
    run: (args, state) =>
      Effect.gen(function*() {
        if (args === "") return yield* say(state, `Model: ${state.model}. Change it with /model NAME (e.g. /model claude-opus-4-5).`)
        state.model = args
        state.loopOptions = { ...state.loopOptions, model: args }
        state.conversation = {
          ...state.conversation,
          session: yield* QueryLoop.makeSession(state.conversation.context, {
            ...state.loopOptions,
            journal: state.conversation.journal
          })
        }
        return yield* say(state, `Model: ${args} from the next turn on.`)
      })
  },
  {
    name: "cost",
    summary: "The tokens used and their cost in this conversation",
    run: (_, state) => say(state, costLine(state))
  },
  {
    name: "permissions",
    summary: "The permission mode, the rules and the settings files they came from",
    run: (_, state) =>
      Effect.gen(function*() {
        const permissions = (yield* Ref.get(state.conversation.context)).permissions
        const rules = (["deny", "ask", "allow"] as const).flatMap((behavior) => {
          const list = permissions.rules.filter((r) => r.behavior === behavior)
          return list.length === 0 ? [] : [`${behavior}:`, ...list.map((r) => `  ${r.raw} ${paint("gray", `(${r.source})`)}`)]
        })
        return yield* say(state, [...Runtime.settingsSummary(state.prepared), ...(rules.length === 0 ? ["no rules"] : rules)].join("\n"))
      })
  },
  {
    name: "resume",
    args: "[ID]",
    summary: "Resume an earlier session of this directory",
    run: (args, state) =>
      Effect.gen(function*() {
        const sessions = yield* Sessions.list(state.prepared.cwd)
        const current = (yield* Ref.get(state.conversation.context)).sessionId
        const others = sessions.filter((s) => s.id !== current)
        if (args === "" && others.length === 0) return yield* say(state, "No earlier session in this directory.")
        const id = args !== "" ? args : yield* TerminalUi.pickSession(state.ui, others)
        if (id === undefined) return "continue" as const
        const loaded = yield* Effect.either(Conversation.load(state.prepared.cwd, id))
        if (loaded._tag === "Left") return yield* say(state, paint("red", loaded.left.message))
        yield* reopen(state, loaded.right)
        return yield* say(state, paint("gray", `(resumed session ${id}: ${loaded.right.messages.length} messages)`))
      })
  },
  {
    name: "mcp",
    args: "[reconnect NAME]",
    summary: "MCP servers: their status, tools and prompts; reconnect one",
    run: (args, state) => Effect.flatMap(McpSlash.mcpCommand(args), (text) => say(state, text))
  },
  {
    name: "status",
    summary: "Session, model, directory, mode, endpoint and sandbox",
    run: (_, state) =>
      Effect.gen(function*() {
        const ctx = yield* Ref.get(state.conversation.context)
        const sandbox = yield* (yield* SandboxPort.Sandbox).status
        return yield* say(
          state,
          [
            `session: ${ctx.sessionId}`,
            `transcript: ${state.conversation.recorder.file}`,
            `directory: ${ctx.cwd}`,
            `model: ${state.model}`,
            `permission mode: ${ctx.permissions.mode}`,
            `endpoint: ${process.env["ANTHROPIC_BASE_URL"] ?? "https://api.anthropic.com"}`,
            `messages: ${ctx.messages.length}`,
            SandboxPort.describeStatus(sandbox)
          ].join("\n")
        )
      })
  }
]

/**
 * The command a line names (without arguments), if any.
 *
 * @since 0.1.0
 * @category getters
 */
export const find = (name: string): SlashCommand | undefined =>
  commands.find((c) => c.name === name || (c.aliases ?? []).includes(name))

/**
 * Run a `/command args` line.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (line: string, state: State): Effect.Effect<"continue" | "exit", never, Requirements> => {
  const [word = "", ...rest] = line.slice(1).split(/\s+/)
  const command = find(word)
  if (command === undefined) {
    const names = commands.flatMap((c) => [c.name, ...(c.aliases ?? [])])
    const guess = names
      .map((n) => [n, EditDistance.levenshtein(word, n)] as const)
      .filter(([, d]) => d <= 2)
      .sort((a, b) => a[1] - b[1])[0]?.[0]
    return say(
      state,
      paint("yellow", `Unknown command /${word}${guess === undefined ? "" : ` (did you mean /${guess}?)`}; /help lists them. Nothing was sent to the model.`)
    )
  }
  return command.run(rest.join(" ").trim(), state).pipe(
    Effect.catchAllDefect((defect) => say(state, paint("red", `/${command.name} failed: ${String(defect)}`)))
  )
}

/** For commands that fail with a CLI error: show it and carry on. */
export const showError = (state: State, error: CliError.CliError) => say(state, paint("red", error.message))
