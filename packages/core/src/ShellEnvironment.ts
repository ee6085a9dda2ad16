/**
 * What the environment of every `bash -c` Switchyard starts (the Bash tool,
 * hooks, `!` commands) needs so that bash runs only the command.
 *
 * Bash as Debian, Ubuntu and Fedora build it (`SSH_SOURCE_BASHRC`) reads
 * `~/.bashrc` when it thinks sshd started it: its stdin is a socket and
 * `SHLVL` says it is the first shell. Node's piped stdio is a socket pair, so
 * where `SHLVL` is unset (a CLI started by a service, cron, an IDE, a CI
 * runner or `env -i`) every command ran the user's `.bashrc` first: its
 * output (pyenv's "cannot rehash" inside the sandbox) led the command's, and
 * its code ran unasked in every call. A `SHLVL` of at least 1 makes bash count
 * itself the second shell, as it is under a terminal.
 *
 * @since 0.1.0
 */

/**
 * The variables to add to `environment` (the parent's, by default) for a
 * shell started with a piped stdin: `SHLVL=1` when it is unset, not a whole
 * number or below 1; nothing otherwise (a terminal's value passes on unchanged).
 *
 * @since 0.1.0
 * @category environment
 */
export const nonInteractive = (
  environment: Readonly<Record<string, string | undefined>> = process.env
): Record<string, string> => {
  // bash takes a value that is not a whole number (legal_number) as 0.
  const value = environment["SHLVL"] ?? ""
  return /^\s*\+?\d+\s*$/.test(value) && Number(value) >= 1 ? {} : { SHLVL: "1" }
}
