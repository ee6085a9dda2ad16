/**
 * The `sandbox` key of a settings file, decoded key by key (a wrong value is
 * reported with its field and the rest still loads), and merged across files
 * as Claude Code does: lists concatenate, scalars come from the
 * highest-precedence file that sets them.
 */
import type * as Path from "@effect/platform/Path"
import * as Schema from "effect/Schema"
import type * as Sandbox from "../Sandbox.js"

/** What one file says; absent keys stay absent. @internal */
export interface FileSandbox {
  readonly enabled?: boolean
  readonly autoAllowBashIfSandboxed?: boolean
  readonly allowUnsandboxedCommands?: boolean
  readonly failIfUnavailable?: boolean
  readonly excludedCommands: ReadonlyArray<string>
  readonly allowedDomains: ReadonlyArray<string>
  readonly allowLocalBinding?: boolean
  /** As written; made absolute against the file's project when merged. */
  readonly allowWrite: ReadonlyArray<string>
  readonly denyWrite: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
}

/** @internal */
export const emptyFile: FileSandbox = {
  excludedCommands: [],
  allowedDomains: [],
  allowWrite: [],
  denyWrite: [],
  denyRead: []
}

interface Problem {
  readonly field: string
  readonly message: string
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const booleanAt = (
  record: Record<string, unknown>,
  key: string,
  field: string,
  problems: Array<Problem>
): boolean | undefined => {
  const value = record[key]
  if (value === undefined) return undefined
  if (typeof value === "boolean") return value
  problems.push({ field, message: `Expected boolean, actual ${JSON.stringify(value)}` })
  return undefined
}

const stringsAt = (
  record: Record<string, unknown>,
  key: string,
  field: string,
  problems: Array<Problem>
): ReadonlyArray<string> => {
  const value = record[key]
  if (value === undefined) return []
  if (!Array.isArray(value)) {
    problems.push({ field, message: "expected an array of strings" })
    return []
  }
  const out: Array<string> = []
  value.forEach((item: unknown, index) => {
    if (Schema.is(Schema.String)(item) && item.trim() !== "") out.push(item)
    else {
      const message = `expected a non-empty string, actual ${JSON.stringify(item)}`
      problems.push({ field: `${field}[${index}]`, message })
    }
  })
  return out
}

const objectAt = (
  record: Record<string, unknown>,
  key: string,
  field: string,
  problems: Array<Problem>
): Record<string, unknown> => {
  const value = record[key]
  if (value === undefined) return {}
  if (isRecord(value)) return value
  problems.push({ field, message: "expected an object" })
  return {}
}

/**
 * The keys that widen what a sandboxed command may reach. A project's own
 * files (shared or local: both come with the repository) may not set them —
 * with auto-allow on, they would let the repository's author choose what the
 * model's commands can write or reach — so they count only from the user's
 * settings and `--settings` files.
 */
const widening = ["excludedCommands", "network.allowedDomains", "filesystem.allowWrite"] as const

const untrustedScopes: ReadonlySet<string> = new Set(["project", "local"])

/**
 * The scalar keys and the value that widens the sandbox: from a project's own files only the other value (the
 * narrowing one) counts, so a repository cannot turn off the sandbox the user turned on, nor its prompts.
 */
const wideningScalars = [
  ["enabled", false, "sandbox.enabled"],
  ["failIfUnavailable", false, "sandbox.failIfUnavailable"],
  ["autoAllowBashIfSandboxed", true, "sandbox.autoAllowBashIfSandboxed"],
  ["allowUnsandboxedCommands", true, "sandbox.allowUnsandboxedCommands"],
  ["allowLocalBinding", true, "sandbox.network.allowLocalBinding"]
] as const

/**
 * Decode `json.sandbox`; `undefined` when the file has none.
 *
 * @internal
 */
export const decode = (value: unknown, problems: Array<Problem>, scope?: string): FileSandbox | undefined => {
  const decoded = decodeKeys(value, problems)
  if (decoded === undefined || scope === undefined || !untrustedScopes.has(scope)) return decoded
  const lists: Record<(typeof widening)[number], ReadonlyArray<string>> = {
    excludedCommands: decoded.excludedCommands,
    "network.allowedDomains": decoded.allowedDomains,
    "filesystem.allowWrite": decoded.allowWrite
  }
  const ignored = (field: string) =>
    problems.push({
      field,
      message: "a project's settings cannot widen the sandbox, so this is ignored; put it in your user settings " +
        "($SWITCHYARD_HOME/settings.json) or a --settings file"
    })
  for (const key of widening) {
    if (lists[key].length > 0) ignored(`sandbox.${key}`)
  }
  const narrowed: { -readonly [K in keyof FileSandbox]: FileSandbox[K] } = {
    ...decoded,
    excludedCommands: [],
    allowedDomains: [],
    allowWrite: []
  }
  for (const [key, wide, field] of wideningScalars) {
    if (decoded[key] !== wide) continue
    delete narrowed[key]
    ignored(field)
  }
  return narrowed
}

const decodeKeys = (value: unknown, problems: Array<Problem>): FileSandbox | undefined => {
  if (value === undefined) return undefined
  if (!isRecord(value)) {
    problems.push({ field: "sandbox", message: "expected an object (enabled, network, filesystem, …)" })
    return undefined
  }
  const network = objectAt(value, "network", "sandbox.network", problems)
  const filesystem = objectAt(value, "filesystem", "sandbox.filesystem", problems)
  const allowWrite = stringsAt(filesystem, "allowWrite", "sandbox.filesystem.allowWrite", problems)
  // allowWrite widens the sandbox: an entry with wildcards could mean anything, so it is refused.
  const literalWrites = allowWrite.filter((entry, index) => {
    if (!/[*?[\]]/.test(entry)) return true
    problems.push({
      field: `sandbox.filesystem.allowWrite[${index}]`,
      message: "wildcards are not supported in allowWrite (name the directory), so this entry is ignored"
    })
    return false
  })
  const optional = <K extends string, A>(key: K, decoded: A | undefined): { readonly [k in K]?: A } =>
    (decoded === undefined ? {} : { [key]: decoded }) as { readonly [k in K]?: A }
  return {
    ...optional("enabled", booleanAt(value, "enabled", "sandbox.enabled", problems)),
    ...optional(
      "autoAllowBashIfSandboxed",
      booleanAt(value, "autoAllowBashIfSandboxed", "sandbox.autoAllowBashIfSandboxed", problems)
    ),
    ...optional(
      "allowUnsandboxedCommands",
      booleanAt(value, "allowUnsandboxedCommands", "sandbox.allowUnsandboxedCommands", problems)
    ),
    ...optional("failIfUnavailable", booleanAt(value, "failIfUnavailable", "sandbox.failIfUnavailable", problems)),
    excludedCommands: stringsAt(value, "excludedCommands", "sandbox.excludedCommands", problems),
    allowedDomains: stringsAt(network, "allowedDomains", "sandbox.network.allowedDomains", problems),
    ...optional(
      "allowLocalBinding",
      booleanAt(network, "allowLocalBinding", "sandbox.network.allowLocalBinding", problems)
    ),
    allowWrite: literalWrites,
    denyWrite: stringsAt(filesystem, "denyWrite", "sandbox.filesystem.denyWrite", problems),
    denyRead: stringsAt(filesystem, "denyRead", "sandbox.filesystem.denyRead", problems)
  }
}

/**
 * A `sandbox.filesystem` entry made absolute: `//x` and `/x` from the root,
 * `~/x` in the home directory, anything else relative to the file's project.
 *
 * @internal
 */
export const resolveEntry = (entry: string, root: string, home: string, path: Path.Path): string => {
  const text = entry.trim()
  if (text.startsWith("/")) return `/${text.replace(/^\/+/, "")}`
  if (text === "~" || text.startsWith("~/")) return path.join(home, text.slice(2))
  return path.join(root, text)
}

/**
 * Merge the files' settings, lowest precedence first.
 *
 * @internal
 */
export const merge = (
  files: ReadonlyArray<{ readonly sandbox: FileSandbox | undefined; readonly path: string; readonly root: string }>,
  home: string,
  path: Path.Path,
  defaults: Sandbox.SandboxSettings
): Sandbox.SandboxSettings => {
  let merged = defaults
  for (const file of files) {
    const s = file.sandbox
    if (s === undefined) continue
    const entries = (list: ReadonlyArray<string>) =>
      list.map((entry): Sandbox.PathEntry => ({ path: resolveEntry(entry, file.root, home, path), source: file.path }))
    merged = {
      enabled: s.enabled ?? merged.enabled,
      autoAllowBashIfSandboxed: s.autoAllowBashIfSandboxed ?? merged.autoAllowBashIfSandboxed,
      allowUnsandboxedCommands: s.allowUnsandboxedCommands ?? merged.allowUnsandboxedCommands,
      failIfUnavailable: s.failIfUnavailable ?? merged.failIfUnavailable,
      excludedCommands: [...merged.excludedCommands, ...s.excludedCommands],
      network: {
        allowedDomains: [...merged.network.allowedDomains, ...s.allowedDomains],
        allowLocalBinding: s.allowLocalBinding ?? merged.network.allowLocalBinding
      },
      filesystem: {
        allowWrite: [...merged.filesystem.allowWrite, ...entries(s.allowWrite)],
        denyWrite: [...merged.filesystem.denyWrite, ...entries(s.denyWrite)],
        denyRead: [...merged.filesystem.denyRead, ...entries(s.denyRead)]
      }
    }
  }
  return merged
}
