/**
 * Adversarial review of issue 9's `Bash(rm *)` class with members outside
 * the corpus: wrappers, quoting, builtins, here-documents and -strings, process
 * substitution, xargs/find/parallel runners, functions and aliases defined
 * inline. Judged by the effect: every line the real chain lets through in
 * bypassPermissions is run for real with bash in a temp directory, and the
 * victim file must still be there.
 *
 * Interpreters and programs that run code from their own options (`perl -e`,
 * `awk 'BEGIN{system(…)}'`, `sed e`, `tar --checkpoint-action=exec`, `git -c
 * alias.x=!…`, `ssh -o ProxyCommand`, `make`, `vim`) are left out: SECURITY.md
 * says deny rules see the command line, not what such a program runs.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as ShellCommand from "@switchyard/tools/ShellCommand"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Bash, decide } from "./fixtures/permissionTools.js"

const ATTACKS: ReadonlyArray<string> = [
  "command rm victim",
  "builtin command rm victim",
  "exec rm victim",
  "time rm victim",
  "nice rm victim",
  "nohup rm victim",
  "timeout 5 rm victim",
  "stdbuf -o0 rm victim",
  "env rm victim",
  "env -i rm victim",
  "env -u HOME rm victim",
  "env -- rm victim",
  "sudo -n rm victim",
  "xargs rm <<< victim",
  "echo victim | xargs rm",
  "echo victim | xargs -I{} rm {}",
  "echo victim | xargs -0 -r rm",
  "find . -name victim -exec rm {} +",
  "find . -name victim -execdir rm {} \\;",
  "find . -name victim -ok rm {} \\;",
  "'rm' victim",
  "\"rm\" victim",
  "r''m victim",
  "r\"\"m victim",
  "\\rm victim",
  "r\\m victim",
  "$'\\162m' victim",
  "$'r\\u006d' victim",
  "{ rm victim; }",
  "(rm victim)",
  "if true; then rm victim; fi",
  "for f in victim; do rm $f; done",
  "while true; do rm victim; break; done",
  "case x in x) rm victim;; esac",
  "true && rm victim",
  "false || rm victim",
  "! rm victim",
  "echo $(rm victim)",
  "echo `rm victim`",
  "cat <(rm victim)",
  "echo >(rm victim)",
  "f() { rm \"$@\"; }; f victim",
  "function f { rm victim; }; f",
  "alias x=rm\nx victim",
  "shopt -s expand_aliases; alias x=rm; x victim",
  "bash -c 'rm victim'",
  "sh -c \"rm victim\"",
  "bash -lc 'rm victim'",
  "bash -ec 'rm victim'",
  "bash --norc -c 'rm victim'",
  "eval 'rm victim'",
  "eval \"r\"\"m victim\"",
  "bash <<< 'rm victim'",
  "bash <<'EOF'\nrm victim\nEOF",
  "sh < /dev/stdin <<< 'rm victim'",
  "echo 'rm victim' | bash",
  "source /dev/stdin <<< 'rm victim'",
  ". <(echo rm victim)",
  "trap 'rm victim' EXIT",
  "trap 'rm victim' EXIT; true",
  "PROMPT_COMMAND='rm victim' true",
  "x=rm; $x victim",
  "${x:-rm} victim",
  "$(echo rm) victim",
  "`echo rm` victim",
  "r{m,} victim",
  "/bin/rm victim",
  "/usr/bin/rm victim",
  "/usr/bin/../bin/rm victim",
  "./../../bin/rm victim",
  "busybox rm victim",
  "unlink victim",
  "find . -name victim -delete",
  "git rm -q --cached victim; rm victim",
  "rm -- victim",
  "rm\tvictim",
  "rm  victim",
  "  rm victim",
  "rm\\\n victim",
  "r\\\nm victim",
  "coproc rm victim",
  "rm victim &",
  "nohup rm victim &",
  "exec 3<>victim; rm victim",
  "watch -n1 -g rm victim",
  "script -qc 'rm victim' /dev/null",
  "flock /tmp/lock rm victim",
  "setsid rm victim",
  "chroot / rm victim",
  "unshare -r rm victim",
  "doas rm victim",
  "parallel rm ::: victim",
  "dash -c 'rm victim'",
  "zsh -c 'rm victim'",
  "/bin/bash -c 'rm victim'",
  "/usr/bin/env rm victim",
  "/usr/bin/env bash -c 'rm victim'",
  "env -S 'rm victim'",
  "env --split-string='rm victim'",
  "env -S\"rm victim\"",
  "xargs -a <(echo victim) rm",
  "find . -maxdepth 1 -name victim -print0 | xargs -0 rm",
  "command -p rm victim",
  "exec -a foo rm victim",
  "caller; rm victim",
  "rm${IFS}victim",
  "rm$IFS'victim'",
  "IFS=,; x=rm,victim; $x",
  "set -- rm victim; \"$@\"",
  "read -r c <<< rm; $c victim",
  "mapfile -t a <<< 'rm'; ${a[0]} victim",
  "printf -v c rm; $c victim",
  "declare c=rm; $c victim",
  "hash -p /bin/rm ls; ls victim",
  "enable -n echo; rm victim",
  "BASH_ENV=<(echo rm victim) bash -c true",
  "ENV=/dev/null rm victim",
  // Issue 19, class 9: names the analysis believed it had resolved.
  "nice -n 5 -- rm victim",
  "stdbuf -o0 -- rm victim",
  "time -- rm victim",
  "timeout 5 -- rm victim",
  "nohup -- rm victim",
  "BASH_CMDS[ls]=/bin/rm; ls victim",
  "BASH_CMDS+=([ls]=/bin/rm); ls victim",
  "declare -A BASH_CMDS=([ls]=/bin/rm); ls victim",
  "shopt -s expand_aliases; BASH_ALIASES[x]=rm; eval 'x victim'",
  "set -o history; history -s 'rm victim'; fc -s",
  "set -o history; history -s 'rm victim'; fc -e - ",
  "mapfile -C 'rm victim #' -c 1 <<< x",
  "readarray -C'rm victim #' -c1 <<< x",
  "PS4='$(rm victim)'; set -x; true",
  "read -r PS4 <<< '$(rm victim)'; set -x; true",
  "env -S 'rm\\_victim'",
  "env -S'rm\\_victim'",
  "env --split-string='rm victim'",
  "ln -s /bin/rm ./x; ./x victim",
  "cp /bin/rm ./y && ./y victim",
  "PATH=.:$PATH; ln -s /bin/rm z; z victim",
  "PATH=.:$PATH ln -s /bin/rm w && PATH=.:$PATH w victim"
]

const TestLayer = Layer.mergeAll(NodeContext.layer, ShellCommand.layer)

layer(TestLayer)("attack: Bash(rm *) deny in bypassPermissions, judged by the victim file", (it) => {
  it.effect("no line the chain lets through removes the file", () =>
    Effect.gen(function*() {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-deny-")))
      const victim = path.join(dir, "victim")
      const broke: Array<string> = []
      for (const command of ATTACKS) {
        fs.writeFileSync(victim, "still here\n")
        const { outcome } = yield* decide({ cwd: dir, mode: "bypassPermissions", deny: ["Bash(rm *)"] }, Bash, {
          command
        })
        if (outcome !== "allow") continue
        spawnSync("bash", ["-c", command], { cwd: dir, input: "", timeout: 5_000, stdio: ["pipe", "ignore", "ignore"] })
        if (!fs.existsSync(victim)) broke.push(command)
      }
      expect(broke.join("\n")).toBe("")
    }), 120_000)
})
