/**
 * Version queries (issue 19, class 5): a program's `--version` is read-only
 * only when its description says what it reads and that it runs nothing from
 * the working tree. Each entry names what the query reads; programs whose
 * query loads project configuration are left out, with the reason:
 *
 * - `mvn` (`.mvn/jvm.config`, `.mvn/maven.config`), `gradle` (a daemon,
 *   `gradle.properties`, init scripts), `cargo`/`rustc` (rustup reads
 *   `rust-toolchain.toml` and may install or run the toolchain it names), `go`
 *   (`go.mod`'s `toolchain` line downloads and runs another go), `npm`/`npx`/
 *   `pnpm` (the project's `.npmrc`), `yarn` (`.yarnrc.yml`'s `yarnPath` runs
 *   a script from the tree), `terraform` (version managers read
 *   `.terraform-version`), `dotnet` (`global.json`), `docker`/`kubectl`
 *   (client plugins and config), `pip`/`gem` (plugins, config), `php`, `java`,
 *   `javac`, `swift`, `deno`, `bun`, `tsc`: not described here, so not
 *   read-only.
 *
 * @internal
 */
import type { Word } from "./invocation.js"

/** Programs whose `--version` (alone) prints a version, with what it reads. */
export const VERSION_QUERIES: ReadonlyMap<string, string> = new Map([
  ["node", "its own binary; NODE_OPTIONS from the environment"],
  ["python", "its own installation (pyvenv.cfg next to the binary)"],
  ["python3", "its own installation (pyvenv.cfg next to the binary)"],
  ["ruby", "its own binary"],
  ["perl", "its own binary"],
  ["bash", "its own binary (no startup files for --version)"],
  ["gcc", "its own binary"],
  ["g++", "its own binary"],
  ["cc", "its own binary"],
  ["clang", "its own binary and configuration files next to it"],
  ["make", "its own binary (no makefile for --version)"],
  ["cmake", "its own installation"],
  ["curl", "its own binary (no .curlrc for --version)"],
  ["wget", "its own binary"],
  ["tmux", "its own binary (no server)"],
  ["vim", "its own binary (no vimrc for --version)"],
  ["less", "its own binary"],
  ["man", "its own binary"],
  ["rsync", "its own binary"],
  ["zip", "its own binary"],
  ["bwrap", "its own binary"],
  ["sed", "its own binary"],
  ["awk", "its own binary"],
  ["gawk", "its own binary"],
  ["mawk", "its own binary"],
  ["tar", "its own binary"],
  ["gzip", "its own binary"],
  ["unzip", "its own binary"]
])

/** Whether the words are exactly `--version`. */
export const versionQuery = (args: ReadonlyArray<Word>): boolean =>
  args.length === 1 && !args[0]!.dynamic && args[0]!.value === "--version"
