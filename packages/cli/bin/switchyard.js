#!/usr/bin/env node
// The bundle (packages/cli/build.mjs) starts fastest; without it (only `tsc -b` was run) the compiled sources serve.
const bundle = new URL("../bundle/front.js", import.meta.url)
import(bundle.href)
  .catch((error) => {
    if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.url ?? error.message).includes("bundle/front.js")) {
      return import("../dist/main.js")
    }
    throw error
  })
  .catch((error) => {
    process.stderr.write(
      `switchyard: could not start (${error instanceof Error ? error.message : String(error)}). ` +
        "If this is a fresh clone, run `npm ci` (it builds the CLI).\n"
    )
    process.exitCode = 1
  })
