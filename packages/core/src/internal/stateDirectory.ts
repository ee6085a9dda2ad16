/**
 * Where Switchyard keeps its state, decided once: the settings, the session
 * transcripts, spilled tool results and speculation overlays all live under
 * `$SWITCHYARD_HOME`, else `<home>/.switchyard`, where home is `$HOME`, else
 * `$USERPROFILE`, else `/`.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"

/** `$HOME`, else `$USERPROFILE`, else `/`. */
export const homeDirectory: Effect.Effect<string> = Config.string("HOME").pipe(
  Config.orElse(() => Config.string("USERPROFILE")),
  Effect.orElseSucceed(() => "/")
)

/** `$SWITCHYARD_HOME`, else `<home>/.switchyard`. */
export const stateDirectoryOf = (home: string): Effect.Effect<string> =>
  Config.string("SWITCHYARD_HOME").pipe(Effect.orElseSucceed(() => NodePath.join(home, ".switchyard")))

/** The state directory of this process's home directory. */
export const stateDirectory: Effect.Effect<string> = Effect.flatMap(homeDirectory, stateDirectoryOf)
