import http from 'node:http'
import https from 'node:https'
import { type AddressPolicy, guardedLookup } from './_address-guard.js'

/**
 * How a notification reaches a webhook: one POST, its answer read (up to a limit) within the timeout. On Node,
 * Bun and Deno through `node:http` with the guard's lookup, so the address connected to is the one checked; on
 * Cloudflare Workers through `fetch`, which connects on the platform's side: there the guard checks the webhook
 * when it is configured and literal addresses at each post, and the platform's network reaches no private one.
 */

/** `status`: the webhook's answer; `error`: a short code of why there was none (telemetry's `error.type`). */
export type Outcome =
  | { delivered: true; status?: number }
  | { delivered: false; retry: boolean; reason: string; status?: number; error?: string }

export interface WebhookTransport {
  post(url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Outcome>
  close(): void
}

/** A webhook's answer is read up to this size (it means nothing here), then the connection is cut. */
const MAX_ANSWER_BYTES = 64 * 1024

/** Workers say so in `navigator.userAgent` (Cloudflare's documented way to tell). */
export const onCloudflareWorkers = (): boolean =>
  (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers'

function outcomeOf(status: number): Outcome {
  if (status >= 200 && status < 300) return { delivered: true, status }
  if (status >= 300 && status < 400)
    return { delivered: false, retry: false, reason: `HTTP ${status} (redirects are not followed)`, status }
  return {
    delivered: false,
    retry: status === 408 || status === 429 || status >= 500,
    reason: `HTTP ${status}`,
    status,
  }
}

/** `node:http`: connections reused per webhook, each new one resolved again through the guard. */
export function nodeTransport(policy: AddressPolicy, timeoutMs: number, maxConcurrent: number): WebhookTransport {
  const lookup = guardedLookup(policy)
  // Idle connections close after a while, and there are never more than the deliveries in flight.
  const pool = { keepAlive: true, timeout: timeoutMs, maxFreeSockets: 4, maxTotalSockets: maxConcurrent }
  const agents = { http: new http.Agent(pool), https: new https.Agent(pool) }
  return {
    post: (url, headers, body) =>
      new Promise((resolve) => {
        let answered = false
        const finish = (outcome: Outcome) => {
          if (answered) return
          answered = true
          clearTimeout(timer)
          resolve(outcome)
        }
        const secure = url.protocol === 'https:'
        const send = secure ? https.request : http.request
        const request = send(url, {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup,
          agent: secure ? agents.https : agents.http,
        })
        // The whole exchange, answer included, fits in the timeout: a receiver that trickles is cut.
        const timer = setTimeout(() => {
          finish({
            delivered: false,
            retry: true,
            reason: `no complete answer within ${timeoutMs} ms`,
            error: 'timeout',
          })
          request.destroy()
        }, timeoutMs)
        request.on('response', (response) => {
          const outcome = outcomeOf(response.statusCode ?? 0)
          // The answer's body means nothing here; read to its end (freeing the connection), within a limit.
          let read = 0
          response.on('data', (chunk: Buffer) => {
            read += chunk.length
            if (read > MAX_ANSWER_BYTES) {
              request.destroy()
              finish(outcome)
            }
          })
          response.on('end', () => finish(outcome))
          response.on('error', () => finish(outcome))
        })
        request.on('error', (error: NodeJS.ErrnoException) => {
          const blocked = error.code === 'EA2ABLOCKED'
          finish({
            delivered: false,
            retry: !blocked,
            reason: blocked ? `refused: ${error.message}` : (error.code ?? error.message),
            error: blocked ? 'refused' : (error.code ?? error.name),
          })
        })
        request.end(body)
      }),
    close() {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}

/** `fetch`, for Cloudflare Workers: no redirect followed, the whole exchange within the timeout. */
export function fetchTransport(): WebhookTransport {
  const inFlight = new Set<AbortController>()
  return {
    async post(url, headers, body, timeoutMs) {
      const abort = new AbortController()
      inFlight.add(abort)
      const timer = setTimeout(() => abort.abort(), timeoutMs)
      try {
        const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: abort.signal })
        const outcome = outcomeOf(response.status)
        // Read to its end within the limit, then let it go.
        const reader = response.body?.getReader()
        for (let read = 0; reader && read <= MAX_ANSWER_BYTES; ) {
          const { done, value } = await reader.read()
          if (done) break
          read += value.byteLength
        }
        await reader?.cancel().catch(() => {})
        return outcome
      } catch (error) {
        if (abort.signal.aborted)
          return {
            delivered: false,
            retry: true,
            reason: `no complete answer within ${timeoutMs} ms`,
            error: 'timeout',
          }
        return { delivered: false, retry: true, reason: (error as Error).message, error: (error as Error).name }
      } finally {
        clearTimeout(timer)
        inFlight.delete(abort)
      }
    },
    close() {
      for (const abort of inFlight) abort.abort()
    },
  }
}
