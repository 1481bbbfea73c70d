import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { cardReference } from '../../client/_card.js'
import { cardPath } from '../../client/_card-file.js'
import { A2AClientFailure } from '../../client/errors.js'
import { readCardFile, readCardResponse } from '../_card-source.js'
import { chooseAgent } from '../_local-agent.js'
import { configuredValue } from '../config/_resolve.js'
import { AuthError } from './_auth-error.js'

/**
 * The agent's card for `a2a auth`, fetched without credentials (login is how credentials are obtained). A small
 * stand-in for the client core's card fetch (its `loadCard` wants the card of a v1.0 agent: a login needs only the
 * security schemes), reading references as the client core does.
 */
export interface ResolvedCard {
  /** Where the card was read (`new URL` form): the key its tokens are stored under. */
  url: string
  card: Record<string, unknown>
}

const CARD_PATH = '.well-known/agent-card.json'

/**
 * The card URL a reference names, read as the client core reads it (`cardReference`): so a later command finds the
 * tokens stored for the same reference. None → A2ACLI_AGENT_CARD → this project's agent (`chooseAgent`); a file
 * → its `file:` URL.
 */
export async function cardUrlOf(reference: string | undefined, cwd: string): Promise<URL> {
  const given = (reference ?? configuredValue('A2ACLI_AGENT_CARD'))?.trim()
  if (!given) return new URL(CARD_PATH, (await chooseAgent(cwd, undefined)).base)
  try {
    const named = cardReference(given)
    return 'url' in named ? new URL(named.url) : pathToFileURL(resolve(cwd, cardPath(named.file)))
  } catch (error) {
    if (!(error instanceof A2AClientFailure)) throw error
    throw new AuthError('A2ACLI_ERR_USAGE', error.message, 'give --agent-card a host, a card URL or a card file')
  }
}

export async function fetchCard(url: URL): Promise<ResolvedCard> {
  const read = url.protocol === 'file:' ? readFile(url) : await readRemote(url)
  if ('finding' in read)
    throw new AuthError(
      'A2ACLI_ERR_CARD_INVALID',
      `The card at ${url.href}: ${read.finding.message}`,
      read.finding.hint,
    )
  if (typeof read.card !== 'object' || read.card === null || Array.isArray(read.card))
    throw new AuthError('A2ACLI_ERR_CARD_INVALID', `The card at ${url.href} is not a JSON object`)
  return { url: url.href, card: read.card as Record<string, unknown> }
}

function readFile(url: URL): ReturnType<typeof readCardFile> {
  const path = fileURLToPath(url)
  try {
    return readCardFile(path)
  } catch (error) {
    throw new AuthError(
      'A2ACLI_ERR_CARD_NOT_FOUND',
      `Cannot read the card ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
}

async function readRemote(url: URL): ReturnType<typeof readCardResponse> {
  let response: Response
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message
    throw new AuthError('A2ACLI_ERR_UNREACHABLE', `Cannot reach ${url.href}: ${cause}`, 'is the agent running there?')
  }
  if (!response.ok) {
    await response.body?.cancel()
    throw new AuthError(
      'A2ACLI_ERR_CARD_NOT_FOUND',
      `No agent card at ${url.href} (HTTP ${response.status})`,
      'pass the agent with --agent-card <url of its card, or its origin>',
    )
  }
  return readCardResponse(response)
}
