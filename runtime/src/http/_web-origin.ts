import type { H3Event } from 'h3'
import { FastResponse } from 'srvx'
import { statusJson } from '../bindings/_rest-status.js'
import { ErrorCode } from '../errors.js'
import type { Logger } from '../logger.js'
import type { Env } from '../settings.js'
import { ALLOWED_HOSTS_ENV, AllowedHosts, type AllowedHostsSetting, readAllowedHosts } from './_allowed-hosts.js'
import {
  CORS_ORIGINS_ENV,
  type CorsOriginsSetting,
  corsHeaders,
  preflightHeaders,
  readCorsOrigins,
  VARY,
} from './_cors.js'
import { headerOf } from './_node-headers.js'

/**
 * Keeps web pages from driving the agent. Every request is checked before its route runs: a `Host` the agent
 * is not known by (DNS rebinding) and an `Origin` that is neither the agent's own nor listed are refused with
 * 403; a listed origin gets the CORS headers, and its preflight its answer. The sets are built once; a request
 * without `Origin` costs two header reads and, for a `Host` seen before, one Set lookup.
 */

export interface WebOriginOptions {
  allowedHosts?: AllowedHostsSetting
  corsOrigins?: string[]
}

/** What the guard knows of the app's paths. */
export interface GuardedPaths {
  /** Where a refused POST is answered as a JSON-RPC error. */
  rpc: ReadonlySet<string>
  /** The `Allow` header of a path the app serves (an OPTIONS request's answer), undefined for any other path. */
  allowOf(path: string): string | undefined
  /** Where a refusal is a `google.rpc.Status` (the HTTP+JSON binding's paths). */
  rest(path: string): boolean
}

export interface WebOriginSettings {
  hosts: AllowedHostsSetting
  origins: CorsOriginsSetting
}

/** The settings from the options, else the environment; a bad value names itself and its variable. */
export function readWebOrigin(options: WebOriginOptions, env: Env): WebOriginSettings {
  return { hosts: readAllowedHosts(options.allowedHosts, env), origins: readCorsOrigins(options.corsOrigins, env) }
}

/** Why the answer is refused: the message names the header and how to allow it. */
function hostRefused(host: string): string {
  return `Host ${JSON.stringify(host.slice(0, 100))} is not allowed: this agent answers only the names it is known by (localhost, IP addresses, its public URL's and its listening address's host). To serve it under this name, add the name to ${ALLOWED_HOSTS_ENV} (the allowedHosts option)`
}

function originRefused(origin: string): string {
  return `Origin ${JSON.stringify(origin.slice(0, 100))} is not allowed: requests from other web origins (browser pages) are refused. To allow this one, add it to ${CORS_ORIGINS_ENV} (the corsOrigins option)`
}

/**
 * Refusals are logged at most this often: an operator behind a proxy learns which Host to allow, a flood fills no log.
 */
const LOG_EVERY_MS = 60_000
const JSON_TYPE: [string, string] = ['content-type', 'application/json']
const A2A_JSON_TYPE: [string, string] = ['content-type', 'application/a2a+json']

export class WebOriginGuard {
  readonly #hosts: AllowedHosts
  readonly #anyOrigin: boolean
  readonly #origins: ReadonlySet<string>
  /** Some origin is let in: answers then vary by Origin. */
  readonly #corsListed: boolean
  /** Origins the agent itself is reached at (its public URL, its listening address). */
  readonly #own = new Set<string>()
  readonly #paths: GuardedPaths
  readonly #logger: Pick<Logger, 'warn'> | undefined
  #refusedSinceLog = 0
  #loggedAt = -Infinity

  constructor(settings: WebOriginSettings, paths: GuardedPaths, logger?: Pick<Logger, 'warn'>) {
    this.#logger = logger
    this.#hosts = new AllowedHosts(settings.hosts)
    this.#anyOrigin = settings.origins === true
    this.#origins = new Set(settings.origins === true ? [] : settings.origins)
    this.#corsListed = this.#anyOrigin || this.#origins.size > 0
    this.#paths = paths
  }

