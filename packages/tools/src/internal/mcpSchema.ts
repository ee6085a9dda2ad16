/**
 * An `effect/Schema` from an MCP tool's JSON Schema, so a bad input is an
 * `InputValidationError` naming the parameter like any tool's: objects
 * (required, optional, `additionalProperties`), enums and `const`, arrays,
 * nested objects, numbers and integers (with bounds), strings (with length
 * and pattern), booleans, null, unions (`anyOf`/`oneOf`, type arrays) and
 * local `$ref`s. Whatever it does not understand it accepts (the server
 * validates again).
 */
import * as Schema from "effect/Schema"

type Json = Record<string, unknown>
type AnySchema = Schema.Schema<unknown, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const unknownSchema = Schema.Unknown as AnySchema

const MAX_DEPTH = 32

/** The decoding schema for a JSON Schema (the root of an MCP `inputSchema`). */
export const fromJsonSchema = (root: unknown): AnySchema => {
  const cache = new Map<string, AnySchema>()
  const resolveRef = (ref: string): unknown => {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
    if (match === null || !isObject(root)) return undefined
    const defs = root[match[1]!]
    return isObject(defs) ? defs[decodeURIComponent(match[2]!)] : undefined
  }
  const go = (node: unknown, depth: number): AnySchema => {
    if (depth > MAX_DEPTH || !isObject(node)) return unknownSchema
    if (typeof node["$ref"] === "string") {
      const ref = node["$ref"]
      const cached = cache.get(ref)
      if (cached !== undefined) return cached
      const target = resolveRef(ref)
      if (target === undefined) return unknownSchema
      // Recursive definitions decode lazily.
      const lazy: AnySchema = Schema.suspend(() => built)
      cache.set(ref, lazy)
      const built = go(target, depth + 1)
      return built
    }
    if (Array.isArray(node["enum"])) {
      const literals = node["enum"].filter(isLiteral)
      if (literals.length > 0) return Schema.Literal(...literals) as AnySchema
    }
    if ("const" in node && isLiteral(node["const"])) return Schema.Literal(node["const"]) as AnySchema
    const variants = Array.isArray(node["anyOf"])
      ? node["anyOf"]
      : Array.isArray(node["oneOf"])
      ? node["oneOf"]
      : undefined
    if (variants !== undefined && variants.length > 0) {
      return union(variants.map((variant) => go(variant, depth + 1)))
    }
    if (Array.isArray(node["allOf"]) && node["allOf"].length === 1) return go(node["allOf"][0], depth + 1)
    const type = node["type"]
    if (Array.isArray(type)) return union(type.map((t) => go({ ...node, type: t }, depth + 1)))
    switch (type) {
      case "string":
        return stringSchema(node)
      case "number":
        return numberSchema(node, Schema.Number)
      case "integer":
        return numberSchema(node, Schema.Int)
      case "boolean":
        return Schema.Boolean as AnySchema
      case "null":
        return Schema.Null as AnySchema
      case "array":
        return arraySchema(node, depth, go)
      case "object":
        return objectSchema(node, depth, go)
      default:
        return isObject(node["properties"]) ? objectSchema(node, depth, go) : unknownSchema
    }
  }
  return go(root, 0)
}

const isLiteral = (u: unknown): u is string | number | boolean | null =>
  u === null || typeof u === "string" || typeof u === "number" || typeof u === "boolean"

const union = (members: ReadonlyArray<AnySchema>): AnySchema =>
  members.length === 1 ? members[0]! : (Schema.Union(...members) as AnySchema)

const stringSchema = (node: Json): AnySchema => {
  let schema: Schema.Schema<string> = Schema.String
  if (typeof node["minLength"] === "number") schema = schema.pipe(Schema.minLength(node["minLength"]))
  if (typeof node["maxLength"] === "number") schema = schema.pipe(Schema.maxLength(node["maxLength"]))
  if (typeof node["pattern"] === "string") {
    try {
      schema = schema.pipe(Schema.pattern(new RegExp(node["pattern"], "u")))
    } catch {
      // A pattern JavaScript cannot compile is left to the server.
    }
  }
  return schema as AnySchema
}

const numberSchema = (node: Json, base: Schema.Schema<number>): AnySchema => {
  let schema = base
  if (typeof node["minimum"] === "number") schema = schema.pipe(Schema.greaterThanOrEqualTo(node["minimum"]))
  if (typeof node["maximum"] === "number") schema = schema.pipe(Schema.lessThanOrEqualTo(node["maximum"]))
  if (typeof node["exclusiveMinimum"] === "number") schema = schema.pipe(Schema.greaterThan(node["exclusiveMinimum"]))
  if (typeof node["exclusiveMaximum"] === "number") schema = schema.pipe(Schema.lessThan(node["exclusiveMaximum"]))
  return schema as AnySchema
}

const arraySchema = (node: Json, depth: number, go: (node: unknown, depth: number) => AnySchema): AnySchema => {
  const items = isObject(node["items"]) ? go(node["items"], depth + 1) : unknownSchema
  let schema: Schema.Schema<ReadonlyArray<unknown>, ReadonlyArray<unknown>> = Schema.Array(items)
  if (typeof node["minItems"] === "number") schema = schema.pipe(Schema.minItems(node["minItems"]))
  if (typeof node["maxItems"] === "number") schema = schema.pipe(Schema.maxItems(node["maxItems"]))
  return schema as AnySchema
}

const objectSchema = (node: Json, depth: number, go: (node: unknown, depth: number) => AnySchema): AnySchema => {
  const properties = isObject(node["properties"]) ? node["properties"] : {}
  const required = new Set(Array.isArray(node["required"]) ? node["required"].filter((k) => typeof k === "string") : [])
  const fields: Record<string, Schema.Schema.All | Schema.PropertySignature.All> = {}
  const declared: Array<AnySchema> = []
  for (const [key, child] of Object.entries(properties)) {
    const schema = go(child, depth + 1)
    declared.push(schema)
    fields[key] = required.has(key) ? schema : Schema.optional(schema)
  }
  const additional = node["additionalProperties"]
  // JSON Schema allows unknown keys unless `additionalProperties: false`.
  if (additional === false) return Schema.Struct(fields) as unknown as AnySchema
  if (!isObject(additional)) {
    return Schema.Struct(fields, Schema.Record({ key: Schema.String, value: Schema.Unknown })) as unknown as AnySchema
  }
  // A typed `additionalProperties` is meant for the undeclared keys, but an index
  // signature judges every key: let a declared key pass it with its own schema.
  const rest = go(additional, depth + 1)
  return Schema.Struct(
    fields,
    Schema.Record({ key: Schema.String, value: union([rest, ...declared]) })
  ) as unknown as AnySchema
}
