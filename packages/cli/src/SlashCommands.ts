/**
 * The interactive session's slash commands: `/help`, `/clear`, `/exit`,
 * `/model`, `/cost`, `/memory`, `/compact`, `/permissions`, `/resume`, `/mcp`,
 * `/status` (and each MCP server prompt as `/mcp__<server>__<prompt>`,
 * McpSlash.ts); and `# note` (added to a memory file). A line starting with
 * `/` never reaches the model; an unknown command says so.
 *
 * Adding a command is one entry in `commands` (a name, a summary and an
 * effect on the session's `State`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as EditDistance from "@switchyard/core/EditDistance"
import * as Execution from "@switchyard/core/Execution"
import * as Model from "@switchyard/core/Model"
import * as QueryLoop from "@switchyard/core/QueryLoop"
import * as SandboxPort from "@switchyard/core/Sandbox"
import * as Tool from "@switchyard/core/Tool"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as CliError from "./CliError.js"
import * as Compact from "./Compact.js"
import * as Conversation from "./Conversation.js"
import * as Cost from "./Cost.js"
import * as McpSlash from "./McpSlash.js"
import * as Memory from "./Memory.js"
import * as ModelLayer from "./ModelLayer.js"
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
  /** The memory files the requests carry. */
  readonly memory: Memory.Memory
  /** Every model response of the session: turns, sub-agents, suggestions and their speculation. */
  readonly meter: Cost.MeterService | undefined
  /** Whether next-prompt suggestions (and their speculation) are on. */
  readonly suggestions: boolean
}

/**
 * What a command needs to run.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = QueryLoop.Requirements | FileSystem.FileSystem | Path.Path | Runtime.LivePermissions

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

const tokens = (u: Cost.Usage) =>
  `${u.input_tokens} in, ${u.output_tokens} out, ${u.cache_creation_input_tokens} cache write, ` +
  `${u.cache_read_input_tokens} cache read`

const costLines = (state: State): ReadonlyArray<string> => {
  const cost = Cost.costUsd(state.model, state.usage)
  const lines = [
    `Tokens: ${tokens(state.usage)} over ${state.turns} model turn${state.turns === 1 ? "" : "s"}. ` +
    (cost === undefined
      ? `No price is known for ${state.model}.`
      : `Cost: $${cost.toFixed(4)} (${state.model} list prices).`)
  ]
  if (!state.suggestions) {
    lines.push(
      "Next-prompt suggestions are off (SWITCHYARD_SUGGESTIONS=1 turns them on; each costs two more requests)."
    )
  } else if (state.meter !== undefined) {
    // Everything the session's model answered: the turns, sub-agents, suggestions and their speculation.
    const responses = state.meter.responses()
    lines.push(
      `With sub-agents, suggestions and their speculation: ${tokens(Cost.total(responses))} in ` +
        `${responses.length} request${responses.length === 1 ? "" : "s"}, $${Cost.totalCostUsd(responses).toFixed(4)}.`
    )
  }
  return lines
}

const editor = (): string => process.env["VISUAL"] ?? process.env["EDITOR"] ?? "vi"

const kindLabel: Readonly<Record<Memory.Kind, string>> = {
  project: "Project memory",
  local: "Project memory (local, not checked in)",
  user: "User memory (every project)"
}

/**
 * Pick where a memory note goes (`#`, `/memory`): the project's CLAUDE.md, its
 * CLAUDE.local.md, or the user's.
 *
 * @since 0.1.0
 * @category memory
 */
export const pickMemoryFile = (state: State, title: string) =>
  Effect.gen(function*() {
    const targets = yield* Memory.targets(state.prepared.cwd)
    const fs = yield* FileSystem.FileSystem
    const choices = yield* Effect.forEach(targets, (target) =>
      Effect.map(
        fs.exists(target.path).pipe(Effect.orElseSucceed(() => false)),
        (exists) => ({
          label: `${kindLabel[target.kind]}  ${paint("gray", `${target.path}${exists ? "" : " (new)"}`)}`,
          value: target.path
        })
      ))
    return yield* Effect.promise(() => state.ui.select(paint("bold", title), choices))
  })

/**
 * `# note`: add the note to the memory file the user picks; the next
 * request carries it.
 *
 * @since 0.1.0
 * @category memory
 */
