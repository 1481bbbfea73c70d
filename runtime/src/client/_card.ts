import { exchange, type HttpSettings, logResponse, readText } from './_http.js'
import { A2AClientFailure } from './errors.js'
import type { AgentCard } from './types.js'

/**
 * The agent card a reference names (A2A v1.0 §8.2): a bare host or an origin → its `/.well-known/agent-card.json`;
 * a URL with a path → that URL as it is (a path ending in `/` is a base, the well-known path under it); a path on
 * disk or a `file://` URL → that file. The card is public: it is fetched without credentials. Checked for the
 * fields the client acts on, each failure naming its field.
 */

const WELL_KNOWN = '.well-known/agent-card.json'
/** A card is what a client reads before choosing an agent: a megabyte is far more than any needs. */
const CARD_MAX_BYTES = 1024 * 1024
const CARD_TIMEOUT_MS = 30_000

export type CardReference = { url: string } | { file: string }

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i

export function cardReference(input: string): CardReference {
  const reference = input.trim()
  if (!reference) throw new A2AClientFailure('card-not-found', 'No agent card given (a host, a URL or a file)')
  if (/^file:/i.test(reference)) return { file: reference }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(reference)?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
    throw new A2AClientFailure('card-not-found', `${reference}: the card is read over http(s) or from a file`)
  if (scheme === undefined && (/^[./~]/.test(reference) || /^[^/]+\.json$/i.test(reference))) return { file: reference }
  let url: URL
  try {
    // A bare host is reached over https, except this machine's (a local agent rarely has a certificate).
    const host = reference.split('/')[0]!
    url = new URL(scheme ? reference : `${LOOPBACK_HOST.test(host) ? 'http' : 'https'}://${reference}`)
  } catch {
    throw new A2AClientFailure('card-not-found', `${reference} is neither a URL, a host nor a file path`)
  }
  if (url.pathname.endsWith('/')) url.pathname += WELL_KNOWN
  return { url: url.href }
}

export async function loadCard(
  reference: CardReference,
  http: HttpSettings,
  signal: AbortSignal | undefined,
): Promise<{ card: AgentCard; source: string }> {
  if ('file' in reference) {
    const { cardPath, readCardFile } = await import('./_card-file.js')
    const path = cardPath(reference.file)
    return { card: checkCard(parseCard(await readCardFile(path, CARD_MAX_BYTES), path)), source: path }
  }
  const response = await exchange(http, {
    method: 'GET',
    url: reference.url,
    headers: { accept: 'application/json' },
    signal,
    withCredentials: false,
    timeoutMs: http.timeoutMs ?? CARD_TIMEOUT_MS,
  })
  let text: string
  try {
    text = await readText(response, CARD_MAX_BYTES)
  } finally {
    response.settled()
  }
  await logResponse(response, text)
  const { status } = response.response
  if (status < 200 || status > 299)
    throw new A2AClientFailure(
      'card-not-found',
      `No agent card at ${reference.url} (HTTP ${status}${status === 404 ? ', not found' : ''})`,
    )
  return { card: checkCard(parseCard(text, reference.url)), source: response.response.url || reference.url }
}

function parseCard(text: string, source: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new A2AClientFailure('card-invalid', `The agent card at ${source} is not JSON`)
  }
}

const invalid = (field: string, problem: string) =>
  new A2AClientFailure('card-invalid', `The agent card's \`${field}\` ${problem}`)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The card, once it has what the client acts on: its interfaces, capabilities and security declarations. */
function checkCard(value: unknown): AgentCard {
  if (!isObject(value)) throw new A2AClientFailure('card-invalid', 'The agent card is not a JSON object')
  const interfaces = value.supportedInterfaces
  if (interfaces === undefined) {
    const version = typeof value.protocolVersion === 'string' ? value.protocolVersion : undefined
    if (typeof value.url === 'string' || version?.startsWith('0.'))
      throw new A2AClientFailure(
        'card-invalid',
        `The agent speaks only A2A ${version ?? '0.3'} (its card has no \`supportedInterfaces\`); ` +
          'this client speaks A2A 1.0',
      )
    throw invalid('supportedInterfaces', 'is missing')
  }
  if (!Array.isArray(interfaces) || interfaces.length === 0) throw invalid('supportedInterfaces', 'lists no interface')
  interfaces.forEach((entry, index) => {
    const at = `supportedInterfaces[${index}]`
    if (!isObject(entry)) throw invalid(at, 'is not an object')
    for (const field of ['url', 'protocolBinding', 'protocolVersion'])
      if (typeof entry[field] !== 'string' || !entry[field]) throw invalid(`${at}.${field}`, 'is missing')
    if (entry.tenant !== undefined && typeof entry.tenant !== 'string') throw invalid(`${at}.tenant`, 'is not text')
  })
  if (!isObject(value.capabilities))
    throw invalid('capabilities', value.capabilities ? 'is not an object' : 'is missing')
  if (value.securitySchemes !== undefined && !isObject(value.securitySchemes))
    throw invalid('securitySchemes', 'is not an object')
  if (value.securityRequirements !== undefined && !Array.isArray(value.securityRequirements))
    throw invalid('securityRequirements', 'is not a list')
  return value as AgentCard
}
