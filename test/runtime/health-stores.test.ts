import { type A2AServer, serveAgent } from 'a2a-runtime'
import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import type { TaskStore } from 'a2a-runtime/store'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { freePort } from '../_support.ts'
import { echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { startPostgres } from './_postgres.ts'

const servers: A2AServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function serve(store: TaskStore): Promise<A2AServer> {
  const server = await serveAgent(echoAgent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store,
  })
  servers.push(server)
  return server
}

async function readiness(server: A2AServer): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}readyz`)
  return { status: response.status, body: await response.json() }
}

const suffix = () => Math.random().toString(36).slice(2, 10)

describe('/readyz asks the shared store', () => {
  it('Redis: 200 while it answers its PING, 503 naming the store when nothing answers at its address', async () => {
    const url = inject('redisUrl')
    if (!url) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
    const live = await serve(createRedisStore({ url, prefix: `health-${suffix()}:` }))
    expect(await readiness(live)).toEqual({ status: 200, body: { status: 'ready' } })
    // /healthz never asks the store.
    const gone = await serve(createRedisStore({ url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 5000 }))
    const answer = await readiness(gone)
    expect(answer.status).toBe(503)
    expect(answer.body.reason).toMatch(/^the task store (cannot serve|did not answer)/)
    expect((await fetch(`${gone.url}healthz`)).status).toBe(200)
  })

  it('PostgreSQL: 200 once it answers SELECT 1, and a probe storm asks it at most once a second', async () => {
    const url = inject('postgresUrl')
    const store = createPostgresStore({ url, schema: `health_${suffix()}` })
    const server = await serve(store)
    expect(await readiness(server)).toEqual({ status: 200, body: { status: 'ready' } })
    const before = store.statementsSent
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: 50 }, () => readiness(server)))
    const seconds = (performance.now() - started) / 1000
    for (const answer of answers) expect(answer.status).toBe(200)
    // The first answer stands for a second: the storm costs one statement per second it lasted, and one more.
    expect(store.statementsSent - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1)
  })

  it('PostgreSQL: 503 naming the store once the database stops answering after the start, 200 again once it is back', async () => {
    const postgres = await startPostgres()
    try {
      const server = await serve(
        createPostgresStore({ url: postgres.url, schema: `health_${suffix()}`, timeoutMs: 5000 }),
      )
      expect((await readiness(server)).status).toBe(200)
      await postgres.kill()
      await expect.poll(async () => (await readiness(server)).status).toBe(503)
      expect((await readiness(server)).body.reason).toMatch(/^the task store (cannot serve|did not answer)/)
      await postgres.restart()
      await expect.poll(async () => (await readiness(server)).status, { timeout: 20_000 }).toBe(200)
    } finally {
      await postgres.stop()
    }
  })
})
