import type { ServeOptions } from 'a2a-runtime'
import { afterEach } from 'vitest'
import type { AgentEntry } from '../../runtime/src/multi/agents-options.ts'
import { type A2AAgentsServer, serveAgents } from '../../runtime/src/multi/serve-agents.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { captureLogger } from './_logger.ts'

/** Two agents served together: each answers "Echo: …", holds a task on "wait" until canceled, asks on "ask". */
export const planner = sdkTestAgent(
  { name: 'Planner', description: 'Plans', capabilities: { streaming: true } },
  { waitMs: 30_000 },
)
export const writer = sdkTestAgent(
  { name: 'Writer', description: 'Writes', capabilities: { streaming: true } },
  { waitMs: 30_000 },
)

const started: A2AAgentsServer[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()))
})

/** `serveAgents` on 127.0.0.1 with a free port, closed after the test. */
export async function startAgents(
  agents: Record<string, AgentEntry> = { planner, writer },
  options: ServeOptions = {},
): Promise<A2AAgentsServer> {
  const server = await serveAgents(agents, {
    logger: captureLogger(),
    ...options,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  started.push(server)
  return server
}

/** A POST of JSON to `url`, its answer parsed. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}
