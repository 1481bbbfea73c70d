import { type AddressInfo, connect, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a Redis, that can cut the connections a client listens on (those that sent
 * a SUBSCRIBE) and hold back the next SUBSCRIBE one of them sends: Redis gets it only when the test releases it,
 * or never. Everything else passes through as it came, in order.
 */
export interface SubscribeProxy {
  /** A redis:// URL that reaches Redis through the proxy. */
  url: string
  /** Closes every connection that has sent a SUBSCRIBE (the client sees Redis drop them). */
  cutListeners(): void
  /** Holds back the next SUBSCRIBE sent, with what follows it on its connection; resolves once one is held. */
  holdNextSubscribe(): Promise<void>
  /** Sends on what was held back. */
  release(): void
  close(): Promise<void>
}

/** A SUBSCRIBE command in Redis's protocol (RESP): an array whose first element is the bulk string "subscribe". */
const SUBSCRIBE = /\*\d+\r\n\$9\r\nsubscribe\r\n/i

export async function startSubscribeProxy(redisPort: number): Promise<SubscribeProxy> {
  const listeners = new Set<Socket>()
  const sockets = new Set<Socket>()
  let arm: (() => void) | undefined
  let released: Promise<void> = Promise.resolve()
  let release = () => {}
  const server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1')
    sockets.add(client).add(upstream)
    // Chunks from the client go on in order, each after the one before (a held one holds the rest).
    let sent: Promise<void> = Promise.resolve()
    client.on('data', (chunk: Buffer) => {
      if (SUBSCRIBE.test(chunk.toString('latin1'))) {
        listeners.add(client)
        if (arm) {
          const held = released
          sent = sent.then(() => held)
          arm()
          arm = undefined
        }
      }
      sent = sent.then(() => void upstream.write(chunk))
    })
    upstream.on('data', (chunk: Buffer) => client.write(chunk))
    const end = () => {
      client.destroy()
      upstream.destroy()
      listeners.delete(client)
      sockets.delete(client)
      sockets.delete(upstream)
    }
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `redis://127.0.0.1:${port}`,
    cutListeners: () => {
      for (const socket of listeners) socket.destroy()
    },
    holdNextSubscribe: () => {
      released = new Promise((resolve) => (release = resolve))
      return new Promise((resolve) => (arm = resolve))
    },
    release: () => release(),
    close: async () => {
      release()
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
