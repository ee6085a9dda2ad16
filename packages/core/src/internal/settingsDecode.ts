/**
 * Decoding one settings file key by key, so that one bad entry is reported
 * (with its path and field) and everything else in the file still loads.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Hooks from "../Hooks.js"
import * as PermissionContext from "../PermissionContext.js"

/** @internal */
export interface Problem {
  readonly field: string
  readonly message: string
}

/** @internal */
export interface DecodedPermissions {
  readonly rules: ReadonlyArray<PermissionContext.PermissionRule>
  readonly defaultMode: PermissionContext.PermissionMode | undefined
  readonly additionalDirectories: ReadonlyArray<string>
}

/** @internal */
export interface Decoded {
  readonly permissions: DecodedPermissions
  readonly hooks: Hooks.HooksSettings
  readonly env: Readonly<Record<string, string>>
  readonly values: Readonly<Record<string, unknown>>
}

const fieldPath = (prefix: string, path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    prefix
  )

/** Decode a value with a schema; a failure becomes problems naming the field. @internal */
export const decodeField = <A, I>(
  schema: Schema.Schema<A, I>,
  value: unknown,
  field: string,
  problems: Array<Problem>
): A | undefined => {
  const result = Schema.decodeUnknownEither(schema)(value)
  if (Either.isRight(result)) return result.right
  // A union (a literal list, an optional field) yields one issue per member: one problem per field.
  const byField = new Map<string, Array<string>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(result.left)) {
    const key = fieldPath(field, issue.path)
    const messages = byField.get(key) ?? []
    if (!messages.includes(issue.message)) messages.push(issue.message)
    byField.set(key, messages)
  }
  for (const [key, messages] of byField) problems.push({ field: key, message: combineMessages(messages) })
  return undefined
}

