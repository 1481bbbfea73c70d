import { ConfigurationError } from '../errors.js'
import type { AgentCard, AgentCardInput, AuthScheme } from '../types.js'

export const KNOWN_AUTH_SCHEMES: readonly AuthScheme[] = ['bearer', 'apiKey']

/** The card without its address: everything the runtime can settle when the agent is defined. */
export type CardTemplate = Omit<AgentCard, 'url' | 'supportedInterfaces'>

const DOTTED_VERSION = /^\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$/

/** Fills defaults and rejects a card the runtime could not honour, naming the field. */
export function normalizeCard(input: AgentCardInput): CardTemplate {
  const fail = (field: string, problem: string): never => {
    throw new ConfigurationError(`Agent card: \`${field}\` ${problem}`)
  }
  if (typeof input.name !== 'string' || !input.name.trim()) fail('name', 'must be a non-empty string')
  if (typeof input.description !== 'string') fail('description', 'must be a string')
  const version = input.version ?? '1.0.0'
  if (typeof version !== 'string' || !DOTTED_VERSION.test(version)) fail('version', `must be a dotted version like 1.0.0 (got ${JSON.stringify(version)})`)

  const capabilities = { streaming: input.capabilities?.streaming ?? true, pushNotifications: input.capabilities?.pushNotifications ?? false }
  for (const [key, value] of Object.entries(capabilities)) {
    if (typeof value !== 'boolean') fail(`capabilities.${key}`, 'must be a boolean')
  }

  const skills = input.skills ?? []
  if (!Array.isArray(skills)) fail('skills', 'must be an array')
  const seen = new Set<string>()
  skills.forEach((skill, i) => {
    if (typeof skill?.id !== 'string' || !skill.id) fail(`skills[${i}].id`, 'must be a non-empty string')
    if (seen.has(skill.id)) fail(`skills[${i}].id`, `repeats the id ${JSON.stringify(skill.id)}; skill ids must be unique`)
    seen.add(skill.id)
    if (typeof skill.name !== 'string') fail(`skills[${i}].name`, 'must be a string')
    if (typeof skill.description !== 'string') fail(`skills[${i}].description`, 'must be a string')
    if (!Array.isArray(skill.tags)) fail(`skills[${i}].tags`, 'must be an array of strings')
    if (skill.examples !== undefined && !Array.isArray(skill.examples)) fail(`skills[${i}].examples`, 'must be an array of strings')
  })

  const card: CardTemplate = {
    name: input.name,
    description: input.description,
    version,
    capabilities,
    defaultInputModes: input.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: input.defaultOutputModes ?? ['text/plain'],
    skills,
  }
  if (input.authentication !== undefined) {
    const schemes = input.authentication?.schemes
    if (!Array.isArray(schemes) || schemes.length === 0) fail('authentication.schemes', 'must be a non-empty array')
    for (const scheme of schemes) {
      if (!KNOWN_AUTH_SCHEMES.includes(scheme)) {
        fail('authentication.schemes', `names ${JSON.stringify(scheme)}, which the runtime does not validate (known: ${KNOWN_AUTH_SCHEMES.join(', ')})`)
      }
    }
    card.authentication = { schemes: [...schemes] }
  }
  if (input.provider) card.provider = input.provider
  if (input.documentationUrl) card.documentationUrl = input.documentationUrl
  if (input.iconUrl) card.iconUrl = input.iconUrl
  return card
}

/** The card as served at one address. */
export function cardAt(template: CardTemplate, url: string): AgentCard {
  const { name, description, ...rest } = template
  // Name, description and address first: the order people read a card in.
  return { name, description, url, supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', transport: 'JSONRPC' }], ...rest }
}
