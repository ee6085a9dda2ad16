/**
 * The result store's write: a large result into a temp file beside its final
 * name, then a rename, so a reader sees the whole text or none of it.
 *
 * Spilling is on the path of every large result, so this is `node:fs`'s
 * callback API with one open, write and close and a rename, and nothing
 * else: no stat, no `mkdir` unless the open finds the directory missing, no
 * promise or `AbortSignal` per call (the platform `FileSystem`'s `writeFile`
 * plus `rename` cost about twice a plain `fs.promises.writeFile`). The text is
 * encoded into reused buffers, not a fresh off-heap one per result (which the
 * garbage collector frees late, so a long run of large results piled them up).
 *
 * @internal
 */
import * as fs from "node:fs"

/** A spill that failed: what was being done, to which file, and the system's message. */
export interface SpillFailure {
  readonly operation: "mkdir" | "open" | "write" | "close" | "rename"
  readonly path: string
  readonly message: string
}

/** Writes `text` to `file` atomically; `done` gets the failure, if any. */
export type Spill = (
  directory: string,
  file: string,
  text: string,
  done: (failure: SpillFailure | undefined) => void
) => void

const INITIAL_BUFFER_BYTES = 64 * 1024

/**
 * A writer with its own pool of encode buffers (one per spill in flight, each
 * grown to the largest text it has held) and its own temp-name counter.
 *
 * @internal
 */
export const make = (): Spill => {
  const encoder = new TextEncoder()
  const free: Array<Uint8Array> = []
  let sequence = 0

  const encode = (text: string): { readonly buffer: Uint8Array; readonly length: number } => {
    let buffer = free.pop() ?? new Uint8Array(INITIAL_BUFFER_BYTES)
    let { read, written } = encoder.encodeInto(text, buffer)
    if (read < text.length) {
      // Three bytes per UTF-16 unit is UTF-8's worst case, so this fits.
      buffer = new Uint8Array(text.length * 3)
      ;({ read, written } = encoder.encodeInto(text, buffer))
    }
    return { buffer, length: written }
  }

  const failure = (operation: SpillFailure["operation"], path: string, error: NodeJS.ErrnoException): SpillFailure => ({
    operation,
    path,
    message: error.message
  })

  return (directory, file, text, done) => {
    const { buffer, length } = encode(text)
    // Unique among this process's spills, so two spills of one id never share a temp file.
    const temp = `${file}.${process.pid}.${sequence++}.tmp`
    // The buffer goes back to the pool only once the kernel has the bytes.
    const finish = (result: SpillFailure | undefined) => {
      free.push(buffer)
      done(result)
    }
    const abandon = (fd: number, result: SpillFailure) => fs.close(fd, () => fs.unlink(temp, () => finish(result)))

    const writeFrom = (fd: number, offset: number): void =>
      fs.write(fd, buffer, offset, length - offset, null, (writeError, written) => {
        if (writeError !== null) return abandon(fd, failure("write", temp, writeError))
        if (offset + written < length) return writeFrom(fd, offset + written)
        fs.close(fd, (closeError) => {
          if (closeError !== null) return fs.unlink(temp, () => finish(failure("close", temp, closeError)))
          fs.rename(temp, file, (renameError) => {
            if (renameError !== null) return fs.unlink(temp, () => finish(failure("rename", file, renameError)))
            finish(undefined)
          })
        })
      })

    const open = (retry: boolean): void =>
      fs.open(temp, "w", 0o666, (openError, fd) => {
        if (openError === null) return writeFrom(fd, 0)
        if (!retry || openError.code !== "ENOENT") return finish(failure("open", temp, openError))
        // The first spill of a session (or one after the directory was removed) makes it.
        fs.mkdir(directory, { recursive: true }, (mkdirError) =>
          mkdirError !== null ? finish(failure("mkdir", directory, mkdirError)) : open(false))
      })

    open(true)
  }
}
