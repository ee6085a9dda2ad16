/**
 * The observation oracle's runner and parser (issue 20, item 3; SPEC §4.13):
 * run shell commands under `strace -f` and report every path each one opened
 * for reading or writing, looked up, created, renamed, linked or removed —
 * what it actually touched, to compare with what it declared.
 *
 * Commands run in batches: one bubblewrap sandbox runs one bash driver that,
 * for each command, resets a work tree from a template (untraced), changes
 * into the command's directory and runs `strace -f … bash -c COMMAND` with
 * its own log, under a time limit. Relative paths are resolved against the
 * calling process's directory (`strace -y` prints `AT_FDCWD</dir>`; for the
 * plain calls it is followed through `chdir`/`fchdir` and inherited over
 * `clone`); descriptors are decoded by `strace -y`.
 *
 * Reusable by any test that needs "observed ⊆ declared": `observe` gives the
 * raw accesses; `canonicalAccess` makes them comparable with footprint
 * resources (symlinks resolved like `Footprint` paths).
 *
 * Needs Debian's `strace` (`.ci/run` installs it); `straceWorks()` says
 * whether it can trace here.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** One path a traced command touched. */
export interface Access {
  /** Absolute, as the process named it (not normalised, links not resolved). */
  readonly path: string
  readonly kind: "read" | "write"
  /** The last component is followed if it is a symbolic link (`open`, `stat`), or not (`lstat`, `unlink`). */
  readonly follow: boolean
  /** It made the path (`mkdir`, `O_CREAT|O_EXCL`, `symlink`, the target of `rename`/`link`). */
  readonly creates: boolean
  /** It removed the path (`unlink`, `rmdir`, the source of `rename`). */
  readonly removes: boolean
  /**
   * Only a lookup: the path's metadata or existence (`stat`, `access`, opening a directory
   * without listing it, `O_PATH`), not its contents or names.
   */
  readonly lookup: boolean
  /** The call failed (`= -1 ENOENT`, `EEXIST`, …): it depended on the path, but changed nothing. */
  readonly failed: boolean
  readonly syscall: string
}

/** What one command did. */
export interface Observation {
  readonly command: string
  readonly cwd: string
  readonly accesses: ReadonlyArray<Access>
  readonly exitCode: number | null
}

/** A command to observe, run in `dir` (relative to the work tree). */
export interface Job {
  readonly command: string
  readonly dir?: string
}

/** The bubblewrap arguments that make `root` the only writable place, in fresh namespaces. */
const sandbox = (root: string): ReadonlyArray<string> => [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--bind",
  root,
  root,
  "--unshare-all",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL"
]

/**
 * Whether strace can trace a child here inside bubblewrap (ptrace may be
 * forbidden in some containers): the commands observed may write, so they
 * run in a sandbox where only the fixture's directory is writable.
 */
