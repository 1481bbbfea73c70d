import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterThisTest } from './_agents.ts'

/**
 * A bare node:http server on 127.0.0.1 at a free port that records every request (method, path, headers, body) and
 * answers as the test says: for what a real agent would not do, or to see exactly what the client sent. Closed
 * after the test.
 */

export interface RecordedRequest {
  method: string
  /** The path with its query. */
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export interface RawServer {
  /** The origin with a trailing slash. */
  url: string
  requests: RecordedRequest[]
}

export type RawHandler = (request: RecordedRequest, response: ServerResponse, server: RawServer) => void

export async function startRawServer(handler: RawHandler): Promise<RawServer> {
  const requests: RecordedRequest[] = []
  const raw: RawServer = { url: '', requests }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(request)
      handler(request, res, raw)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  raw.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  afterThisTest(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return raw
}

export function sendJson(response: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

/** A v1.0 card whose interfaces are at `base` (JSON-RPC at `/rpc`, HTTP+JSON at `/rest` unless given). */
export const v1Card = (base: string, extra: Record<string, unknown> = {}) => ({
  name: 'Raw',
  description: 'A recorded agent',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${base}rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${base}rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  ...extra,
})

export const CARD_PATH = '/.well-known/agent-card.json'
