/**
 * Loading tree-sitter-bash into web-tree-sitter, once and lazily.
 *
 * The grammar is the `tree-sitter-bash.wasm` that the `tree-sitter-bash`
 * package ships, resolved through the module system so that it is found from
 * both `src` and `dist`.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import type { Parser, Tree } from "web-tree-sitter"

/** The grammar could not be loaded or the analysis threw; callers fail closed. */
export class ShellParseError extends Data.TaggedError("ShellParseError")<{
  readonly cause: unknown
}> {
  override get message() {
    return `tree-sitter-bash could not analyse the command: ${String(this.cause)}`
  }
}

const load = async (): Promise<Parser> => {
  // Imported on first use, so commands that never parse a shell line do not load it.
  const { Language, Parser } = await import("web-tree-sitter")
  const wasm = createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm")
  await Parser.init()
  const language = await Language.load(wasm)
  const parser = new Parser()
  parser.setLanguage(language)
  return parser
}

let loading: Promise<Parser> | undefined

/**
 * The shared parser. Parsing is synchronous, so one instance serves every
 * fiber. A failed load is not cached, so a later call retries.
 */
export const parser: Effect.Effect<Parser, ShellParseError> = Effect.tryPromise({
  try: () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  },
  catch: (cause) => new ShellParseError({ cause })
})

/**
 * Parse `source` and run `f` over the tree, freeing the tree's wasm memory
 * afterwards.
 */
export const withTree = <A>(
  source: string,
  f: (tree: Tree) => A
): Effect.Effect<A, ShellParseError> =>
  Effect.flatMap(parser, (instance) =>
    Effect.try({
      try: () => {
        const tree = instance.parse(source)
        if (tree === null) throw new Error("the parser returned no tree")
        try {
          return f(tree)
        } finally {
          tree.delete()
        }
      },
      catch: (cause) => new ShellParseError({ cause })
    }))
