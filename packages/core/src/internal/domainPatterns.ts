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

/**
 * The host a URL connects to, as rules name it: lowercase, without a trailing
 * dot, IPv4 in dotted form (the URL parser already folds `2130706433`,
 * `0x7f.1`, `127.1`), and an IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]`,
 * which the URL parser spells `[::ffff:7f00:1]`) as the IPv4 address it
 * reaches.
 *
 * @internal
 */
export const hostOf = (url: string): string | undefined => {
  try {
    const host = new URL(url).hostname.toLowerCase()
    const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host)
    if (mapped !== null) {
      const high = parseInt(mapped[1]!, 16)
      const low = parseInt(mapped[2]!, 16)
      return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".")
    }
    return host.endsWith(".") ? host.slice(0, -1) : host
  } catch {
    return undefined
  }
}
