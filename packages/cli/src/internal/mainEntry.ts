/**
 * `bundle/main.js` and `dist/internal/mainEntry.js`: the full command-line
 * parser (main.ts) run on this process's command line, without the front.
 * The build renders the help pages with it, the tests compare the front with
 * it, and bin/switchyard.js falls back to it when there is no bundle.
 *
 * @internal
 */
import { main } from "../main.js"

main()
