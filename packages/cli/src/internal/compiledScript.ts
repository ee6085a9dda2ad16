/**
 * A CommonJS file run from V8's code cache: what Node 22 calls the module
 * compile cache, by hand for Node 20. The build writes the cache beside the
 * file (`FILE.cache`, from a process started with the launcher's V8 flags);
 * a process that finds it skips parsing and compiling what the cache holds.
 * A cache V8 refuses (another Node, other flags, another file) costs nothing
 * but the compile it would have saved.
 *
 * @internal
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as vm from "node:vm"

/** Whether V8 used the cache: `absent` when there was none. */
export type CacheUse = "accepted" | "rejected" | "absent"

/** Where the cache of `file` is. */
export const cacheFile = (file: string): string => `${file}.cache`

// Node's own CommonJS wrapper (Module.wrap, which the ES module namespace of node:module does not have).
const wrap = (source: string) => `(function (exports, require, module, __filename, __dirname) { ${source}\n});`

const compile = (file: string, cachedData: Buffer | undefined) =>
  new vm.Script(wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData })

const evaluate = (script: vm.Script, file: string): unknown => {
  const module = { exports: {} as unknown }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string
  ) => void
  // A file URL: the start-up snapshot's stand-in for node:module takes only that.
  const require = createRequire(pathToFileURL(file).href)
  wrapper.call(module.exports, module.exports, require, module, file, path.dirname(file))
  return module.exports
}

/** Run `file` as a CommonJS module, from its cache when V8 takes it; its exports. */
export const run = (file: string): { readonly exports: unknown; readonly cache: CacheUse } => {
  const cached = fs.existsSync(cacheFile(file)) ? fs.readFileSync(cacheFile(file)) : undefined
  const script = compile(file, cached)
  const exports = evaluate(script, file)
  return {
    exports,
    cache: cached === undefined ? "absent" : script.cachedDataRejected === true ? "rejected" : "accepted"
  }
}

/**
 * Run `file` and write its cache: after evaluation, so that the functions its
 * top level ran are in it too. Written to a temporary name and renamed.
 */
export const writeCache = (file: string): void => {
  const script = compile(file, undefined)
  evaluate(script, file)
  const temporary = `${cacheFile(file)}.${process.pid}`
  fs.writeFileSync(temporary, script.createCachedData())
  fs.renameSync(temporary, cacheFile(file))
}
