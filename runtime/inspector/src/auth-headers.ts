import { credential } from './state'

/**
 * The page's credential as the header the agent's card asks for: with every JSON-RPC call, and with the dev
 * server's task feed, which answers the tasks of that credential. Headers only, never the URL.
 */
export function authHeaders(): Record<string, string> {
  const given = credential.value
  if (!given?.value) return {}
  return given.scheme === 'bearer' ? { authorization: `Bearer ${given.value}` } : { 'x-api-key': given.value }
}
