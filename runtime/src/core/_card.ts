import { isObject } from '../_is-object.js'
import { ConfigurationError } from '../errors.js'
import type { AgentCard, AgentCardInput } from '../types.js'
import { type CardError, cardIssues } from './_card-rules.js'

/**
 * The card without its address: everything the runtime can settle when the agent is defined, and the discovery
 * URL of the OpenID Connect issuer, which the A2A cards declare with the `oidc` scheme (the server knows it).
 */
export type CardTemplate = Omit<AgentCard, 'url' | 'supportedInterfaces'> & { openIdConnectUrl?: string }

/**
 * Fills defaults, then refuses a card that breaks one of the card rules (`_card-rules.ts`, which `a2a card
 * validate` reads too), naming the field.
 */
export function normalizeCard(input: AgentCardInput): CardTemplate {
  // Only what is left out gets its default: a value of the wrong type stays, for the rules to name it.
  const capabilities: unknown = input.capabilities
  const card = {
    name: input.name,
    description: input.description,
    version: input.version ?? '1.0.0',
    capabilities: isObject(capabilities)
      ? { streaming: capabilities.streaming ?? true, pushNotifications: capabilities.pushNotifications ?? false }
      : (capabilities ?? { streaming: true, pushNotifications: false }),
    defaultInputModes: input.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: input.defaultOutputModes ?? ['text/plain'],
    skills: input.skills ?? [],
  } as CardTemplate
  if (input.authentication !== undefined) card.authentication = input.authentication
  if (input.extendedCard !== undefined) card.extendedCard = input.extendedCard
  const refused = cardIssues(card, 'defined').find((issue): issue is CardError => issue.level === 'error')
  if (refused) throw new ConfigurationError(`Agent card: \`${refused.path}\` ${refused.refusal}`)
  if (card.authentication) card.authentication = { schemes: [...card.authentication.schemes] }
  if (input.provider) card.provider = input.provider
  if (input.documentationUrl) card.documentationUrl = input.documentationUrl
  if (input.iconUrl) card.iconUrl = input.iconUrl
  if (input.extendedCard) {
    const { skills, description } = input.extendedCard
    card.extendedCard = { skills: [...skills], ...(description !== undefined && { description }) }
  }
  return card
}

/** The card as served at one address. */
export function cardAt(template: CardTemplate, url: string): AgentCard {
  const { name, description, openIdConnectUrl: _inTheA2ACardsOnly, extendedCard: _forCallersOnly, ...rest } = template
  // Name, description and address first: the order people read a card in.
  return {
    name,
    description,
    url,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', transport: 'JSONRPC' }],
    ...rest,
  }
}
