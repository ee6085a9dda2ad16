/**
 * Adversarial review of the WebFetch domain rules (issue 9, class 6 and the
 * deny precedence): spellings of a denied IP address that reach it. Judged
 * by the connection log of a local server, through the real CLI in
 * bypassPermissions — never by the decision alone.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

const project = (settings: unknown) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-attack-web-")))
  fs.mkdirSync(path.join(dir, ".claude"))
  fs.writeFileSync(path.join(dir, ".claude", "settings.json"), JSON.stringify(settings))
  return dir
}

const fetchAll = async (dir: string, urls: ReadonlyArray<string>) => {
  const calls = urls.map((url, i) => ({
    type: "tool_use",
    id: `f${i}`,
    name: "WebFetch",
    input: { url, prompt: "summarise" }
  }))
  const result = await runCli([
    "dispatch",
    "-",
    "--cwd",
    dir,
    "--output-format",
    "stream-json",
    "--permission-mode",
    "bypassPermissions"
  ], {
    input: JSON.stringify(calls),
    env: { SWITCHYARD_HOME: path.join(dir, ".home") },
    timeoutMs: 90_000
  })
  return jsonLines(result).filter((line) => line["type"] === "result")
}

describe("attack: WebFetch deny rules against other spellings of the address", () => {
  it("IPv4-mapped IPv6 forms of a denied address connect to nothing", async () => {
    const connections: Array<string> = []
    const server = Net.createServer((socket) => {
      connections.push(String(socket.remoteAddress))
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as Net.AddressInfo).port
    try {
      const urls = [
        `http://[::ffff:127.0.0.1]:${port}/mapped`,
        `http://[::FFFF:7f00:1]:${port}/mapped-hex`,
        `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/mapped-long`,
        `http://2130706433:${port}/decimal`,
        `http://0x7f.1:${port}/hex-short`
      ]
      const denied = await fetchAll(project({ permissions: { deny: ["WebFetch(domain:127.0.0.1)"] } }), urls)
      expect(denied.map((line) => line["status"])).toEqual(urls.map(() => "denied"))
      expect(connections).toEqual([])
      // Without the rule the same URL connects: the log can see it.
      await fetchAll(project({}), [urls[0]!])
      expect(connections.length).toBeGreaterThan(0)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  }, 180_000)
})
