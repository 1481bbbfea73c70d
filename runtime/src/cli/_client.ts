import { envList } from '../settings.js'
import { ProjectError } from './_errors.js'
import { isLoopbackHost } from './_loopback.js'

/** Shared by the commands that talk to a running agent (`a2a send`, `a2a card validate <url>`). */

/**
 * The agent's base address as given, with a trailing slash, so the card and endpoint resolve under its path
 * (`https://host/agents/x/` → `https://host/agents/x/.well-known/agent.json`).
 */
export function agentBase(url: string): URL {
  let base: URL
  try {
    base = new URL(url)
  } catch {
    throw new ProjectError(`${JSON.stringify(url)} is not a URL (expected e.g. http://localhost:3000/)`)
  }
  if (!/^https?:$/.test(base.protocol)) throw new ProjectError(`${url} is not an http(s) URL`)
  if (!base.pathname.endsWith('/')) base.pathname += '/'
  return base
}

/** Why a fetch failed, in words a person can act on. */
export function unreachable(url: string, error: unknown, hint: string): ProjectError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return new ProjectError(`Cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message} (${hint})`)
}

/**
 * Credentials to present: the flags, and only for an agent on this machine also the project's own
 * A2A_BEARER_TOKEN / A2A_API_KEY. Those are what the local agent accepts; they must never go to another host.
 */
export function clientHeaders(base: URL, flags: { token?: string; apiKey?: string }): Record<string, string> {
  const local = isLoopbackHost(base.hostname)
  const token = flags.token ?? (local ? envList(process.env, 'A2A_BEARER_TOKEN')?.[0] : undefined)
  const apiKey = flags.apiKey ?? (local ? envList(process.env, 'A2A_API_KEY')?.[0] : undefined)
  return { ...(token && { authorization: `Bearer ${token}` }), ...(apiKey && { 'x-api-key': apiKey }) }
}

/**
 * Where a response redirects to, if it does. Requests carrying credentials are sent with `redirect: 'manual'`:
 * a followed redirect would take the Authorization or X-API-Key header to wherever it points (undici keeps
 * X-API-Key even across origins), so a redirect is reported instead.
 */
export function redirectTarget(response: Response, from: string): string | undefined {
  if (response.status < 300 || response.status > 399) return undefined
  const location = response.headers.get('location')
  if (!location) return undefined
  try {
    return new URL(location, from).href
  } catch {
    return location
  }
}
