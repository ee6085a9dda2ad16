/**
 * The seccomp filter's bytes (`internal/sandbox/seccomp.ts`), judged by what
 * they mean: a small interpreter of classic BPF runs the program on
 * `struct seccomp_data` values and the verdicts are compared with what the
 * filter must decide, for both architectures it is made for.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Seccomp from "../src/internal/sandbox/seccomp.js"

interface Data {
  readonly arch: number
  readonly nr: number
  readonly args: ReadonlyArray<number>
}

/** The kernel's `seccomp_data` for `data`, little-endian (both architectures are). */
const encode = (data: Data): Buffer => {
  const buffer = Buffer.alloc(64)
  buffer.writeInt32LE(data.nr, 0)
  buffer.writeUInt32LE(data.arch >>> 0, 4)
  data.args.forEach((arg, index) => buffer.writeUInt32LE(arg >>> 0, 16 + 8 * index))
  return buffer
}

/** Run classic BPF as the kernel's seccomp does (only the instructions a seccomp filter may use). */
const run = (program: Uint8Array, data: Data): number => {
  const code = Buffer.from(program)
  const input = encode(data)
  let a = 0
  for (let pc = 0; pc * 8 < code.length;) {
    const op = code.readUInt16LE(pc * 8)
    const jt = code.readUInt8(pc * 8 + 2)
    const jf = code.readUInt8(pc * 8 + 3)
    const k = code.readUInt32LE(pc * 8 + 4)
    pc += 1
    switch (op) {
      case 0x20: // ld w abs
        if (k % 4 !== 0 || k + 4 > 64) throw new Error(`load out of seccomp_data at ${k}`)
        a = input.readUInt32LE(k)
        break
      case 0x54: // and k
        a = (a & k) >>> 0
        break
      case 0x05: // ja
        pc += k
        break
      case 0x15: // jeq k
        pc += a === k ? jt : jf
        break
      case 0x35: // jge k
        pc += a >= k ? jt : jf
        break
      case 0x06: // ret k
        return k
      default:
        throw new Error(`unexpected BPF opcode ${op.toString(16)}`)
    }
  }
  throw new Error("the program ran off its end")
}

const AF_INET = 2
const AF_UNIX = 1
const SOCK_STREAM = 1
const SOCK_DGRAM = 2
const SOCK_SEQPACKET = 5
const SOCK_NONBLOCK = 0o4000
const SOCK_CLOEXEC = 0o2000000
const AUDIT_ARCH_ARM = 0x40000028
const AUDIT_ARCH_X32 = Seccomp.AUDIT_ARCH_X86_64

const abis = [
  { name: "x86_64", program: Seccomp.program("x64")!, arch: Seccomp.AUDIT_ARCH_X86_64, calls: Seccomp.X86_64 },
  { name: "i386 on x86_64", program: Seccomp.program("x64")!, arch: Seccomp.AUDIT_ARCH_I386, calls: Seccomp.I386 },
  { name: "aarch64", program: Seccomp.program("arm64")!, arch: Seccomp.AUDIT_ARCH_AARCH64, calls: Seccomp.AARCH64 }
] as const

describe("Sandbox seccomp filter", () => {
  for (const abi of abis) {
    it(`${abi.name}: socket(AF_UNIX) and AF_UNIX datagram pairs are refused with EPERM, the rest allowed`, () => {
      const verdict = (nr: number, ...args: Array<number>) => run(abi.program, { arch: abi.arch, nr, args })
      const flags = [0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC]
      for (const flag of flags) {
        for (const type of [SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET]) {
          expect(verdict(abi.calls.socket, AF_UNIX, type | flag, 0)).toBe(Seccomp.RET_EPERM)
          expect(verdict(abi.calls.socket, AF_INET, type | flag, 0)).toBe(Seccomp.RET_ALLOW)
        }
        expect(verdict(abi.calls.socketpair, AF_UNIX, SOCK_DGRAM | flag, 0)).toBe(Seccomp.RET_EPERM)
        expect(verdict(abi.calls.socketpair, AF_UNIX, SOCK_STREAM | flag, 0)).toBe(Seccomp.RET_ALLOW)
        expect(verdict(abi.calls.socketpair, AF_UNIX, SOCK_SEQPACKET | flag, 0)).toBe(Seccomp.RET_ALLOW)
      }
      expect(verdict(abi.calls.ioUringSetup, 8, 0)).toBe(Seccomp.RET_EPERM)
      if (abi.calls.socketcall !== undefined) expect(verdict(abi.calls.socketcall, 1, 0)).toBe(Seccomp.RET_EPERM)
      // Only the low 32 bits of the domain are the int the kernel reads; the filter reads the same.
      expect(verdict(abi.calls.socket, AF_UNIX, SOCK_STREAM, 0, 0)).toBe(Seccomp.RET_EPERM)
    })

    it(`${abi.name}: every other system call is allowed`, () => {
      const watched = new Set<number>(
        [abi.calls.socket, abi.calls.socketpair, abi.calls.ioUringSetup, abi.calls.socketcall ?? -1]
      )
      FastCheck.assert(
        FastCheck.property(
          FastCheck.integer({ min: 0, max: 1023 }).filter((nr) => !watched.has(nr)),
          FastCheck.array(FastCheck.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: 6, maxLength: 6 }),
          (nr, args) => run(abi.program, { arch: abi.arch, nr, args }) === Seccomp.RET_ALLOW
        )
      )
    })
  }

  it("x32 system calls and foreign architectures kill the process", () => {
    const x64 = Seccomp.program("x64")!
    const arm64 = Seccomp.program("arm64")!
    // x32: the x86_64 audit arch with __X32_SYSCALL_BIT in the number (x32's socket is 0x40000000 + 41).
    expect(run(x64, { arch: AUDIT_ARCH_X32, nr: 0x40000000 + 41, args: [AF_UNIX, SOCK_STREAM] }))
      .toBe(Seccomp.RET_KILL_PROCESS)
    expect(run(x64, { arch: AUDIT_ARCH_X32, nr: 0x40000000, args: [] })).toBe(Seccomp.RET_KILL_PROCESS)
    expect(run(x64, { arch: Seccomp.AUDIT_ARCH_AARCH64, nr: 198, args: [AF_UNIX] })).toBe(Seccomp.RET_KILL_PROCESS)
    expect(run(arm64, { arch: AUDIT_ARCH_ARM, nr: 281, args: [AF_UNIX] })).toBe(Seccomp.RET_KILL_PROCESS)
    expect(run(arm64, { arch: Seccomp.AUDIT_ARCH_X86_64, nr: 41, args: [AF_UNIX] })).toBe(Seccomp.RET_KILL_PROCESS)
    expect(run(arm64, { arch: Seccomp.AUDIT_ARCH_I386, nr: 359, args: [AF_UNIX] })).toBe(Seccomp.RET_KILL_PROCESS)
  })

  it("is made only for x86_64 and aarch64; a program is whole sock_filter entries", () => {
    expect(Seccomp.program("ia32")).toBeUndefined()
    expect(Seccomp.program("riscv64")).toBeUndefined()
    for (const arch of ["x64", "arm64"]) expect(Seccomp.program(arch)!.length % 8).toBe(0)
  })
})
