/**
 * TodoWrite: the model's task list for the session (Claude Code's
 * `TodoWrite`). Each call replaces the whole list; the list lives in the
 * context (`ToolUseContext.setTodos`), nowhere else.
 *
 * Safety: the only effect is a context modifier, and modifiers of a
 * concurrent batch are applied after the batch in call order (SPEC §4.7), so
 * running TodoWrite alongside other calls gives the same list as running it
 * alone — it is concurrency-safe. It is read-only in the sense the permission
 * modes use (it touches no file, process or network), so plan mode and
 * speculation allow it, as Claude Code does.
 *
 * @since 0.1.0
 */
import * as Footprint from "@switchyard/core/Footprint"
import * as Tool from "@switchyard/core/Tool"
import * as ToolUseContext from "@switchyard/core/ToolUseContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const TodoItem = Schema.Struct({
  content: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "What needs doing, imperative" }),
  status: Schema.Literal("pending", "in_progress", "completed"),
  activeForm: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The present continuous form shown while it is in progress, e.g. \"Running tests\""
  })
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const TodoWriteInput = Schema.Struct({
  todos: Schema.Array(TodoItem).annotations({ description: "The updated todo list" })
})

/**
 * @since 0.1.0
 * @category models
 */
export type TodoWriteInput = Schema.Schema.Type<typeof TodoWriteInput>

/**
 * @since 0.1.0
 * @category models
 */
export interface TodoWriteOutput {
  readonly oldTodos: ReadonlyArray<ToolUseContext.Todo>
  readonly newTodos: ReadonlyArray<ToolUseContext.Todo>
}

/**
 * The TodoWrite tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const TodoWrite = Tool.make("TodoWrite", {
  description: [
    "Creates and updates the structured task list for this session; each call replaces the whole list.",
    "- Use it for work with three or more steps, and to show progress.",
    "- Statuses: pending, in_progress (one task at a time), completed (as soon as a task is done).",
    "- content says what to do (\"Run tests\"); activeForm says it in progress (\"Running tests\")."
  ].join("\n"),
  input: TodoWriteInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  footprint: () => ({ writes: [Footprint.todos] }),
  call: (input, ctx) =>
    Effect.gen(function*() {
      // A finished list is cleared, as Claude Code does, so the next task starts from an empty list.
      const newTodos = input.todos.every((todo) => todo.status === "completed") ? [] : input.todos
      yield* ctx.modifyContext(ToolUseContext.setTodos(newTodos))
      const output: TodoWriteOutput = { oldTodos: ctx.context.todos, newTodos }
      return output
    }),
  mapResult: () =>
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. " +
    "Please proceed with the current tasks if applicable"
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Tool.layer(TodoWrite)
