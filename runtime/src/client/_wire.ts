/**
 * What the `wire` hook sees (a `--debug` log), with every credential replaced by `[redacted]` here, before any
 * hook gets it: a caller cannot turn redaction off.
 */

export type WireEntry =
  | { type: 'request'; method: string; url: string; headers: Record<string, string>; body?: string }
  | { type: 'response'; url: string; status: number; headers: Record<string, string>; body?: string; elapsedMs: number }
  | { type: 'event'; url: string; id?: string; event?: string; data: string; elapsedMs: number }

/** Sees every exchange of a client, credentials already redacted. */
export type WireHook = (entry: WireEntry) => void

const REDACTED = '[redacted]'

/**
 * Where the credentials of a connection travel: header names whose whole value is secret, the query parameter and
 * cookie of an API key, and the secret values themselves (also replaced wherever else they appear, as an agent may
 * echo one back in a body or a URL).
 */
export interface Secrets {
  headers: ReadonlySet<string>
  query?: string
  cookie?: string
  values: readonly string[]
}

/**
 * The shortest service-parameter value also replaced inside bodies and URLs: a short value ("1", "true") is not
 * worth mangling every body for; its header is redacted whatever its length.
 */
export const SHORTEST_ECHOED_VALUE = 6

export function redactor(secrets: Secrets) {
  // Longest first, so a secret containing another is replaced whole.
  const values = [...new Set(secrets.values.filter(Boolean))].sort((a, b) => b.length - a.length)
  const encoded = values.flatMap((value) => {
    const forms = [encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)]
    return forms.filter((form) => form !== value)
  })
  const all = [...values, ...encoded]
  const text = (input: string) => all.reduce((out, value) => out.replaceAll(value, REDACTED), input)

  const url = (input: string) => {
    if (secrets.query === undefined) return text(input)
    try {
      const parsed = new URL(input)
      if (parsed.searchParams.has(secrets.query)) {
        parsed.searchParams.set(secrets.query, REDACTED)
        return text(parsed.href)
      }
    } catch {}
    return text(input)
  }

  const headers = (input: Headers | Record<string, string>) => {
    const out: Record<string, string> = {}
    const entries = input instanceof Headers ? [...input.entries()] : Object.entries(input)
    for (const [name, value] of entries) {
      const lower = name.toLowerCase()
      if (secrets.headers.has(lower)) out[lower] = REDACTED
      else if (lower === 'cookie' && secrets.cookie !== undefined)
        out[lower] = text(redactCookie(value, secrets.cookie))
      else out[lower] = text(value)
    }
    return out
  }

  return { text, url, headers }
}

function redactCookie(header: string, name: string): string {
  return header
    .split(';')
    .map((pair) => {
      const at = pair.indexOf('=')
      return at >= 0 && pair.slice(0, at).trim() === name ? `${pair.slice(0, at)}=${REDACTED}` : pair
    })
    .join(';')
}

/** How deep `pushConfigSecrets` looks: a push config sits at most five objects down (a JSON-RPC send's params). */
const PUSH_CONFIG_DEPTH = 8

/**
 * The secrets a request or an answer carries in a push config (A2A v1.0 §4.3): its `token`, and its
 * `authentication.credentials`, which the agent presents to the webhook. They are redacted like the caller's own.
 */
export function pushConfigSecrets(value: unknown, depth = 0): string[] {
  if (typeof value !== 'object' || value === null || depth > PUSH_CONFIG_DEPTH) return []
  if (Array.isArray(value)) return value.flatMap((item) => pushConfigSecrets(item, depth + 1))
  const found: string[] = []
  const object = value as Record<string, unknown>
  if (typeof object.url === 'string' && typeof object.token === 'string' && object.token) found.push(object.token)
  const authentication = object.authentication as { credentials?: unknown } | null | undefined
  if (typeof authentication?.credentials === 'string' && authentication.credentials)
    found.push(authentication.credentials)
  for (const item of Object.values(object)) found.push(...pushConfigSecrets(item, depth + 1))
  return found
}
