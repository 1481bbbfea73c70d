import { type A2AServer, createMemoryStore, serveAgent } from 'a2a-runtime'
import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import type { TaskStore } from 'a2a-runtime/store'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { freePort } from '../_support.ts'
import { echoAgent } from './_agents.ts'
import { type CapturedLogger, captureLogger } from './_logger.ts'
import { startPostgres } from './_postgres.ts'

const servers: A2AServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function serve(store: TaskStore, logger: CapturedLogger = captureLogger()): Promise<A2AServer> {
  const server = await serveAgent(echoAgent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger,
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

/** The reasons /readyz may give for a store: fixed texts, never the store's own error. */
const STORE_REASONS = ['the task store is unreachable', 'the task store did not answer within 750 ms']

/** The log's readiness lines, as `level message`. */
const readinessLog = (logger: CapturedLogger) =>
  logger.lines.filter((line) => line.message.startsWith('Readiness:')).map((line) => `${line.level} ${line.message}`)

describe('/readyz tells no one what the store said', () => {
  /** A store of your own whose round trip fails with `failure`, hangs (`'hang'`) or answers (`undefined`). */
  function probedStore() {
    const store = createMemoryStore() as TaskStore
    const state = { failure: undefined as Error | 'hang' | undefined, calls: 0 }
    store.reachable = () => {
      state.calls++
      if (state.failure === 'hang') return new Promise<void>(() => {})
      return state.failure ? Promise.reject(state.failure) : Promise.resolve()
    }
    return { store, state }
  }

  /** Probes until the store has been asked `more` more times (each answer stands a second), the last answer. */
  async function probeChecks(server: A2AServer, state: { calls: number }, more: number) {
    const until = state.calls + more
    let last: { status: number; body: any } | undefined
    await expect
      .poll(
        async () => {
          last = await readiness(server)
          return state.calls
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBeGreaterThanOrEqual(until)
    return last!
  }

  it('answers a fixed reason and logs the detail once per change, not at every probe', {
    timeout: 60_000,
  }, async () => {
    const logger = captureLogger()
    const { store, state } = probedStore()
    const server = await serve(store, logger)
    expect(await readiness(server)).toEqual({ status: 200, body: { status: 'ready' } })
    expect(readinessLog(logger)).toEqual([])

    state.failure = new Error('connect ECONNREFUSED 10.0.3.4:5432')
    const refused = await probeChecks(server, state, 3)
    expect(refused).toEqual({ status: 503, body: { status: 'unavailable', reason: 'the task store is unreachable' } })
    expect(readinessLog(logger)).toEqual([
      'warn Readiness: the task store is unreachable: connect ECONNREFUSED 10.0.3.4:5432 ' +
        '(/readyz answers 503 until it answers)',
    ])

    state.failure = new Error('password authentication failed for user "agent"')
    const denied = await probeChecks(server, state, 2)
    expect(denied.body.reason).toBe('the task store is unreachable')
    expect(JSON.stringify(denied.body)).not.toContain('agent"')
    expect(readinessLog(logger)).toHaveLength(2)
    expect(readinessLog(logger)[1]).toContain('password authentication failed for user "agent"')

    state.failure = 'hang'
    const silent = await probeChecks(server, state, 1)
    expect(silent.body.reason).toBe('the task store did not answer within 750 ms')
    expect(readinessLog(logger).slice(2)).toEqual([
      'warn Readiness: the task store did not answer within 750 ms (/readyz answers 503 until it answers)',
    ])

    state.failure = undefined
    expect(await probeChecks(server, state, 1)).toEqual({ status: 200, body: { status: 'ready' } })
    expect(readinessLog(logger).slice(3)).toEqual(['info Readiness: the task store answers again'])
  })
})

describe('/readyz asks the shared store', () => {
  it('Redis: 200 while it answers its PING, 503 naming the store when nothing answers at its address', async () => {
    const url = inject('redisUrl')
    if (!url) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
    const live = await serve(createRedisStore({ url, prefix: `health-${suffix()}:` }))
    expect(await readiness(live)).toEqual({ status: 200, body: { status: 'ready' } })
    // /healthz never asks the store.
    const logger = captureLogger()
    const port = await freePort()
    const gone = await serve(createRedisStore({ url: `redis://127.0.0.1:${port}`, timeoutMs: 5000 }), logger)
    const answer = await readiness(gone)
    expect(answer.status).toBe(503)
    expect(STORE_REASONS).toContain(answer.body.reason)
    expect(JSON.stringify(answer.body)).not.toContain(String(port))
    expect(readinessLog(logger)).toHaveLength(1)
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
      const down = await readiness(server)
      expect(STORE_REASONS).toContain(down.body.reason)
      expect(JSON.stringify(down.body)).not.toContain(new URL(postgres.url).port)
      await postgres.restart()
      await expect.poll(async () => (await readiness(server)).status, { timeout: 20_000 }).toBe(200)
    } finally {
      await postgres.stop()
    }
  })
})
