/**
 * `switchyard tools schema NAME` for every built-in tool (issue 13): what a
 * parameter's description says of its bounds ("1-based", "at least N",
 * "positive", "max N") agrees with the schema's minimum and maximum, and no
 * refinement titles (`positive`, `nonNegative`) are left in. Read's offset is
 * 1-based with 0 also meaning the first line (Claude Code's Read), shown by
 * what Read returns.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { jsonLines, runCli } from "./support/cli.js"

interface Property {
  readonly path: string
  readonly schema: Record<string, unknown>
}

/** Every described property of a schema, nested ones (items, anyOf, properties) too. */
const properties = (schema: unknown, at = ""): ReadonlyArray<Property> => {
  if (typeof schema !== "object" || schema === null) return []
  const record = schema as Record<string, unknown>
  const own = typeof record["description"] === "string" && at !== "" ? [{ path: at, schema: record }] : []
  const children = [
    ...Object.entries((record["properties"] ?? {}) as Record<string, unknown>).map(([k, v]) =>
      properties(v, `${at}.${k}`)
    ),
    ...(record["items"] === undefined ? [] : [properties(record["items"], `${at}[]`)]),
    ...((record["anyOf"] ?? []) as ReadonlyArray<unknown>).map((v, i) => properties(v, `${at}|${i}`))
  ]
  return [...own, ...children.flat()]
}

const lowest = (schema: Record<string, unknown>): { readonly value: number; readonly exclusive: boolean } | undefined =>
  typeof schema["minimum"] === "number"
    ? { value: schema["minimum"], exclusive: false }
    : typeof schema["exclusiveMinimum"] === "number"
    ? { value: schema["exclusiveMinimum"], exclusive: true }
    : undefined

/** The least whole or real value a schema allows, or undefined when unbounded. */
const leastAllowed = (schema: Record<string, unknown>): number | undefined => {
  const low = lowest(schema)
  if (low === undefined) return undefined
  return low.exclusive && schema["type"] === "integer" ? low.value + 1 : low.value
}

/** What is wrong between a description and its bounds, if anything. */
const boundProblems = (property: Property): ReadonlyArray<string> => {
  const description = String(property.schema["description"])
  const problems: Array<string> = []
  const least = leastAllowed(property.schema)
  const low = lowest(property.schema)
  if (/\b1-based\b/i.test(description)) {
    // 1-based: the schema starts at 1, or it allows 0 and the description says what 0 means.
    const zeroExplained = /\b0 (also )?(means|starts|is)\b/.test(description)
    if (least === undefined || (least < 1 && !(least === 0 && zeroExplained))) {
      problems.push(
        `says 1-based but allows ${least ?? "any number"}${least === 0 ? " without saying what 0 means" : ""}`
      )
    }
  }
  const atLeast = /\bat least (\d+)/i.exec(description)
  if (atLeast !== null && least !== Number(atLeast[1])) {
    problems.push(`says at least ${atLeast[1]} but the least allowed is ${least ?? "unbounded"}`)
  }
  if (/\bpositive\b/i.test(description) && !(low !== undefined && (low.exclusive ? low.value >= 0 : low.value > 0))) {
    problems.push("says positive but allows 0 or less")
  }
  if (/\bnon-?negative\b/i.test(description) && !(low !== undefined && low.value >= 0)) {
    problems.push("says non-negative but allows negative numbers")
  }
  const max = /\b(?:max|maximum|at most) (\d+)/i.exec(description)
  if (max !== null) {
    const maximum = property.schema["maximum"]
    // A stated maximum is the schema's, or the description says a larger value is capped to it.
    if (maximum !== Number(max[1]) && !/\bcapped\b/.test(description)) {
      problems.push(
        `says max ${max[1]} but the schema's maximum is ${
          maximum ?? "absent"
        } and nothing says larger values are capped`
      )
    }
  }
  if (
    typeof property.schema["maximum"] === "number" &&
    !new RegExp(`\\b${property.schema["maximum"]}\\b`).test(description)
  ) {
    problems.push(`has maximum ${property.schema["maximum"]} that the description does not mention`)
  }
  return problems
}

