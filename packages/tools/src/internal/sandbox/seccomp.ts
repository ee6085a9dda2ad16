/**
 * The seccomp filter bubblewrap installs for a sandboxed command
 * (`bwrap --seccomp FD`): a classic-BPF program (an array of
 * `struct sock_filter`, 8 bytes each in the machine's byte order) that keeps
 * the command from reaching the host's Unix sockets. `--unshare-net` does
 * not cover socket files — the filesystem is bound read-only, and
 * `connect()` is not a write — so without it a command connects to a tmux,
 * D-Bus, ssh-agent, Docker or PostgreSQL socket and runs things outside.
 *
 * What it refuses, with `EPERM`:
 * - `socket(AF_UNIX, …)` (the only way to make a Unix socket that can be
 *   pointed at a path);
 * - `socketpair(AF_UNIX, SOCK_DGRAM, …)`: a datagram socket from a pair can
 *   still `sendto()`/`connect()` a path; stream and seqpacket pairs are
 *   connected for good, so they stay (libuv's pipes between processes are
 *   stream pairs);
 * - `io_uring_setup`: io_uring's `IORING_OP_SOCKET` makes sockets without
 *   the `socket` system call;
 * - on x86_64, the i386 ABI's `socketcall` (its arguments lie in memory a
 *   filter cannot read), with `socket`/`socketpair` checked as above.
 *
 * It kills the process on any other ABI — the x32 system calls of x86_64,
 * a foreign architecture (32-bit ARM on aarch64) — so the filter cannot be
 * sidestepped through a compatibility entry point whose numbers it does not
 * know. Everything else is allowed.
 *
 * Only x86_64 and aarch64 have a filter (`program` returns `undefined`
 * elsewhere).
 *
 * bubblewrap installs it for everything it runs. A command with network
 * access runs under the relay (`proxy.ts`), which must reach the proxy's
 * Unix socket: there bubblewrap gets no filter, and the relay starts the
 * command through `APPLY_SCRIPT`, which installs the same filter on itself
 * and `exec`s the command — the way Claude Code's sandbox-runtime wraps only
 * the user's command in its `apply-seccomp` helper.
 *
 * @internal
 */

/** One BPF instruction, with jumps by label (resolved by `assemble`). */
interface Instruction {
  readonly code: number
  readonly k: number
  readonly jt?: string | undefined
  readonly jf?: string | undefined
  readonly label?: string | undefined
}

const BPF_LD_W_ABS = 0x20
const BPF_ALU_AND_K = 0x54
const BPF_JMP_JA = 0x05
const BPF_JMP_JEQ_K = 0x15
const BPF_JMP_JGE_K = 0x35
const BPF_RET_K = 0x06

/** @internal */
export const RET_ALLOW = 0x7fff0000
/** `SECCOMP_RET_ERRNO | EPERM`. @internal */
export const RET_EPERM = 0x00050000 | 1
/** @internal */
export const RET_KILL_PROCESS = 0x80000000

/** `struct seccomp_data` offsets: `nr`, `arch`, the low 32 bits of `args[0]` and `args[1]`. */
const NR = 0
const ARCH = 4
/** The machine's byte order (the kernel reads `struct sock_filter` and `seccomp_data` in it). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const argLow = (index: number) => 16 + 8 * index + (LITTLE_ENDIAN ? 0 : 4)

/** @internal */
export const AUDIT_ARCH_X86_64 = 0xc000003e
/** @internal */
export const AUDIT_ARCH_I386 = 0x40000003
/** @internal */
export const AUDIT_ARCH_AARCH64 = 0xc00000b7
const X32_SYSCALL_BIT = 0x40000000
const AF_UNIX = 1
const SOCK_DGRAM = 2
const SOCK_TYPE_MASK = 0xf

/** The system call numbers the filter looks at, per ABI. */
interface Calls {
  readonly socket: number
  readonly socketpair: number
  readonly ioUringSetup: number
  readonly socketcall?: number | undefined
}

/** @internal */
export const X86_64: Calls = { socket: 41, socketpair: 53, ioUringSetup: 425 }
/** @internal */
export const I386: Calls = { socket: 359, socketpair: 360, ioUringSetup: 425, socketcall: 102 }
/** @internal */
export const AARCH64: Calls = { socket: 198, socketpair: 199, ioUringSetup: 425 }

const ld = (offset: number, label?: string): Instruction => ({ code: BPF_LD_W_ABS, k: offset, label })
const jeq = (k: number, jt: string, jf?: string): Instruction => ({ code: BPF_JMP_JEQ_K, k, jt, jf })
const ret = (k: number, label: string): Instruction => ({ code: BPF_RET_K, k, label })

/** The checks of one ABI's system calls, entered at `label`. */
const abi = (label: string, calls: Calls, x32: boolean): ReadonlyArray<Instruction> => [
  ld(NR, label),
  ...(x32 ? [{ code: BPF_JMP_JGE_K, k: X32_SYSCALL_BIT, jt: "kill" }] : []),
  jeq(calls.socket, "socket"),
  jeq(calls.socketpair, "socketpair"),
  jeq(calls.ioUringSetup, "deny"),
  ...(calls.socketcall === undefined ? [] : [jeq(calls.socketcall, "deny")]),
  { code: BPF_JMP_JA, k: 0, jt: "allow" }
]

