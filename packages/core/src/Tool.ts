/**
 * Tool definition (SPEC §4.1). `Tool.make` fills the fail-closed defaults of
 * Claude Code's `buildTool`: a tool that declares nothing is serial, not
 * read-only, not destructive, allowed by its own check and blocks on a new
 * user message.
 *
 * Tools are provided as Layers (`Tool.layer`) into a `ToolPool`; the layer
 * captures what the tool requires (FileSystem, a shell analyser, …), so the
 * registered tool needs nothing more at call time.
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as JSONSchema from "effect/JSONSchema"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Footprint from "./Footprint.js"
import type * as Messages from "./Messages.js"
import type { ToolPermissionCheck } from "./PermissionContext.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@switchyard/core/Tool")
/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The error a tool fails with to tell the model what went wrong; its message
 * becomes the error `tool_result`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  message: Schema.String
}) {}

/**
 * @since 0.1.0
 * @category models
 */
export type InterruptBehavior = "cancel" | "block"

/**
 * A safety predicate over the decoded input. It may be an Effect (Bash asks a
 * shell analyser).
 *
 * @since 0.1.0
 * @category models
 */
export type InputPredicate<I, R> = (
  input: I,
  context: ToolUseContext.ToolUseContext
) => boolean | Effect.Effect<boolean, never, R>

/**
 * The resources a call reads and writes (SPEC §4.13), from its decoded input.
 * It may be an Effect (resolving symlinks, asking a shell analyser); a failure
 * or defect counts as writing everything.
 *
 * @since 0.1.0
 * @category models
 */
export type FootprintFunction<I, R> = (
  input: I,
  context: ToolUseContext.ToolUseContext
) => Footprint.Footprint | Effect.Effect<Footprint.Footprint, unknown, R>

/**
 * What `call` receives besides its input.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallContext<P> {
  readonly toolUseId: string
  /** The context as it was when the call started. */
  readonly context: ToolUseContext.ToolUseContext
  /** Report progress; the bridge from callback style to the event stream (SPEC §4.6). */
  readonly progress: (data: P) => Effect.Effect<void>
  /** Queue a context modifier; the runner applies it per SPEC §4.7/§4.8. */
  readonly modifyContext: (modifier: ToolUseContext.ContextModifier) => Effect.Effect<void>
}

/**
 * An element of a streaming `call`: progress, or the one final output.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamItem<O, P> =
  | { readonly _tag: "Progress"; readonly data: P }
  | { readonly _tag: "Output"; readonly value: O }

/**
 * @since 0.1.0
 * @category constructors
 */
export const progress = <P>(data: P): StreamItem<never, P> => ({ _tag: "Progress", data })

/**
 * @since 0.1.0
 * @category constructors
 */
export const output = <O>(value: O): StreamItem<O, never> => ({ _tag: "Output", value })

/**
 * A tool. `I` is the decoded input, `O` the output, `P` the progress data and
 * `R` what its effects require.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<I, O, P = unknown, R = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  readonly description: string
  /** One line shown for a deferred tool (SPEC §4.3). */
  readonly searchHint: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Schema's encoded side is invariant: any tool's input schema fits
  readonly inputSchema: Schema.Schema<I, any>
  /** A JSON Schema to send instead of deriving one from `inputSchema` (MCP tools). */
  readonly inputJsonSchema: JsonObjectSchema | undefined
  readonly isEnabled: () => boolean
  readonly isConcurrencySafe: InputPredicate<I, R>
  readonly isReadOnly: InputPredicate<I, R>
  readonly isDestructive: InputPredicate<I, R>
  /**
   * Whether running the call twice has the effect of running it once. A
   * durable session (SPEC §4.14) runs an idempotent call again after a crash
   * cut it off, with the same `Journal.currentIdempotencyKey`; any other call
   * that is not read-only is answered "its effect is unknown" instead.
   */
  readonly isIdempotent: InputPredicate<I, R>
  readonly checkPermissions: (
    input: I,
    context: ToolUseContext.ToolUseContext
  ) => Effect.Effect<ToolPermissionCheck, never, R>
  readonly interruptBehavior: InterruptBehavior
  readonly userFacingName: (input: I | undefined) => string
  readonly maxResultSizeChars: number
  /** Business-rule validation (SPEC §4.4 step 2); fail with a `ToolError`. */
  readonly validateInput:
    | ((input: I, context: ToolUseContext.ToolUseContext) => Effect.Effect<void, ToolError, R>)
    | undefined
  /** Fill derived fields on a copy that hooks and permissions see (SPEC §4.4 step 3). */
  readonly backfillObservableInput: ((input: I, context: ToolUseContext.ToolUseContext) => I) | undefined
  readonly call: (
    input: I,
    context: CallContext<P>
  ) => Effect.Effect<O, unknown, R> | Stream.Stream<StreamItem<O, P>, unknown, R>
  readonly mapResult: (output: O, toolUseId: string) => Messages.ToolResultContent
  readonly shouldDefer: boolean
  readonly alwaysLoad: boolean
  readonly isMcp: boolean
  /** Names of the tools a REPL tool wraps (SPEC §4.2 step 4). */
  readonly wraps: ReadonlyArray<string>
  /** The file or directory a call touches, for path permission rules (default: `file_path`, `notebook_path` or `path`). */
  readonly getPath: (input: I) => string | undefined
  /**
   * What a call reads and writes, for footprint scheduling (SPEC §4.13).
   * Without one the call is fail-closed: a safe call reads `*`, an unsafe one
   * writes `*`.
   */
  readonly footprint: FootprintFunction<I, R> | undefined
}

