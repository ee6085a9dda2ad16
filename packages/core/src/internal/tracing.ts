/**
 * Spans opened and ended inside one step of the runtime, for the dispatch hot
 * path: what `Effect.makeSpan` and the end of `Effect.useSpan` do, read off the
 * fiber at hand instead of costing an Effect each.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

const noTime = BigInt(0)

/** The nearest span that propagates (a span with `DisablePropagation` hands over to its parent). */
const propagating = (span: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> => {
  while (Option.isSome(span) && Context.get(span.value.context, Tracer.DisablePropagation)) {
    span = span.value._tag === "Span" ? span.value.parent : Option.none()
  }
  return span
}

/** A span opened on `fiber`'s tracer, parent span, links and annotations; the caller has checked that tracing is on. */
export const unsafeOpenSpan = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  kind: Tracer.SpanKind,
  attributes: Readonly<Record<string, unknown>>
): Tracer.Span => {
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const timed = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
  const links = fiber.getFiberRef(FiberRef.currentTracerSpanLinks)
  const span = fiber.currentTracer.span(
    name,
    propagating(Option.fromNullable(fiber.currentSpan)),
    Context.empty(),
    Chunk.toReadonlyArray(links),
    timed ? clock.unsafeCurrentTimeNanos() : noTime,
    kind,
    { kind, attributes }
  )
  const annotations = fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations)
  if (HashMap.size(annotations) > 0) HashMap.forEach(annotations, (value, key) => span.attribute(key, value))
  for (const key in attributes) span.attribute(key, attributes[key])
  return span
}

/** End a span opened by `unsafeOpenSpan` on the same fiber (once: a span already ended stays as it is). */
export const unsafeEndSpan = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  span: Tracer.Span,
  exit: Exit.Exit<unknown, unknown>
): void => {
  if (span.status._tag === "Ended") return
  const timed = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
  span.end(timed ? Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeNanos() : noTime, exit)
}
