import { homedir } from 'node:os'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { readCardFile, readCardResponse } from '../_card-source.js'
import { chooseAgent } from '../_local-agent.js'
import { isLoopbackHost } from '../_loopback.js'
import { AuthError } from './_auth-error.js'

/**
 * The agent's card for `a2a auth`, fetched without credentials (login is how credentials are obtained). A small
 * stand-in for the client core's card resolution, to be replaced by it: the same references, the same key.
 */
export interface ResolvedCard {
  /** Where the card was read (`new URL` form): the key its tokens are stored under. */
  url: string
  card: Record<string, unknown>
}

const CARD_PATH = '.well-known/agent-card.json'

/**
 * The card URL a reference names, as the client core reads references: none → A2ACLI_AGENT_CARD → this project's
 * agent (`chooseAgent`); a bare host or an origin → its `/.well-known/agent-card.json` (a path ending in `/` is a
 * base: the well-known path under it); any other URL → as is; a path (`./`, `/`, `~`, or a bare `*.json`) or a
 * `file:` URL → that file.
 */
export async function cardUrlOf(reference: string | undefined, cwd: string): Promise<URL> {
  const given = (reference ?? process.env.A2ACLI_AGENT_CARD)?.trim()
  if (!given) return new URL(CARD_PATH, (await chooseAgent(cwd, undefined)).base)
  if (/^file:/i.test(given)) return parse(given)
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(given)?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
    throw usage(`--agent-card ${given} is neither an http(s) URL, a file nor a host`)
  if (scheme === undefined && (/^[./~]/.test(given) || /^[^/]+\.json$/i.test(given)))
    return pathToFileURL(resolve(cwd, given.replace(/^~(?=\/|$)/, homedir())))
  // A bare host (`agent.example.com`, `localhost:3000`) is reached over https, except this machine's.
  const url = scheme ? parse(given) : parse(`http://${given}`)
  if (!scheme && !isLoopbackHost(url.hostname)) url.protocol = 'https:'
  if (url.pathname.endsWith('/')) url.pathname += CARD_PATH
  return url
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

function parse(text: string): URL {
  try {
    return new URL(text)
  } catch {
    throw usage(`--agent-card ${text} is not a URL`)
  }
}

const usage = (message: string) =>
  new AuthError('A2ACLI_ERR_USAGE', message, 'give the agent as a URL, a host, or a card file')
