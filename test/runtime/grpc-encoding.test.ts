import { type DescMessage, fromJson, type JsonValue, toBinary, toJson } from '@bufbuild/protobuf'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { grpcMethods } from '../../runtime/src/grpc/_codec.ts'
import { compactEncoder } from '../../runtime/src/grpc/_compact-answers.ts'
import { a2aFile } from '../../runtime/src/grpc/_descriptors.ts'
import { rpc } from '../_rpc.ts'
import { protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'
import { eventReader } from './_sse.ts'

/**
 * gRPC answers hold what JSON-RPC answers for the same call, whichever way they are encoded: the answers sent most
 * are written by protobufjs from the binding's objects (`_compact-answers.ts`), the rest, and any value that path
 * does not take, by @bufbuild/protobuf's reflection; a stream's result is read as SSE's text of it reads.
 */

const schemaOf = (name: string): DescMessage => a2aFile.messages.find((message) => message.name === name)!
const TASK = schemaOf('Task')
const STREAM_RESPONSE = schemaOf('StreamResponse')
const SEND_RESPONSE = schemaOf('SendMessageResponse')

/** ProtoJSON as @bufbuild/protobuf writes it, so that JSON-RPC's text (timestamps with .000Z, say) compares. */
const normal = (schema: DescMessage, json: unknown) => toJson(schema, fromJson(schema, json as JsonValue))

/** Everything a Task carries, in every form it takes: text, data of each JSON kind, files by URL and by bytes. */
const richMetadata = {
  plain: 'ünïcödé ✓ 😀',
  numbers: [0, 1, -1, 0.5, -2.25e-7, 1e21, Number.MAX_SAFE_INTEGER],
  flags: [true, false],
  nothing: null,
  nested: { deeper: { list: [{ a: 1 }, [], {}], empty: '' } },
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}

const richAgent = (release: Promise<void>, metadata: Record<string, unknown> = richMetadata) =>
  defineAgent({
    card: { name: 'Rich', description: 'Answers in every shape', capabilities: { streaming: true } },
    async execute(_ctx, task) {
      task.working('Looking')
      await release
      task.artifact('First words', { name: 'Answer', description: 'The answer', metadata, lastChunk: false })
      task.artifact([{ kind: 'text', text: ', then more', mediaType: 'text/markdown', metadata }])
      task.artifact([
        { kind: 'data', data: { rows: [1, 'two', null, { three: true }] }, metadata },
        { kind: 'data', data: ['a', 1] },
        { kind: 'data', data: 'just text' },
        { kind: 'data', data: 42 },
        { kind: 'data', data: null },
        { kind: 'data', data: false },
        { kind: 'file', file: { uri: 'https://example.com/a.pdf', name: 'a.pdf', mimeType: 'application/pdf' } },
        { kind: 'file', file: { bytes: 'aGVsbG8=', name: 'hello.txt', mimeType: 'text/plain' } },
        { kind: 'text', text: '' },
      ])
      task.complete('Done')
    },
  })

describe('gRPC answers read as JSON-RPC answers', () => {
  it('GetTask and a subscription carry what JSON-RPC gives for the same task, every part form included', async () => {
    const release = deferred()
    const target = await serveWithGrpc(richAgent(release.promise))
    const client = rawClient(target.grpcAddress)
    const sent = await unaryCall(client, 'SendMessage', {
      message: { ...protoMessage('go'), metadata: { from: 'test', n: [1, 2] } },
      configuration: { returnImmediately: true },
    })
    const taskId: string = sent.response.task.id
    // Followed over gRPC and over JSON-RPC's SSE from the same moment: the same events, in the same order.
    const grpcEvents: unknown[] = []
    const watcher = client.SubscribeToTask({ id: taskId })
    watcher.on('data', (event: unknown) => grpcEvents.push(event))
    const grpcEnded = new Promise<void>((resolve, reject) => {
      watcher.on('end', resolve)
      watcher.on('error', reject)
    })
    const sse = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } }),
    })
    const reader = eventReader(sse)
    const sseEvents: unknown[] = [(await reader.next()).result]
    await expect.poll(() => grpcEvents.length).toBe(1)
    release.resolve()
    for (let event = await reader.next(); event; event = await reader.next()) sseEvents.push(event.result)
    await grpcEnded
    expect(grpcEvents).toHaveLength(5)
    expect(grpcEvents).toEqual(sseEvents.map((event) => normal(STREAM_RESPONSE, event)))

    const overGrpc = await unaryCall(client, 'GetTask', { id: taskId })
    const overRpc = await rpc(target.url, 'GetTask', { id: taskId }, { version: '1.0' })
    expect(overGrpc.response).toEqual(normal(TASK, overRpc.body.result))
    expect(overGrpc.response.artifacts.flatMap((artifact: any) => artifact.parts)).toHaveLength(11)
    expect(overGrpc.response.history[0].metadata).toEqual({ from: 'test', n: [1, 2] })
  })

  it('a stream result whose values JSON has not reads as its JSON text, as over SSE', async () => {
    const release = deferred()
    // A Date writes as its ISO text, an undefined field not at all: what SSE's JSON.stringify makes of them.
    const metadata = { when: new Date(0), gone: undefined, kept: 1 }
    const target = await serveWithGrpc(richAgent(release.promise, metadata))
    const client = rawClient(target.grpcAddress)
    const sent = await unaryCall(client, 'SendMessage', {
      message: protoMessage('go'),
      configuration: { returnImmediately: true },
    })
    const events: any[] = []
    const watcher = client.SubscribeToTask({ id: sent.response.task.id })
    watcher.on('data', (event: unknown) => events.push(event))
    const ended = new Promise<void>((resolve, reject) => {
      watcher.on('end', resolve)
      watcher.on('error', reject)
    })
    await expect.poll(() => events.length).toBe(1)
    release.resolve()
    await ended
    const first = events.find((event) => event.artifactUpdate)
    expect(first.artifactUpdate.artifact.metadata).toEqual({ when: '1970-01-01T00:00:00.000Z', kept: 1 })
  })
})

