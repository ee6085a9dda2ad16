/**
 * Domain rules: the host of a `WebFetch` call and the `WebFetch(domain:…)`
 * rule an "always allow" answer adds for it.
 */
import * as DomainPatterns from "./domainPatterns.js"

/** The URL of a `WebFetch` call, `undefined` for any other tool or input. @internal */
export const urlOf = (toolName: string, input: unknown): string | undefined => {
  if (toolName !== "WebFetch" || typeof input !== "object" || input === null) return undefined
  const url = (input as Record<string, unknown>)["url"]
  return typeof url === "string" ? url : undefined
}

/** The narrowed domain rule an "always allow" adds, when the URL has a host. @internal */
export const suggestDomainRule = (toolName: string, url: string): string | undefined => {
  const host = DomainPatterns.hostOf(url)
  return host === undefined ? undefined : `${toolName}(domain:${host})`
}
