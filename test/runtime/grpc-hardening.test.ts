import { createServer, type Server } from 'node:http'
import { connect } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { Metadata, status } from '@grpc/grpc-js'
import { createA2AApp, defineAgent, serveAgent } from 'a2a-runtime'
import { serveGrpc } from 'a2a-runtime/grpc'
import { afterEach, describe, expect, it } from 'vitest'
import { clientDefinition } from '../../runtime/src/grpc/_client-definition.ts'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { rpc } from '../_rpc.ts'
import { grpcAgent, protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'
import { captureLogger } from './_logger.ts'

/**
 * What the gRPC binding does with what could hurt the rest of the server: an agent value with no protobuf form, a
 * client that leaves while it is checked, an answer nobody reads, and where it listens and what the cards say.
 */

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}

describe('an agent value with no protobuf form', () => {
  it('ends the gRPC call INTERNAL, logging the field; the agent completes and JSON-RPC reads the task', async () => {
    const release = deferred()
    // `bytes` must be base64: a data: URL is not (JSON-RPC passes it on as it is).
    const dataUrl = defineAgent({
      card: { name: 'Data URL', description: 'Answers a file part', capabilities: { streaming: true } },
      async execute(_ctx, task) {
        task.working('Reading')
        await release.promise
        task.artifact([{ kind: 'file', file: { bytes: 'data:text/plain;base64,aGk=', mimeType: 'text/plain' } }])
        task.complete()
      },
    })
    const target = await serveWithGrpc(dataUrl)
    const client = rawClient(target.grpcAddress)
    const sent = await unaryCall(client, 'SendMessage', {
      message: protoMessage('go'),
      configuration: { returnImmediately: true },
    })
    const taskId: string = sent.response.task.id
    const watcher = client.SubscribeToTask({ id: taskId })
    const ended = new Promise<any>((resolve) => watcher.on('error', resolve))
    await new Promise((resolve) => watcher.once('data', resolve))
    release.resolve()
    expect((await ended).code).toBe(status.INTERNAL)
    expect(target.logger.text('error')).toMatch(/gRPC stream ended INTERNAL: .*lf\.a2a\.v1\.Part\.raw/)
    // The agent's move was never refused: the task completed with its artifact, as over SSE.
    const read = await rpc(target.url, 'GetTask', { id: taskId }, { headers: { 'a2a-version': '1.0' } })
    expect(read.body.result.status.state).toBe('TASK_STATE_COMPLETED')
    expect(read.body.result.artifacts[0].parts[0].raw).toBe('data:text/plain;base64,aGk=')
    // A unary answer alike: INTERNAL without detail, the field in the log.
    const got = await unaryCall(client, 'GetTask', { id: taskId })
    expect(got.error?.code).toBe(status.INTERNAL)
    expect(got.error?.details).toBe('Internal error')
    expect(target.logger.text('error')).toMatch(/gRPC call GetTask ended INTERNAL: .*lf\.a2a\.v1\.Part\.raw/)
  })
})

/**
 * An OpenID Connect issuer whose keys are held back until `release`: a JWT's verification waits on them. The keys
 * and tokens are `issuer`'s; discovery names this address as the issuer.
 */
async function slowIssuer(issuer: OidcIssuer): Promise<{ url: string; asked: () => boolean; release: () => void }> {
  const keys = deferred()
  let asked = false
  const server: Server = createServer(async (request, response) => {
    if (request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }))
      return
    }
    asked = true
    await keys.promise
    const jwks = await (await fetch(`${issuer.url}/jwks`)).text()
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url, asked: () => asked, release: keys.resolve }
}

describe('a client that leaves while it is checked', () => {
  it('leaves no stream open: the only place (maxStreams 1) is free for the next caller', async () => {
    const issuer = await startOidcIssuer()
    cleanups.push(() => issuer.stop())
    const slow = await slowIssuer(issuer)
    const target = await serveWithGrpc(grpcAgent({ authentication: { schemes: ['oidc'] } }), {
      maxStreams: 1,
      env: { A2A_OIDC_ISSUER: slow.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE },
    })
    const token = await issuer.mint({ iss: slow.url })
    const client = rawClient(target.grpcAddress)
    const bearer = () => {
      const metadata = new Metadata()
      metadata.set('authorization', `Bearer ${token}`)
      return metadata
    }
    const leaving = client.SubscribeToTask({ id: 'no-such-task' }, bearer())
    leaving.on('error', () => {}) // CANCELLED, by this test
    await expect.poll(slow.asked).toBe(true)
    leaving.cancel()
    // A later call on the same connection is answered after the server has seen the cancel.
    expect((await unaryCall(client, 'GetTask', { id: 'any' })).error?.code).toBe(status.UNAUTHENTICATED)
    slow.release()
    // The next caller's stream gets the place: an unknown task, not "Too many open streams".
    await expect
      .poll(async () => {
        const next = client.SubscribeToTask({ id: 'no-such-task' }, bearer())
        return (await new Promise<any>((resolve) => next.on('error', resolve))).code
      })
      .toBe(status.NOT_FOUND)
  })
})

