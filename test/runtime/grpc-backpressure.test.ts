import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { status } from '@grpc/grpc-js'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'

/**
 * A gRPC client that stops reading a stream is cut, never buffered for: what waits for it is counted against
 * `maxStreamBacklogBytes` (grpc-js holds the HTTP/2 stream one message at a time; the rest would wait in its
 * writable), and past it the HTTP/2 stream is reset, what waited freed, and the task runs on.
 */

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapUsed = () => {
  gc()
  return process.memoryUsage().heapUsed
}

const EVENT_CHARS = 64 * 1024
const EVENTS = 600 // 37.5 MiB in all, 36 times the cap

/** Replaces one artifact again and again (the task stays one event large), then completes. */
const flood = defineAgent({
  card: { name: 'Flood', description: 'Streams large events', capabilities: { streaming: true } },
  async execute(_ctx, task) {
    for (let i = 0; i < EVENTS; i++) {
      task.artifact(String(i).padEnd(EVENT_CHARS, 'x'), { artifactId: 'flood' })
      await new Promise((resolve) => setImmediate(resolve))
    }
    task.complete()
  },
})

describe('a gRPC client that stops reading a stream', () => {
  it('is cut once its unread events pass maxStreamBacklogBytes; the task runs on and nothing is held for it', async () => {
    const target = await serveWithGrpc(flood, { maxStreamBacklogBytes: 1024 * 1024 })
    const client = rawClient(target.grpcAddress)
    const before = heapUsed()
    const stream = client.SendStreamingMessage({ message: protoMessage('go') })
    const ended = new Promise<any>((resolve) => stream.on('error', resolve))
    const first = await new Promise<any>((resolve) => stream.once('data', resolve))
    stream.pause()
    const taskId = first.task.id
    await expect.poll(() => target.logger.text('info'), { timeout: 30_000 }).toContain('gRPC stream cut')
    expect(target.logger.text('info')).toContain('maxStreamBacklogBytes (1048576 bytes)')
    await expect
      .poll(async () => (await unaryCall(client, 'GetTask', { id: taskId })).response?.status.state, {
        timeout: 60_000,
      })
      .toBe('TASK_STATE_COMPLETED')
    const grown = heapUsed() - before
    // The client read nothing more: reading now ends its call with CANCELLED (the reset), after what it had taken.
    stream.on('data', () => {})
    stream.resume()
    expect((await ended).code).toBe(status.CANCELLED)
    console.info(`heap grown over the flood, the unread stream cut: ${(grown / 1024 / 1024).toFixed(1)} MiB`)
    // Buffered for, it would hold the 37.5 MiB the agent wrote.
    expect(grown).toBeLessThan(12 * 1024 * 1024)
  }, 120_000)
})
