/**
 * Compiled matchers for the specifier of a `WebFetch(domain:…)` rule.
 */

/**
 * `domain:example.com` matches that host exactly (case-insensitive), as
 * Claude Code does; `domain:*.example.com` matches its subdomains (not the
 * apex). Any other specifier matches nothing. The matcher takes the host
 * (see `hostOf`).
 *
 * @internal
 */
export const compileDomainPattern = (specifier: string): (host: string) => boolean => {
  const spec = specifier.trim()
  if (!spec.startsWith("domain:")) return () => false
  const domain = spec.slice("domain:".length).trim().toLowerCase()
  const wildcard = domain.startsWith("*.")
  const suffix = wildcard ? domain.slice(1) : ""
  return (host) => (wildcard ? host.endsWith(suffix) && host.length > suffix.length : host === domain)
}

/** @internal */
export const hostOf = (url: string): string | undefined => {
  try {
    const host = new URL(url).hostname.toLowerCase()
    return host.endsWith(".") ? host.slice(0, -1) : host
  } catch {
    return undefined
  }
}
