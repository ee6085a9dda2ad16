/**
 * Decoding one settings file key by key, so that one bad entry is reported
 * (with its path and field) and everything else in the file still loads.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Hooks from "../Hooks.js"
import * as PermissionContext from "../PermissionContext.js"
import * as SandboxSettings from "./sandboxSettings.js"

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

/**
 * Claude Code's approval keys for a project's `.mcp.json` servers; `disabled`
 * is `"all"` when the list could not be read (fail closed).
 *
 * @internal
 */
export interface DecodedMcpApproval {
  readonly enableAll: boolean | undefined
  readonly enabled: ReadonlyArray<string> | undefined
  readonly disabled: ReadonlyArray<string> | "all" | undefined
}

/** @internal */
export interface Decoded {
  readonly permissions: DecodedPermissions
  readonly hooks: Hooks.HooksSettings
  readonly env: Readonly<Record<string, string>>
  readonly values: Readonly<Record<string, unknown>>
  /** The file's `sandbox` key, when it has one. */
  readonly sandbox: SandboxSettings.FileSandbox | undefined
  readonly mcpApproval: DecodedMcpApproval | undefined
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

/**
 * The tools a broken rule cannot be proven not to name when it names none
 * readably: the built-ins that deny rules are written for (`Read` and `Edit`
 * cover their families).
 */
const everyRuleTool: ReadonlyArray<string> = ["Bash", "Read", "Edit", "WebFetch", "WebSearch", "Agent", "Task"]

const knownTools: ReadonlySet<string> = new Set([
  ...everyRuleTool,
  "Glob",
  "Grep",
  "LS",
  "Write",
  "MultiEdit",
  "NotebookEdit",
  "NotebookRead",
  "BashOutput",
  "KillShell"
])

/** `bash` → `Bash`: Claude Code's tool names start with a capital; MCP names are kept. */
const canonicalToolName = (name: string): string =>
  name.startsWith("mcp__") || !/^[a-z]/.test(name) ? name : name[0]!.toUpperCase() + name.slice(1)

/**
 * The tool names a broken rule (or list of rules, or file text) names: the
 * word before each `(` or alone in a string. None when it names none readably.
 *
 * @internal
 */
export const namedTools = (value: unknown): ReadonlyArray<string> => {
  const texts: Array<string> = []
  const collect = (item: unknown, depth: number) => {
    if (typeof item === "string") texts.push(item)
    else if (depth < 4 && Array.isArray(item)) { for (const entry of item) collect(entry, depth + 1) }
    else if (depth < 4 && isRecord(item)) { for (const entry of Object.values(item)) collect(entry, depth + 1) }
  }
  collect(value, 0)
  const names = new Set<string>()
  for (const text of texts) {
    const match = /^\s*([A-Za-z][A-Za-z0-9_]*(?:__[A-Za-z0-9_*-]+)*)\s*(?:\(|$)/.exec(text)
    if (match !== null) names.add(canonicalToolName(match[1]!))
  }
  return Array.from(names)
}

/**
 * The tool names the string literals of a file that is not JSON name, when it
 * has a `deny` or `ask` key; `undefined` when it has none (nothing to guard).
 *
 * @internal
 */
export const namedToolsInText = (text: string): ReadonlyArray<string> | undefined => {
  if (!/["']?(deny|ask)["']?\s*:/.test(text)) return undefined
  const literals = Array.from(text.matchAll(/"((?:[^"\\\n]|\\.)*)"/g), (match) => match[1]!)
  // Rules look like `Tool(…)`, a built-in's name or an MCP name; keys and other values do not.
  const ruleLike = literals.filter((literal) =>
    literal.includes("(") || literal.startsWith("mcp__") || knownTools.has(canonicalToolName(literal.trim()))
  )
  return namedTools(ruleLike)
}

/**
 * Ask rules that stand in for a deny or ask rule that could not be read: each
 * tool it names (every tool rules are written for, when it names none) asks
 * until the file is fixed.
 *
 * @internal
 */
export const failClosed = (
  tools: ReadonlyArray<string>,
  field: string,
  source: { readonly path: string; readonly root: string }
): ReadonlyArray<PermissionContext.PermissionRule> =>
  (tools.length === 0 ? everyRuleTool : tools).map((toolName) => ({
    behavior: "ask",
    toolName,
    specifier: undefined,
    source: `${source.path}: ${field} could not be read, so ${toolName} asks until it is fixed`,
    root: source.root,
    raw: toolName
  }))

/** The sentence a warning about a broken rule ends with. @internal */
export const failClosedNote = (guards: ReadonlyArray<PermissionContext.PermissionRule>): string =>
  guards.length === 0
    ? ""
    : `; until it is fixed, every ${guards.map((rule) => rule.toolName).join(", ")} call asks (fail closed)`

const hookEvents = new Set<string>(Hooks.HookEvent.literals)

/**
 * Decode a parsed settings object. Every problem names its field
 * (`permissions.allow[2]`, `hooks.PreToolUse[0].hooks[1].timeout`).
 *
 * @internal
 */
export const decodeSettings = (
  json: unknown,
  source: { readonly path: string; readonly root: string; readonly scope?: string },
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
          // A deny or ask list that cannot be read fails closed for the tools it names.
          const guarded = behavior === "allow" ? [] : failClosed(namedTools(list), `permissions.${behavior}`, source)
          rules.push(...guarded)
          problems.push({
            field: `permissions.${behavior}`,
            message: `expected an array of rules such as "Bash(npm test *)"${failClosedNote(guarded)}`
          })
          continue
        }
        list.forEach((raw: unknown, index) => {
          const field = `permissions.${behavior}[${index}]`
          const text = typeof raw === "string" ? raw : undefined
          const rule = text === undefined
            ? undefined
            : PermissionContext.parseRule(text, behavior, source.path, source.root)
          if (rule !== undefined) {
            rules.push(rule)
            const canonical = canonicalToolName(rule.toolName)
            if (canonical !== rule.toolName) {
              problems.push({
                field,
                message: `tool names are case-sensitive: ${JSON.stringify(rule.toolName)} names no tool ` +
                  `(did you mean ${JSON.stringify(canonical)}?), so this rule matches nothing`
              })
            }
            return
          }
          const guarded = behavior === "allow" ? [] : failClosed(namedTools(raw), field, source)
          for (const guard of guarded) rules.push(guard)
          if (text === undefined) {
            decodeField(Schema.String, raw, field, problems)
            if (guarded.length > 0) problems.push({ field, message: failClosedNote(guarded).replace(/^; /, "") })
          } else {
            problems.push({
              field,
              message: `not a permission rule: ${JSON.stringify(text)} (expected Tool or Tool(specifier))` +
                failClosedNote(guarded)
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

  const sandbox = SandboxSettings.decode(json["sandbox"], problems, source.scope)

  return {
    permissions: { rules, defaultMode, additionalDirectories },
    hooks: hooks as Hooks.HooksSettings,
    env,
    values,
    sandbox,
    mcpApproval: decodeMcpApproval(json, values, problems)
  }
}

const names = Schema.Array(Schema.String)

/**
 * `enableAllProjectMcpServers`, `enabledMcpjsonServers` and
 * `disabledMcpjsonServers`. A disabled list that cannot be read disables
 * every project server until it is fixed; a bad enabling key enables nothing.
 */
const decodeMcpApproval = (
  json: Record<string, unknown>,
  values: Record<string, unknown>,
  problems: Array<Problem>
): DecodedMcpApproval | undefined => {
  const keys = ["enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"] as const
  if (keys.every((key) => json[key] === undefined)) return undefined
  const field = <A, I>(key: (typeof keys)[number], schema: Schema.Schema<A, I>, note = ""): A | undefined => {
    if (json[key] === undefined) return undefined
    const before = problems.length
    const value = decodeField(schema, json[key], key, problems)
    if (value === undefined) {
      delete values[key]
      for (let i = before; note !== "" && i < problems.length; i++) {
        problems[i] = { ...problems[i]!, message: problems[i]!.message + note }
      }
    }
    return value
  }
  const disabled = field(
    "disabledMcpjsonServers",
    names,
    "; until it is fixed, no server of a project's .mcp.json is started (fail closed)"
  )
  return {
    enableAll: field("enableAllProjectMcpServers", Schema.Boolean),
    enabled: field("enabledMcpjsonServers", names),
    disabled: json["disabledMcpjsonServers"] !== undefined && disabled === undefined ? "all" : disabled
  }
}

/**
 * The approval keys of a file that is not JSON: a `disabledMcpjsonServers`
 * in its text disables every project server (fail closed).
 *
 * @internal
 */
export const mcpApprovalInText = (text: string): DecodedMcpApproval | undefined =>
  /disabledMcpjsonServers/.test(text) ? { enableAll: undefined, enabled: undefined, disabled: "all" } : undefined

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
