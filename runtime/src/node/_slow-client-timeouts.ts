import type { Server } from 'node:http'
import { ConfigurationError } from '../errors.js'
import { type Env, optionalWholeNumberSetting, type Variable } from '../settings.js'

// Slow-client timeouts, in ms. Node's own defaults (headers 60 s, request 5 min, checked every 30 s) let a
// slowloris client hold a connection for minutes; a JSON-RPC body is at most `maxBodySize` (1 MiB).
const DEFAULT_HEADERS_TIMEOUT_MS = 15_000
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000
/** The longest delay Node's timers take; past it they fire after 1 ms instead. */
const MAX_TIMER_MS = 2_147_483_647

export interface SlowClientTimeoutOptions {
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  keepAliveTimeoutMs?: number
}

export interface SlowClientTimeouts {
  headers: number
  request: number
  keepAlive: number
}

/** The slow-client timeouts from the options, else the environment, else the defaults; a bad one names itself. */
export function readSlowClientTimeouts(options: SlowClientTimeoutOptions, env: Env): SlowClientTimeouts {
  const read = (option: keyof SlowClientTimeoutOptions, variable: Variable): number | undefined =>
    optionalWholeNumberSetting({ option, variable, given: options[option], env, min: 1, max: MAX_TIMER_MS, unit: 'ms' })
  const request = read('requestTimeoutMs', 'A2A_REQUEST_TIMEOUT_MS') ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headers = read('headersTimeoutMs', 'A2A_HEADERS_TIMEOUT_MS')
  // The headers are part of the request (Node refuses the opposite).
  if (headers !== undefined && headers > request) {
    throw new ConfigurationError(
      `headersTimeoutMs (${headers}) must not exceed requestTimeoutMs (${request}): the headers are part of the request`,
    )
  }
  const keepAlive = read('keepAliveTimeoutMs', 'A2A_KEEP_ALIVE_TIMEOUT_MS') ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS
  return { headers: headers ?? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, request), request, keepAlive }
}

/**
 * Sets the timeouts on a server, before or after it listens (`a2a dev` gets its server from listhen, listening).
 * Node reads the three timeouts afresh at every check and response, but enforces the first two only when it
 * checks its connections, every `connectionsCheckingInterval` (30 s by default), so a slow client would keep its
 * connection up to 30 s past them: check often enough to cut it within a quarter of the shorter timeout, and at
 * least every second.
 */
export function applySlowClientTimeouts(server: Server, timeouts: SlowClientTimeouts): void {
  server.headersTimeout = timeouts.headers
  server.requestTimeout = timeouts.request
  server.keepAliveTimeout = timeouts.keepAlive
  const checks = server as Server & { connectionsCheckingInterval: number }
  checks.connectionsCheckingInterval = Math.max(
    10,
    Math.min(1000, Math.floor(Math.min(timeouts.headers, timeouts.request) / 4)),
  )
  if (server.listening) rearmConnectionChecks(server)
}

/**
 * Node arms its connection check when the server starts listening, with the interval of that moment, and has no
 * public way to change it later. Its own 'listening' listener (`setupConnectionsTracking`, Node 18.13 and later)
 * clears the timer it armed before and arms a new one: a server that already listens is re-armed by calling it.
 */
function rearmConnectionChecks(server: Server): void {
  for (const listener of server.listeners('listening')) {
    if (listener.name === 'setupConnectionsTracking') (listener as (this: Server) => void).call(server)
  }
}