describe('the compact encoding', () => {
  const now = new Date().toISOString()
  const status = { state: 'TASK_STATE_COMPLETED', timestamp: now }
  const task = {
    id: 't-1',
    contextId: 'c-1',
    status: { ...status, message: { messageId: 'm-2', role: 'ROLE_AGENT', parts: [{ text: 'Done' }] } },
    artifacts: [
      { artifactId: 'a-1', name: 'A', parts: [{ text: 'hi', mediaType: 'text/markdown', metadata: richMetadata }] },
      { artifactId: 'a-2', parts: [{ data: richMetadata }, { data: [] }, { url: 'https://x', filename: 'x' }] },
    ],
    history: [{ messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: '' }], contextId: 'c-1', taskId: 't-1' }],
    metadata: { a: [null] },
  }
  const plain: Array<[DescMessage, object]> = [
    [SEND_RESPONSE, { task }],
    [SEND_RESPONSE, { message: task.history[0] }],
    [TASK, task],
    [
      TASK,
      { id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED', timestamp: '1970-01-01T00:00:00.000Z' } },
    ],
    [TASK, { id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING', timestamp: '1969-12-31T23:59:59.999Z' } }],
    [STREAM_RESPONSE, { task }],
    [STREAM_RESPONSE, { statusUpdate: { taskId: 't', contextId: 'c', status } }],
    [STREAM_RESPONSE, { artifactUpdate: { taskId: 't', contextId: 'c', artifact: task.artifacts[0], append: true } }],
    [STREAM_RESPONSE, { artifactUpdate: { taskId: 't', contextId: '', artifact: task.artifacts[1], lastChunk: true } }],
  ]
  const offPath: Array<[DescMessage, object]> = [
    [TASK, { ...task, artifacts: [{ artifactId: 'a', parts: [{ raw: 'aGk=' }] }] }],
    [TASK, { ...task, status: { ...status, timestamp: '2024-05-01T10:00:00Z' } }],
    [TASK, { ...task, status: { ...status, timestamp: '2024-05-01T12:00:00.123456+02:00' } }],
    [TASK, { ...task, metadata: { n: Number.NaN } }],
    [TASK, { ...task, metadata: { n: -0 } }],
    [TASK, { ...task, status: { ...status, state: 3 } }],
    [STREAM_RESPONSE, { statusUpdate: { taskId: 't', status }, artifactUpdate: { taskId: 't' } }],
  ]
  const reflected = (schema: DescMessage, json: object) =>
    toBinary(schema, fromJson(schema, json as JsonValue, { ignoreUnknownFields: true }))
  const encodeOf = (schema: DescMessage) => grpcMethods.find((method) => outputOf(method.name) === schema)!.encode

  it('takes the answers sent most, byte for byte as @bufbuild/protobuf writes them', () => {
    for (const [schema, json] of plain) {
      const compact = compactEncoder(schema)!(json)
      expect(compact, `${schema.name} ${JSON.stringify(json).slice(0, 80)}`).toBeDefined()
      expect(Buffer.from(compact!)).toEqual(Buffer.from(reflected(schema, json)))
      expect(Buffer.from(encodeOf(schema)(json))).toEqual(Buffer.from(reflected(schema, json)))
    }
  })

  it('leaves every other value to reflection, with its bytes or its error', () => {
    for (const [schema, json] of offPath) {
      expect(compactEncoder(schema)!(json), `${schema.name} ${JSON.stringify(json).slice(0, 80)}`).toBeUndefined()
      let expected: Buffer | string
      try {
        expected = Buffer.from(reflected(schema, json))
      } catch (error) {
        expected = (error as Error).message
      }
      let actual: Buffer | string
      try {
        actual = Buffer.from(encodeOf(schema)(json))
      } catch (error) {
        actual = (error as Error).message
      }
      expect(actual).toEqual(expected)
    }
    const badBytes = { ...task, artifacts: [{ artifactId: 'a', parts: [{ raw: 'data:text/plain;base64,aGk=' }] }] }
    expect(() => encodeOf(TASK)(badBytes)).toThrow(/lf\.a2a\.v1\.Part\.raw/)
  })
})

/** The answer message of an RPC of A2AService. */
const outputOf = (name: string): DescMessage | undefined =>
  a2aFile.services[0]!.methods.find((method) => method.name === name)?.output
