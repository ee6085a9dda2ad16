import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Server from "/work/main/test/support/messagesServer.js"
const bins: Record<string, string[]> = JSON.parse(process.argv[2]!)
const rounds = Number(process.argv[3] ?? 5)
const res: Record<string, number[]> = {}
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const server = yield* Server.start()
  for (let r = 0; r < rounds; r++) for (const [name, cmd] of Object.entries(bins)) {
    server.enqueue(Server.message({ blocks: [{ block: { type: "text", text: "Hello there." } }] }))
    const t = performance.now()
    const child = execFile("/usr/bin/time", ["-f", "%U %S", "-o", "/tmp/ptime.cpu", ...cmd], { cwd: "/tmp/su", env: { PATH: process.env.PATH, HOME: "/tmp/su-home", SWITCHYARD_HOME: "/tmp/su-home/.sy", ANTHROPIC_API_KEY: "sk", ANTHROPIC_BASE_URL: server.url } })
    child.stdin!.end()
    yield* Effect.promise(() => new Promise((r) => child.on("close", r)))
    ;(res[name] ??= []).push(performance.now() - t); const [u, sy] = fs.readFileSync("/tmp/ptime.cpu", "utf8").trim().split("\n").at(-1)!.split(" ").map(Number); ;(res[name + " cpu"] ??= []).push((u! + sy!) * 1000)
  }
})))
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k.padEnd(12), "median", v[v.length >> 1]!.toFixed(0), "min", v[0]!.toFixed(0)) }
