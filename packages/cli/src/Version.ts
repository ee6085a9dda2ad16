/**
 * The version of the `switchyard` package (`--version`, the `init` line).
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"

/**
 * @since 0.1.0
 * @category constants
 */
export const version: string = createRequire(import.meta.url)("../package.json").version
