#!/usr/bin/env node
import { setFlagsFromString } from "node:v8"

// The shell grammar (tree-sitter-bash, 1.3 MB of WebAssembly) is compiled on the first Bash analysis. V8's optimizing
// tier recompiles it on background threads that the process waits for at exit: a one-call `dispatch` of a Bash
// command lingered for seconds after its answer, at several CPU-seconds and 40 MB more. The baseline compiler alone
// parses a command line as fast, so a short-lived CLI process keeps it (set before any WebAssembly is compiled).
setFlagsFromString("--liftoff-only")

// The bundle (packages/cli/build.mjs) starts fastest; without it (only `tsc -b` was run) the compiled sources serve.
const bundle = new URL("../bundle/front.js", import.meta.url)
import(bundle.href)
  .catch((error) => {
    if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.url ?? error.message).includes("bundle/front.js")) {
      return import("../dist/internal/mainEntry.js")
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