describe('a unary answer', () => {
  it('past what may wait for slow clients (maxPendingResponseBytes) ends UNAVAILABLE, as HTTP gives 503', async () => {
    const target = await serveWithGrpc(grpcAgent(), { maxPendingResponseBytes: 4096 })
    const client = rawClient(target.grpcAddress)
    const small = await unaryCall(client, 'SendMessage', { message: protoMessage('hi') })
    expect(small.response.task.status.state).toBe('TASK_STATE_COMPLETED')
    const large = await unaryCall(client, 'SendMessage', { message: protoMessage('x'.repeat(8000)) })
    expect(large.error?.code).toBe(status.UNAVAILABLE)
    expect(large.error?.details).toMatch(/maxPendingResponseBytes, 4096/)
  })

  it('that its client does not read is cut after writeTimeoutMs, and what waited for it is released', async () => {
    const target = await serveWithGrpc(grpcAgent(), { writeTimeoutMs: 500, maxPendingResponseBytes: 1024 * 1024 })
    // A client that never reads: its flow-control window (64 KiB) holds the rest of a 400 KiB answer back.
    const session = connect(`http://${target.grpcAddress}`)
    cleanups.push(() => void session.destroy())
    const request = clientDefinition.SendMessage!.requestSerialize({ message: protoMessage('y'.repeat(400_000)) })
    const prefix = Buffer.alloc(5)
    prefix.writeUInt32BE(request.length, 1)
    const call = session.request({
      ':method': 'POST',
      ':path': '/lf.a2a.v1.A2AService/SendMessage',
      'content-type': 'application/grpc',
      te: 'trailers',
      'a2a-version': '1.0',
    })
    call.on('error', () => {})
    call.end(Buffer.concat([prefix, request]))
    await new Promise((resolve) => call.once('response', resolve))
    call.pause()
    await expect.poll(() => target.logger.text('info'), { timeout: 15_000 }).toContain('gRPC answer cut')
    expect(target.logger.text('info')).toContain('read nothing for 500 ms (writeTimeoutMs)')
    await new Promise((resolve) => (call.closed ? resolve(undefined) : call.once('close', resolve)))
    expect(call.rstCode).toBe(8) // CANCEL
    // The budget it held is free: an answer as large goes to a client that reads.
    const read = await unaryCall(rawClient(target.grpcAddress), 'SendMessage', {
      message: protoMessage('z'.repeat(400_000)),
    })
    expect(read.response.task.status.state).toBe('TASK_STATE_COMPLETED')
  })
})

describe('where gRPC listens and what the cards list', () => {
  it('host 0.0.0.0 listens on every interface (127.0.0.2 reaches it), and the cards say localhost', async () => {
    const app = createA2AApp(grpcAgent(), { logger: captureLogger() })
    const grpc = await serveGrpc(app, { port: 0, host: '0.0.0.0' })
    cleanups.push(() => grpc.close())
    expect(grpc.address).toBe(`localhost:${grpc.port}`)
    const sent = await unaryCall(rawClient(`127.0.0.2:${grpc.port}`), 'SendMessage', { message: protoMessage('any') })
    expect(sent.response?.task.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('grpcPublicAddress (A2A_GRPC_PUBLIC_ADDRESS) is what the cards list, behind a proxy or port mapping', async () => {
    const target = await serveWithGrpc(grpcAgent(), {
      publicUrl: 'https://agent.example.com/',
      env: { A2A_GRPC_PUBLIC_ADDRESS: 'grpc.example.com:443' },
    })
    const card = await (
      await fetch(`${target.url}.well-known/agent-card.json`, {
        headers: { host: 'agent.example.com' },
      })
    ).json()
    expect(card.supportedInterfaces).toContainEqual({
      url: 'grpc.example.com:443',
      protocolBinding: 'GRPC',
      protocolVersion: '1.0',
    })
    const option = await serveWithGrpc(grpcAgent(), { grpcPublicAddress: '[2001:db8::7]:8443' })
    expect(option.grpcAddress).toBe('[2001:db8::7]:8443')
    for (const bad of ['grpc.example.com', 'https://grpc.example.com:443', 'grpc.example.com:0']) {
      const refused = await serveAgent(grpcAgent(), {
        port: 0,
        grpcPort: 0,
        grpcPublicAddress: bad,
        handleSignals: false,
        logger: captureLogger(),
      }).catch((error: Error) => error)
      expect(refused).toMatchObject({ name: 'ConfigurationError' })
      expect((refused as Error).message).toMatch(/^grpcPublicAddress \(A2A_GRPC_PUBLIC_ADDRESS\) must be host:port/)
      expect((refused as Error).message).not.toContain('\n')
    }
  })

  it("the extended card gives the app's own HTTP address (with its port), not a guess", async () => {
    const bulk = { id: 'bulk', name: 'Bulk', description: 'Many at once', tags: ['bulk'] }
    const agent = grpcAgent({ authentication: { schemes: ['apiKey'] }, extendedCard: { skills: [bulk] } })
    const app = createA2AApp(agent, { logger: captureLogger(), auth: { apiKeys: ['grpc-card-key'] } })
    app.setUrl('http://127.0.0.1:48123/')
    const grpc = await serveGrpc(app, { port: 0, host: '127.0.0.1' })
    cleanups.push(() => grpc.close())
    const card = await unaryCall(rawClient(grpc.address), 'GetExtendedAgentCard', {}, { 'x-api-key': 'grpc-card-key' })
    const urls = card.response.supportedInterfaces.map((entry: any) => entry.url)
    expect(urls).toContain('http://127.0.0.1:48123')
    expect(urls).toContain(grpc.address)
  })
})
