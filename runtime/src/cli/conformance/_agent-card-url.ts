import { isLoopbackHost } from '../_loopback.js'

/** An agent reference that names no running agent: a usage error. */
export class NotAnAgent extends Error {}

const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d+)?(\/.*)?$/i
const CARD_PATH = '.well-known/agent-card.json'

/**
 * The card URL of an agent given as `--agent-card` takes it: a full card URL as is (a path ending in `.json`); an
 * origin or an agent's base URL → its `/.well-known/agent-card.json`; a bare host (`localhost:3000`) the same, over
 * http on this machine and https elsewhere. A file is no running agent, so it is refused.
 */
export function cardUrlOf(reference: string): string {
  let text = reference.trim()
  if (/^file:/i.test(text))
    throw new NotAnAgent(`${reference} is a file: conformance checks a running agent (give its URL)`)
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const host = HOST.exec(text)?.[1]
    if (!host || /^\.{0,2}\//.test(text))
      throw new NotAnAgent(`${JSON.stringify(reference)} is not an agent's URL or host (e.g. http://localhost:3000/)`)
    text = `${isLoopbackHost(host.replace(/^\[|\]$/g, '')) || host === 'localhost' ? 'http' : 'https'}://${text}`
  }
  if (!URL.canParse(text)) throw new NotAnAgent(`${JSON.stringify(reference)} is not a URL`)
  const url = new URL(text)
  if (!/^https?:$/.test(url.protocol)) throw new NotAnAgent(`${reference} is not an http(s) URL`)
  if (url.pathname.endsWith('.json')) return url.href
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return new URL(CARD_PATH, url).href
}
