/**
 * A preload for packages/cli/build.mjs: while the full parser renders a
 * `tools` page, record what the page could depend on besides the code — the
 * environment variables read, the paths touched through `node:fs`, the
 * `node:os` functions called and whether a child process was started — and
 * write it, on exit, as JSON to the
 * file named by SWITCHYARD_ACCESS_LOG. The build stores these as the
 * conditions under which the front may print the page instead of running the
 * command.
 */
import childProcess from "node:child_process"
import fs from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const env = process.env
const log = env["SWITCHYARD_ACCESS_LOG"]
const variables = new Set()
const paths = new Set()
let enumerated = false
let spawned = false
const osCalls = new Set()

process.env = new Proxy(env, {
  get: (target, key) => {
    if (typeof key === "string") variables.add(key)
    return Reflect.get(target, key)
  },
  has: (target, key) => {
    if (typeof key === "string") variables.add(key)
    return Reflect.has(target, key)
  },
  // Enumerating the environment makes every variable an input: the build then stores no pages.
  ownKeys: (target) => {
    enumerated = true
    return Reflect.ownKeys(target)
  }
})

const recordPath = (value) => {
  if (typeof value === "string") paths.add(path.resolve(value))
  else if (value instanceof URL && value.protocol === "file:") paths.add(fileURLToPath(value))
  else if (Buffer.isBuffer(value)) paths.add(path.resolve(value.toString()))
}

// Functions that take a second path (rename, copyFile, link, symlink, cp).
const twoPaths = /^(rename|copyFile|link|symlink|cp)(Sync)?$/

const writeFileSync = fs.writeFileSync
const wrapFs = (target) => {
  for (const name of Object.keys(target)) {
    const original = target[name]
    if (typeof original !== "function" || /^[A-Z]/.test(name)) continue
    target[name] = function(...args) {
      recordPath(args[0])
      if (twoPaths.test(name)) recordPath(args[1])
      return original.apply(this, args)
    }
  }
}
wrapFs(fs)
wrapFs(fs.promises)

for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
  const original = childProcess[name]
  childProcess[name] = function(...args) {
    spawned = true
    return original.apply(this, args)
  }
}
for (const name of Object.keys(os)) {
  const original = os[name]
  if (typeof original !== "function") continue
  os[name] = function(...args) {
    osCalls.add(name)
    return original.apply(this, args)
  }
}
syncBuiltinESMExports()

process.on("exit", () => {
  if (log === undefined) return
  writeFileSync(log, JSON.stringify({ variables: [...variables], paths: [...paths], os: [...osCalls], enumerated, spawned }))
})
