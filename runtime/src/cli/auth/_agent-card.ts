import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cardReference } from '../../client/_card.js'
import { cardPath } from '../../client/_card-file.js'
import { connect } from '../../client/client.js'
import type { AgentCard } from '../../client/types.js'
import { chooseAgent } from '../_local-agent.js'

/**
 * The card URL a reference names, read as the client core reads it (`cardReference`), with the same default as the
 * other commands (this project's agent, `chooseAgent`): so a later command finds the tokens stored for the same
 * reference. A file → its `file:` URL.
 */
export async function cardUrlOf(reference: string | undefined, cwd: string): Promise<URL> {
  const named = cardReference(reference?.trim() || (await chooseAgent(cwd, undefined)).base.href)
  return 'url' in named ? new URL(named.url) : pathToFileURL(resolve(cwd, cardPath(named.file)))
}

/**
 * The agent's card, read by the client core as every command reads it (without credentials: login is how they are
 * obtained). A card no command could speak to is refused here too: a token for it would never be used.
 */
export async function fetchCard(cardUrl: URL): Promise<AgentCard> {
  return (await connect({ agentCard: cardUrl.href })).card
}
