import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { cardReference } from '../../runtime/src/client/_card.ts'
import { connect } from '../../runtime/src/client/client.ts'
import { A2AClientFailure } from '../../runtime/src/client/errors.ts'
import { CARD_PATH, sendJson, startRawServer, v1Card } from './_raw-server.ts'

/**
 * Card resolution (a bare host, an origin, a card URL, a path, a file:// URL; what fails and how it is named) and the
 * interface chosen from the card's `supportedInterfaces`.
 */

const dir = mkdtempSync(join(tmpdir(), 'a2a-client-card-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
function cardFile(card: unknown): string {
  const path = join(dir, `card-${files++}.json`)
  writeFileSync(path, typeof card === 'string' ? card : JSON.stringify(card))
  return path
}

async function failure(promise: Promise<unknown>): Promise<A2AClientFailure> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (error: unknown) => error,
  )
  if (!(error instanceof A2AClientFailure)) throw error
  return error
}

/** A server answering the card at the well-known path (and `/custom/card.json`), 404 elsewhere. */
const cardServer = () =>
  startRawServer((request, response, server) => {
    if (request.url === CARD_PATH || request.url === '/custom/card.json') sendJson(response, v1Card(server.url))
    else sendJson(response, { error: 'not found' }, 404)
  })

describe('card resolution', () => {
  it('reads a bare host:port at its well-known path, over http for this machine', async () => {
    const server = await cardServer()
    const client = await connect({ agentCard: new URL(server.url).host })
    expect(client.cardSource).toBe(`${server.url}.well-known/agent-card.json`)
    expect(server.requests.map((r) => r.url)).toEqual([CARD_PATH])
  })

  it('reads an origin, with or without its slash, at its well-known path', async () => {
    const server = await cardServer()
    await connect({ agentCard: server.url })
    await connect({ agentCard: server.url.slice(0, -1) })
    expect(server.requests.map((r) => r.url)).toEqual([CARD_PATH, CARD_PATH])
  })

  it('speaks to an interface at an unspecified address (0.0.0.0) on the host the card came from', async () => {
    const server = await startRawServer((request, response, raw) => {
      sendJson(response, v1Card(raw.url.replace('127.0.0.1', '0.0.0.0')))
    })
    const client = await connect({ agentCard: server.url })
    expect(client.selected.url).toBe(`${server.url}rpc`)
  })

  it('reads a full card URL as it is', async () => {
    const server = await cardServer()
    const client = await connect({ agentCard: `${server.url}custom/card.json` })
    expect(client.card.name).toBe('Raw')
    expect(server.requests.map((r) => r.url)).toEqual(['/custom/card.json'])
  })

  it('reads a card file by path and by file:// URL', async () => {
    const path = cardFile(v1Card('http://127.0.0.1:9/'))
    expect((await connect({ agentCard: path })).cardSource).toBe(path)
    expect((await connect({ agentCard: pathToFileURL(path).href })).cardSource).toBe(path)
  })

  it.each([
    ['agent.example.com', { url: 'https://agent.example.com/.well-known/agent-card.json' }],
    ['localhost:3000', { url: 'http://localhost:3000/.well-known/agent-card.json' }],
    ['127.0.0.1:8080/', { url: 'http://127.0.0.1:8080/.well-known/agent-card.json' }],
    ['https://agent.example.com/agents/a/', { url: 'https://agent.example.com/agents/a/.well-known/agent-card.json' }],
    ['https://agent.example.com/cards/a.json', { url: 'https://agent.example.com/cards/a.json' }],
    ['card.json', { file: 'card.json' }],
    ['./cards/a', { file: './cards/a' }],
    ['file:///srv/card.json', { file: 'file:///srv/card.json' }],
    // A plain relative path: its first segment names no host (no dot, no port, not localhost).
    ['cards/agent.json', { file: 'cards/agent.json' }],
    ['agent.example.com/a/card.json', { url: 'https://agent.example.com/a/card.json' }],
    ['intranet:8080/card', { url: 'https://intranet:8080/card' }],
    // Every spelling of this machine's address is reached over http.
    ['127.1:8080', { url: 'http://127.0.0.1:8080/.well-known/agent-card.json' }],
    ['[0:0::1]:8080', { url: 'http://[::1]:8080/.well-known/agent-card.json' }],
    ['LOCALHOST:8080', { url: 'http://localhost:8080/.well-known/agent-card.json' }],
  ])('reads the reference %s as %j', (reference, expected) => {
    expect(cardReference(reference)).toEqual(expected)
  })

  it('reads a card by a plain relative path', async () => {
    const folder = mkdtempSync(join(dir, 'relative-'))
    mkdirSync(join(folder, 'cards'))
    writeFileSync(join(folder, 'cards', 'agent.json'), JSON.stringify(v1Card('http://127.0.0.1:9/')))
    const cwd = process.cwd()
    process.chdir(folder)
    try {
      const client = await connect({ agentCard: 'cards/agent.json' })
      expect(client.cardSource).toBe(join(realpathSync(folder), 'cards', 'agent.json'))
    } finally {
      process.chdir(cwd)
    }
  })

  it('refuses a reference in another scheme as card-not-found', () => {
    expect(() => cardReference('ftp://agent.example.com/card.json')).toThrow(A2AClientFailure)
  })

  it('fetches the card with the version header and without any credential or service parameter', async () => {
    const server = await cardServer()
    await connect({
      agentCard: server.url,
      bearer: 'tok-1234567',
      apiKey: 'key-1234567',
      serviceParams: { 'X-S': 'v' },
    })
    const headers = server.requests[0]!.headers
    expect(headers['a2a-version']).toBe('1.0')
    expect(headers).not.toHaveProperty('authorization')
    expect(headers).not.toHaveProperty('x-api-key')
    expect(headers).not.toHaveProperty('x-s')
    expect(headers).not.toHaveProperty('cookie')
  })

  it('names a card URL that answers 404 card-not-found', async () => {
    const server = await cardServer()
    const error = await failure(connect({ agentCard: `${server.url}missing.json` }))
    expect(error.kind).toBe('card-not-found')
    expect(error.message).toContain(`${server.url}missing.json`)
    expect(error.message).toContain('404')
  })

  it('names a missing file card-not-found', async () => {
    const error = await failure(connect({ agentCard: join(dir, 'nothing-here.json') }))
    expect(error.kind).toBe('card-not-found')
    expect(error.message).toContain('nothing-here.json')
  })

  it('names a host nothing listens on unreachable', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const error = await failure(connect({ agentCard: `http://127.0.0.1:${port}/` }))
    expect(error.kind).toBe('unreachable')
    expect(error.message).toContain('ECONNREFUSED')
  })

  it('names a card whose connection is cut mid-body unreachable', async () => {
    const server = await startRawServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
      response.write('{"name":"Cut', () => setTimeout(() => response.socket?.destroy(), 20))
    })
    const error = await failure(connect({ agentCard: server.url }))
    expect(error.kind).toBe('unreachable')
    expect(error.message).toContain(`${server.url}.well-known/agent-card.json`)
  })

  it('names a card that stops mid-body past the time allowed a timeout', async () => {
    const server = await startRawServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"name":"Slow')
    })
    const error = await failure(connect({ agentCard: server.url, timeoutMs: 300 }))
    expect(error.kind).toBe('timeout')
  })

  it('names a card that is not JSON card-invalid', async () => {
    const error = await failure(connect({ agentCard: cardFile('<html>hello</html>') }))
    expect(error.kind).toBe('card-invalid')
    expect(error.message).toMatch(/not JSON/)
  })

  it.each([
    ['supportedInterfaces[1].protocolVersion', (card: any) => delete card.supportedInterfaces[1].protocolVersion],
    ['supportedInterfaces[0].url', (card: any) => delete card.supportedInterfaces[0].url],
    ['supportedInterfaces[0].protocolBinding', (card: any) => (card.supportedInterfaces[0].protocolBinding = 7)],
    ['supportedInterfaces', (card: any) => (card.supportedInterfaces = [])],
    ['capabilities', (card: any) => delete card.capabilities],
    // What a2a card get prints and a hint reads: a scheme, a skill, a mode.
    ['securitySchemes.b', (card: any) => (card.securitySchemes = { b: null })],
    ['skills', (card: any) => (card.skills = 7)],
    ['skills[0]', (card: any) => (card.skills = ['echo'])],
    ['defaultInputModes', (card: any) => (card.defaultInputModes = 'text/plain')],
  ])('names the field a card lacks: %s', async (field, spoil) => {
    const card = v1Card('http://127.0.0.1:9/')
    spoil(card)
    const error = await failure(connect({ agentCard: cardFile(card) }))
    expect(error.kind).toBe('card-invalid')
    expect(error.message).toContain(`\`${field}\``)
  })

  it('refuses a card of an agent that speaks only A2A 0.3, saying so', async () => {
    const card = { name: 'Old', url: 'http://127.0.0.1:9/', protocolVersion: '0.3.0', preferredTransport: 'JSONRPC' }
    const error = await failure(connect({ agentCard: cardFile(card) }))
    expect(error.kind).toBe('card-invalid')
    expect(error.message).toContain('only A2A 0.3')
  })
})

