import { isObject } from '../_is-object.js'
import { KNOWN_AUTH_SCHEMES } from '../core/_card.js'

import type { Finding } from '../dev/inspector/wire.js'

export type { Finding }

const DOTTED_VERSION = /^\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$/
// type/subtype with an optional parameter list, as in RFC 6838 (loosely).
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9*][a-z0-9!#$&^_.+*-]*(\s*;.*)?$/i

const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)

type Report = (path: string, message: string, hint: string) => void

/**
 * The A2A v1.0 address: at least one interface, each with an absolute http(s) `url` and a `protocolBinding`
 * (`protocolVersion` is required by the spec too; a client can still try one without it, so a warning).
 */
function checkV1Interfaces(interfaces: unknown, error: Report, warning: Report): void {
  const example = '[{ url: "https://…/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }]'
  if (!Array.isArray(interfaces) || interfaces.length === 0) {
    error(
      'supportedInterfaces',
      'an A2A v1.0 card (no top-level `url`) needs `supportedInterfaces`: a non-empty array',
      `set card.supportedInterfaces, e.g. ${example}`,
    )
    return
  }
  interfaces.forEach((entry, i) => {
    const at = `supportedInterfaces[${i}]`
    if (!isObject(entry)) {
      error(at, 'an interface must be an object', `give it url, protocolBinding and protocolVersion, e.g. ${example}`)
      return
    }
    if (typeof entry.url !== 'string' || !isHttpUrl(entry.url))
      error(`${at}.url`, `\`url\` must be an absolute http(s) URL (got ${JSON.stringify(entry.url)})`, 'set it to the address clients reach')
    if (typeof entry.protocolBinding !== 'string' || !entry.protocolBinding.trim())
      error(`${at}.protocolBinding`, '`protocolBinding` must be a non-empty string', 'name the binding served at that url, e.g. "JSONRPC"')
    if (entry.protocolVersion === undefined)
      warning(`${at}.protocolVersion`, 'the interface names no `protocolVersion`', 'set the A2A version served at that url, e.g. "1.0"')
    else if (typeof entry.protocolVersion !== 'string' || !entry.protocolVersion.trim())
      error(`${at}.protocolVersion`, '`protocolVersion` must be a non-empty string', 'set the A2A version served at that url, e.g. "1.0"')
  })
}

/**
 * Checks a served Agent Card against the platform spec: every required field and its type, then what makes
 * a card weak for the clients that read it (warnings). Each finding names the JSON path and how to fix it.
 */
