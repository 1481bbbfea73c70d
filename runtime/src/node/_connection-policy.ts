import type { Server } from 'node:http'
import type { Env } from '../settings.js'
import {
  applyConnectionCaps,
  type ConnectionCapOptions,
  type ConnectionCaps,
  readConnectionCaps,
} from './_connection-caps.js'
import { giveReasonPhrases } from './_reason-phrases.js'
import {
  applySlowClientTimeouts,
  readSlowClientTimeouts,
  type SlowClientTimeoutOptions,
  type SlowClientTimeouts,
} from './_slow-client-timeouts.js'

/**
 * What bounds the connections of a Node HTTP server: slow-client timeouts and connection caps. `serveAgent`
 * (`a2a start`) and `a2a dev` (served through listhen) read and apply them with these same two functions.
 */
export interface ConnectionPolicy {
  timeouts: SlowClientTimeouts
  caps: ConnectionCaps
}

/** From the options, else the `A2A_*` environment, else the defaults; a bad value is a ConfigurationError naming it. */
export function readConnectionPolicy(
  options: SlowClientTimeoutOptions & ConnectionCapOptions,
  env: Env,
): ConnectionPolicy {
  return { timeouts: readSlowClientTimeouts(options, env), caps: readConnectionCaps(options, env) }
}

/**
 * Applies the policy to a server, before it listens or (listhen's) after; the one place both servers pass, so it
 * also gives their answers standard reason phrases (`_reason-phrases.ts`).
 */
export function applyConnectionPolicy(server: Server, policy: ConnectionPolicy): void {
  applySlowClientTimeouts(server, policy.timeouts)
  applyConnectionCaps(server, policy.caps)
  giveReasonPhrases(server)
}
