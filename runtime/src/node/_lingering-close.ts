import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** How long a refused request's connection keeps taking what the client still sends, after the answer went out. */
const LINGER_MS = 2000

/**
 * A lingering close for answers given before the request's body was read (a body over the limit: 413 and
 * `Connection: close`). Node ends such a connection as soon as the answer is written, while the client is still
 * sending: the kernel answers the bytes that keep coming with a reset, and a reset makes the client's kernel drop
 * what it received and not yet read, the answer included (a client on a busy machine that reads while it sends
 * then sees EPIPE instead of the 413). So the connection stays half-open a moment: the answer is sent and the
 * writing side closed (FIN), what still comes is read and dropped (Node's parser discards the rest of the body),
 * and the connection closes when the client closes its side or after `LINGER_MS`.
 */
export function lingerAfterEarlyAnswers(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // Taken now: once the answer is written, Node detaches it from the request and the response.
    const socket = request.socket as Socket
    response.once('finish', () => {
      if (request.complete) return
      // Node's own close (`destroySoon`) is waiting for the written answer to flush, then destroys the socket.
      if (socket.destroyed || socket.listeners('finish').every((listener) => listener !== socket.destroy)) return
      socket.removeListener('finish', socket.destroy)
      const timer = setTimeout(() => socket.destroy(), LINGER_MS)
      timer.unref()
      socket.once('end', () => socket.destroy())
      socket.once('close', () => clearTimeout(timer))
    })
  })
}