/**
 * A tool with its types erased, as the registry holds it. (Like `Schema.Any`,
 * this is the one place the input type is `any`: the engine only ever feeds a
 * tool the value its own schema decoded.)
 *
 * @since 0.1.0
 * @category models
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Any = Tool<any, any, any, never>

/**
 * A plain object JSON Schema as the Anthropic API wants for `input_schema`.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObjectSchema {
  readonly type: "object"
  readonly properties?: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/**
 * The definition `make` takes. Everything but `description`, `input` and
 * `call` has a fail-closed default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<I, O, P, R> {
  readonly description: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Schema's encoded side is invariant: any tool's input schema fits
  readonly input: Schema.Schema<I, any>
  readonly call: (
    input: I,
    context: CallContext<P>
  ) => Effect.Effect<O, unknown, R> | Stream.Stream<StreamItem<O, P>, unknown, R>
  readonly aliases?: ReadonlyArray<string>
  readonly searchHint?: string
  readonly inputJsonSchema?: JsonObjectSchema
  readonly isEnabled?: () => boolean
  readonly isConcurrencySafe?: InputPredicate<I, R>
  readonly isReadOnly?: InputPredicate<I, R>
  readonly isDestructive?: InputPredicate<I, R>
  readonly isIdempotent?: InputPredicate<I, R>
  readonly checkPermissions?: (
    input: I,
    context: ToolUseContext.ToolUseContext
  ) => Effect.Effect<ToolPermissionCheck, never, R>
  readonly interruptBehavior?: InterruptBehavior
  readonly userFacingName?: (input: I | undefined) => string
  readonly maxResultSizeChars?: number
  readonly validateInput?: (input: I, context: ToolUseContext.ToolUseContext) => Effect.Effect<void, ToolError, R>
  readonly backfillObservableInput?: (input: I, context: ToolUseContext.ToolUseContext) => I
  readonly mapResult?: (output: O, toolUseId: string) => Messages.ToolResultContent
  readonly shouldDefer?: boolean
  readonly alwaysLoad?: boolean
  readonly isMcp?: boolean
  readonly wraps?: ReadonlyArray<string>
  readonly getPath?: (input: I) => string | undefined
  readonly footprint?: FootprintFunction<I, R>
}

const allow: ToolPermissionCheck = { behavior: "allow" }
const no = () => false

/**
 * The default `mapResult`: strings as they are, anything else as JSON.
 *
 * @since 0.1.0
 * @category mapping
 */
export const defaultMapResult = (output: unknown): Messages.ToolResultContent =>
  typeof output === "string"
    ? output
    : output === undefined
    ? ""
    // What JSON.stringify gives for these, without its cost on the hot path.
    : typeof output === "boolean" || (typeof output === "number" && Number.isFinite(output))
    ? String(output)
    : JSON.stringify(output, null, 2)

