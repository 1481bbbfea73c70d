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
 * The agent refused a request for its credentials (HTTP 401, or 403 for a token without a scope it requires), with
 * the reason it gave. Thrown where the answer arrives, worded by `refusalMessage` where the command knows what it
 * sent.
 */
export class CredentialsRefused extends ProjectError {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(`The agent refused the request (HTTP ${status}): ${reason}`)
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it removes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** The reason in a refusal's body (a JSON-RPC error's message), else the HTTP status text. */
export async function credentialsRefused(response: Response): Promise<CredentialsRefused> {
  const text = await response.text()
  let reason: unknown
  try {
    reason = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message
  } catch {}
  // One line of the agent's own words, never a page of its HTML nor a control sequence for the terminal.
  const said =
    typeof reason === 'string' && reason.trim()
      ? reason.trim().split('\n')[0]!.slice(0, 300).replace(CONTROL, ' ')
      : undefined
  return new CredentialsRefused(response.status, said ?? (response.statusText || 'no reason given'))
}

/**
 * What a refusal means for the user, in one line: without credentials, which flag gives the ones the card asks for;
 * with them, that they were refused and the agent's reason as it gave it (an expired token says so; the token is
 * never read here, nor repeated).
 */
export function refusalMessage(refusal: CredentialsRefused, sent: boolean, schemes: readonly unknown[] = []): string {
  const said = `HTTP ${refusal.status}: ${refusal.reason}`
  if (sent) return `The agent refused the credentials given (${said})`
  const ways = [
    schemes.includes('oidc') && 'a JWT of its OpenID Connect issuer with --token <jwt>',
    schemes.includes('bearer') && 'its bearer token with --token <token>',
    schemes.includes('apiKey') && 'its API key with --api-key <key>',
  ].filter(Boolean)
  const how = ways.length ? ways.join(', or ') : '--token <token> or --api-key <key>'
  const fromEnv = 'or set A2A_BEARER_TOKEN / A2A_API_KEY for an agent on this machine'
  return `The agent needs credentials (${said}): pass ${how} (${fromEnv})`
}

/** Parses a JSON body, or says plainly that the server did not answer JSON. */
export async function readJson(response: Response, what: string): Promise<unknown> {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new ProjectError(
      `${what} is not JSON (HTTP ${response.status}, ${response.headers.get('content-type') ?? 'no content type'}): is this an A2A agent?`,
    )
  }
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
