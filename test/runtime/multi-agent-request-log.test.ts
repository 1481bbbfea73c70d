import { serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { type CapturedLogger, captureLogger } from './_logger.ts'
import { userMessageV1 } from './_messages.ts'
import { planner, postJson, startAgents } from './_multi-agent.ts'

/**
 * The request log names each request by the route it took, a bounded set: the health checks, the agents' list and
 * each agent's paths under its name, an id or another tenant by its place in the pattern, anything else
 * `(other path)`.
 */

const V1 = { 'a2a-version': '1.0' }
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** The routes of the request lines logged so far (`GET /healthz 200 1.2 ms` → `GET /healthz 200`). */
const routesOf = (logger: CapturedLogger) =>
  logger.lines
    .filter((line) => line.level === 'info' && / \d+ [\d.]+ ms$/.test(line.message))
    .map((line) => line.message.replace(/ [\d.]+ ms$/, ''))

describe('the request log of a server of several agents', () => {
  it('names the health checks, the list and each agent’s paths as their patterns, never an id', async () => {
    const logger = captureLogger()
    const server = await startAgents(undefined, { logger, requestLogLevel: 'info' })
    const { planner: at } = server.urls as { planner: string }
    const root = server.url
    const sent = await postJson(at, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessageV1('hi') }, V1)
    const id: string = sent.body.result.task.id
    const paths = [
      'healthz',
      'readyz',
      'ping',
      '.well-known/agents.json',
      '.well-known/agent-card.json',
      'planner/.well-known/agent-card.json',
      `planner/tasks/${id}?historyLength=1`,
      `planner/planner/tasks/${id}`,
      `planner/writer/tasks/${id}`,
      `nobody/tasks/${id}`,
      'planner/secret-token',
    ]
    for (const path of paths) await (await fetch(`${root}${path}`, { headers: V1 })).arrayBuffer()
    await expect.poll(() => routesOf(logger).length).toBe(paths.length + 1)
    expect(routesOf(logger)).toEqual([
      'POST /planner/ 200',
      'GET /healthz 200',
      'GET /readyz 200',
      'GET /ping 200',
      'GET /.well-known/agents.json 200',
      'GET /.well-known/agent-card.json 404',
      'GET /planner/.well-known/agent-card.json 200',
      'GET /planner/tasks/{id} 200',
      'GET /planner/planner/tasks/{id} 200',
      'GET /planner/{tenant}/tasks/{id} 404',
      'GET (other path) 404',
      'GET (other path) 404',
    ])
  })

  it('one agent’s server names its health checks too', async () => {
    const logger = captureLogger()
    const server = await serveAgent(planner, {
      logger,
      requestLogLevel: 'info',
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
    })
    closers.push(() => server.close())
    for (const path of ['healthz', 'readyz', 'ping']) await (await fetch(`${server.url}${path}`)).arrayBuffer()
    await expect.poll(() => routesOf(logger)).toEqual(['GET /healthz 200', 'GET /readyz 200', 'GET /ping 200'])
  })
})