/**
 * Build a tool, filling the fail-closed defaults of SPEC §4.1.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <I, O, P = unknown, R = never>(name: string, def: Definition<I, O, P, R>): Tool<I, O, P, R> => ({
  [TypeId]: TypeId,
  name,
  aliases: def.aliases ?? [],
  description: def.description,
  searchHint: def.searchHint ?? firstLine(def.description),
  inputSchema: def.input,
  inputJsonSchema: def.inputJsonSchema,
  isEnabled: def.isEnabled ?? (() => true),
  isConcurrencySafe: def.isConcurrencySafe ?? no,
  isReadOnly: def.isReadOnly ?? no,
  isDestructive: def.isDestructive ?? no,
  isIdempotent: def.isIdempotent ?? no,
  checkPermissions: def.checkPermissions ?? (() => Effect.succeed(allow)),
  interruptBehavior: def.interruptBehavior ?? "block",
  userFacingName: def.userFacingName ?? (() => name),
  maxResultSizeChars: def.maxResultSizeChars ?? 50_000,
  validateInput: def.validateInput,
  backfillObservableInput: def.backfillObservableInput,
  call: def.call,
  mapResult: def.mapResult ?? defaultMapResult,
  shouldDefer: def.shouldDefer ?? false,
  alwaysLoad: def.alwaysLoad ?? false,
  isMcp: def.isMcp ?? false,
  wraps: def.wraps ?? [],
  getPath: def.getPath ?? defaultGetPath,
  footprint: def.footprint
})

/**
 * The path a call touches, from the conventional input fields.
 *
 * @since 0.1.0
 * @category getters
 */
export const defaultGetPath = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["file_path", "notebook_path", "path"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return undefined
}

const firstLine = (text: string): string => {
  const line = text.split("\n", 1)[0] ?? ""
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isTool = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

/**
 * Whether the model sees only a one-line summary of the tool until ToolSearch
 * loads it (SPEC §4.3).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isDeferred = (tool: Any): boolean => (tool.isMcp || tool.shouldDefer) && !tool.alwaysLoad

/**
 * Resolve a predicate that may be an Effect.
 *
 * @since 0.1.0
 * @category predicates
 */
export const evaluate = (result: boolean | Effect.Effect<boolean>): Effect.Effect<boolean> =>
  typeof result === "boolean" ? Effect.succeed(result) : result

/**
 * Whether a tool name matches this tool, by name or by alias.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasName = (tool: Any, name: string): boolean => tool.name === name || tool.aliases.includes(name)

/**
 * Provide the tool's requirements once, so the engine can run it without
 * knowing them.
 *
 * @since 0.1.0
 * @category combinators
 */
export const provideContext = <I, O, P, R>(tool: Tool<I, O, P, R>, context: Context.Context<R>): Tool<I, O, P> => {
  const provide = <A, E>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, context)
  const predicate = (f: InputPredicate<I, R>): InputPredicate<I, never> => (input, ctx) => {
    const result = f(input, ctx)
    return typeof result === "boolean" ? result : provide(result)
  }
  return {
    ...tool,
    isConcurrencySafe: predicate(tool.isConcurrencySafe),
    isReadOnly: predicate(tool.isReadOnly),
    isDestructive: predicate(tool.isDestructive),
    isIdempotent: predicate(tool.isIdempotent),
    checkPermissions: (input, ctx) => provide(tool.checkPermissions(input, ctx)),
    footprint: tool.footprint === undefined ? undefined : (input, ctx) => {
      const result = tool.footprint!(input, ctx)
      return Effect.isEffect(result) ? provide(result) : result
    },
    validateInput: tool.validateInput === undefined
      ? undefined
      : (input, ctx) => provide(tool.validateInput!(input, ctx)),
    call: (input, ctx) => {
      const result = tool.call(input, ctx)
      return Effect.isEffect(result) ? provide(result) : Stream.provideContext(result, context)
    }
  }
}

/**
 * The set of tools a program provides. Each `Tool.layer` adds to it; the
 * registry (SPEC §4.2) reads it. A source whose tools change while the
 * program runs (an MCP server's `tools/list_changed`) marks the change with
 * `beginUpdate` and ends it with the returned effect; reading `tools` waits
 * for the updates in flight, so the next model request sees the new tools.
 *
 * @since 0.1.0
 * @category services
 */
export class ToolPool extends Context.Tag("@switchyard/core/Tool/ToolPool")<
  ToolPool,
  {
    readonly register: (tool: Any) => Effect.Effect<void>
    readonly tools: Effect.Effect<ReadonlyArray<Any>>
    /** Mark an update as in flight now; run the returned effect when it is done (or failed). */
    readonly beginUpdate: () => Effect.Effect<void>
  }
