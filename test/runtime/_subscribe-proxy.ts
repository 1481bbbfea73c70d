import { type AddressInfo, connect, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a Redis, that can cut the connections a client listens on (those that sent
 * a SUBSCRIBE) and hold back the next SUBSCRIBE one of them sends: Redis gets it only when the test releases it,
 * or never. Everything else passes through as it came, in order.
 */
export interface SubscribeProxy {
  /** A redis:// URL that reaches Redis through the proxy. */
  url: string
  /**
   * Closes every connection that has sent a SUBSCRIBE (the client sees Redis drop them), and holds back the next
   * SUBSCRIBE sent (the client's, on the connection it makes again), with what follows it on its connection;
   * resolves once it is held. With `joinReplies`, Redis's answers on that connection are held too, until a
   * published message comes: then they go to the client with it, in one write (as a busy connection delivers them,
   * in one read).
   */
  cutListenersAndHoldResubscribe(options?: { joinReplies?: boolean }): Promise<void>
  /** Sends on what was held back. */
  release(): void
  close(): Promise<void>
}

/** A SUBSCRIBE command in Redis's protocol (RESP): an array whose first element is the bulk string "subscribe". */
const SUBSCRIBE = /\*\d+\r\n\$9\r\nsubscribe\r\n/i
/** A message published on a channel, as Redis pushes it to a subscriber. */
const MESSAGE = /\*3\r\n\$7\r\nmessage\r\n/

export async function startSubscribeProxy(redisPort: number): Promise<SubscribeProxy> {
  const listeners = new Set<Socket>()
  const sockets = new Set<Socket>()
  let arm: (() => void) | undefined
  let joining = false
  let released: Promise<void> = Promise.resolve()
  let release = () => {}
  const server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1')
    sockets.add(client).add(upstream)
    // Chunks from the client go on in order, each after the one before (a held one holds the rest).
    let sent: Promise<void> = Promise.resolve()
    // Redis's answers held back to be joined with the next message (`joinReplies`), or undefined.
    let replies: Buffer[] | undefined
    client.on('data', (chunk: Buffer) => {
      if (SUBSCRIBE.test(chunk.toString('latin1'))) {
        listeners.add(client)
        if (arm) {
          const held = released
          sent = sent.then(() => held)
          if (joining) replies = []
          arm()
          arm = undefined
        }
      }
      sent = sent.then(() => void upstream.write(chunk))
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!replies) return void client.write(chunk)
      replies.push(chunk)
      if (!MESSAGE.test(chunk.toString('latin1'))) return
      client.write(Buffer.concat(replies))
      replies = undefined
    })
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
    cutListenersAndHoldResubscribe: ({ joinReplies = false } = {}) => {
      released = new Promise((resolve) => (release = resolve))
      joining = joinReplies
      const held = new Promise<void>((resolve) => (arm = resolve))
      for (const socket of listeners) socket.destroy()
      return held
    },
    release: () => release(),
    close: async () => {
      arm = undefined
      release()
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
