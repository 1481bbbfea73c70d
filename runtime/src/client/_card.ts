import { exchange, type HttpSettings, logResponse, readFailure, readText } from './_http.js'
import { isLoopbackHost } from './_loopback.js'
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

/**
 * Whether the first segment of a reference without a scheme names a host: `localhost`, a name with a dot, an IP
 * address, anything with a port. A first segment that is none of these (`cards/agent.json`) is a folder.
 */
const namesHost = (segment: string) =>
  /:\d+$/.test(segment) || /^localhost$/i.test(segment) || segment.includes('.') || segment.startsWith('[')

export function cardReference(input: string): CardReference {
  const reference = input.trim()
  if (!reference) throw new A2AClientFailure('card-not-found', 'No agent card given (a host, a URL or a file)')
  if (/^file:/i.test(reference)) return { file: reference }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(reference)?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
    throw new A2AClientFailure('card-not-found', `${reference}: the card is read over http(s) or from a file`)
  const first = reference.split('/')[0]!
  // A plain path is a file (`./card.json`, `~/card.json`, `card.json`, `cards/agent.json`); a bare word is a host.
  const plainPath =
    /^[./~]/.test(reference) || /^[^/]+\.json$/i.test(reference) || (reference.includes('/') && !namesHost(first))
  if (scheme === undefined && plainPath) return { file: reference }
  let url: URL
  try {
    // A bare host is reached over https, except this machine's (a local agent rarely has a certificate).
    url = new URL(scheme ? reference : `https://${reference}`)
    if (!scheme && isLoopbackHost(url.hostname)) url = new URL(`http://${reference}`)
  } catch {
    throw new A2AClientFailure('card-not-found', `${reference} is neither a URL, a host nor a file path`)
  }
  if (url.pathname.endsWith('/')) url.pathname += WELL_KNOWN
  return { url: url.href }
}

/**
 * The card a reference names. A URL whose path names no file (`http://host:3000/planner`) is read as it is first; when
 * nothing is there (an HTTP error), it is taken as the agent's address, as a server of several agents gives each
 * (`/planner/`), and the card below it is read.
 */
export async function loadCard(
  reference: CardReference,
  http: HttpSettings,
  signal: AbortSignal | undefined,
): Promise<{ card: AgentCard; source: string }> {
  try {
    return await loadCardAt(reference, http, signal)
  } catch (error) {
    const below = 'url' in reference ? cardBelow(reference.url) : undefined
    if (!below || !(error instanceof A2AClientFailure) || error.kind !== 'card-not-found') throw error
    try {
      return await loadCardAt({ url: below }, http, signal)
    } catch (second) {
      // Nothing below it either: the reference as given is what failed.
      throw second instanceof A2AClientFailure && second.kind === 'card-not-found' ? error : second
    }
  }
}

/** `http://host/planner` → `http://host/planner/.well-known/agent-card.json`; none for a path naming a file. */
function cardBelow(url: string): string | undefined {
  const parsed = new URL(url)
  const last = parsed.pathname.split('/').pop() ?? ''
  if (last === '' || last.includes('.')) return undefined
  return new URL(`${parsed.pathname}/${WELL_KNOWN}`, parsed.origin).href
}

async function loadCardAt(
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
  } catch (error) {
    // A connection cut mid-card is unreachable; the card's timer running out, a timeout.
    throw readFailure(error, response, signal)
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

/**
 * The card, once it has what the client acts on and shows: its interfaces, capabilities, security declarations,
 * skills and modes.
 */
export function checkCard(value: unknown): AgentCard {
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
  for (const [name, scheme] of Object.entries(value.securitySchemes ?? {}))
    if (!isObject(scheme)) throw invalid(`securitySchemes.${name}`, 'is not an object')
  if (value.securityRequirements !== undefined && !Array.isArray(value.securityRequirements))
    throw invalid('securityRequirements', 'is not a list')
  listOf(value.skills, 'skills', isObject, 'an object')
  for (const field of ['defaultInputModes', 'defaultOutputModes'])
    listOf(value[field], field, (item) => typeof item === 'string', 'text')
  return value as AgentCard
}

/** A list (or nothing: ProtoJSON leaves out an empty one) whose every item is `what`. */
function listOf(value: unknown, field: string, is: (item: unknown) => boolean, what: string) {
  if (value === undefined || value === null) return
  if (!Array.isArray(value)) throw invalid(field, 'is not a list')
  const index = value.findIndex((item) => !is(item))
  if (index >= 0) throw invalid(`${field}[${index}]`, `is not ${what}`)
}