>() {
  /**
   * An empty pool.
   */
  static readonly make = Effect.sync(() => {
    const tools: Array<Any> = []
    const inFlight = new Set<Deferred.Deferred<void>>()
    return ToolPool.of({
      register: (tool) =>
        Effect.sync(() => {
          const index = tools.findIndex((existing) => existing.name === tool.name)
          // A later layer with the same name replaces the earlier one (user overrides a built-in).
          if (index === -1) tools.push(tool)
          else tools[index] = tool
        }),
      tools: Effect.suspend(() =>
        inFlight.size === 0
          ? Effect.sync(() => tools.slice())
          : Effect.zipRight(
            Effect.forEach([...inFlight], Deferred.await, { discard: true }),
            Effect.sync(() => tools.slice())
          )
      ),
      beginUpdate: () => {
        const done = Deferred.unsafeMake<void>(FiberId.none)
        inFlight.add(done)
        return Effect.suspend(() => {
          inFlight.delete(done)
          return Deferred.succeed(done, undefined)
        }).pipe(Effect.asVoid)
      }
    })
  })
}

/**
 * Provide a tool: its Layer registers it in the `ToolPool`, with its
 * requirements provided from the layer's context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <I, O, P, R>(tool: Tool<I, O, P, R>): Layer.Layer<never, never, ToolPool | R> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const pool = yield* ToolPool
      const context = yield* Effect.context<R>()
      yield* pool.register(provideContext(tool, context) as Any)
    })
  )

// Any tool, whatever its calls need (the constraint `layerAll` infers each one's requirements from).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyWithRequirements = Tool<any, any, any, any>

/**
 * The requirements of a tool: what its calls need from their context.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<T> = T extends Tool<infer _I, infer _O, infer _P, infer R> ? R : never

/**
 * Provide several tools with one Layer: each registered in order, as `layer`
 * registers one. Every Layer costs something to build (a memo entry, a scope,
 * a fiber where Layers are merged), which a command-line process pays on each
 * start: a dozen tools merged from single Layers cost about fifteen times one
 * Layer registering them all.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAll = <const Tools extends ReadonlyArray<AnyWithRequirements>>(
  tools: Tools
): Layer.Layer<never, never, ToolPool | Requirements<Tools[number]>> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const pool = yield* ToolPool
      const context = yield* Effect.context<Requirements<Tools[number]>>()
      for (const tool of tools) yield* pool.register(provideContext(tool, context) as Any)
    })
  )

/**
 * A feature-gated tool (SPEC §4.2): when the `Config` flag is off the tool is
 * not constructed at all — `load` (typically a dynamic `import()`) never runs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerGated = <R>(
  gate: Config.Config<boolean>,
  load: () => Promise<Layer.Layer<never, never, ToolPool | R>>
): Layer.Layer<never, never, ToolPool | R> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const on = yield* gate.pipe(Effect.orElseSucceed(() => false))
      if (!on) return Layer.empty as Layer.Layer<never, never, ToolPool | R>
      return yield* Effect.promise(load)
    })
  )

/**
 * The `input_schema` sent to the API: a plain, inlined object schema with no
 * `$ref`, `$defs` or `$schema` (SPEC §1 traps).
 *
 * @since 0.1.0
 * @category json schema
 */
export const inputJsonSchema = (tool: Any): JsonObjectSchema => {
  if (tool.inputJsonSchema !== undefined) return tool.inputJsonSchema
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const schema = JSONSchema.fromAST(tool.inputSchema.ast, {
    definitions,
    topLevelReferenceStrategy: "skip"
  })
  const inlined = inlineRefs(schema, definitions, new Set()) as Record<string, unknown>
  delete inlined["$schema"]
  return { ...inlined, type: "object" } as JsonObjectSchema
}

const inlineRefs = (
  value: unknown,
  definitions: Record<string, unknown>,
  visiting: ReadonlySet<string>
): unknown => {
  if (Array.isArray(value)) return value.map((item) => inlineRefs(item, definitions, visiting))
  if (typeof value !== "object" || value === null) return value
  const record = value as Record<string, unknown>
  const ref = record["$ref"]
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
    const name = ref.slice("#/$defs/".length)
    const target = definitions[name]
    // A recursive schema cannot be inlined; leave it open rather than loop.
    if (target === undefined || visiting.has(name)) return {}
    const { $ref: _ref, ...rest } = record
    return { ...(inlineRefs(target, definitions, new Set([...visiting, name])) as object), ...rest }
  }
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(record)) {
    if (key === "$defs" || key === "$schema") continue
    // Effect's refinements title themselves after their filter (`nonNegative`, `int`,
    // `between(1, 10)`): noise for the model, which reads the bounds from `minimum` etc.
    if (key === "title" && typeof child === "string" && /^[a-z][A-Za-z]*(\(.*\))?$/.test(child)) continue
    out[key] = inlineRefs(child, definitions, visiting)
  }
  return out
}
