/**
 * The README's library example, extracted and run: it must stay true.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")

describe("README", () => {
  it("the quick start is `npm ci && npm run demo` and `npm test`, and .ci/run runs them", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    expect(readme).toContain("npm ci && npm run demo")
    expect(readme).toContain("npm test ")
    const ci = fs.readFileSync(path.join(root, ".ci/run"), "utf8")
    expect(ci).toMatch(/^npm ci$/m)
    expect(ci).toMatch(/^npm test$/m)
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    expect(pkg.scripts.demo).toContain("demo")
  })

  it("the library example runs", async () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(example).toBeDefined()
    const dir = path.join(root, "test", ".generated")
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, "readme-example.ts")
    fs.writeFileSync(file, example!)
    // A computed specifier: the file exists only once this test has written it.
    const module = (await import(/* @vite-ignore */ file)) as { main: Effect.Effect<string> }
    expect(await Effect.runPromise(module.main)).toBe("Sunny in Oslo today.")
  })
})
