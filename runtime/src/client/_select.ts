import { A2AClientFailure } from './errors.js'
import type { AgentCard, AgentInterface } from './types.js'

/**
 * The interface a client speaks to (A2A v1.0 §8.3.2): the first of the card's `supportedInterfaces` (declared in the
 * agent's order of preference) in a binding this client has and at A2A 1.x; with the caller's ordered preference,
 * the first preferred binding the card offers, else the card's order.
 */

type Binding = 'JSONRPC' | 'HTTP+JSON'

const SPOKEN: ReadonlySet<string> = new Set<Binding>(['JSONRPC', 'HTTP+JSON'])

/** The names a caller may give a binding: the card's own, in any case, and the usual others. */
const ALIASES = new Map([
  ['JSON-RPC', 'JSONRPC'],
  ['REST', 'HTTP+JSON'],
  ['HTTP', 'HTTP+JSON'],
])

export const bindingName = (name: string): string => {
  const upper = name.trim().toUpperCase()
  return ALIASES.get(upper) ?? upper
}

const isV1 = (version: string) => /^1(\.|$)/.test(version.trim())

/** Whether this client speaks A2A `version` (`1`, `1.0`, `1.1`…): the versions it may signal on a request. */
export const speaksVersion = (version: string) => /^1(\.\d+)?$/.test(version)

export function selectInterface(card: AgentCard, preference: readonly string[] = []): AgentInterface {
  const usable = card.supportedInterfaces.filter(
    (entry) => SPOKEN.has(bindingName(entry.protocolBinding)) && isV1(entry.protocolVersion),
  )
  const preferred = preference
    .map(bindingName)
    .map((binding) => usable.find((entry) => bindingName(entry.protocolBinding) === binding))
    .find(Boolean)
  const chosen = preferred ?? usable[0]
  if (!chosen) {
    const offered = card.supportedInterfaces.map((entry) => `${entry.protocolBinding} ${entry.protocolVersion}`)
    if (card.supportedInterfaces.every((entry) => entry.protocolVersion.trim().startsWith('0.')))
      throw new A2AClientFailure(
        'card-invalid',
        `The agent speaks only A2A 0.3 (its card offers ${offered.join(', ')}); this client speaks A2A 1.0`,
      )
    throw new A2AClientFailure(
      'card-invalid',
      `The agent card offers ${offered.join(', ')}: none is JSONRPC or HTTP+JSON at A2A 1.x, which this client speaks`,
    )
  }
  const index = card.supportedInterfaces.indexOf(chosen)
  let url: URL | undefined
  try {
    url = new URL(chosen.url)
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new A2AClientFailure(
      'card-invalid',
      `The agent card's \`supportedInterfaces[${index}].url\` is not an http(s) URL: ${JSON.stringify(chosen.url)}`,
    )
  return chosen
}
