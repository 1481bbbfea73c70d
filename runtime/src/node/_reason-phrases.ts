import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  ServerResponse,
  STATUS_CODES,
} from 'node:http'

/**
 * The runtime's answers are web Responses, which h3 writes to Node with their `statusText` as the reason phrase;
 * theirs is empty, and Node sends what it is given (`HTTP/1.1 401 `). Clients and proxies print the phrase, some
 * nothing else: an empty one becomes the standard phrase (`401 Unauthorized`); a phrase given stays.
 */

type WriteHead = (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse

const writeHead = ServerResponse.prototype.writeHead as WriteHead

const writeHeadWithPhrase: WriteHead = function (statusCode, ...rest) {
  if (rest[0] === '') rest[0] = STATUS_CODES[statusCode] ?? ''
  return writeHead.call(this, statusCode, ...rest)
}

/** A response that writes the standard phrase for an empty one. */
class PhrasedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
PhrasedResponse.prototype.writeHead = writeHeadWithPhrase as ServerResponse['writeHead']

/** Servers made by `createPhrasedServer`, whose responses need nothing more. */
const phrased = new WeakSet<Server>()

/** A node:http server whose responses carry reason phrases, at no cost per request (`serveAgent`). */
export function createPhrasedServer(handler: RequestListener): Server {
  const server = createServer({ ServerResponse: PhrasedResponse }, handler)
  phrased.add(server)
  return server
}

const givePhrase = (_request: IncomingMessage, response: ServerResponse): void => {
  response.writeHead = writeHeadWithPhrase as ServerResponse['writeHead']
}

/**
 * Reason phrases for a server made elsewhere (`a2a dev`'s, by listhen): first among its request listeners, so
 * before any answers.
 */
export function giveReasonPhrases(server: Server): void {
  if (!phrased.has(server)) server.prependListener('request', givePhrase)
}
