/**
 * The program table: for each program the analyser knows, whether an
 * invocation is read-only and which paths it reads and writes (issue 3,
 * "Read-only shell commands"; issue 9, items 1, 2, 3, 8 and 12; issue 15's
 * footprint). The descriptions live next to this file, one module per family
 * (`coreutils`, `search`, `sed`, `awk`, `jq`, `archives`, `git`, `xargs`,
 * `builtins`, `writers`, `versions`), built from `invocation.ts`.
 *
 * Every program is parsed with its real option grammar (`options.ts`):
 * an option the grammar does not know, or one that writes or runs something,
 * makes the invocation not read-only. An argument whose value the parser
 * could not prove (an expansion, a glob) might become any option at run
 * time — `find . *` with a file named `-delete` in the directory — so
 * programs with such options reject it unless it comes after `--`, and its
 * path is unresolved.
 *
 * Decisions worth knowing:
 * - Only bare command names: `./ls` or `/tmp/ls` may be anything.
 * - `git`: no global options except `--no-pager`, `--no-optional-locks` and
 *   the pathspec switches; `-c`, `-C`, `--git-dir`, `--work-tree` are refused
 *   (they can point git at a configuration that runs programs). `git branch`
 *   and `git tag` take names only with an option that switches to listing
 *   (`--list`, `--contains`, …); `--sort`, `--format`, `--column`, `-v` do
 *   not (`git branch --sort=x name` creates `name`).
 * - `sed` with a script of selecting, printing and text commands; `s`
 *   without the `w`/`e` flags; no `-i`, `-f`, `w`, `W`, `r`, `R`, `e`
 *   (`-i` with such a script only edits its files: `onlyWritesPaths`).
 * - `awk` only with a program that has no `|`, `>`, `system`, `getline`,
 *   `close`, `fflush` or `@` (gawk's includes and indirect calls).
 * - `test`/`[`: the operands of arithmetic comparisons must be literal
 *   numbers and the operand of `-v`/`-R` a plain name — bash evaluates
 *   `a[$(cmd)]` there.
 * - `less`, `more` and `man` are interactive (pagers can run shell commands)
 *   and are not read-only.
 * - `xargs` is read-only only with plain batching options and a read-only
 *   command that stays read-only whatever arguments it is given; the names it
 *   feeds are unresolved paths.
 *
 * @internal
 */
import * as Archives from "./archives.js"
import * as Awk from "./awk.js"
import * as Builtins from "./builtins.js"
import * as Coreutils from "./coreutils.js"
import { type Describe, type Invocation, NO_PATHS, noPaths, UNKNOWN, type Word } from "./invocation.js"
import * as Git from "./git.js"
import * as Jq from "./jq.js"
import type * as Options from "./options.js"
import * as Search from "./search.js"
import * as Sed from "./sed.js"
import * as Versions from "./versions.js"
import * as Writers from "./writers.js"
import * as Xargs from "./xargs.js"

export type { Invocation, Word } from "./invocation.js"

const NO_PATH_PROGRAMS: ReadonlyArray<string> = [
  "pwd",
  "echo",
  "whoami",
  "id",
  "groups",
  "uname",
  "sleep",
  "true",
  "false",
  ":",
  "basename",
  "dirname",
  "seq",
  "nproc",
  "free",
  "uptime",
  "ps",
  "pgrep",
  "tty",
  "locale",
  "arch",
  "printenv",
  "expr",
  "lsb_release",
  "numfmt"
]

