#!/usr/bin/env node
import("../dist/main.js").catch((error) => {
  process.stderr.write(
    `switchyard: could not start (${error instanceof Error ? error.message : String(error)}). ` +
      "If this is a fresh clone, run `npm ci` (it builds the CLI).\n"
  )
  process.exitCode = 1
})
