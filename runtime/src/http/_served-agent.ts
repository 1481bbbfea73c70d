import type { Agent } from '../agent.js'
import { type Addresses, type CardDialect, renderCard, renderExtendedCard } from '../bindings/_cards.js'
import { InputModes } from '../bindings/shared/_input-modes.js'
import { type CardTemplate, normalizeCard } from '../core/_card.js'
import type { Logger } from '../logger.js'
import type { PushService } from '../push/_service.js'
import type { Env } from '../settings.js'
import { type AuthCheck, createAuthCheck } from './_auth.js'
import { type CachedCard, cacheableCard } from './_card-response.js'
import type { CardSigner } from './_card-signing.js'
import { readOidcConfig } from './_oidc.js'
import { discoveryUrl } from './_oidc-keys.js'
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
  /** The challenge a refused request gets (`WWW-Authenticate: Bearer`), when the card declares bearer tokens or JWTs. */
  readonly wwwAuthenticate: Record<string, string> | undefined
  readonly push: PushService | undefined
  /** Each card once per dialect and address; a signed one is a promise until its signature is made. */
  readonly #cards = new Map<string, CachedCard | Promise<CachedCard>>()

  /**
   * `pushFor` gives the app's push service when the card declares push notifications; `addresses` where each binding
   * is served for a base address of the agent.
   */
  constructor(
    readonly agent: Agent,
    auth: AuthSettings,
    pushFor: (declared: boolean) => PushService | undefined,
    private readonly addresses: (url: string) => Addresses,
  ) {
    const template = normalizeCard(agent.card)
    const schemes = template.authentication?.schemes ?? []
    if (schemes.includes('oidc')) template.openIdConnectUrl = openIdConnectUrl(auth)
    this.template = template
    this.push = pushFor(template.capabilities.pushNotifications)
    this.inputModes = InputModes.of(template)
    this.authCheck = createAuthCheck(template.authentication?.schemes, auth.options, auth.logger, auth.env)
    this.streaming = template.capabilities.streaming
    this.wwwAuthenticate = schemes.includes('bearer') || schemes.includes('oidc') ? BEARER_CHALLENGE : undefined
  }

  /**
   * The card in one dialect at one address, serialised once with its ETag. With a signer the A2A shapes are signed
   * once too (the platform's card has no signatures in its spec): the first request waits for the signature, the
   * ones after it get the same bytes at once.
   */
  card(dialect: CardDialect, url: string, signer?: CardSigner): CachedCard | Promise<CachedCard> {
    const key = `${dialect} ${url}`
    let card = this.#cards.get(key)
    if (card === undefined) {
      const rendered = renderCard(dialect, this.template, this.addresses(url))
      card =
        signer && dialect !== 'platform'
          ? this.#signed(key, rendered as Record<string, unknown>, dialect === 'a2a-1.0', signer)
          : cacheableCard(rendered, dialect !== 'platform')
      if (this.#cards.size >= MAX_CACHED_CARDS) this.#cards.clear()
      this.#cards.set(key, card)
    }
    return card
  }

  /** The authenticated extended card (the agent declares one) in an A2A dialect, at one address. */
  extendedCard(dialect: 'a2a-1.0' | 'a2a-0.3', url: string): object {
    return renderExtendedCard(dialect, this.template, this.addresses(url))
  }

  /** Renders the cards again on their next request: the bindings served, or their addresses, have changed. */
  forgetCards(): void {
    this.#cards.clear()
  }

  /** Signs the card; once signed it replaces its promise in the cache, and a failure is not kept. */
  #signed(key: string, card: Record<string, unknown>, v1: boolean, signer: CardSigner): Promise<CachedCard> {
    const signing: Promise<CachedCard> = signer.sign(card, v1 ? 'a2a-1.0-fields' : 'whole').then(
      (signed) => {
        const cached = cacheableCard(signed, true)
        if (this.#cards.get(key) === signing) this.#cards.set(key, cached)
        return cached
      },
      (error: unknown) => {
        if (this.#cards.get(key) === signing) this.#cards.delete(key)
        throw error
      },
    )
    return signing
  }
}

/** Where the card says the issuer describes itself (`createAuthCheck` has refused a declared `oidc` without one). */
function openIdConnectUrl(auth: AuthSettings): string | undefined {
  const issuer = readOidcConfig(auth.options?.oidc, auth.env)?.issuer
  return issuer && discoveryUrl(issuer).href
}