export const straceWorks = (): boolean => {
  try {
    const args = [
      ...sandbox("/tmp"),
      "strace",
      "-f",
      "-qq",
      "--seccomp-bpf",
      "-e",
      "trace=openat",
      "-o",
      "/dev/null",
      "true"
    ]
    execFileSync("bwrap", args, { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const TRACED = [
  "%file",
  "%process",
  "fchdir",
  "fchmod",
  "fchown",
  "ftruncate",
  "fsetxattr",
  "fremovexattr",
  "getdents64"
].join(",")

const DRIVER = String.raw`#!/bin/bash
# $1: jobs (command NUL dir NUL …), $2: template, $3: copy, $4: exit codes out, $5: logs dir, $6: seconds;
# the rest: strace's options. The copy is made again before a job when the one before may have written.
jobs=$1 template=$2 copy=$3 codes=$4 logs=$5 limit=$6
shift 6
reset() {
  # A job may have taken its own permissions away (chmod 000 dir): give them back, then start over.
  chmod -R u+rwX "$copy" 2>/dev/null
  rm -rf "$copy" || { echo "cannot remove $copy" >&2; exit 3; }
  cp -a "$template" "$copy"
}
i=0
exec 3>"$codes"
reset
while IFS= read -r -d '' command && IFS= read -r -d '' dir; do
  cd "$copy/$dir" || cd "$copy"
  # strace runs under timeout, in a session of its own (setsid: a background job here shares the driver's group,
  # so setsid does not fork and $! is the group): only the command's own bash and programs are traced, not a
  # wrapper (0.6x the CPU of tracing one). timeout signals its whole group, tracees included; what the command
  # leaves running (sleep 100 &) keeps strace -f waiting until then, and is killed with the group after.
  setsid -w timeout -s KILL "$limit" strace "$@" -o "$logs/$i" bash -c "$command" </dev/null >/dev/null 2>&1 &
  p=$!
  wait "$p"
  echo "$?" >&3
  kill -KILL -- "-$p" 2>/dev/null
  cd /
  # A call that may have written, in the copy (not /dev/tty, /dev/null): start the next job from the template.
  # One awk, not a pipeline of three greps (8 of the ~35 ms of CPU a job cost): a line naming the copy, not a
  # device, with a writing call or flag.
  if copy=$copy awk 'index($0, ENVIRON["copy"]) && !index($0, "\"/dev/") &&
    (/O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|unlink|rename|mkdir|rmdir|chmod/ ||
      /chown|utime|truncate|link\(|linkat|mknod|setxattr|removexattr/) {
      wrote = 1
      exit
    }
    END { exit !wrote }' "$logs/$i"; then
    reset
  fi
  i=$((i + 1))
done < "$jobs"
reset
`

/**
 * Run `jobs` one after another under strace, each on a fresh copy of
 * `template` at `work`, and report what each touched. Both must be in one
 * directory, the only one the sandbox lets the commands write. `timeoutMs`
 * bounds the whole batch (the driver is killed, and the test fails, past it).
 */
export const observe = async (
  template: string,
  work: string,
  jobs: ReadonlyArray<Job>,
  options: {
    /** The whole batch. */
    readonly timeoutMs?: number
    /** Each command (killed past it; what it did so far is still reported). */
    readonly commandSeconds?: number
    readonly env?: Readonly<Record<string, string>>
  } = {}
): Promise<ReadonlyArray<Observation>> => {
  const root = path.dirname(work)
  const control = fs.mkdtempSync(path.join(root, ".strace-"))
  const list = path.join(control, "jobs")
  const logs = path.join(control, "logs")
  const codes = path.join(control, "codes")
  const driver = path.join(control, "driver.sh")
  fs.mkdirSync(logs)
  fs.writeFileSync(list, jobs.map((job) => `${job.command}\0${job.dir ?? "."}\0`).join(""))
  fs.writeFileSync(driver, DRIVER, { mode: 0o755 })
  const strace = ["-f", "-qq", "-y", "-s", "65535", "--seccomp-bpf", "-e", `trace=${TRACED}`]
  const limit = String(options.commandSeconds ?? 10)
  await new Promise<void>((resolve, reject) => {
    const child = spawn("bwrap", [
      ...sandbox(root),
      "bash",
      driver,
      list,
      template,
      work,
      codes,
      logs,
      limit,
      ...strace
    ], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", ...options.env }
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      code === 0 ? resolve() : reject(new Error(`strace exited with ${code}: ${stderr}`))
    })
  })
  const exitCodes = fs.readFileSync(codes, "utf8").split("\n").filter((line) => line.length > 0).map(Number)
  const observations = jobs.map((job, index): Observation => {
    const cwd = path.join(work, job.dir ?? ".")
    const log = path.join(logs, String(index))
    return {
      command: job.command,
      cwd,
      accesses: fs.existsSync(log) ? parseTrace(fs.readFileSync(log, "utf8"), cwd) : [],
      exitCode: exitCodes[index] ?? null
    }
  })
  fs.rmSync(control, { recursive: true, force: true })
  return observations
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 10,
  t: 9,
  r: 13,
  v: 11,
  f: 12,
  "\\": 92,
  "\"": 34,
  "'": 39
}

/** A C string as strace prints it (`"a\"b\n\303\251"`), decoded to the bytes' UTF-8 reading. */
const decodeString = (quoted: string): string => {
  // Most strings have no escape (a path of printable ASCII): the bytes' UTF-8 reading is the text itself.
  if (!quoted.includes("\\")) return quoted.slice(1, -1)
  const bytes: Array<number> = []
  for (let i = 1; i < quoted.length - 1; i++) {
    const c = quoted[i]!
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"))
      continue
    }
    const next = quoted[++i]!
    if (next in SIMPLE_ESCAPES) bytes.push(SIMPLE_ESCAPES[next]!)
    else if (next === "x") {
      bytes.push(parseInt(quoted.slice(i + 1, i + 3), 16))
      i += 2
    } else if (/[0-7]/.test(next)) {
      let digits = next
      while (digits.length < 3 && /[0-7]/.test(quoted[i + 1] ?? "")) digits += quoted[++i]
      bytes.push(parseInt(digits, 8))
    } else bytes.push(...Buffer.from(next, "utf8"))
  }
  return Buffer.from(bytes).toString("utf8")
}

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44

/**
 * The arguments of a syscall line, split at top-level commas (strings, braces and brackets kept whole); by
 * index, not character by character (a trace has hundreds of `stat` structures to skip).
 */
const splitArguments = (text: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // To the closing quote, skipping escaped characters.
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++
    } else if (c === 123 || c === 91 || c === 40) depth++
    else if (c === 125 || c === 93 || c === 41) depth--
    else if (c === COMMA && depth === 0) {
      out.push(text.slice(start, i).trim())
      start = i + 1
    }
  }
  const last = text.slice(start).trim()
  if (last.length > 0) out.push(last)
  return out
}

