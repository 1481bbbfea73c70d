import type { Agent } from '../agent.js'
import { type CardDialect, renderCard } from '../bindings/_cards.js'
import { InputModes } from '../bindings/shared/_input-modes.js'
import { type CardTemplate, normalizeCard } from '../core/_card.js'
import type { Logger } from '../logger.js'
import type { PushService } from '../push/_service.js'
import type { Env } from '../settings.js'
import { type AuthCheck, createAuthCheck } from './_auth.js'
import { type CachedCard, cacheableCard } from './_card-response.js'
import type { AuthOptions } from './auth-options.js'

// The card is public; a cache keyed by the requested origin must not grow with hostile Host headers.
const MAX_CACHED_CARDS = 16
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer' }

/** How the app checks credentials: the options and environment `createAuthCheck` reads. */
export interface AuthSettings {
  options: AuthOptions | undefined
  logger: Logger
  env: Env
}

/**
 * Everything that follows from the agent's card, settled once per agent (and again when `a2a dev` reloads it):
 * the card's normalised template and its rendered copies, the input modes, the credential check, streaming and
 * push notifications.
 */
export class ServedAgent {
  readonly template: CardTemplate
  readonly inputModes: InputModes
  readonly authCheck: AuthCheck | undefined
  readonly streaming: boolean
  /** The challenge a refused request gets (`WWW-Authenticate: Bearer`), when the card declares bearer tokens. */
  readonly wwwAuthenticate: Record<string, string> | undefined
  readonly push: PushService | undefined
  readonly #cards = new Map<string, CachedCard>()

  /** `pushFor` gives the app's push service when the card declares push notifications. */
  constructor(
    readonly agent: Agent,
    auth: AuthSettings,
    pushFor: (declared: boolean) => PushService | undefined,
  ) {
    const template = normalizeCard(agent.card)
    this.template = template
    this.push = pushFor(template.capabilities.pushNotifications)
    this.inputModes = InputModes.of(template)
    this.authCheck = createAuthCheck(template.authentication?.schemes, auth.options, auth.logger, auth.env)
    this.streaming = template.capabilities.streaming
    this.wwwAuthenticate = template.authentication?.schemes.includes('bearer') ? BEARER_CHALLENGE : undefined
  }

  /** The card in one dialect at one address, serialised once with its ETag. */
  card(dialect: CardDialect, url: string): CachedCard {
    const key = `${dialect} ${url}`
    let card = this.#cards.get(key)
    if (card === undefined) {
      card = cacheableCard(renderCard(dialect, this.template, url), dialect !== 'platform')
      if (this.#cards.size >= MAX_CACHED_CARDS) this.#cards.clear()
      this.#cards.set(key, card)
    }
    return card
  }
}
