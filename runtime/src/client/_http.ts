import type { AppliedCredentials } from './_credentials.js'
import { redactor, type WireHook } from './_wire.js'
import { A2AClientFailure } from './errors.js'

/**
 * One HTTP exchange of the client: the version header, service parameters and credentials on the request, the
 * request and its answer shown to the wire hook with credentials redacted, a timeout on connecting and the headers,
 * the caller's AbortSignal, and the failures every binding shares (unreachable, timeout, refused credentials).
 */

export interface HttpSettings {
  a2aVersion: string
  credentials: AppliedCredentials
  wire: WireHook | undefined
  fetch: typeof fetch
  timeoutMs: number | undefined
  /** The most bytes a body, a line or an event of a stream may have. */
  maxBytes: number
}

export interface HttpRequest {
  method: string
  url: string
  headers?: Record<string, string>
  body?: string
  signal?: AbortSignal | undefined
  /** Whether the request carries the caller's credentials (never to a card: it is public). */
  withCredentials: boolean
  timeoutMs?: number | undefined
  /** Secrets this request carries besides the connection's (a push config's token): redacted like them. */
  secrets?: readonly string[]
}

export interface HttpExchange {
  response: Response
  url: string
  /** Milliseconds since the request was sent. */
  elapsed(): number
  /** Stops the timeout (once the answer's headers are in, for a stream). */
  settled(): void
  /** The signal that aborts reading the body (the caller's, or the timeout). */
  signal: AbortSignal
  /** Replaces every secret of the exchange (the connection's, the request's, and those added) by `[redacted]`. */
  redact: ReturnType<typeof redactor>
  /** Secrets found in the answer (a push config's token): redacted from then on, in the log and in failures. */
  addSecrets(values: readonly string[]): void
  wire: WireHook | undefined
  /** Whether the request carried a credential. */
  credentialsSent: boolean
}

export async function exchange(settings: HttpSettings, request: HttpRequest): Promise<HttpExchange> {
  const credentials = request.withCredentials ? settings.credentials : undefined
  const secrets = settings.credentials.secrets
  const withValues = (values: readonly string[]) =>
    values.length ? redactor({ ...secrets, values: [...secrets.values, ...values] }) : redactor(secrets)
  let values = request.secrets ?? []
  const redact = withValues(values)
  const url = new URL(request.url)
  if (credentials?.query) url.searchParams.set(...credentials.query)
  const headers: Record<string, string> = { ...credentials?.headers, ...request.headers }
  if (credentials?.cookie) {
    const [name, value] = credentials.cookie
    const pair = `${name}=${value}`
    headers.cookie = headers.cookie ? `${headers.cookie}; ${pair}` : pair
  }
  // Every request says which version it speaks: none would be read as 0.3 (A2A v1.0 §3.6.2).
  headers['a2a-version'] = settings.a2aVersion

  const timeoutMs = request.timeoutMs ?? settings.timeoutMs
  const timeout = new AbortController()
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => timeout.abort(), timeoutMs)
  const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal
  const settled = () => clearTimeout(timer)

  const href = url.href
  // A followed redirect would take the credentials wherever it points: it is reported instead.
  const holdsSecrets = Boolean(credentials && (credentials.sent || Object.keys(credentials.headers).length))
  settings.wire?.({
    type: 'request',
    method: request.method,
    url: redact.url(href),
    headers: redact.headers(headers),
    ...(request.body !== undefined && { body: redact.text(request.body) }),
  })
  const started = performance.now()
  let response: Response
  try {
    response = await settings.fetch(href, {
      method: request.method,
      headers,
      ...(request.body !== undefined && { body: request.body }),
      signal,
      redirect: holdsSecrets ? 'manual' : 'follow',
    })
  } catch (error) {
    settled()
    throw failureOf(error, request.signal, timeout.signal, redact.url(href), timeoutMs)
  }
  const result: HttpExchange = {
    response,
    url: href,
    elapsed: () => Math.round(performance.now() - started),
    settled,
    signal,
    redact,
    addSecrets(found) {
      const added = found.filter((value) => value && !values.includes(value))
      if (!added.length) return
      values = [...values, ...added]
      result.redact = withValues(values)
    },
    wire: settings.wire,
    credentialsSent: credentials?.sent ?? false,
  }
  if (response.status >= 300 && response.status < 400 && holdsSecrets) {
    settled()
    await logResponse(result, await readText(result, settings.maxBytes).catch(() => ''))
    const location = response.headers.get('location')
    throw new A2AClientFailure(
      'bad-response',
      `${redact.url(href)} redirected (HTTP ${response.status}) to ${location ? redact.url(location) : 'nowhere'}; ` +
        'requests with credentials do not follow redirects: use the address the card should give',
    )
  }
  if (response.status === 401 || response.status === 403) {
    const body = await readText(result, settings.maxBytes).catch(() => '')
    settled()
    await logResponse(result, body)
    throw refusal(result, body)
  }
  return result
}