/** `3</a/b>` and `AT_FDCWD</a>` (strace -y) → `/a/b`, `/a`; anything else → undefined. */
const descriptorPath = (argument: string): string | undefined => {
  const match = /^(?:-?\d+|AT_FDCWD)<(.*)>$/.exec(argument)
  return match === null ? undefined : match[1]
}

const isString = (argument: string | undefined): argument is string =>
  argument !== undefined && argument.startsWith("\"")

interface Call {
  readonly pid: number
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly result: string
}

const LINE = /^(\d+)\s+(.*)$/
const CALL = /^([a-z_0-9]+)\((.*)\)\s+=\s+(.*)$/s

/** Complete syscall lines, with `<unfinished ...>` and `<... resumed>` halves joined per process. */
const calls = (text: string): ReadonlyArray<Call> => {
  const pending = new Map<number, string>()
  const out: Array<Call> = []
  for (const raw of text.split("\n")) {
    const line = LINE.exec(raw)
    if (line === null) continue
    const pid = Number(line[1])
    let body = line[2]!
    if (body.endsWith("<unfinished ...>")) {
      pending.set(pid, body.slice(0, -"<unfinished ...>".length).trimEnd())
      continue
    }
    const resumed = /^<\.\.\. [a-z_0-9]+ resumed>(.*)$/s.exec(body)
    if (resumed !== null) {
      body = (pending.get(pid) ?? "") + resumed[1]!
      pending.delete(pid)
    }
    const call = CALL.exec(body)
    if (call === null) continue
    out.push({ pid, name: call[1]!, args: splitArguments(call[2]!), result: call[3]! })
  }
  return out
}

const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/

/**
 * The accesses in one command's trace, with relative paths resolved against
 * each process's directory (the first process starts in `cwd`).
 */