describe("tools schema: descriptions match the bounds", () => {
  it("the checker catches a mismatch (each rule can fail)", () => {
    const p = (schema: Record<string, unknown>) => boundProblems({ path: ".x", schema })
    expect(p({ type: "integer", minimum: 0, description: "The line to start from (1-based)" })).toHaveLength(1)
    expect(
      p({
        type: "integer",
        minimum: 0,
        description: "The line to start from (1-based; 0 also starts at the first line)"
      })
    ).toEqual([])
    expect(p({ type: "integer", minimum: 1, description: "The line to start from (1-based)" })).toEqual([])
    expect(p({ type: "integer", exclusiveMinimum: 0, description: "The line to start from (1-based)" })).toEqual([])
    expect(p({ type: "integer", minimum: 0, description: "At least 1 line" })).toHaveLength(1)
    expect(p({ type: "number", minimum: 0, description: "A positive number" })).toHaveLength(1)
    expect(p({ type: "number", description: "Timeout (max 600000)" })).toHaveLength(1)
    expect(p({ type: "number", description: "Timeout (max 600000: a longer one is capped to it)" })).toEqual([])
    expect(p({ type: "number", maximum: 100, description: "Timeout" })).toHaveLength(1)
  })

  it("every built-in tool's schema: bounds as described, no refinement titles", async () => {
    const list = await runCli(["tools", "list", "--json"])
    expect(list.code).toBe(0)
    const names = (JSON.parse(list.stdout) as ReadonlyArray<{ readonly name: string }>).map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining(["Read", "Bash", "Grep", "TaskOutput", "TaskStop", "Edit", "MultiEdit"])
    )
    const problems: Array<string> = []
    let bounded = 0
    for (const name of names) {
      const result = await runCli(["tools", "schema", name])
      expect(result.code, name).toBe(0)
      const definition = JSON.parse(result.stdout) as { readonly input_schema: unknown }
      expect(result.stdout, `${name} has a refinement title`).not.toMatch(/"title": "[a-z]/)
      for (const property of properties(definition.input_schema)) {
        if (lowest(property.schema) !== undefined || property.schema["maximum"] !== undefined) bounded++
        for (const problem of boundProblems(property)) problems.push(`${name}${property.path}: ${problem}`)
      }
    }
    expect(problems).toEqual([])
    // Read's offset and limit, Grep's -A/-B/-C/head_limit/offset and both timeouts: the walk saw them.
    expect(bounded).toBeGreaterThanOrEqual(9)
  }, 120_000)

  it("Read's offset: 1 is the first line, and 0 reads from the first line too (old inputs keep working)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-read-offset-"))
    fs.writeFileSync(path.join(dir, "f.txt"), "one\ntwo\nthree\n")
    const read = (id: string, offset: number) => ({
      type: "tool_use",
      id,
      name: "Read",
      input: { file_path: "f.txt", offset }
    })
    const result = await runCli(["dispatch", "-", "--cwd", dir, "--output-format", "stream-json"], {
      input: JSON.stringify([read("zero", 0), read("one", 1), read("two", 2)])
    })
    expect(result.code).toBe(0)
    const content = (id: string) =>
      String(jsonLines(result).find((l) => l["type"] === "result" && l["tool_use_id"] === id)?.["content"])
    expect(content("one")).toMatch(/^\s*1\tone/)
    expect(content("zero")).toBe(content("one"))
    expect(content("two")).toMatch(/^\s*2\ttwo/)
    const schema = JSON.parse((await runCli(["tools", "schema", "Read"])).stdout)
    expect(schema.input_schema.properties.offset.minimum).toBe(0)
    expect(schema.input_schema.properties.offset.description).toContain("1-based")
  })
})
