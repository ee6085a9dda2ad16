/**
 * The MCP SDK as the bundled CLI loads it: build.mjs maps the tools
 * package's `import("@modelcontextprotocol/client")` and `…/client/stdio`
 * here. `bundle/mcp-sdk.cjs` is the SDK with its dependencies (zod, jose,
 * cross-spawn, …) in one CommonJS file, run from the code cache the build
 * wrote beside it (internal/compiledScript.ts). From node_modules the SDK is
 * some 300 files to resolve, read and compile, ≈ 0.35 s of CPU on every
 * start with an MCP server configured; this way ≈ 0.05–0.09 s (bench/REPORT.md).
 * Without the file (a bundle built without it) the package is required.
 *
 * @internal
 */
import type * as SdkClient from "@modelcontextprotocol/client"
import type * as SdkStdio from "@modelcontextprotocol/client/stdio"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import * as CompiledScript from "./compiledScript.js"

interface Sdk {
  readonly Client: typeof SdkClient.Client
  readonly StreamableHTTPClientTransport: typeof SdkClient.StreamableHTTPClientTransport
  readonly SSEClientTransport: typeof SdkClient.SSEClientTransport
  readonly StdioClientTransport: typeof SdkStdio.StdioClientTransport
  readonly getDefaultEnvironment: typeof SdkStdio.getDefaultEnvironment
}

/** The bundled SDK's file, next to the chunk (or the snapshot's script) this module is in. */
export const file = fileURLToPath(new URL("./mcp-sdk.cjs", import.meta.url))

const load = (): Sdk => {
  if (fs.existsSync(file)) return CompiledScript.run(file).exports as Sdk
  const require = createRequire(import.meta.url)
  return { ...require("@modelcontextprotocol/client"), ...require("@modelcontextprotocol/client/stdio") } as Sdk
}

const sdk = load()

export const Client = sdk.Client
export const StreamableHTTPClientTransport = sdk.StreamableHTTPClientTransport
export const SSEClientTransport = sdk.SSEClientTransport
export const StdioClientTransport = sdk.StdioClientTransport
export const getDefaultEnvironment = sdk.getDefaultEnvironment