describe('interface selection', () => {
  const offering = (interfaces: Array<[string, string]>) =>
    cardFile(
      v1Card('', {
        supportedInterfaces: interfaces.map(([protocolBinding, protocolVersion], i) => ({
          url: `http://127.0.0.1:9/${i}`,
          protocolBinding,
          protocolVersion,
        })),
      }),
    )

  it('takes the first interface it speaks, at 1.x, in the card order', async () => {
    const card = offering([
      ['GRPC', '1.0'],
      ['JSONRPC', '0.3'],
      ['HTTP+JSON', '1.0'],
      ['JSONRPC', '1.0'],
    ])
    expect((await connect({ agentCard: card })).selected).toMatchObject({ protocolBinding: 'HTTP+JSON', url: /\/2$/ })
  })

  it("takes the caller's first preferred binding the card offers, skipping those it does not", async () => {
    const card = offering([
      ['HTTP+JSON', '1.0'],
      ['JSONRPC', '1.0'],
    ])
    const client = await connect({ agentCard: card, transports: ['GRPC', 'jsonrpc', 'HTTP+JSON'] })
    expect(client.selected.protocolBinding).toBe('JSONRPC')
  })

  it('falls back to the card order when no preferred binding is offered', async () => {
    const card = offering([
      ['JSONRPC', '1.0'],
      ['HTTP+JSON', '1.0'],
    ])
    expect((await connect({ agentCard: card, transports: ['GRPC'] })).selected.protocolBinding).toBe('JSONRPC')
  })

  it('names the bindings a card offers when it has none the client speaks', async () => {
    const card = offering([
      ['GRPC', '1.0'],
      ['https://example.com/bindings/websocket/v1', '1.0'],
    ])
    const error = await failure(connect({ agentCard: card }))
    expect(error.kind).toBe('card-invalid')
    expect(error.message).toContain('GRPC 1.0, https://example.com/bindings/websocket/v1 1.0')
  })

  it('refuses a card whose every interface is A2A 0.3', async () => {
    const error = await failure(connect({ agentCard: offering([['JSONRPC', '0.3']]) }))
    expect(error.message).toContain('only A2A 0.3 (its card offers JSONRPC 0.3)')
  })
})
