import { isObject } from '../_is-object.js'
import type { AuthScheme } from '../types.js'

/**
 * The one set of Agent Card rules. `defineAgent` refuses a card that breaks a rule at the `error` level
 * (`normalizeCard`, once its defaults are filled), and `a2a card validate` reports every broken rule about a
 * served card (`checkCard`), warnings included. Because both read this table, a card the runtime starts with
 * has no error a check of its served card could find (short of a bad public URL), and the check's errors are
 * exactly what the runtime refuses.
 */

const KNOWN_AUTH_SCHEMES: readonly AuthScheme[] = ['bearer', 'apiKey', 'oidc']

interface Issue {
  /** The JSON path of the field, as both callers name it: `skills[1].id`. */
  path: string
  /** What is wrong, as `a2a card validate` says it. */
  message: string
  /** How to fix it. */
  hint: string
}

/** A broken rule: the runtime refuses the card. */
export interface CardError extends Issue {
  level: 'error'
  /** What is wrong after the field's name, as the runtime's refusal says it: Agent card: `path` <refusal>. */
  refusal: string
}

/** A card that works but serves its clients poorly: only `a2a card validate` reports it. */
interface CardWarning extends Issue {
  level: 'warning'
}

type CardIssue = CardError | CardWarning

/** What a check looks at: a card as `defineAgent` takes it (no address yet), or as a server serves it. */
type CardScope = 'defined' | 'served'

