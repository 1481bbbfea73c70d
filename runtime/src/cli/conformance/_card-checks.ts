import { isObject } from '../../_is-object.js'
import { exchange, type HttpSettings, readFailure, readText } from '../../client/_http.js'
import { A2AClientFailure } from '../../client/errors.js'
import { credentialsFor } from './_credentials.js'
import { fail, type Results } from './_results.js'
import { describe, type Json } from './_wire.js'

/** The card as fetched, or why there is none (the agent answered, but no card). */
export type FetchedCard = { card: Json; headers: Headers } | { missing: string }

const WELL_KNOWN = '.well-known/agent-card.json'
const PROTOCOL_VERSION = /^\d+\.\d+$/
const V1 = /^1\.0(\.\d+)?$/
/** As the client core reads a card: a megabyte is far more than any card needs. */
const CARD_MAX_BYTES = 1024 * 1024

/**
 * The card, read as the client core reads one (`A2A-Version: 1.0`, no credentials: it is public; at most a
 * megabyte), but kept whatever its fields, for the checks to judge. Throws the core's failure when nothing answers
 * (`unreachable`, exit 3) or not in time (`timeout`).
 */
export async function fetchCard(url: string, timeoutMs: number): Promise<FetchedCard> {
  const http: HttpSettings = {
    a2aVersion: '1.0',
    credentials: credentialsFor({}, {}),
    wire: undefined,
    fetch: globalThis.fetch,
    timeoutMs,
    maxBytes: CARD_MAX_BYTES,
  }
  let text: string
  let response: Response
  try {
    const answer = await exchange(http, {
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      withCredentials: false,
    })
    response = answer.response
    try {
      text = await readText(answer, CARD_MAX_BYTES)
    } catch (error) {
      throw readFailure(error, answer, undefined)
    } finally {
      answer.settled()
    }
  } catch (error) {
    // A card behind credentials, or too large, is no card to check: its checks say so.
    if (error instanceof A2AClientFailure && ['credentials-missing', 'bad-response'].includes(error.kind))
      return { missing: error.message }
    throw error
  }
  if (!response.ok) return { missing: `HTTP ${response.status}` }
  try {
    const card = JSON.parse(text)
    return isObject(card) ? { card, headers: response.headers } : { missing: `${describe(card)}, not a JSON object` }
  } catch {
    return { missing: `HTTP ${response.status} ${response.headers.get('content-type') ?? ''}, not JSON`.trim() }
  }
}

const nonEmptyString = (value: unknown) => typeof value === 'string' && value.trim() !== ''

/** The fields AgentCard requires (its proto's REQUIRED fields), the first one missing or of the wrong kind. */
function missingField(card: Json): string | undefined {
  for (const field of ['name', 'description', 'version'])
    if (!nonEmptyString(card[field])) return `${field} (a non-empty string)`
  if (!Array.isArray(card.supportedInterfaces) || card.supportedInterfaces.length === 0)
    return 'supportedInterfaces (a non-empty list)'
  if (!isObject(card.capabilities)) return 'capabilities (an object)'
  for (const field of ['defaultInputModes', 'defaultOutputModes'])
    if (!Array.isArray(card[field]) || !card[field].every(nonEmptyString)) return `${field} (a list of media types)`
  if (!Array.isArray(card.skills)) return 'skills (a list)'
  for (const [index, skill] of card.skills.entries()) {
    if (!isObject(skill)) return `skills[${index}] (an object)`
    for (const field of ['id', 'name', 'description'])
      if (!nonEmptyString(skill[field])) return `skills[${index}].${field} (a non-empty string)`
    if (!Array.isArray(skill.tags)) return `skills[${index}].tags (a list)`
  }
  return undefined
}

/** What is wrong with one declared interface, if anything. */
function interfaceProblem(entry: unknown, index: number): string | undefined {
  const where = `supportedInterfaces[${index}]`
  if (!isObject(entry)) return `${where} is not an object`
  if (!nonEmptyString(entry.protocolBinding)) return `${where} has no protocolBinding`
  if (!nonEmptyString(entry.protocolVersion)) return `${where} has no protocolVersion`
  if (!nonEmptyString(entry.url)) return `${where} has no url`
  const binding = String(entry.protocolBinding).toUpperCase()
  const url = String(entry.url)
  if (binding === 'GRPC') {
    if (!/^(grpcs?:\/\/)?(\[[^\]]+\]|[^:/\s]+):\d+\/?$/.test(url))
      return `${where}.url ${describe(url)} is not host:port`
  } else if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    return `${where}.url ${describe(url)} is not an absolute http(s) URL`
  return undefined
}

/** The checks of the card itself: where it is served, its fields, its interfaces, its caching headers. */
export async function cardChecks(results: Results, cardUrl: string, fetched: FetchedCard): Promise<void> {
  // A card URL given as it is (not an origin's) is checked where it is: the report says so.
  const wellKnown = new URL(cardUrl).pathname.endsWith(`/${WELL_KNOWN}`)
  await results.check(
    'CARD-DISC-001',
    'card',
    () => ('missing' in fetched ? fail(`an Agent Card (a JSON object) at ${cardUrl}`, fetched.missing) : undefined),
    wellKnown ? undefined : `the card is served at the card URL given (not at /${WELL_KNOWN})`,
  )
  if ('missing' in fetched) return
  const { card, headers } = fetched
  await results.check('CARD-STRUCT-001', 'card', () => {
    const missing = missingField(card)
    return missing ? fail('every required AgentCard field', `missing or malformed: ${missing}`) : undefined
  })
  const interfaces: unknown[] = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []
  await results.check(
    'CARD-PROTO-002',
    'card',
    () => {
      const problem = interfaces.map(interfaceProblem).find((found) => found !== undefined)
      return problem
        ? fail('each interface with protocolBinding, protocolVersion and an absolute url', problem)
        : undefined
    },
    'each interface names its binding, its protocol version and an absolute URL',
  )
  await results.check('CARD-PROTO-001', 'card', () => {
    const versions = interfaces.map((entry) => (isObject(entry) ? entry.protocolVersion : undefined))
    const patch = versions.find((version) => typeof version === 'string' && !PROTOCOL_VERSION.test(version))
    if (!versions.some((version) => typeof version === 'string' && V1.test(version)))
      return fail('an interface with protocolVersion "1.0"', `protocol versions ${describe(versions)}`)
    if (patch !== undefined)
      return fail('protocol versions as Major.Minor (no patch number, §3.6)', `protocolVersion ${describe(patch)}`)
    return undefined
  })
  const header = (name: string) => headers.get(name)
  await results.check('CARD-CACHE-001', 'card', () =>
    /max-age=\d+/.test(header('cache-control') ?? '')
      ? undefined
      : fail('Cache-Control with max-age', header('cache-control') ?? 'no Cache-Control'),
  )
  await results.check('CARD-CACHE-002', 'card', () => (header('etag') ? undefined : fail('an ETag', 'no ETag')))
  await results.check('CARD-CACHE-003', 'card', () =>
    header('last-modified') ? undefined : fail('Last-Modified', 'no Last-Modified'),
  )
}
