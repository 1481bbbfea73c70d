import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { type Env, type Variable, wholeNumberSetting } from '../settings.js'

/**
 * Most connections at once. Each holds a file descriptor and a few KiB. Node raises its open-file limit to the
 * system's hard limit when it starts (524,288 under systemd, 1,048,576 in most containers; 4,096 on some older
 * systems, where the two meet), so 4,096 leaves the store, logs and webhooks their descriptors on common systems
 * while being far more connections than one agent serves at once.
 */
const DEFAULT_MAX_CONNECTIONS = 4096
/**
 * Most connections at once from one client address, by default: half of `maxConnections`, so one address never
 * takes them all, while one busy client (a gateway holding 1,000 SSE streams, an office behind one NAT address, a
 * proxy) has room to spare.
 */
const defaultPerAddress = (maxConnections: number): number => Math.max(1, Math.floor(maxConnections / 2))

const REFUSED_TEXT = 'Too many connections from this address; retry shortly\n'
/** What a connection past the per-address cap gets before it is closed: no request of it is read. */
const REFUSED = `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: ${REFUSED_TEXT.length}\r\n\r\n${REFUSED_TEXT}`

export interface ConnectionCapOptions {
  maxConnections?: number
  maxConnectionsPerAddress?: number
}

export interface ConnectionCaps {
  maxConnections: number
  /** 0: no per-address cap. */
  maxConnectionsPerAddress: number
}

/** The caps from the options, else the environment, else the defaults; a bad one names itself and its value. */
export function readConnectionCaps(options: ConnectionCapOptions, env: Env): ConnectionCaps {
  const read = (option: keyof ConnectionCapOptions, variable: Variable, fallback: number, min: number): number =>
    wholeNumberSetting({
      option,
      variable,
      given: options[option],
      env,
      fallback,
      min,
      ...(min === 0 && { note: '0: no cap' }),
    })
  const maxConnections = read('maxConnections', 'A2A_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 1)
  return {
    maxConnections,
    maxConnectionsPerAddress: read(
      'maxConnectionsPerAddress',
      'A2A_MAX_CONNECTIONS_PER_ADDRESS',
      defaultPerAddress(maxConnections),
      0,
    ),
  }
}

/**
 * Caps a server's connections, before or after it listens. Past `maxConnections` Node closes a new connection as
 * it accepts it. Past `maxConnectionsPerAddress` from one address a new connection gets a short 503 and is closed
 * at once: it never reaches the HTTP parser, so none of its requests is read.
 */
export function applyConnectionCaps(server: Server, caps: ConnectionCaps): void {
  server.maxConnections = caps.maxConnections
  if (caps.maxConnectionsPerAddress > 0) capPerAddress(server, caps.maxConnectionsPerAddress)
}

function capPerAddress(server: Server, cap: number): void {
  const open = new Map<string, number>()
  // First among the listeners, so a refused socket is not counted by any other.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    // Gone before it was seen: nothing to count.
    if (address === undefined) return
    const count = open.get(address) ?? 0
    if (count >= cap) {
      socket.on('error', () => {})
      // Written at once (the socket is new and empty) and closed on the next tick, before the event loop reads
      // anything from it: Node's HTTP parser, attached after this listener, never sees a request.
      socket.write(REFUSED)
      socket.destroySoon()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = open.get(address)! - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
