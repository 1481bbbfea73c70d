import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpanKind } from '@opentelemetry/api'
import { createFileStore } from 'a2a-runtime/file-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { rpc } from '../_rpc.ts'
import { echoAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'
import { recordedMetrics } from './_telemetry-metrics.ts'

// The file and Redis stores' calls that touch disk or network as spans under the operation that made them (the
// Redis ones CLIENT spans per the database conventions), and their durations as a metric; the memory store has none.

const spans = recordedSpans()
const meters = recordedMetrics()

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Sends a message under a caller's trace and reads the task back: the spans of both operations. */
async function sendAndGet(url: string) {
  const task = (
    await rpc(url, 'message/send', userMessage('hi'), { headers: { traceparent: callerSpan().traceparent } })
  ).body.result
  expect(task.status.state).toBe('completed')
  await rpc(url, 'tasks/get', { id: task.id })
  return {
    task,
    send: await spans.one('SendMessage', { 'a2a.task.id': task.id }),
    get: await spans.one('GetTask', { 'a2a.task.id': task.id }),
  }
}

/** The spans named `name` whose parent is `parent`. */
const childrenNamed = (name: string, parent: { spanContext(): { spanId: string } }) =>
  spans.named(name).filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)

describe('store calls as spans where they do I/O', () => {
  it('the file store: its writes to disk are INTERNAL spans under the send', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-telemetry-store-'))
    dirs.push(dir)
    const server = await served(echoAgent, { telemetry: otelTelemetry(), store: createFileStore({ dir }) })
    const { task, send } = await sendAndGet(server.url)

    const [create] = childrenNamed('file create', send)
    expect(create?.kind).toBe(SpanKind.INTERNAL)
    expect(create?.attributes).toEqual({
      'a2a.store.name': 'file',
      'a2a.store.operation': 'create',
      'a2a.task.id': task.id,
    })
    // The event that settles the task is written before the task is answered; the others join a later write.
    expect(childrenNamed('file append', send)).toHaveLength(1)
    // Reads come from memory: no span.
    expect(spans.named('file get')).toHaveLength(0)
    const duration = 'a2a.server.store.operation.duration'
    expect(await meters.count(duration, { 'a2a.store.name': 'file', 'a2a.store.operation': 'create' })).toBe(1)
    expect(await meters.count(duration, { 'a2a.store.name': 'file', 'a2a.store.operation': 'append' })).toBe(1)
  })

  it('the Redis store: each call is a CLIENT span with db.system.name redis, under the operation that made it', async () => {
    const url = inject('redisUrl')
    if (!url) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
    const prefix = `test-telemetry-${Math.random().toString(36).slice(2, 10)}:`
    const server = await served(echoAgent, { telemetry: otelTelemetry(), store: createRedisStore({ url, prefix }) })
    const { task, send, get } = await sendAndGet(server.url)

    const [create] = childrenNamed('redis create', send)
    expect(create?.kind).toBe(SpanKind.CLIENT)
    expect(create?.attributes).toEqual({
      'a2a.store.name': 'redis',
      'a2a.store.operation': 'create',
      'db.system.name': 'redis',
      'db.operation.name': 'create',
      'a2a.task.id': task.id,
    })
    // Every event of the turn (working, the artifact, completed) is written at once.
    expect(childrenNamed('redis append', send).length).toBeGreaterThanOrEqual(2)
    const [read] = childrenNamed('redis get', get)
    expect(read?.kind).toBe(SpanKind.CLIENT)
    expect(read?.attributes['a2a.task.id']).toBe(task.id)
    const duration = 'a2a.server.store.operation.duration'
    expect(await meters.count(duration, { 'a2a.store.name': 'redis', 'a2a.store.operation': 'create' })).toBe(1)
    expect(await meters.count(duration, { 'a2a.store.name': 'redis', 'a2a.store.operation': 'get' })).toBeGreaterThan(0)
  })

  it('the memory store: no store spans, no store metric', async () => {
    const server = await served(echoAgent, { telemetry: otelTelemetry() })
    const { send } = await sendAndGet(server.url)
    expect(spans.all().filter((span) => span.parentSpanContext?.spanId === send.spanContext().spanId)).toEqual([])
    expect(await meters.points('a2a.server.store.operation.duration')).toEqual([])
  })
})
