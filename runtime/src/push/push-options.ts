/** How push notifications are delivered and which webhooks are allowed; `createA2AApp`'s `push` option. */
export interface PushOptions {
  /**
   * Addresses and CIDR ranges webhooks may resolve to although they are loopback, private or link-local
   * (which are refused otherwise), e.g. `['127.0.0.1', '::1']` for a receiver on this machine in
   * development.
   * @default A2A_PUSH_ALLOW (comma-separated), else none
   */
  allow?: string[]
  /**
   * Accept `http:` webhooks (development only).
   * @default A2A_PUSH_ALLOW_HTTP (true, 1 or yes), else false
   */
  allowHttp?: boolean
  /**
   * Per delivery attempt (connect, send, answer), in ms (A2A suggests 10–30 s).
   * @default 10_000
   */
  timeoutMs?: number
  /**
   * Attempts after the first for a webhook that is unreachable, slow, or answers 408, 429 or 5xx.
   * @default 3
   */
  retries?: number
  /**
   * Wait before the first retry, doubled for each next one (with jitter), in ms.
   * @default 500
   */
  retryDelayMs?: number
  /**
   * Notifications in flight at once, all webhooks together.
   * @default 64
   */
  maxConcurrent?: number
  /**
   * Webhooks one task may have.
   * @default 10
   */
  maxConfigsPerTask?: number
}