export const remember = (note: string, state: State) =>
  Effect.gen(function*() {
    if (note.trim() === "") return yield* say(state, "Type the note after the #, e.g. # use pnpm, not npm.")
    const file = yield* pickMemoryFile(state, "Where should this memory go?")
    if (file === undefined) return "continue" as const
    const added = yield* Effect.either(Memory.addNote(file, note))
    if (added._tag === "Left") return yield* say(state, paint("red", `Could not write ${file}: ${added.left.message}`))
    yield* state.memory.reload
    return yield* say(state, paint("gray", `Saved to ${file}`))
  })

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
        if (args === "") {
          const names = ModelLayer.aliases.map((alias) => `${alias.name} (${ModelLayer.resolve(alias.name)})`)
          return yield* say(
            state,
            `Model: ${state.model}. Change it with /model NAME: ${names.join(", ")}, or a model id.`
          )
        }
        const model = ModelLayer.resolve(args)
        state.model = model
        state.loopOptions = { ...state.loopOptions, model }
        state.conversation = {
          ...state.conversation,
          session: yield* QueryLoop.makeSession(state.conversation.context, {
            ...state.loopOptions,
            journal: state.conversation.journal
          })
        }
        return yield* say(state, `Model: ${model === args ? model : `${model} (${args})`} from the next turn on.`)
      })
  },
  {
    name: "cost",
    summary: "The tokens used and their cost in this conversation (and of suggestions, when on)",
    run: (_, state) => say(state, costLines(state).join("\n"))
  },
  {
    name: "memory",
    summary: "The memory files (CLAUDE.md) the requests carry; pick one to edit in $EDITOR",
    run: (_, state) =>
      Effect.gen(function*() {
        const files = yield* state.memory.files
        state.ui.line(
          files.length === 0
            ? "No memory files yet (CLAUDE.md, CLAUDE.local.md, ~/.claude/CLAUDE.md)."
            : ["Memory files:", ...files.map((f) => `  ${f.path} ${paint("gray", `(${f.kind})`)}`)].join("\n")
        )
        const file = yield* pickMemoryFile(state, `Edit which memory file (in ${editor()})?`)
        if (file === undefined) return "continue" as const
        yield* Effect.promise(() =>
          state.ui.handOver(() => {
            fs.mkdirSync(path.dirname(file), { recursive: true })
            // The editor variable may hold arguments (`code --wait`): the shell splits it.
            spawnSync("sh", ["-c", `${editor()} "$1"`, "sh", file], { stdio: "inherit" })
          })
        )
        yield* state.memory.reload
        return yield* say(state, paint("gray", `(memory reloaded: ${(yield* state.memory.files).length} file(s))`))
      })
  },
  {
    name: "compact",
    summary: `Replace the conversation by a summary, keeping the last ${Compact.keptTurns} turns`,
    run: (_, state) =>
      Effect.gen(function*() {
        const context = yield* Ref.get(state.conversation.context)
        const env = yield* Execution.makeEnvironment(state.conversation.context)
        state.ui.line(paint("gray", "Compacting the conversation…"))
        const compacted = yield* Effect.either(Compact.compact(context.messages, {
          model: state.model,
          system: state.loopOptions.system,
          tools: env.tools.map((tool) => Model.toolDefinition(tool, { deferred: Tool.isDeferred(tool) }))
        }))
        if (compacted._tag === "Left") {
          return yield* say(state, paint("red", `Compacting failed: ${compacted.left.message}`))
        }
        if (compacted.right === undefined) {
          return yield* say(state, `Nothing to compact yet: the last ${Compact.keptTurns} turns are kept as they are.`)
        }
        const before = context.messages.length
        yield* reopen(state, { id: context.sessionId, messages: compacted.right.messages, repaired: true })
        return yield* say(
          state,
          paint(
            "gray",
            `(compacted ${before} messages into ${compacted.right.messages.length}: a summary and the last turns)`
          )
        )
      })
  },
  {
    name: "permissions",
    summary: "The permission mode, the rules and the settings files they came from",
    run: (_, state) =>
      Effect.gen(function*() {
        const permissions = (yield* Ref.get(state.conversation.context)).permissions
        // Live: the rules "don't ask again" added in this session, too.
        const added = yield* Effect.flatMap(Runtime.LivePermissions, (live) => live.sessionRules)
        const all = [...permissions.rules, ...added]
        const rules = (["deny", "ask", "allow"] as const).flatMap((behavior) => {
          const list = all.filter((r) => r.behavior === behavior)
          const shown = list.map((r) => `  ${r.raw} ${paint("gray", `(${r.source})`)}`)
          return list.length === 0 ? [] : [`${behavior}:`, ...shown]
        })
        const summary = [...Runtime.settingsSummary(state.prepared), `permission mode now: ${permissions.mode}`]
        return yield* say(state, [...summary, ...(rules.length === 0 ? ["no rules"] : rules)].join("\n"))
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
 * The names of the commands, as the headless `init` line lists them.
 *
 * @since 0.1.0
 * @category getters
 */
export const names = (): ReadonlyArray<string> => commands.map((c) => c.name)

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
      paint(
        "yellow",
        `Unknown command /${word}${
          guess === undefined ? "" : ` (did you mean /${guess}?)`
        }; /help lists them. Nothing was sent to the model.`
      )
    )
  }
  return command.run(rest.join(" ").trim(), state).pipe(
    Effect.catchAllDefect((defect) => say(state, paint("red", `/${command.name} failed: ${String(defect)}`)))
  )
}

/** For commands that fail with a CLI error: show it and carry on. */
export const showError = (state: State, error: CliError.CliError) => say(state, paint("red", error.message))
