/**
 * The interruption tree (SPEC §4.9): query → turn executor (sibling scope) → tool.
 *
 * Effect already interrupts child fibers when their parent scope closes; what
 * it does not carry is *why*. A node records the reason it was aborted with,
 * tells its listeners (which interrupt the fibers doing the work), passes the
 * reason down to its children, and passes it up to its parent unless the
 * reason is `sibling_error` — so a user's "no" ends the turn while a failed
 * sibling Bash call only cancels its siblings.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category models
 */
export type InterruptReason = "user_interrupt" | "new_message" | "sibling_error" | "permission_rejected"

/**
 * @since 0.1.0
 * @category models
 */
export interface InterruptionNode {
  /** The first reason this node was aborted with, if any. */
  readonly reason: () => Option.Option<InterruptReason>
  /** Whether this node has been aborted with any reason. */
  readonly isAborted: () => boolean
  /** Abort this node (and propagate per SPEC §4.9). Idempotent per reason. */
  readonly abort: (reason: InterruptReason) => Effect.Effect<void>
  /** Run `f` when this node is aborted; runs at once if it already was. */
  readonly onAbort: (f: (reason: InterruptReason) => Effect.Effect<void>) => Effect.Effect<void>
  /** Suspends until the node is aborted, with the reason. */
  readonly await: Effect.Effect<InterruptReason>
  /**
   * Make a child node. Reasons in `ignore` are not passed down to it (a
   * `block` tool ignores `new_message`).
   */
  readonly child: (options?: { readonly ignore?: ReadonlyArray<InterruptReason> }) => Effect.Effect<InterruptionNode>
  /** Detach this node from its parent once its work is over. */
  readonly detach: Effect.Effect<void>
  /** How many children are attached now (finished work detaches, so this stays small). */
  readonly childCount: () => number
}

/**
 * Whether an abort with this reason travels up to the parent.
 *
 * @since 0.1.0
 * @category predicates
 */
export const propagatesUp = (reason: InterruptReason): boolean => reason !== "sibling_error"

/**
 * A short human-readable line for a reason, used in synthetic results.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (reason: InterruptReason): string => {
  switch (reason) {
    case "user_interrupt":
      return "Interrupted by user"
    case "new_message":
      return "Cancelled: the user sent a new message"
    case "sibling_error":
      return "Cancelled: a parallel Bash call failed"
    case "permission_rejected":
      return "Cancelled: the user rejected a tool use in this turn"
  }
}

class NodeImpl implements InterruptionNode {
  private readonly seen = new Set<InterruptReason>()
  private first: Option.Option<InterruptReason> = Option.none()
  private readonly listeners: Array<(reason: InterruptReason) => Effect.Effect<void>> = []
  private readonly children = new Set<NodeImpl>()
  private readonly deferred: Deferred.Deferred<InterruptReason>

  constructor(
    private readonly parent: NodeImpl | undefined,
    readonly ignored: ReadonlySet<InterruptReason>,
    deferred: Deferred.Deferred<InterruptReason>
  ) {
    this.deferred = deferred
  }

  readonly reason = () => this.first
  readonly isAborted = () => Option.isSome(this.first)

  readonly abort = (reason: InterruptReason): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (this.seen.has(reason)) return Effect.void
      this.seen.add(reason)
      if (Option.isNone(this.first)) this.first = Option.some(reason)
      const listeners = this.listeners.slice()
      const children = Array.from(this.children).filter((child) => !child.ignored.has(reason))
      return Effect.zipRight(
        Deferred.succeed(this.deferred, reason),
        Effect.forEach(listeners, (f) => f(reason), { discard: true })
      ).pipe(
        Effect.zipRight(Effect.forEach(children, (child) => child.abort(reason), { discard: true })),
        Effect.zipRight(
          this.parent !== undefined && propagatesUp(reason) ? this.parent.abort(reason) : Effect.void
        )
      )
    })

  readonly onAbort = (f: (reason: InterruptReason) => Effect.Effect<void>): Effect.Effect<void> =>
    Effect.suspend(() => {
      this.listeners.push(f)
      return Option.match(this.first, { onNone: () => Effect.void, onSome: f })
    })

  get await(): Effect.Effect<InterruptReason> {
    return Deferred.await(this.deferred)
  }

  readonly child = (options?: { readonly ignore?: ReadonlyArray<InterruptReason> }) =>
    Effect.map(Deferred.make<InterruptReason>(), (deferred) => {
      const node = new NodeImpl(this, new Set(options?.ignore ?? []), deferred)
      this.children.add(node)
      return node
    }).pipe(
      Effect.tap((node) =>
        // A child created under an aborted parent starts aborted.
        Effect.forEach(Array.from(this.seen).filter((reason) => !node.ignored.has(reason)), node.abort, {
          discard: true
        })
      )
    )

  readonly childCount = () => this.children.size

  get detach(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.parent?.children.delete(this)
    })
  }
}

/**
 * A root node (the query).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRoot: Effect.Effect<InterruptionNode> = Effect.map(
  Deferred.make<InterruptReason>(),
  (deferred) => new NodeImpl(undefined, new Set(), deferred)
)

/**
 * A child of `parent` that is detached when the current scope closes, so a
 * finished turn (its executor, tools and results) does not stay reachable
 * from the query, nor receive its later aborts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const childScoped = (
  parent: InterruptionNode,
  options?: { readonly ignore?: ReadonlyArray<InterruptReason> }
): Effect.Effect<InterruptionNode, never, Scope.Scope> =>
  Effect.acquireRelease(parent.child(options), (node) => node.detach)
