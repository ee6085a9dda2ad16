/**
 * @switchyard/cli — the pieces of the `switchyard` command that embedders may
 * reuse (the wire format, renderers, the runtime layer, timeline).
 *
 * @since 0.1.0
 */
export * as Render from "./Render.js"
export * as Runtime from "./Runtime.js"
export * as StreamJson from "./StreamJson.js"
export * as Timeline from "./Timeline.js"