export const parseTrace = (text: string, start: string): ReadonlyArray<Access> => {
  const out: Array<Access> = []
  const cwd = new Map<number, string>()
  const work = start
  // `/proc/self/cwd` is the calling process's own directory: the one it is in, not the test's (also reached
  // by climbing from a system directory: `LANGUAGE=../../../proc/self/cwd` under /usr/share/locale).
  const SELF = /^\/proc\/(?:self|thread-self)\/cwd(?=\/|$)/
  const own = (pid: number, absolute: string): string => {
    const normal = path.posix.normalize(absolute)
    return SELF.test(normal) ? normal.replace(SELF, cwd.get(pid) ?? work) : absolute
  }
  const at = (pid: number, dir: string | undefined, name: string): string =>
    own(pid, name.startsWith("/") ? name : `${(dir ?? cwd.get(pid) ?? work).replace(/\/+$/, "")}/${name}`)
  for (const call of calls(text)) {
    const failed = call.result.startsWith("-1")
    const record = (access: Omit<Access, "syscall" | "lookup" | "failed"> & { readonly lookup?: boolean }) =>
      out.push({ lookup: false, ...access, failed, syscall: call.name })
    const a = call.args
    const str = (index: number) => (isString(a[index]) ? decodeString(a[index]!) : undefined)
    const dirOf = (index: number) => descriptorPath(a[index] ?? "")
    switch (call.name) {
      case "execve": {
        const file = str(0)
        if (file !== undefined) {
          record({ path: at(call.pid, undefined, file), kind: "read", follow: true, creates: false, removes: false })
        }
        continue
      }
      case "clone":
      case "clone3":
      case "fork":
      case "vfork": {
        const child = Number(call.result.split(" ")[0])
        if (Number.isInteger(child) && child > 0) cwd.set(child, cwd.get(call.pid) ?? work)
        continue
      }
      case "chdir": {
        const dir = str(0)
        if (dir === undefined) continue
        const absolute = at(call.pid, undefined, dir)
        record({ path: absolute, kind: "read", follow: true, creates: false, removes: false, lookup: true })
        if (!failed) cwd.set(call.pid, absolute)
        continue
      }
      case "fchdir": {
        const dir = descriptorPath(a[0] ?? "")
        if (dir !== undefined && !failed) cwd.set(call.pid, dir)
        continue
      }
      case "open":
      case "creat":
      case "openat":
      case "openat2": {
        const dirIndex = call.name === "openat" || call.name === "openat2" ? 0 : -1
        const file = str(dirIndex + 1)
        if (file === undefined) continue
        const flags = call.name === "creat" ? "O_CREAT|O_WRONLY|O_TRUNC" : a[dirIndex + 2] ?? ""
        const write = WRITE_FLAGS.test(flags)
        record({
          path: at(call.pid, dirIndex === 0 ? dirOf(0) : undefined, file),
          kind: write ? "write" : "read",
          follow: !/O_NOFOLLOW/.test(flags),
          creates: /O_CREAT/.test(flags) && /O_EXCL/.test(flags) && !failed,
          removes: false,
          // A directory opened, or a path held, without reading: its listing is read by `getdents64`.
          lookup: !write && /O_DIRECTORY|O_PATH/.test(flags)
        })
        continue
      }
      case "stat":
      case "lstat":
      case "access":
      case "readlink":
      case "statfs":
      case "getxattr":
      case "lgetxattr":
      case "listxattr":
      case "llistxattr":
      case "inotify_add_watch": {
        const fileIndex = call.name === "inotify_add_watch" ? 1 : 0
        const file = str(fileIndex)
        if (file === undefined) continue
        const follow = !["lstat", "readlink", "lgetxattr", "llistxattr"].includes(call.name)
        const lookup = call.name !== "readlink" && call.name !== "inotify_add_watch"
        record({ path: at(call.pid, undefined, file), kind: "read", follow, creates: false, removes: false, lookup })
        continue
      }
      case "newfstatat":
      case "fstatat64":
      case "statx":
      case "faccessat":
      case "faccessat2":
      case "readlinkat":
      case "name_to_handle_at": {
        const file = str(1)
        if (file === undefined) continue
        const base = dirOf(0)
        const flags = a.slice(2).join(",")
        const empty = file === "" && /AT_EMPTY_PATH/.test(flags)
        record({
          path: empty ? base ?? cwd.get(call.pid) ?? work : at(call.pid, base, file),
          kind: "read",
          follow: call.name !== "readlinkat" && !/AT_SYMLINK_NOFOLLOW/.test(flags),
          creates: false,
          removes: false,
          lookup: call.name !== "readlinkat"
        })
        continue
      }
      case "getdents64": {
        const dir = descriptorPath(a[0] ?? "")
        if (dir !== undefined) record({ path: dir, kind: "read", follow: true, creates: false, removes: false })
        continue
      }
      case "mkdir":
      case "mkdirat":
      case "mknod":
      case "mknodat":
      case "rmdir":
      case "unlink":
      case "unlinkat": {
        const at2 = call.name.endsWith("at")
        const file = str(at2 ? 1 : 0)
        if (file === undefined) continue
        const removes = call.name.startsWith("rmdir") || call.name.startsWith("unlink")
        record({
          path: at(call.pid, at2 ? dirOf(0) : undefined, file),
          kind: "write",
          follow: false,
          creates: !removes && !failed,
          removes: removes && !failed
        })
        continue
      }
      case "rename":
      case "renameat":
      case "renameat2":
      case "link":
      case "linkat": {
        const at2 = call.name !== "rename" && call.name !== "link"
        const from = str(at2 ? 1 : 0)
        const to = str(at2 ? 3 : 1)
        if (from === undefined || to === undefined) continue
        const moves = call.name.startsWith("rename")
        record({
          path: at(call.pid, at2 ? dirOf(0) : undefined, from),
          kind: moves ? "write" : "read",
          follow: !moves && /AT_SYMLINK_FOLLOW/.test(a[4] ?? ""),
          creates: false,
          removes: moves && !failed
        })
        record({
          path: at(call.pid, at2 ? dirOf(2) : undefined, to),
          kind: "write",
          follow: false,
          creates: !failed,
          removes: false
        })
        continue
      }
      case "symlink":
      case "symlinkat": {
        const link = call.name === "symlink" ? str(1) : str(2)
        if (link === undefined) continue
        const base = call.name === "symlinkat" ? dirOf(1) : undefined
        record({ path: at(call.pid, base, link), kind: "write", follow: false, creates: !failed, removes: false })
        continue
      }
      case "chmod":
      case "chown":
      case "lchown":
      case "truncate":
      case "utime":
      case "utimes":
      case "setxattr":
      case "lsetxattr":
      case "removexattr":
      case "lremovexattr": {
        const file = str(0)
        if (file === undefined) continue
        const follow = !["lchown", "lsetxattr", "lremovexattr"].includes(call.name)
        record({ path: at(call.pid, undefined, file), kind: "write", follow, creates: false, removes: false })
        continue
      }
      case "fchmodat":
      case "fchownat":
      case "utimensat":
      case "futimesat": {
        const base = dirOf(0)
        const file = str(1)
        const flags = a.slice(2).join(",")
        const target = file === undefined || file === "" ? base : at(call.pid, base, file)
        if (target === undefined) continue
        record({
          path: target,
          kind: "write",
          follow: !/AT_SYMLINK_NOFOLLOW/.test(flags),
          creates: false,
          removes: false
        })
        continue
      }
      case "fchmod":
      case "fchown":
      case "ftruncate":
      case "fsetxattr":
      case "fremovexattr": {
        const file = descriptorPath(a[0] ?? "")
        if (file !== undefined) record({ path: file, kind: "write", follow: true, creates: false, removes: false })
        continue
      }
      default:
        continue
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Comparing with footprints
// ---------------------------------------------------------------------------

/** `absolute` with symlinks resolved where it exists (the rest appended), like a footprint path. */
export const canonical = (absolute: string): string => {
  const missing: Array<string> = []
  let current = absolute
  for (;;) {
    try {
      // The native realpath(3) walks `LINK/..` as the kernel does; Node's own normalises first.
      const real = fs.realpathSync.native(current)
      return missing.length === 0 ? real : path.join(real, ...missing.reverse())
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return path.resolve(absolute)
      missing.push(path.basename(current))
      current = parent
    }
  }
}

/**
 * The resource an access touched, comparable with footprint resources: the
 * canonical path, or, when the last component is not followed, its canonical
 * parent and its own name.
 */
export const canonicalAccess = (access: Access): string => {
  if (access.follow) return canonical(access.path)
  const parent = path.dirname(access.path)
  const name = path.basename(access.path)
  if (name === "." || name === "..") return canonical(access.path)
  return path.join(canonical(parent), name)
}
