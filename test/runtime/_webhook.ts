import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

export interface Delivery {
  path: string
  headers: IncomingHttpHeaders
  raw: string
  body: any
}

/** What the receiver answers to its n-th request (from 0): a status, or `hang` (never answers). */
export type Answer = (n: number) => number | 'hang'

export interface Receiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string
  /** Requests answered 2xx, in arrival order. */
  delivered: Delivery[]
  /** Every request, whatever it was answered. */
  attempts: Delivery[]
}

const open: Array<() => Promise<void>> = []

afterEach(async () => {
  for (const close of open.splice(0)) await close()
})

/** A webhook on 127.0.0.1 that records what it receives; closed after the test. */
export async function startReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const delivered: Delivery[] = []
  const attempts: Delivery[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const delivery: Delivery = {
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body: raw ? JSON.parse(raw) : undefined,
      }
      const status = answer(attempts.length)
      attempts.push(delivery)
      if (status === 'hang') return
      if (status >= 200 && status < 300) delivered.push(delivery)
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  open.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, delivered, attempts }
}
