import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type A2AApp, type A2AAppOptions, type Agent, createA2AApp, serveAgent } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { afterEach, inject } from 'vitest'
import { type CapturedLogger, captureLogger } from './_logger.ts'

/** A running agent as a test talks to it, whichever way the requests travel. */
export interface Target {
  /** Base address with a trailing slash. */
  url: string
  app: A2AApp
  logger: CapturedLogger
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** POSTs a JSON-RPC request to `/` and returns the parsed body. */
  rpc(
    method: string,
    params?: unknown,
    options?: { id?: string | number; headers?: Record<string, string>; path?: string },
  ): Promise<RpcReply>
  /** POSTs a raw body to `/` with a JSON content type unless `headers` says otherwise. */
  post(body: BodyInit, headers?: Record<string, string>): Promise<Response>
  /** Shuts the target down as its host would (`app.close()`, or the server's `close()`); once, however often called. */
  close(): Promise<void>
}

export interface RpcReply {
  status: number
  headers: Headers
  body: any
}

export interface Transport {
  name:
    | 'in-process'
    | 'node-server'
    | 'node-server, file store'
    | 'node-server, redis store'
    | 'node-server, postgres store'
  start(agent: Agent, options?: A2AAppOptions): Promise<Target>
}

const started: Array<() => Promise<void>> = []

/** Every target a test starts is closed after it, even when the test fails. */
afterEach(async () => {
  // Newest first: a target's server closes (and its store finishes writing) before its directory goes.
  for (const close of started.splice(0).reverse()) await close()
})

/** `close`, run at most once: by the test, or after it. */
function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  const once = () => (closing ??= close())
  started.push(once)
  return once
}

function makeTarget(
  url: string,
  app: A2AApp,
  logger: CapturedLogger,
  close: () => Promise<void>,
  send: (path: string, init?: RequestInit) => Promise<Response>,
): Target {
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    send('/', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
  return {
    url,
    app,
    logger,
    fetch: send,
    post,
    close,
    async rpc(method, params, options = {}) {
      const request = { jsonrpc: '2.0', id: options.id ?? `req-${Math.random().toString(36).slice(2)}`, method, params }
      const response = await send(options.path ?? '/', {
        method: 'POST',
        body: JSON.stringify(request),
        headers: { 'content-type': 'application/json', ...options.headers },
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
    },
  }
}

export const inProcess: Transport = {
  name: 'in-process',
  async start(agent, options = {}) {
    const logger = captureLogger()
    const app = createA2AApp(agent, { logger, ...options })
    const origin = 'http://agent.test'
    return makeTarget(
      `${origin}/`,
      app,
      logger,
      closeOnce(() => app.close()),
      (path, init) => app.fetch(new Request(new URL(path, origin), init)),
    )
  },
}

export const nodeServer: Transport = {
  name: 'node-server',
  async start(agent, options = {}) {
    const logger = captureLogger()
    const server = await serveAgent(agent, { logger, ...options, port: 0, hostname: '127.0.0.1', handleSignals: false })
    return makeTarget(
      server.url,
      server.app,
      logger,
      closeOnce(() => server.close()),
      (path, init) => fetch(new URL(path, server.url), init),
    )
  },
}

/** The node server again, its tasks in the durable file store (a fresh directory per target). */
export const nodeServerFileStore: Transport = {
  name: 'node-server, file store',
  async start(agent, options = {}) {
    if (options.store !== undefined) return nodeServer.start(agent, options)
    const dir = mkdtempSync(join(tmpdir(), 'a2a-file-store-'))
    started.push(async () => rmSync(dir, { recursive: true, force: true }))
    return nodeServer.start(agent, { ...options, store: createFileStore({ dir }) })
  },
}

/** The node server again, its tasks in Redis (the run's redis-server, a key prefix of its own). */
export const nodeServerRedisStore: Transport = {
  name: 'node-server, redis store',
  async start(agent, options = {}) {
    if (options.store !== undefined) return nodeServer.start(agent, options)
    const url = inject('redisUrl')
    if (!url)
      throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)')
    return nodeServer.start(agent, { ...options, store: createRedisStore({ url, prefix: `test-${newPrefix()}:` }) })
  },
}

/** The node server again, its tasks in PostgreSQL (the run's cluster, a schema of its own). */
export const nodeServerPostgresStore: Transport = {
  name: 'node-server, postgres store',
  async start(agent, options = {}) {
    if (options.store !== undefined) return nodeServer.start(agent, options)
    const url = inject('postgresUrl')
    if (!url) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)')
    return nodeServer.start(agent, { ...options, store: createPostgresStore({ url, schema: `test_${newPrefix()}` }) })
  },
}

const newPrefix = () => Math.random().toString(36).slice(2, 10)

export const transports: Transport[] = [
  inProcess,
  nodeServer,
  nodeServerFileStore,
  nodeServerRedisStore,
  nodeServerPostgresStore,
]