/** Why a fetch threw: the caller aborted (its own reason), the timeout, or no connection. */
function failureOf(
  error: unknown,
  callerSignal: AbortSignal | undefined,
  timeoutSignal: AbortSignal,
  url: string,
  timeoutMs: number | undefined,
): unknown {
  if (callerSignal?.aborted) return callerSignal.reason
  if (timeoutSignal.aborted)
    return new A2AClientFailure('timeout', `${url} did not answer within ${timeoutMs} ms`, { cause: error })
  if (error instanceof A2AClientFailure) return error
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  const why = cause?.code ?? cause?.message ?? (error as Error).message
  return new A2AClientFailure('unreachable', `Cannot reach ${url}: ${String(why)}`, { cause: error })
}

/** A failure met while reading an answer's body, in the same terms. */
export function readFailure(error: unknown, http: HttpExchange, callerSignal: AbortSignal | undefined): unknown {
  if (error instanceof A2AClientFailure) return error
  if (callerSignal?.aborted) return callerSignal.reason
  if (http.signal.aborted)
    return new A2AClientFailure('timeout', `${http.redact.url(http.url)} did not answer in time`, { cause: error })
  const cause = (error as { cause?: { code?: unknown } }).cause
  const why = cause?.code ?? (error as Error).message
  return new A2AClientFailure('unreachable', `The answer of ${http.redact.url(http.url)} was cut: ${String(why)}`, {
    cause: error,
  })
}

/** The body as text, at most `maxBytes` (beyond, a bad-response failure and the rest is not read). */
export async function readText(http: HttpExchange, maxBytes: number): Promise<string> {
  const body = http.response.body
  if (!body) return ''
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.length
      if (total > maxBytes) {
        await reader.cancel().catch(() => {})
        throw new A2AClientFailure(
          'bad-response',
          `The answer of ${http.redact.url(http.url)} is larger than the ${maxBytes} bytes this client reads`,
        )
      }
      chunks.push(value)
    }
  } finally {
    reader.releaseLock()
  }
  const joined = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    joined.set(chunk, at)
    at += chunk.length
  }
  return new TextDecoder().decode(joined)
}

export async function logResponse(http: HttpExchange, body: string | undefined): Promise<void> {
  http.wire?.({
    type: 'response',
    url: http.redact.url(http.url),
    status: http.response.status,
    headers: http.redact.headers(http.response.headers),
    ...(body !== undefined && { body: http.redact.text(body) }),
    elapsedMs: http.elapsed(),
  })
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it removes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** One line of the agent's words: never a page of HTML, nor a control sequence for a terminal. */
const oneLine = (text: string) => text.trim().split('\n')[0]!.slice(0, 300).replace(CONTROL, ' ')

/**
 * A 401 or 403: credentials missing when none was sent, else refused; the agent's reason from WWW-Authenticate's
 * `error_description`, else its error body's message, else the status text.
 */
function refusal(http: HttpExchange, body: string): A2AClientFailure {
  const { status } = http.response
  const challenge = http.response.headers.get('www-authenticate') ?? ''
  const described = /error_description="((?:[^"\\]|\\.)*)"/i.exec(challenge)?.[1]?.replace(/\\(.)/g, '$1')
  let message: unknown
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown }
    message = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message)
  } catch {}
  // Redacted before it is cut to a line, so no part of a credential survives the cut.
  const reason = oneLine(
    http.redact.text(
      described || (typeof message === 'string' && message) || http.response.statusText || 'no reason given',
    ),
  )
  const where = http.redact.url(http.url)
  return http.credentialsSent
    ? new A2AClientFailure('auth-failed', `${where} refused the credentials sent (HTTP ${status}): ${reason}`)
    : new A2AClientFailure('credentials-missing', `${where} needs credentials (HTTP ${status}): ${reason}`)
}
