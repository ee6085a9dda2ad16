/**
 * The span of one tool call (SPEC §3): `execute_tool {tool name}` with the
 * OpenTelemetry GenAI attributes, opened and closed inside the runtime's
 * steps (see `tracing.ts`) so that a call which never waits costs no extra
 * Effects.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Tracer from "effect/Tracer"
import type * as DispatchEvent from "../DispatchEvent.js"
import type * as Messages from "../Messages.js"
import type * as Tool from "../Tool.js"
import * as FailureText from "./failureText.js"
import * as Tracing from "./tracing.js"

/** Open the span of a call to `tool` (`undefined`: the name resolved to no tool). */
export const open = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  block: Messages.ToolUseBlock,
  tool: Tool.Any | undefined
): Tracer.Span => {
  const name = tool?.name ?? block.name
  return Tracing.unsafeOpenSpan(fiber, `execute_tool ${name}`, "internal", {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.call.id": block.id,
    "gen_ai.tool.type": tool?.isMcp === true ? "extension" : "function",
    "switchyard.tool_use_id": block.id
  })
}

/** End the span with the call's status and, for anything but success, its `error.type`. */
export const close = <A extends { readonly result: DispatchEvent.Result }>(
  span: Tracer.Span,
  exit: Exit.Exit<A>,
  at: Fiber.RuntimeFiber<unknown, unknown>,
  errorType: string | undefined
): void => {
  if (Exit.isSuccess(exit)) {
    const status = exit.value.result.status
    span.attribute("switchyard.status", status)
    if (status !== "success") span.attribute("error.type", errorType ?? status)
  } else {
    span.attribute("error.type", FailureText.errorTypeOf(exit.cause))
  }
  Tracing.unsafeEndSpan(at, span, exit)
}

/**
 * Run `run` inside `span`. A call that never waits (`run` is already an
 * `Exit`) ran no Effect that could open a child span, so its span just ends.
 * Otherwise the span is the parent of what the call does: the fiber's context
 * holds it while the call runs and gets its own context back when the call
 * ends, however it ends.
 */
export const within = <A, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  span: Tracer.Span,
  run: Effect.Effect<A, never, R>,
  onEnd: (exit: Exit.Exit<A>, at: Fiber.RuntimeFiber<unknown, unknown>) => void
): Effect.Effect<A, never, R> => {
  if (Exit.isExit(run)) {
    onEnd(run as Exit.Exit<A>, fiber)
    return run
  }
  const outer = fiber.currentContext
  return Effect.onExit(
    Effect.zipRight(FiberRef.set(FiberRef.currentContext, Context.add(outer, Tracer.ParentSpan, span)), run),
    (exit) =>
      Effect.zipRight(
        FiberRef.set(FiberRef.currentContext, outer),
        Effect.withFiberRuntime((current) => Effect.succeed(onEnd(exit, current)))
      )
  )
}