/** `Expected "a", actual "x"` and `Expected "b", actual "x"` read as `Expected "a" | "b", actual "x"`. */
const combineMessages = (messages: ReadonlyArray<string>): string => {
  const parsed = messages.map((message) => /^Expected (.*), actual (.*)$/s.exec(message))
  const actual = parsed[0]?.[2]
  if (parsed.every((match) => match !== null && match[2] === actual)) {
    return `Expected ${parsed.map((match) => match![1]).join(" | ")}, actual ${actual}`
  }
  return messages.join("; ")
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const behaviors: ReadonlyArray<PermissionContext.RuleBehavior> = ["allow", "ask", "deny"]

const hookEvents = new Set<string>(Hooks.HookEvent.literals)

/**
 * Decode a parsed settings object. Every problem names its field
 * (`permissions.allow[2]`, `hooks.PreToolUse[0].hooks[1].timeout`).
 *
 * @internal
 */
export const decodeSettings = (
  json: unknown,
  source: { readonly path: string; readonly root: string },
  problems: Array<Problem>
): Decoded | undefined => {
  if (!isRecord(json)) {
    problems.push({ field: "(root)", message: "a settings file must hold a JSON object" })
    return undefined
  }
  const rules: Array<PermissionContext.PermissionRule> = []
  let defaultMode: PermissionContext.PermissionMode | undefined
  const additionalDirectories: Array<string> = []
  const permissions = json["permissions"]
  if (permissions !== undefined) {
    if (!isRecord(permissions)) {
      problems.push({
        field: "permissions",
        message: "expected an object with allow, ask, deny, defaultMode, additionalDirectories"
      })
    } else {
      for (const behavior of behaviors) {
        const list = permissions[behavior]
        if (list === undefined) continue
        if (!Array.isArray(list)) {
          problems.push({
            field: `permissions.${behavior}`,
            message: "expected an array of rules such as \"Bash(npm test *)\""
          })
          continue
        }
        list.forEach((raw: unknown, index) => {
          const field = `permissions.${behavior}[${index}]`
          const text = decodeField(Schema.String, raw, field, problems)
          if (text === undefined) return
          const rule = PermissionContext.parseRule(text, behavior, source.path, source.root)
          if (rule !== undefined) rules.push(rule)
          else {
            problems.push({
              field,
              message: `not a permission rule: ${JSON.stringify(text)} (expected Tool or Tool(specifier))`
            })
          }
        })
      }
      if (permissions["defaultMode"] !== undefined) {
        const mode = permissions["defaultMode"]
        defaultMode = decodeField(PermissionContext.PermissionMode, mode, "permissions.defaultMode", problems)
      }
      const dirs = permissions["additionalDirectories"]
      if (dirs !== undefined) {
        if (!Array.isArray(dirs)) {
          problems.push({ field: "permissions.additionalDirectories", message: "expected an array of directory paths" })
        } else {
          dirs.forEach((dir: unknown, index) => {
            const value = decodeField(Schema.String, dir, `permissions.additionalDirectories[${index}]`, problems)
            if (value !== undefined) additionalDirectories.push(value)
          })
        }
      }
    }
  }

  const hooks: Record<string, Array<Schema.Schema.Type<typeof Hooks.HookMatcher>>> = {}
  const rawHooks = json["hooks"]
  if (rawHooks !== undefined) {
    if (!isRecord(rawHooks)) problems.push({ field: "hooks", message: "expected an object keyed by hook event" })
    else {
      for (const [event, matchers] of Object.entries(rawHooks)) {
        // Events Switchyard does not run (Notification, SessionStart, …) are kept in `values`, not reported.
        if (!hookEvents.has(event)) continue
        const decoded = decodeHookMatchers(event, matchers, problems)
        if (decoded.length > 0) hooks[event] = decoded
      }
    }
  }

  let env: Readonly<Record<string, string>> = {}
  if (json["env"] !== undefined) {
    if (!isRecord(json["env"])) problems.push({ field: "env", message: "expected an object of string values" })
    else {
      const kept: Record<string, string> = {}
      for (const [key, value] of Object.entries(json["env"])) {
        const decoded = decodeField(Schema.String, value, `env.${key}`, problems)
        if (decoded !== undefined) kept[key] = decoded
      }
      env = kept
    }
  }

  const values: Record<string, unknown> = { ...json }
  if (json["model"] !== undefined && decodeField(Schema.String, json["model"], "model", problems) === undefined) {
    delete values["model"]
  }

  return {
    permissions: { rules, defaultMode, additionalDirectories },
    hooks: hooks as Hooks.HooksSettings,
    env,
    values
  }
}

const decodeHookMatchers = (
  event: string,
  matchers: unknown,
  problems: Array<Problem>
): Array<Schema.Schema.Type<typeof Hooks.HookMatcher>> => {
  if (!Array.isArray(matchers)) {
    problems.push({ field: `hooks.${event}`, message: "expected an array of { matcher, hooks } entries" })
    return []
  }
  const out: Array<Schema.Schema.Type<typeof Hooks.HookMatcher>> = []
  matchers.forEach((entry: unknown, index) => {
    const field = `hooks.${event}[${index}]`
    if (!isRecord(entry)) {
      problems.push({ field, message: "expected an object { matcher, hooks }" })
      return
    }
    let matcher: string | undefined
    if (entry["matcher"] !== undefined) {
      matcher = decodeField(Schema.String, entry["matcher"], `${field}.matcher`, problems)
      if (matcher === undefined) return
    }
    const list = entry["hooks"]
    if (!Array.isArray(list)) {
      problems.push({ field: `${field}.hooks`, message: "expected an array of hook commands" })
      return
    }
    const commands: Array<Schema.Schema.Type<typeof Hooks.HookCommand>> = []
    list.forEach((hook: unknown, hookIndex) => {
      const hookField = `${field}.hooks[${hookIndex}]`
      if (isRecord(hook) && typeof hook["type"] === "string" && hook["type"] !== "command") {
        problems.push({
          field: `${hookField}.type`,
          message: `hook type ${JSON.stringify(hook["type"])} is not supported; only "command" hooks run`
        })
        return
      }
      const command = decodeField(Hooks.HookCommand, hook, hookField, problems)
      if (command !== undefined) commands.push(command)
    })
    if (commands.length > 0) out.push(matcher === undefined ? { hooks: commands } : { matcher, hooks: commands })
  })
  return out
}
