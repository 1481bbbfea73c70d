import type { Logger } from '../logger.js'

/** The issuer did not answer as it should (discovery or keys); the request gets 503 and may be retried. */
export class IssuerUnavailable extends Error {
  override name = 'IssuerUnavailable'
}

/** What is wrong with a document the issuer sent; undefined when it is fine. */
type DocumentCheck = (body: unknown) => string | undefined

export interface IssuerLink {
  /**
   * The JSON document at `url`, checked. Throws IssuerUnavailable when it cannot be had, and, for
   * `retryAfterFailureMs` after a failure, without asking again: however many requests come during an outage, the
   * issuer is asked once per interval, and the log says so once per outage.
   */
  getJson(url: URL, check: DocumentCheck, signal?: AbortSignal): Promise<unknown>
}

export function createIssuerLink(
  issuer: string,
  logger: Logger,
  timing: { retryAfterFailureMs: number; fetchTimeoutMs: number },
): IssuerLink {
  // performance.now is monotonic: a clock set back cannot stretch the pause.
  let quietUntil = Number.NEGATIVE_INFINITY
  let inOutage = false

  const fail = (reason: string): never => {
    quietUntil = performance.now() + timing.retryAfterFailureMs
    if (!inOutage) {
      const meanwhile = `asked again at most every ${timing.retryAfterFailureMs} ms`
      logger.warn(`OpenID Connect issuer ${issuer}: ${reason}; tokens are answered 503 until it answers (${meanwhile})`)
    }
    inOutage = true
    throw new IssuerUnavailable(reason)
  }

  return {
    async getJson(url, check, signal) {
      if (performance.now() < quietUntil) throw new IssuerUnavailable('the issuer failed a moment ago')
      let response: Response
      try {
        // No redirects: where the keys come from is exactly what discovery named.
        response = await fetch(url, {
          redirect: 'manual',
          headers: { accept: 'application/json' },
          signal: signal ?? AbortSignal.timeout(timing.fetchTimeoutMs),
        })
      } catch (error) {
        return fail(`${url.href} could not be fetched (${error instanceof Error ? error.message : String(error)})`)
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {})
        return fail(`${url.href} answered HTTP ${response.status}`)
      }
      const body: unknown = await response.json().catch(() => undefined)
      const problem = body === undefined ? 'is not JSON' : check(body)
      if (problem !== undefined) return fail(`${url.href} ${problem}`)
      if (inOutage) logger.info(`OpenID Connect issuer ${issuer} answers again`)
      inOutage = false
      return body
    },
  }
}