const program_ = (native: number, calls: Calls, compat?: { arch: number; calls: Calls }) =>
  assemble([
    ld(ARCH),
    jeq(native, "native"),
    ...(compat === undefined ? [] : [jeq(compat.arch, "compat")]),
    { code: BPF_JMP_JA, k: 0, jt: "kill" },
    ...abi("native", calls, native === AUDIT_ARCH_X86_64),
    ...(compat === undefined ? [] : abi("compat", compat.calls, false)),
    // socket(domain, …): a Unix one is refused.
    ld(argLow(0), "socket"),
    jeq(AF_UNIX, "deny", "allow"),
    // socketpair(domain, type, …): a Unix datagram pair is refused (whatever SOCK_NONBLOCK/SOCK_CLOEXEC say).
    ld(argLow(0), "socketpair"),
    jeq(AF_UNIX, "pairType", "allow"),
    ld(argLow(1), "pairType"),
    { code: BPF_ALU_AND_K, k: SOCK_TYPE_MASK },
    jeq(SOCK_DGRAM, "deny", "allow"),
    ret(RET_ALLOW, "allow"),
    ret(RET_EPERM, "deny"),
    ret(RET_KILL_PROCESS, "kill")
  ])

/** Resolve labels to forward offsets and encode `struct sock_filter { u16 code; u8 jt, jf; u32 k }`. */
const assemble = (instructions: ReadonlyArray<Instruction>): Uint8Array => {
  const at = new Map<string, number>()
  instructions.forEach((instruction, index) => {
    if (instruction.label !== undefined) at.set(instruction.label, index)
  })
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0
    const target = at.get(label)
    const distance = target === undefined ? -1 : target - from - 1
    if (distance < 0 || distance > 255) throw new Error(`seccomp: no forward jump to ${label} from ${from}`)
    return distance
  }
  const buffer = Buffer.alloc(instructions.length * 8)
  const little = LITTLE_ENDIAN
  instructions.forEach((instruction, index) => {
    const { code, jf, jt } = instruction
    // An unconditional jump keeps its distance in k.
    const k = code === BPF_JMP_JA ? offset(index, jt) : instruction.k
    const base = index * 8
    if (little) buffer.writeUInt16LE(code, base)
    else buffer.writeUInt16BE(code, base)
    buffer.writeUInt8(code === BPF_JMP_JA ? 0 : offset(index, jt), base + 2)
    buffer.writeUInt8(code === BPF_JMP_JA ? 0 : offset(index, jf), base + 3)
    if (little) buffer.writeUInt32LE(k >>> 0, base + 4)
    else buffer.writeUInt32BE(k >>> 0, base + 4)
  })
  return new Uint8Array(buffer)
}

/**
 * The filter for this machine (`arch`: a `process.arch`), or `undefined`
 * where there is none (not x86_64 or aarch64).
 *
 * @internal
 */
export const program = (arch: string = process.arch): Uint8Array | undefined => {
  switch (arch) {
    case "x64":
      return program_(AUDIT_ARCH_X86_64, X86_64, { arch: AUDIT_ARCH_I386, calls: I386 })
    case "arm64":
      return program_(AUDIT_ARCH_AARCH64, AARCH64)
    default:
      return undefined
  }
}

/**
 * The `prctl` system call number for `arch` (a `process.arch`; only where
 * `program` makes a filter).
 *
 * @internal
 */
export const prctlNumber = (arch: string = process.arch): number | undefined =>
  arch === "x64" ? 157 : arch === "arm64" ? 167 : undefined

/**
 * A Perl program (`perl SCRIPT PRCTL FILTER-FILE COMMAND…`) that installs
 * the filter on itself and `exec`s the command: `PR_SET_NO_NEW_PRIVS`, then
 * `PR_SET_SECCOMP` with `SECCOMP_MODE_FILTER` and a `struct sock_fprog`
 * (`unsigned short len`, padding, a pointer to the program's bytes). Why
 * Perl: Node cannot call `prctl`, bubblewrap cannot filter one process of
 * the sandbox and not another, and `perl` is on every Debian-like system
 * (perl-base is essential). It fails closed: when the filter cannot be
 * installed the command does not run (exit 255 with the reason).
 *
 * @internal
 */
export const APPLY_SCRIPT = String.raw`
my ($nr, $file) = splice(@ARGV, 0, 2);
open(my $f, "<:raw", $file) or die "sandbox seccomp: $file: $!
";
my $bpf = do { local $/; <$f> };
close($f);
syscall($nr, 38, 1, 0, 0, 0) == 0 or die "sandbox seccomp: PR_SET_NO_NEW_PRIVS: $!
";
my $prog = pack("S x6 J", length($bpf) / 8, unpack("J", pack("p", $bpf)));
syscall($nr, 22, 2, $prog) == 0 or die "sandbox seccomp: PR_SET_SECCOMP: $!
";
exec { $ARGV[0] } @ARGV or die "$ARGV[0]: $!
";
`
