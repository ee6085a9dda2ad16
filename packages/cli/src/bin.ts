/**
 * The bundled binary's entry (`bundle/front.js`, imported by bin/switchyard.js):
 * the front, on this process's command line.
 *
 * @since 0.1.0
 */
import { start } from "./front.js"

await start(process.argv.slice(2))
