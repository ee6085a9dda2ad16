/**
 * The entry of the bundled `switchyard` binary. `--help`, `<command> --help`
 * and `--version` are answered from `help.json`, which the build renders with
 * the full parser (packages/cli/build.mjs), so they start without loading
 * `@effect/cli` or Effect. `tools list [--json]` and `tools schema NAME` are
 * answered from `tools.json` when nothing they read differs from the build's
 * fresh directory (no settings, no `.mcp.json`, no configuration variable);
 * `tools list [--json]`, `dispatch FILE` and `-p PROMPT` otherwise run without
 * the parser (internal/fastTools.ts, internal/fastDispatch.ts,
 * internal/fastPrint.ts); everything else loads
 * the full parser (main.ts). The work is internal/frontStart.ts's.
 *
 * @since 0.1.0
 */
import * as FrontStart from "./internal/frontStart.js"

/**
 * `tools` pages rendered in a fresh directory, with what rendering them read:
 * variables that were unset and paths (`<cwd>/…`, `$HOME/…`, `$NAME/…` for
 * each variable in `set`, or absolute) that were absent or directories.
 *
 * @since 0.1.0
 */
export type ToolPages = FrontStart.ToolPages

/**
 * Whether this process would read what the pages were rendered from: HOME
 * and every `set` variable given, every recorded variable unset and every
 * recorded path of the same kind, with `<cwd>` standing for the working
 * directory and `$NAME` for the variable's value.
 *
 * @since 0.1.0
 */
export const unchanged: (
  conditions: Omit<ToolPages, "pages">,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string
) => boolean = FrontStart.unchanged

/**
 * What the front prints for these arguments, or undefined when the full
 * parser must run.
 *
 * @since 0.1.0
 */
export const answer: (args: ReadonlyArray<string>, pages: Readonly<Record<string, string>>) => string | undefined =
  FrontStart.answer

/**
 * Answer the command line `args` (without `node` and the script): from the
 * pages when they hold the answer, `tools list`, `dispatch FILE` and
 * `-p PROMPT` without the full parser, everything else by loading it (main.ts, which reads
 * `process.argv`).
 *
 * @since 0.1.0
 */
export const start = (args: ReadonlyArray<string>): Promise<void> =>
  FrontStart.start(args, {
    full: async () => {
      const { main } = await import("./main.js")
      main()
    },
    tools: () => import("./internal/fastTools.js"),
    dispatch: () => import("./internal/fastDispatch.js"),
    print: () => import("./internal/fastPrint.js")
  })