  /** The agent is reached at `url` (its public URL, its listening address): its host and origin are its own. */
  addUrl(url: string): void {
    this.#hosts.addUrl(url)
    this.#own.add(new URL(url).origin)
  }

  /** Why a request with these headers is refused, or `undefined`. A `null` host is an in-process request. */
  refusal(host: string | null, origin: string | null): string | undefined {
    const refused =
      host !== null && !this.#hosts.allows(host)
        ? hostRefused(host)
        : origin !== null && !this.#sameOrigin(origin, host) && !this.#listed(origin)
          ? originRefused(origin)
          : undefined
    if (refused) this.#log(refused)
    return refused
  }

  #log(message: string): void {
    this.#refusedSinceLog++
    const now = performance.now()
    if (!this.#logger || now - this.#loggedAt < LOG_EVERY_MS) return
    const more =
      this.#refusedSinceLog > 1 ? ` (${this.#refusedSinceLog - 1} more refused since the last such line)` : ''
    this.#logger.warn(`Refused a request with 403: ${message}${more}`)
    this.#loggedAt = now
    this.#refusedSinceLog = 0
  }

  /**
   * A refusal or a preflight answer, else `undefined` to go on. Each route calls it first (an h3 middleware
   * layer cost message/send about 1.5% more than the check itself), and a catch-all route for every other
   * path and method.
   */
  readonly check = (event: H3Event): Response | undefined => {
    const { req } = event
    const host = headerOf(req, 'host')
    if (host !== null && !this.#hosts.allows(host)) return this.#refuse(event, hostRefused(host))
    const origin = headerOf(req, 'origin')
    if (origin === null || this.#sameOrigin(origin, host)) {
      if (req.method === 'OPTIONS') return this.#options(event)
      // A cache must not hand a card fetched without Origin to a page of a listed origin (it lacks the CORS headers).
      if (req.method === 'GET' && this.#corsListed) event.res.headers.set('vary', VARY)
      return undefined
    }
    if (!this.#listed(origin)) return this.#refuse(event, originRefused(origin))
    if (req.method === 'OPTIONS') return this.#options(event, origin)
    const { res } = event
    for (const [name, value] of corsHeaders(origin)) {
      res.headers.set(name, value)
      // h3 puts these on answers with a status of 400 and more (a refusal must be readable by the page too).
      res.errHeaders.set(name, value)
    }
    return undefined
  }

  #listed(origin: string): boolean {
    return this.#anyOrigin || this.#origins.has(origin)
  }

  /** Browsers send `Origin` on same-origin POSTs too: the agent's own origin needs no listing. */
  #sameOrigin(origin: string, host: string | null): boolean {
    return (host !== null && (origin === `http://${host}` || origin === `https://${host}`)) || this.#own.has(origin)
  }

  #options(event: H3Event, origin?: string): Response | undefined {
    const allow = this.#paths.allowOf(event.url.pathname)
    if (allow === undefined) return undefined
    return new FastResponse(null, {
      status: 204,
      headers: origin === undefined ? [['allow', allow]] : preflightHeaders(origin, allow),
    })
  }

  #refuse(event: H3Event, message: string): Response {
    this.#log(message)
    // A JSON-RPC client gets a JSON-RPC error, an HTTP+JSON one a google.rpc.Status; anything else a plain JSON
    // object naming the problem.
    const path = event.url.pathname
    const rpc = event.req.method === 'POST' && this.#paths.rpc.has(path)
    const rest = !rpc && this.#paths.rest(path)
    const body = rpc
      ? JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${message}` },
        })
      : rest
        ? statusJson(403, message)
        : JSON.stringify({ error: message })
    return new FastResponse(body, { status: 403, headers: [rest ? A2A_JSON_TYPE : JSON_TYPE, ['connection', 'close']] })
  }
}
