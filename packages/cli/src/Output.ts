/**
 * Writing to the terminal: stdout for results, stderr for diagnostics. Colour
 * only when the stream is a terminal and `NO_COLOR` is not set.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/**
 * @since 0.1.0
 * @category output
 */
export const line = (text: string): Effect.Effect<void> => Effect.sync(() => void process.stdout.write(`${text}\n`))

/**
 * @since 0.1.0
 * @category output
 */
export const write = (text: string): Effect.Effect<void> => Effect.sync(() => void process.stdout.write(text))

/**
 * @since 0.1.0
 * @category output
 */
export const error = (text: string): Effect.Effect<void> => Effect.sync(() => void process.stderr.write(`${text}\n`))

/**
 * A warning on stderr, prefixed so it is not mistaken for output.
 *
 * @since 0.1.0
 * @category output
 */
export const warn = (text: string): Effect.Effect<void> =>
  error(`${paint("yellow", "warning:", process.stderr)} ${text}`)

/**
 * Whether to use colour on a stream.
 *
 * @since 0.1.0
 * @category output
 */
export const colorEnabled = (stream: NodeJS.WriteStream = process.stdout): boolean =>
  stream.isTTY === true && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

const codes = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1, dim: 2 } as const

/**
 * Colour text for a stream (plain when the stream has no colour).
 *
 * @since 0.1.0
 * @category output
 */
export const paint = (color: keyof typeof codes, text: string, stream: NodeJS.WriteStream = process.stdout): string =>
  colorEnabled(stream) ? `\x1b[${codes[color]}m${text}\x1b[0m` : text

/**
 * All of stdin as text. With `idleMs`: `""` when no data has come by then
 * (stdin is then let go); once data comes, everything up to the end.
 *
 * @since 0.1.0
 * @category input
 */
export const readStdin = (options: { readonly idleMs?: number } = {}): Promise<string> =>
  new Promise((resolve, reject) => {
    const stdin = process.stdin
    const chunks: Array<Buffer> = []
    const done = () => {
      if (timer !== undefined) clearTimeout(timer)
      stdin.off("data", onData).off("end", onEnd).off("error", onError)
    }
    const onData = (chunk: Buffer | string) => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
    }
    const onEnd = () => {
      done()
      resolve(Buffer.concat(chunks).toString("utf8"))
    }
    const onError = (error: Error) => {
      done()
      reject(error)
    }
    let timer: ReturnType<typeof setTimeout> | undefined = options.idleMs === undefined
      ? undefined
      : setTimeout(() => {
        done()
        stdin.destroy()
        resolve("")
      }, options.idleMs)
    stdin.on("data", onData).on("end", onEnd).on("error", onError)
  })

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/**
 * Strip colour from a stream that is not a terminal (or when `NO_COLOR` is
 * set), including what libraries write to it (`@effect/cli`'s help).
 *
 * @since 0.1.0
 * @category output
 */
export const stripColorWhenPiped = (stream: NodeJS.WriteStream): void => {
  if (colorEnabled(stream)) return
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
  stream.write =
    ((chunk: unknown, ...rest: Array<unknown>) =>
      write(typeof chunk === "string" ? chunk.replace(ANSI, "") : chunk, ...rest)) as typeof stream.write
}
