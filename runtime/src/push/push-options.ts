/** How push notifications are delivered and which webhooks are allowed; `createA2AApp`'s `push` option. */
export interface PushOptions {
  /**
   * Addresses and CIDR ranges webhooks may resolve to although they are loopback, private or link-local
   * (which are refused otherwise), e.g. `['127.0.0.1', '::1']` for a receiver on this machine in
   * development. Default: `A2A_PUSH_ALLOW` (comma-separated), else none.
   */
  allow?: string[]
  /** Accept `http:` webhooks (development only). Default: `A2A_PUSH_ALLOW_HTTP` (`true`/`1`), else `false`. */
  allowHttp?: boolean
  /** Per delivery attempt (connect, send, answer), in ms. Default 10,000 (A2A suggests 10–30 s). */
  timeoutMs?: number
  /** Attempts after the first for a webhook that is unreachable, slow, or answers 408, 429 or 5xx. Default 3. */
  retries?: number
  /** Wait before the first retry, doubled for each next one (with jitter), in ms. Default 500. */
  retryDelayMs?: number
  /** Notifications in flight at once, all webhooks together. Default 64. */
  maxConcurrent?: number
  /** Webhooks one task may have. Default 10. */
  maxConfigsPerTask?: number
}
