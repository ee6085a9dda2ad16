/**
 * Hook output is collected with a cap (issue 9, item 11): a hook that prints
 * megabytes does not become a megabyte event, and the event says it was cut.
 */
import {
  DispatchEvent,
  Execution,
  HookRunner,
  Hooks,
  Messages,
  PermissionContext,
  Tool,
  ToolUseContext
} from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { MemoryAllowAll } from "./fixtures.js"

const Echo = Tool.make("Echo", {
  description: "Echo the text back",
  input: Schema.Struct({ text: Schema.String }),
  call: (input) => Effect.succeed(`echo: ${input.text}`)
})

const PRINTED = 8 * 1024 * 1024

describe("hook output cap", () => {
  it.scoped.each(
    [
      ["stdout", `head -c ${PRINTED} /dev/zero | tr '\\0' a`],
      ["stderr", `head -c ${PRINTED} /dev/zero | tr '\\0' b >&2; exit 1`]
    ] as const
  )(
    "a hook printing %s megabytes gives an event of bounded size that says it was cut",
    ([stream, command]) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "switchyard-hook-cap-" })
        const hooks = yield* HookRunner.make({
          hooks: { PostToolUse: [{ hooks: [{ type: "command", command }] }] },
          projectDir: dir,
          defaultTimeoutSeconds: 60
        })
        const env: Execution.Environment = {
          tools: [Echo],
          pool: [Echo],
          context: yield* Ref.make(
            ToolUseContext.make({ cwd: dir, permissions: { ...PermissionContext.empty, mode: "bypassPermissions" } })
          )
        }
        const events = Chunk.toArray(
          yield* Stream.runCollect(Execution.runToolUse(Messages.toolUse("toolu_1", "Echo", { text: "hi" }), env)).pipe(
            Effect.provideService(Hooks.Hooks, hooks),
            Effect.provide(MemoryAllowAll)
          )
        )
        expect(events.filter(DispatchEvent.isResult)).toHaveLength(1)
        const size = JSON.stringify(events).length
        expect(size).toBeLessThan(2 * HookRunner.MAX_OUTPUT_BYTES)
        expect(JSON.stringify(events)).toContain(
          `${PRINTED} bytes on ${stream}; only the first ${HookRunner.MAX_OUTPUT_BYTES} bytes`
        )
      }).pipe(Effect.provide(NodeContext.layer)),
    { timeout: 120_000 }
  )
})
