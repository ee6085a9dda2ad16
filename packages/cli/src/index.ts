/**
 * @switchyard/cli — the pieces of the `switchyard` command that embedders may
 * reuse (the dispatch wire format, renderers, timeline).
 *
 * @since 0.1.0
 */
export * as Dispatch from "./Dispatch.js"
export * as Render from "./Render.js"
export * as Runtime from "./Runtime.js"
export * as Timeline from "./Timeline.js"
