/**
 * Test tools and environments for the engine's tests.
 */
import {
  type Execution,
  type Footprint,
  Messages,
  Permissions,
  Registry,
  Results,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

/** What a scripted tool call does. */
export const ScriptInput = Schema.Struct({
  ms: Schema.optional(Schema.Number),
  fail: Schema.optional(Schema.Boolean),
  die: Schema.optional(Schema.Boolean),
  progress: Schema.optional(Schema.Number),
  label: Schema.optional(Schema.String),
  output: Schema.optional(Schema.String)
})
export type ScriptInput = typeof ScriptInput.Type

export interface Span {
  readonly id: string
  readonly name: string
  readonly start: number
  end: number | undefined
  interrupted: boolean
}

/** A log of when each call ran, by tool_use_id, read with the Clock (TestClock-friendly). */
export class RunLog {
  readonly spans: Array<Span> = []
  readonly maxConcurrent = { value: 0 }
  private running = 0
  enter(id: string, name: string, at: number): Span {
    const span: Span = { id, name, start: at, end: undefined, interrupted: false }
    this.spans.push(span)
    this.running++
    this.maxConcurrent.value = Math.max(this.maxConcurrent.value, this.running)
    return span
  }
  exit(span: Span, at: number, interrupted: boolean) {
    span.end = at
    span.interrupted = interrupted
    this.running--
  }
  get(id: string): Span | undefined {
    return this.spans.find((span) => span.id === id)
  }
  get liveCount(): number {
    return this.running
  }
}

/** A tool whose calls sleep, report progress, fail or die as their input says. */
export const scriptedTool = (
  name: string,
  log: RunLog,
  options: {
    readonly safe?: boolean | ((input: ScriptInput) => boolean)
    readonly interruptBehavior?: Tool.InterruptBehavior
    readonly aliases?: ReadonlyArray<string>
    readonly maxResultSizeChars?: number
    readonly modifier?: (input: ScriptInput) => ToolUseContext.ContextModifier | undefined
    readonly footprint?: (input: ScriptInput) => Footprint.Footprint
  } = {}
) =>
  Tool.make(name, {
    description: `${name} (scripted test tool)`,
    input: ScriptInput,
    aliases: options.aliases ?? [],
    ...(options.maxResultSizeChars !== undefined ? { maxResultSizeChars: options.maxResultSizeChars } : {}),
    interruptBehavior: options.interruptBehavior ?? "block",
    isConcurrencySafe: (input) => typeof options.safe === "function" ? options.safe(input) : options.safe ?? false,
    isReadOnly: (input) => (typeof options.safe === "function" ? options.safe(input) : options.safe ?? false),
    ...(options.footprint !== undefined ? { footprint: options.footprint } : {}),
    call: (input, ctx) =>
      Effect.gen(function*() {
        const span = log.enter(ctx.toolUseId, name, yield* Clock.currentTimeMillis)
        return yield* Effect.gen(function*() {
          const steps = input.progress ?? 0
          const ms = Math.round(input.ms ?? 0)
          for (let i = 0; i < steps; i++) {
            yield* ctx.progress({ step: i + 1, of: steps })
            yield* Effect.sleep(Math.floor(ms / (steps + 1)))
          }
          yield* Effect.sleep(ms - steps * Math.floor(ms / (steps + 1)))
          const modifier = options.modifier?.(input)
          if (modifier !== undefined) yield* ctx.modifyContext(modifier)
          if (input.die) return yield* Effect.die(new Error(`${input.label ?? name} exploded`))
          if (input.fail) return yield* Effect.fail(new Tool.ToolError({ message: `${input.label ?? name} failed` }))
          return input.output ?? `${input.label ?? name} done`
        }).pipe(
          Effect.onExit((exit) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) =>
              Effect.sync(() => log.exit(span, at, Exit.isInterrupted(exit))))
          )
        )
      })
  })

/** An environment over these tools with a fresh context. */
export const environment = (
  tools: ReadonlyArray<Tool.Any>,
  context: Partial<Parameters<typeof ToolUseContext.make>[0]> = {}
): Effect.Effect<Execution.Environment> =>
  Effect.map(
    Ref.make(ToolUseContext.make({ cwd: "/tmp", sessionId: "test-session", ...context })),
    (ref) => ({ tools, pool: tools, context: ref })
  )

export const call = (id: string, name: string, input: unknown = {}): Messages.ToolUseBlock =>
  Messages.toolUse(id, name, input)

export const TestLayer = Layer.mergeAll(Results.layerMemory, Registry.layer())

/**
 * A permissive policy that still honours a hook's block and the tool's own
 * `checkPermissions` (a deny denies, an ask denies: nobody to ask) — what
 * the engine's default was before it ran only read-only calls (SPEC §5).
 */
export const checkedAllowAll: Permissions.Service = {
  decide: (request) =>
    Effect.gen(function*() {
      if (request.hook.decision === "deny") {
        return { behavior: "deny" as const, source: "hook", message: request.hook.reason ?? "Blocked by a hook" }
      }
      const check = yield* request.tool.checkPermissions(request.input, request.context)
      if (check.behavior !== "allow") return { behavior: "deny" as const, source: "tool", message: check.message }
      return { behavior: "allow" as const, source: "default", updatedInput: request.hook.updatedInput }
    })
}

/**
 * An in-memory result store and `checkedAllowAll`, by name: the engine's
 * default policy runs only read-only calls, and these tests are about
 * scheduling and results, not permissions.
 */
export const MemoryAllowAll = Layer.merge(
  Results.layerMemory,
  Layer.succeed(Permissions.PermissionPolicy, checkedAllowAll)
)

/** The example of chapter 5.5.1: `[Read A, Read B, Grep C] [Edit D] [Read E, Read F]`, with durations. */
export const chapterCalls: ReadonlyArray<Messages.ToolUseBlock> = [
  call("A", "Read", { ms: 100 }),
  call("B", "Read", { ms: 120 }),
  call("C", "Grep", { ms: 80 }),
  call("D", "Edit", { ms: 50 }),
  call("E", "Read", { ms: 30 }),
  call("F", "Read", { ms: 40 })
]