export function checkCard(card: unknown): Finding[] {
  const findings: Finding[] = []
  const error = (path: string, message: string, hint: string) => findings.push({ level: 'error', path, message, hint })
  const warning = (path: string, message: string, hint: string) => findings.push({ level: 'warning', path, message, hint })
  if (!isObject(card)) {
    error('$', 'the card is not a JSON object', 'serve the card as a JSON object')
    return findings
  }

  for (const field of ['name', 'description'] as const) {
    if (typeof card[field] !== 'string' || !(card[field] as string).trim()) error(field, `\`${field}\` must be a non-empty string`, `set card.${field}`)
  }
  if (typeof card.description === 'string' && card.description.trim() && card.description.trim().length < 20) {
    warning('description', 'the description is very short', 'say what the agent does and for whom in a sentence; clients and people choose agents by it')
  }

  // Two shapes: a card with a top-level `url` (platform, A2A v0.3, and what the runtime serves in every dialect),
  // and the pure A2A v1.0 one, which gives its address only in `supportedInterfaces`.
  if (card.url === undefined && card.supportedInterfaces !== undefined) checkV1Interfaces(card.supportedInterfaces, error, warning)
  else {
    if (typeof card.url !== 'string')
      error('url', '`url` must be a string', 'the runtime fills it from the listening address; behind a proxy set A2A_PUBLIC_URL')
    else if (!isHttpUrl(card.url))
      error(
        'url',
        `\`url\` must be an absolute http(s) URL (got ${JSON.stringify(card.url)})`,
        'set A2A_PUBLIC_URL (or publicUrl) to the address clients reach',
      )

    if (card.supportedInterfaces !== undefined) {
      if (!Array.isArray(card.supportedInterfaces))
        error('supportedInterfaces', '`supportedInterfaces` must be an array', 'list { url, protocolBinding: "JSONRPC" } entries')
      else
        card.supportedInterfaces.forEach((entry, i) => {
          if (!isObject(entry) || typeof entry.url !== 'string')
            error(`supportedInterfaces[${i}]`, 'each interface needs a `url` string', 'give the interface its url')
        })
    }
  }

  if (typeof card.version !== 'string' || !DOTTED_VERSION.test(card.version)) {
    error('version', `\`version\` must be a dotted version such as 1.0.0 (got ${JSON.stringify(card.version)})`, 'set card.version, e.g. "1.0.0"')
  }

  if (!isObject(card.capabilities)) error('capabilities', '`capabilities` must be an object', 'set card.capabilities, e.g. { streaming: true }')
  else
    for (const key of ['streaming', 'pushNotifications'] as const) {
      const value = card.capabilities[key]
      if (value !== undefined && typeof value !== 'boolean')
        error(`capabilities.${key}`, `\`capabilities.${key}\` must be a boolean`, `set it to true or false`)
    }

  for (const field of ['defaultInputModes', 'defaultOutputModes'] as const) {
    const modes = card[field]
    if (!Array.isArray(modes)) {
      error(field, `\`${field}\` must be an array of media types`, `set card.${field}, e.g. ["text/plain"]`)
      continue
    }
    if (modes.length === 0) warning(field, `\`${field}\` is empty`, 'list at least one media type, e.g. "text/plain"')
    modes.forEach((mode, i) => {
      if (typeof mode !== 'string' || !MEDIA_TYPE.test(mode))
        error(`${field}[${i}]`, `${JSON.stringify(mode)} is not a media type`, 'use type/subtype, e.g. "text/plain" or "application/json"')
    })
  }

  if (!Array.isArray(card.skills)) error('skills', '`skills` must be an array', "declare the agent's skills")
  else {
    if (card.skills.length === 0) warning('skills', 'the card declares no skills', 'add at least one skill so clients know what to ask')
    const seen = new Map<string, number>()
    for (const [i, skill] of card.skills.entries()) {
      const at = `skills[${i}]`
      if (!isObject(skill)) {
        error(at, 'a skill must be an object', 'give it id, name, description, tags and examples')
        continue
      }
      if (typeof skill.id !== 'string' || !skill.id) error(`${at}.id`, 'the skill id must be a non-empty string', 'give the skill an id')
      else if (seen.has(skill.id)) error(`${at}.id`, `the id ${JSON.stringify(skill.id)} repeats skills[${seen.get(skill.id)}]`, 'give every skill its own id')
      else seen.set(skill.id, i)
      for (const field of ['name', 'description'] as const) {
        if (typeof skill[field] !== 'string' || !(skill[field] as string).trim())
          error(`${at}.${field}`, `the skill ${field} must be a non-empty string`, `set ${at}.${field}`)
      }
      for (const field of ['tags', 'examples'] as const) {
        const list = skill[field]
        if (list === undefined && field === 'examples')
          warning(`${at}.examples`, 'the skill has no examples', 'add a request or two people would send, e.g. "Weather in Oslo?"')
        else if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
          error(`${at}.${field}`, `\`${field}\` must be an array of strings`, `set ${at}.${field}`)
        else if (list.length === 0)
          warning(`${at}.${field}`, `the skill has no ${field}`, field === 'tags' ? 'add keywords clients can match' : 'add a request or two people would send')
      }
    }
  }

  if (card.authentication !== undefined) {
    const schemes = isObject(card.authentication) ? card.authentication.schemes : undefined
    if (!Array.isArray(schemes) || schemes.length === 0)
      error('authentication.schemes', '`authentication.schemes` must be a non-empty array', `use ${KNOWN_AUTH_SCHEMES.join(' or ')}`)
    else
      schemes.forEach((scheme, i) => {
        if (!(KNOWN_AUTH_SCHEMES as readonly unknown[]).includes(scheme)) {
          error(`authentication.schemes[${i}]`, `${JSON.stringify(scheme)} is not a scheme the runtime validates`, `use ${KNOWN_AUTH_SCHEMES.join(' or ')}`)
        }
      })
  }
  return findings
}
