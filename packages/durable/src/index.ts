/**
 * @switchyard/durable — durable sessions (SPEC §4.14) on `@effect/workflow`
 * and `@effect/cluster`.
 *
 * @since 0.1.0
 */
export * as DurableJournal from "./DurableJournal.js"
export * as SqlWorkflowEngine from "./SqlWorkflowEngine.js"
export * as JournalDatabase from "./JournalDatabase.js"
export * as SessionIndex from "./SessionIndex.js"
export * as Runner from "./Runner.js"