const DOTTED_VERSION = /^\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$/
// type/subtype with an optional parameter list, as in RFC 6838 (loosely), or the range `*/*`, which an agent that
// takes anything declares (and the runtime honours).
const MEDIA_TYPE = /^(?:\*\/\*|[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9*][a-z0-9!#$&^_.+*-]*)(\s*;.*)?$/i

const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim() !== ''

/** Collects the issues of one card, in the order a reader meets the fields. */
class Issues {
  readonly list: CardIssue[] = []

  /** A broken rule; the check's message is "`path` refusal" unless it words it otherwise. */
  error(path: string, refusal: string, hint: string, message = `\`${path}\` ${refusal}`): void {
    this.list.push({ level: 'error', path, message, hint, refusal })
  }

  warning(path: string, message: string, hint: string): void {
    this.list.push({ level: 'warning', path, message, hint })
  }
}

type Card = Record<string, unknown>

interface FieldRule {
  /** The fields it checks, for the reader. */
  fields: string
  check(card: Card, issues: Issues): void
  /** Only a served card has it: the runtime adds it to the card as defined. */
  servedOnly?: true
}

/** Every rule, in the order a card's issues are reported. */
const FIELD_RULES: readonly FieldRule[] = [
  { fields: 'name, description', check: checkNameAndDescription },
  { fields: 'url, supportedInterfaces', check: checkAddress, servedOnly: true },
  { fields: 'version', check: checkVersion },
  { fields: 'capabilities', check: checkCapabilities },
  { fields: 'defaultInputModes, defaultOutputModes', check: checkModes },
  { fields: 'skills', check: checkSkills },
  { fields: 'authentication', check: checkAuthentication },
  { fields: 'extendedCard', check: checkExtendedCard },
]

/** The issues of a card, in the order of its fields. */
export function cardIssues(card: unknown, scope: CardScope): CardIssue[] {
  const issues = new Issues()
  if (!isObject(card))
    issues.error('$', 'must be a JSON object', 'serve the card as a JSON object', 'the card is not a JSON object')
  else for (const rule of FIELD_RULES) if (scope === 'served' || !rule.servedOnly) rule.check(card, issues)
  return issues.list
}

function checkNameAndDescription(card: Card, issues: Issues): void {
  for (const field of ['name', 'description'] as const) {
    if (!isNonEmptyString(card[field])) issues.error(field, 'must be a non-empty string', `set card.${field}`)
  }
  if (isNonEmptyString(card.description) && card.description.trim().length < 20) {
    issues.warning(
      'description',
      'the description is very short',
      'say what the agent does and for whom in a sentence; clients and people choose agents by it',
    )
  }
}

/**
 * A served card's address, in one of two shapes: a top-level `url` (platform, A2A v0.3, and what the runtime
 * serves in every dialect), or the pure A2A v1.0 one, which gives it only in `supportedInterfaces`.
 */
function checkAddress(card: Card, issues: Issues): void {
  if (card.url === undefined && card.supportedInterfaces !== undefined) {
    checkV1Interfaces(card.supportedInterfaces, issues)
    return
  }
  if (typeof card.url !== 'string')
    issues.error(
      'url',
      'must be a string',
      'the runtime fills it from the listening address; behind a proxy set A2A_PUBLIC_URL',
    )
  else if (!isHttpUrl(card.url))
    issues.error(
      'url',
      `must be an absolute http(s) URL (got ${JSON.stringify(card.url)})`,
      'set A2A_PUBLIC_URL (or publicUrl) to the address clients reach',
    )
  if (card.supportedInterfaces === undefined) return
  if (!Array.isArray(card.supportedInterfaces)) {
    issues.error('supportedInterfaces', 'must be an array', 'list { url, protocolBinding: "JSONRPC" } entries')
    return
  }
  card.supportedInterfaces.forEach((entry, i) => {
    if (!isObject(entry) || typeof entry.url !== 'string')
      issues.error(
        `supportedInterfaces[${i}]`,
        'needs a `url` string',
        'give the interface its url',
        'each interface needs a `url` string',
      )
  })
}

/**
 * The A2A v1.0 address: at least one interface, each with an absolute http(s) `url` and a `protocolBinding`
 * (`protocolVersion` is required by the spec too; a client can still try one without it, so a warning).
 */
function checkV1Interfaces(interfaces: unknown, issues: Issues): void {
  const example = '[{ url: "https://…/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }]'
  if (!Array.isArray(interfaces) || interfaces.length === 0) {
    const message = 'an A2A v1.0 card (no top-level `url`) needs `supportedInterfaces`: a non-empty array'
    issues.error(
      'supportedInterfaces',
      'must be a non-empty array',
      `set card.supportedInterfaces, e.g. ${example}`,
      message,
    )
    return
  }
  interfaces.forEach((entry, i) => {
    const at = `supportedInterfaces[${i}]`
    if (!isObject(entry)) {
      issues.error(
        at,
        'must be an object',
        `give it url, protocolBinding and protocolVersion, e.g. ${example}`,
        'an interface must be an object',
      )
      return
    }
    if (typeof entry.url !== 'string' || !isHttpUrl(entry.url)) {
      const got = `(got ${JSON.stringify(entry.url)})`
      issues.error(
        `${at}.url`,
        `must be an absolute http(s) URL ${got}`,
        'set it to the address clients reach',
        `\`url\` must be an absolute http(s) URL ${got}`,
      )
    }
    if (!isNonEmptyString(entry.protocolBinding)) {
      const hint = 'name the binding served at that url, e.g. "JSONRPC"'
      issues.error(
        `${at}.protocolBinding`,
        'must be a non-empty string',
        hint,
        '`protocolBinding` must be a non-empty string',
      )
    }
    const versionHint = 'set the A2A version served at that url, e.g. "1.0"'
    if (entry.protocolVersion === undefined)
      issues.warning(`${at}.protocolVersion`, 'the interface names no `protocolVersion`', versionHint)
    else if (!isNonEmptyString(entry.protocolVersion))
      issues.error(
        `${at}.protocolVersion`,
        'must be a non-empty string',
        versionHint,
        '`protocolVersion` must be a non-empty string',
      )
  })
}

function checkVersion(card: Card, issues: Issues): void {
  if (typeof card.version === 'string' && DOTTED_VERSION.test(card.version)) return
  const got = `(got ${JSON.stringify(card.version)})`
  issues.error(
    'version',
    `must be a dotted version like 1.0.0 ${got}`,
    'set card.version, e.g. "1.0.0"',
    `\`version\` must be a dotted version such as 1.0.0 ${got}`,
  )
}

function checkCapabilities(card: Card, issues: Issues): void {
  if (!isObject(card.capabilities)) {
    issues.error('capabilities', 'must be an object', 'set card.capabilities, e.g. { streaming: true }')
    return
  }
  for (const key of ['streaming', 'pushNotifications'] as const) {
    const value = card.capabilities[key]
    if (value !== undefined && typeof value !== 'boolean')
      issues.error(`capabilities.${key}`, 'must be a boolean', 'set it to true or false')
  }
}

function checkModes(card: Card, issues: Issues): void {
  for (const field of ['defaultInputModes', 'defaultOutputModes'] as const) {
    const modes = card[field]
    if (!Array.isArray(modes)) {
      issues.error(field, 'must be an array of media types', `set card.${field}, e.g. ["text/plain"]`)
      continue
    }
    if (modes.length === 0)
      issues.warning(field, `\`${field}\` is empty`, 'list at least one media type, e.g. "text/plain"')
    modes.forEach((mode, i) => {
      if (typeof mode === 'string' && MEDIA_TYPE.test(mode)) return
      const shown = JSON.stringify(mode)
      const hint = 'use type/subtype, e.g. "text/plain" or "application/json"'
      issues.error(
        `${field}[${i}]`,
        `must be a media type such as text/plain (got ${shown})`,
        hint,
        `${shown} is not a media type`,
      )
    })
  }
}

function checkSkills(card: Card, issues: Issues): void {
  if (!Array.isArray(card.skills)) {
    issues.error('skills', 'must be an array', "declare the agent's skills")
    return
  }
  if (card.skills.length === 0)
    issues.warning('skills', 'the card declares no skills', 'add at least one skill so clients know what to ask')
  const seen = new Map<string, number>()
  for (const [i, skill] of card.skills.entries()) {
    const at = `skills[${i}]`
    if (!isObject(skill)) {
      issues.error(
        at,
        'must be an object',
        'give it id, name, description, tags and examples',
        'a skill must be an object',
      )
      continue
    }
    if (typeof skill.id !== 'string' || !skill.id)
      issues.error(
        `${at}.id`,
        'must be a non-empty string',
        'give the skill an id',
        'the skill id must be a non-empty string',
      )
    else if (seen.has(skill.id)) {
      const id = JSON.stringify(skill.id)
      issues.error(
        `${at}.id`,
        `repeats the id ${id}; skill ids must be unique`,
        'give every skill its own id',
        `the id ${id} repeats skills[${seen.get(skill.id)}]`,
      )
    } else seen.set(skill.id, i)
    for (const field of ['name', 'description'] as const) {
      if (!isNonEmptyString(skill[field]))
        issues.error(
          `${at}.${field}`,
          'must be a non-empty string',
          `set ${at}.${field}`,
          `the skill ${field} must be a non-empty string`,
        )
    }
    for (const field of ['tags', 'examples'] as const) {
      const list = skill[field]
      if (list === undefined && field === 'examples')
        issues.warning(
          `${at}.examples`,
          'the skill has no examples',
          'add a request or two people would send, e.g. "Weather in Oslo?"',
        )
      else if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
        issues.error(
          `${at}.${field}`,
          'must be an array of strings',
          `set ${at}.${field}`,
          `\`${field}\` must be an array of strings`,
        )
      else if (list.length === 0)
        issues.warning(
          `${at}.${field}`,
          `the skill has no ${field}`,
          field === 'tags' ? 'add keywords clients can match' : 'add a request or two people would send',
        )
    }
  }
}

/**
 * The authenticated extended card (as `defineAgent` takes it; a served card never carries it): skills of their own,
 * ids unique among the public ones too, and only for an agent whose callers authenticate.
 */
function checkExtendedCard(card: Card, issues: Issues): void {
  const extended = card.extendedCard
  if (extended === undefined) return
  if (!isObject(extended) || !Array.isArray(extended.skills) || extended.skills.length === 0) {
    issues.error('extendedCard.skills', 'must be a non-empty array of skills', 'list the skills only callers see')
    return
  }
  if (card.authentication === undefined)
    issues.error(
      'extendedCard',
      'needs authentication: only authenticated callers get the extended card',
      'declare authentication.schemes',
    )
  if (extended.description !== undefined && !isNonEmptyString(extended.description))
    issues.error('extendedCard.description', 'must be a non-empty string', 'give it a description or leave it out')
  // The public skills first, so a repeated id is reported where the extended card repeats it.
  const publicSkills = Array.isArray(card.skills) ? card.skills.length : 0
  const combined = new Issues()
  checkSkills({ skills: [...(Array.isArray(card.skills) ? card.skills : []), ...extended.skills] }, combined)
  for (const issue of combined.list) {
    const index = /^skills\[(\d+)\]/.exec(issue.path)
    if (!index || Number(index[1]) < publicSkills) continue
    const path = issue.path.replace(/^skills\[\d+\]/, `extendedCard.skills[${Number(index[1]) - publicSkills}]`)
    if (issue.level === 'error') issues.error(path, issue.refusal, issue.hint)
    else issues.warning(path, issue.message.replaceAll(issue.path, path), issue.hint)
  }
}

function checkAuthentication(card: Card, issues: Issues): void {
  if (card.authentication === undefined) return
  const schemes = isObject(card.authentication) ? card.authentication.schemes : undefined
  const hint = `use ${KNOWN_AUTH_SCHEMES.slice(0, -1).join(', ')} or ${KNOWN_AUTH_SCHEMES.at(-1)}`
  if (!Array.isArray(schemes) || schemes.length === 0) {
    issues.error('authentication.schemes', 'must be a non-empty array', hint)
    return
  }
  schemes.forEach((scheme, i) => {
    if ((KNOWN_AUTH_SCHEMES as readonly unknown[]).includes(scheme)) return
    const named = JSON.stringify(scheme)
    const refusal = `names ${named}, which the runtime does not validate (known: ${KNOWN_AUTH_SCHEMES.join(', ')})`
    issues.error(`authentication.schemes[${i}]`, refusal, hint, `${named} is not a scheme the runtime validates`)
  })
}
