/**
 * The terminal's question about a settings file or `.mcp.json` a sandboxed
 * command may have written (core's `SandboxedRoots`).
 *
 * @internal
 */
import type * as SandboxedRoots from "@switchyard/core/SandboxedRoots"
import * as Effect from "effect/Effect"
import * as readline from "node:readline/promises"

/** Asked on stderr, answered on stdin (a terminal). */
export const terminal: SandboxedRoots.Confirmation["Type"] = {
  confirm: (request) =>
    Effect.promise(async () => {
      const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
      try {
        const answer = await prompt.question(
          `${request.file} changed after sandboxed commands could write in ${request.root}: one of them may have ` +
            `written it (its hooks would run outside the sandbox). Review it; use this file? [y/N] `
        )
        return /^y(es)?$/i.test(answer.trim())
      } finally {
        prompt.close()
      }
    })
}