const READ_ONLY: ReadonlyMap<string, Describe> = new Map<string, Describe>([
  ...NO_PATH_PROGRAMS.map((name): [string, Describe] => [name, noPaths]),
  ["which", Builtins.lookup(true)],
  ["whereis", Builtins.lookup(true)],
  ["type", Builtins.lookup(true)],
  ["ls", Coreutils.ls],
  ["cat", Coreutils.cat],
  ["head", Coreutils.head],
  ["tail", Coreutils.tail],
  ["wc", Coreutils.wc],
  ["stat", Coreutils.stat],
  ["realpath", Coreutils.realpath],
  ["readlink", Coreutils.readlink],
  ["du", Coreutils.du],
  ["df", Coreutils.df],
  ["cut", Coreutils.cut],
  ["tr", Coreutils.tr],
  ["diff", Coreutils.diff],
  ["cmp", Coreutils.cmp],
  ["comm", Coreutils.comm],
  ["tac", Coreutils.tac],
  ["nl", Coreutils.nl],
  ["od", Coreutils.od],
  ["hexdump", Coreutils.hexdump],
  ["md5sum", Coreutils.checksum()],
  ["sha1sum", Coreutils.checksum()],
  ["sha224sum", Coreutils.checksum()],
  ["sha256sum", Coreutils.checksum()],
  ["sha384sum", Coreutils.checksum()],
  ["sha512sum", Coreutils.checksum()],
  ["b2sum", Coreutils.checksum("l:")],
  ["cksum", Coreutils.checksum("a: l:")],
  ["base64", Coreutils.base64],
  ["base32", Coreutils.base64],
  ["column", Coreutils.column],
  ["fold", Coreutils.fold],
  ["expand", Coreutils.expand],
  ["unexpand", Coreutils.unexpand],
  ["rev", Coreutils.rev],
  ["paste", Coreutils.paste],
  ["join", Coreutils.join],
  ["strings", Coreutils.strings],
  ["fmt", Coreutils.fmt],
  ["look", Coreutils.look],
  ["sort", Coreutils.sort],
  ["uniq", Coreutils.uniq],
  ["tree", Coreutils.tree],
  ["file", Coreutils.file],
  ["xxd", Coreutils.xxd],
  ["date", Coreutils.date],
  ["env", Coreutils.env],
  ["getconf", Coreutils.getconf],
  ["hostname", Coreutils.hostname],
  ["grep", Search.grep],
  ["egrep", Search.grep],
  ["fgrep", Search.grep],
  ["rg", Search.rg],
  ["find", Search.find],
  ["jq", Jq.jq],
  ["test", Builtins.test(false)],
  ["[", Builtins.test(true)],
  ["printf", Builtins.printf],
  ["command", Builtins.commandBuiltin],
  ["read", Builtins.read],
  ["sed", Sed.sed],
  ["awk", Awk.awk],
  ["gawk", Awk.awk],
  ["mawk", Awk.awk],
  ["tar", Archives.tar],
  ["unzip", Archives.unzip],
  ["zcat", Archives.zcat],
  ["gzip", Archives.gzip],
  ["git", Git.git],
  ["xargs", Xargs.makeXargs((name, args) => describeInvocation(name, args))]
])

const WRITERS: ReadonlyMap<string, Describe> = new Map<string, Describe>([
  ["mkdir", Writers.mkdir],
  ["touch", Writers.touch],
  ["rm", Writers.rm],
  ["rmdir", Writers.rmdir],
  ["mv", Writers.mv],
  ["cp", Writers.cp],
  ["ln", Writers.ln],
  ["tee", Writers.tee],
  ["truncate", Writers.truncate],
  ["dd", Writers.dd],
  ["chmod", Writers.chmodLike],
  ["chown", Writers.chmodLike],
  ["chgrp", Writers.chmodLike]
])

/** The names on the read-only list (each still subject to its argument check). */
export const readOnlyCommandNames: ReadonlyArray<string> = [...READ_ONLY.keys()]

/** The writers the table describes (for footprints and acceptEdits; never read-only). */
export const writerNames: ReadonlyArray<string> = [...WRITERS.keys()]

/** The option grammar a program of the table (read-only list or writers) is parsed with, if it has one. */
export const grammarOf = (name: string): Options.Grammar | undefined =>
  (READ_ONLY.get(name) ?? WRITERS.get(name))?.grammar

/**
 * What running `name` with these arguments does: whether it is read-only and
 * which paths it reads and writes. Only bare, static names are looked up;
 * anything else is unknown.
 */
export const describeInvocation = (name: string, args: ReadonlyArray<Word>): Invocation => {
  if (name.includes("/")) return UNKNOWN
  if (Versions.VERSION_QUERIES.has(name) && Versions.versionQuery(args)) return NO_PATHS
  if (name === "cd" || name === "pushd" || name === "popd") {
    // Read-only, but every later relative path depends on where it went.
    return { ...NO_PATHS, pathsKnown: false }
  }
  const describe = READ_ONLY.get(name) ?? WRITERS.get(name)
  if (describe === undefined) return UNKNOWN
  const described = describe(args)
  // A program known to take paths that its description could not follow: a word not known until
  // run time may be any path it reads or writes (`sed -n p */*` reads what the glob matches).
  if (described === UNKNOWN || (!described.readOnly && !described.pathsKnown && !described.unresolvedPaths)) {
    const words = args.filter((arg) => arg.dynamic && arg.value.length > 0).map((arg) => arg.value)
    if (words.length > 0) {
      return { ...described, unresolvedPaths: true, unresolvedWords: [...described.unresolvedWords, ...words] }
    }
  }
  return described
}

/** Whether running `name` with these arguments cannot change anything. */
export const isReadOnlyInvocation = (name: string, args: ReadonlyArray<Word>): boolean =>
  describeInvocation(name, args).readOnly
