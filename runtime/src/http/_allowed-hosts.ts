import { isIP } from 'node:net'
import { ConfigurationError } from '../errors.js'
import { type Env, envValue, type Variable } from '../settings.js'

/**
 * Which `Host` headers the agent answers. A page on an attacker's domain can make that domain resolve to this
 * machine (DNS rebinding): its requests then reach the agent as same-origin ones, carrying the attacker's name
 * in `Host`. Answering only the names the agent is known by shuts that out. Always allowed: `localhost` and
 * names under `.localhost`, IP addresses (a rebinding needs a name the attacker controls, never an address),
 * the public URL's host and the listening address's host.
 */

export const ALLOWED_HOSTS_ENV: Variable = 'A2A_ALLOWED_HOSTS'
/** Host header values found allowed, remembered so a request pays one Set lookup; cleared when full. */
const MAX_REMEMBERED = 64
const HOST_NAME = /^\.?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/
const PORT = /^:\d{1,5}$/

/** `true` allows any host; otherwise host names (`.example.com` for it and its subdomains) or addresses. */
export type AllowedHostsSetting = string[] | true

/** The option, else `A2A_ALLOWED_HOSTS` (comma-separated, `*` for any), else none beyond the always allowed. */
export function readAllowedHosts(option: unknown, env: Env): AllowedHostsSetting {
  if (option !== undefined) {
    if (option === true) return true
    if (!Array.isArray(option))
      throw new ConfigurationError(
        `allowedHosts must be an array of host names, or true for any host (got ${JSON.stringify(option)})`,
      )
    return entries(option, 'allowedHosts')
  }
  const raw = envValue(env, ALLOWED_HOSTS_ENV)
  if (raw === undefined) return []
  return entries(raw.split(','), ALLOWED_HOSTS_ENV)
}

/**
 * `serveAgent`'s default when neither the option nor the variable is set: listening on every interface with no
 * public URL, the agent cannot know the names it is reached by (a container's, a proxy's, a load balancer's), so
 * it answers any; otherwise `undefined` (only the names always allowed and its own).
 */
export function defaultAllowedHosts(hostname: string, publicUrl: string | undefined, env: Env): true | undefined {
  const everyInterface = hostname === '0.0.0.0' || hostname === '::' || hostname === ''
  return everyInterface && !publicUrl && envValue(env, ALLOWED_HOSTS_ENV) === undefined ? true : undefined
}

function entries(values: unknown[], source: string): AllowedHostsSetting {
  const names: string[] = []
  for (const value of values) {
    const entry = typeof value === 'string' ? value.trim().toLowerCase().replace(/\.$/, '') : ''
    if (entry === '*') return true
    if (entry === '' && typeof value === 'string' && source === ALLOWED_HOSTS_ENV) continue // "a,,b" or a trailing comma
    const address = entry.replace(/^\[(.*)\]$/, '$1')
    if (isIP(address)) names.push(address)
    else if (HOST_NAME.test(entry)) names.push(entry)
    else {
      throw new ConfigurationError(
        `${source} must list host names without scheme or port, like "agent.example.com", ".example.com" for it and its subdomains, or "*" for any host (got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)})`,
      )
    }
  }
  return names
}

/**
 * The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), lower-cased, without a trailing
 * dot; `undefined` when it is not one.
 */
function hostnameOf(host: string): string | undefined {
  const lower = host.toLowerCase()
  let name: string
  let rest: string
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']')
    if (end < 0) return undefined
    name = lower.slice(1, end)
    if (isIP(name) !== 6) return undefined
    rest = lower.slice(end + 1)
  } else {
    const colon = lower.indexOf(':')
    name = colon < 0 ? lower : lower.slice(0, colon)
    rest = colon < 0 ? '' : lower.slice(colon)
  }
  if (rest !== '' && !PORT.test(rest)) return undefined
  return name.endsWith('.') ? name.slice(0, -1) : name
}

export class AllowedHosts {
  readonly #any: boolean
  readonly #names = new Set<string>(['localhost'])
  /** `.example.com` entries, dot included. */
  readonly #domains: string[] = ['.localhost']
  readonly #remembered = new Set<string>()

  constructor(setting: AllowedHostsSetting) {
    this.#any = setting === true
    if (setting !== true) for (const entry of setting) this.#allowName(entry)
  }

  get any(): boolean {
    return this.#any
  }

  /** Allows the host of a URL the agent is known by (the public URL, the listening address). */
  addUrl(url: string): void {
    this.#allowName(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase())
  }

  /** Whether a request naming `host` in its `Host` header is answered. */
  allows(host: string): boolean {
    if (this.#any || this.#remembered.has(host)) return true
    const name = hostnameOf(host)
    if (name === undefined || !this.#allowsName(name)) return false
    if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.clear()
    this.#remembered.add(host)
    return true
  }

  #allowName(entry: string): void {
    if (entry.startsWith('.')) {
      this.#domains.push(entry)
      this.#names.add(entry.slice(1))
    } else this.#names.add(entry)
  }

  #allowsName(name: string): boolean {
    return this.#names.has(name) || isIP(name) !== 0 || this.#domains.some((domain) => name.endsWith(domain))
  }
}
